# common.sh — sourced by the installers (POSIX sh): the package list, root, and apt.
# shellcheck shell=sh disable=SC2034  # the lists are used by the scripts that source this

# Debian packages ddpprof builds and tests with (all in bookworm's main component).
DDPPROF_DEPS="gcc make pkg-config libsqlite3-dev sqlite3 libinih-dev libopenblas-dev libjansson-dev libyajl-dev zlib1g-dev libssl-dev libcmocka-dev clang libclang-rt-14-dev openmpi-bin python3-torch python3-torchvision"
# The HTML report's end-to-end test: Chromium renders the page, libpng reads its screenshot.
DDPPROF_DEPS="$DDPPROF_DEPS chromium libpng-dev"

# Nsight Systems, from Debian's non-free component: nsight-systems-target holds the
# profiler and the NVTX3 headers (under /usr/lib/<triplet>/nsight-systems/target-linux-*/
# nvtx/include), nsight-systems the `nsys` command on PATH and the report tools.
DDPPROF_NSYS="nsight-systems-target nsight-systems"

# Sets SUDO to "" (root) or to the sudo command to use; returns 1 when neither will do.
# $1: "prompt" (sudo may ask for a password) or "no-prompt" (for callers with no terminal).
find_root() {
    if [ "$(id -u 2>/dev/null || echo 1)" = 0 ]; then
        SUDO=
    elif ! command -v sudo >/dev/null 2>&1; then
        return 1
    elif [ "$1" = prompt ]; then
        SUDO=sudo
    elif sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        return 1
    fi
}

# The Debian mirror this machine's own sources name (a machine behind a local mirror
# keeps using it), deb.debian.org when none can be read.
debian_mirror() {
    m=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*debian\)\/\{0,1\}[[:space:]]*$/\1/p' \
            /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    if [ -z "$m" ]; then
        m=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\(http[^[:space:]]*debian\)\/\{0,1\}[[:space:]].*/\2/p' \
                /etc/apt/sources.list 2>/dev/null | head -n 1)
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

# This machine's Debian codename, bookworm when /etc/os-release does not say.
debian_suite() {
    s=
    [ -r /etc/os-release ] && s=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    echo "${s:-bookworm}"
}

# Installs packages from the system's own sources; refreshes the package lists once
# when they are missing or stale. Needs SUDO set by find_root.
apt_install() {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install "$@" && return 0
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -q update &&
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends install "$@"
}

# Installs packages from the machine's mirror with the contrib and non-free components,
# which a default Debian install leaves out. Rather than edit /etc/apt, apt is pointed at
# a sources list and a lists directory of their own (under /var/lib/ddpprof-nsys), so the
# system's sources, lists (bookworm-updates, security) and package cache are left as they
# were. Needs SUDO set by find_root.
apt_install_nonfree() {
    state=/var/lib/ddpprof-nsys
    mirror=$(debian_mirror)
    suite=$(debian_suite)
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    signed=
    [ -r "$keyring" ] && signed="[signed-by=$keyring] "
    $SUDO mkdir -p "$state/lists/partial" || { echo "ddpprof: cannot create $state" >&2; return 1; }
    printf 'deb %s%s %s main contrib non-free\n' "$signed" "$mirror" "$suite" |
        $SUDO tee "$state/sources.list" >/dev/null || { echo "ddpprof: cannot write $state/sources.list" >&2; return 1; }
    pkgs=$*
    echo "ddpprof: installing $pkgs from $mirror $suite contrib/non-free" >&2
    # No package cache file either, so the system's is not rebuilt from these lists.
    set -- -o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=- \
           -o Dir::State::Lists="$state/lists" \
           -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" -q update ||
        { echo "ddpprof: apt-get update of $mirror $suite failed" >&2; return 1; }
    # shellcheck disable=SC2086 # package names, split on purpose
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" -q -y --no-install-recommends install $pkgs
}
