#!/bin/sh
# fresh_machine.sh — the README's two commands on a fresh Debian bookworm.
#
# Builds a minimal bookworm root with `debootstrap --variant=minbase` (no make, no
# compiler, nothing of ddpprof's), puts a clean clone of this repository at REF in it and
# runs there, as root, the two commands of that commit's README ("Two commands" section),
# one after the other. Fails, naming the command and showing the end of its log, when
# either fails or times out, or when the Nsight Systems test (tests/test_nsys.c, part of
# `make test`) was skipped instead of showing the run in Nsight Systems.
#
# Usage: tests/fresh_machine.sh [REF | --worktree]
#   REF          a commit of this repository (default HEAD)
#   --worktree   the working tree as it is (tracked and untracked files, not ignored ones)
# Needs root (or passwordless sudo), git, and network to a Debian mirror: the one this
# machine's apt sources name, else deb.debian.org. Installs debootstrap if missing.
# Environment:
#   FRESH_CACHE  where the bootstrapped root (a tarball) and downloaded packages are kept,
#                so that a second run downloads nothing (default /var/cache/ddpprof-fresh)
#   FRESH_LOGS   where the logs go (default: a new /tmp/ddpprof-fresh-logs.XXXXXX)
#   FRESH_TIMEOUT_BOOTSTRAP, FRESH_TIMEOUT_CMD   limits in seconds (1200, 2400 each)
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
REF=${1:-HEAD}
SUITE=bookworm

if [ "$(id -u)" != 0 ]; then
    if ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
        echo "fresh_machine: needs root (or passwordless sudo): debootstrap, mount, chroot" >&2
        exit 1
    fi
    exec sudo -n env FRESH_CACHE="${FRESH_CACHE:-}" FRESH_LOGS="${FRESH_LOGS:-}" \
        FRESH_TIMEOUT_BOOTSTRAP="${FRESH_TIMEOUT_BOOTSTRAP:-}" FRESH_TIMEOUT_CMD="${FRESH_TIMEOUT_CMD:-}" \
        "$HERE/fresh_machine.sh" "$@"
fi

CACHE=${FRESH_CACHE:-/var/cache/ddpprof-fresh}
LOGS=${FRESH_LOGS:-$(mktemp -d /tmp/ddpprof-fresh-logs.XXXXXX)}
T_BOOT=${FRESH_TIMEOUT_BOOTSTRAP:-1200}
T_CMD=${FRESH_TIMEOUT_CMD:-2400}
mkdir -p "$CACHE/archives/partial" "$LOGS"

# The mirror choice and the apt helpers are the installers' own.
# shellcheck source=scripts/common.sh
. "$REPO/scripts/common.sh"
SUDO=
MIRROR=$(debian_mirror)
ARCH=$(dpkg --print-architecture)

say() { echo "fresh_machine: $*" >&2; }
now() { date +%s; }
T0=$(now)

fail() { # $1 what failed, $2 its log
    say "FAILED: $1"
    if [ -n "${2:-}" ] && [ -f "$2" ]; then
        echo "---- last 80 lines of $2 ----" >&2
        tail -n 80 "$2" >&2
        echo "---- end ----" >&2
    fi
    say "logs in $LOGS; $(($(now) - T0)) s in all"
    exit 1
}

# Runs "$@" under a time limit, output to log $1 (after $2 = limit in s); says how long it took.
timed() {
    log=$1 limit=$2
    shift 2
    t=$(now)
    rc=0
    # In the background, so that a signal to this script is handled at once (see the traps).
    timeout -k 30 "$limit" "$@" >"$log" 2>&1 </dev/null &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=
    STEP_S=$(($(now) - t))
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        say "timed out after $limit s"
    fi
    return "$rc"
}

for c in git chroot mount umount timeout tar; do
    command -v "$c" >/dev/null 2>&1 || fail "$c is missing on this machine"
done
if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    apt_install debootstrap >"$LOGS/debootstrap-install.log" 2>&1 ||
        fail "apt-get install debootstrap" "$LOGS/debootstrap-install.log"
fi

ROOT=$(mktemp -d /var/tmp/ddpprof-fresh.XXXXXX)
MOUNTS= # mounted under ROOT, most recent first

mnt() { # mount options... target (the last argument)
    for target; do :; done
    mount "$@" && MOUNTS="$target $MOUNTS"
}

mounted_under_root() {
    awk -v r="$ROOT/" 'index($2 "/", r) == 1 { print $2 }' /proc/self/mounts
}

cleanup() {
    # Whatever still runs inside the root (a timed-out test's children) goes first.
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -9 "${p#/proc/}" 2>/dev/null
    done
    for m in $MOUNTS; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cannot unmount $m"
    done
    if [ -n "$(mounted_under_root)" ]; then
        say "still mounted under $ROOT, left in place: $(mounted_under_root | tr '\n' ' ')"
    else
        rm -rf --one-file-system "$ROOT"
    fi
}
CHILD= # the running step's timeout process
trap cleanup EXIT
trap '[ -z "$CHILD" ] || kill -TERM "$CHILD" 2>/dev/null; exit 130' INT TERM HUP

# 1. A minimal bookworm root, from the cached tarball when there is one.
TARBALL=$CACHE/$SUITE-minbase-$ARCH.tar.gz
INCLUDE=
case $MIRROR in https:*) INCLUDE=--include=ca-certificates ;; esac
if [ -s "$TARBALL" ]; then
    say "unpacking the cached minimal $SUITE root ($TARBALL)"
    timed "$LOGS/debootstrap.log" "$T_BOOT" tar -C "$ROOT" --numeric-owner -xzf "$TARBALL" ||
        fail "unpacking $TARBALL" "$LOGS/debootstrap.log"
else
    say "debootstrap --variant=minbase $SUITE from $MIRROR"
    # shellcheck disable=SC2086 # INCLUDE is one option or nothing
    timed "$LOGS/debootstrap.log" "$T_BOOT" debootstrap --variant=minbase $INCLUDE "$SUITE" "$ROOT" "$MIRROR" ||
        fail "debootstrap --variant=minbase $SUITE $ROOT $MIRROR" "$LOGS/debootstrap.log"
    if ! { tar -C "$ROOT" --numeric-owner -czf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"; }; then
        rm -f "$TARBALL.tmp"
        say "could not cache the root in $TARBALL (going on)"
    fi
fi
say "root ready in $STEP_S s"
chmod 0755 "$ROOT" # mktemp's 0700 would keep every other user out of / (tests drop to nobody)
printf 'deb %s %s main\n' "$MIRROR" "$SUITE" >"$ROOT/etc/apt/sources.list"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"

# 2. A clean clone of the repository at REF (or the working tree as it is).
SRC=$ROOT/root/ddpprof
git_repo() { git -c safe.directory="$REPO" -C "$REPO" "$@"; }
if [ "$REF" = --worktree ]; then
    mkdir -p "$SRC"
    git_repo ls-files -z -c -o --exclude-standard |
        (cd "$REPO" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$SRC" -xf - ||
        fail "copying the working tree"
    WHAT="the working tree of $REPO"
else
    COMMIT=$(git_repo rev-parse --verify "$REF^{commit}") || fail "no commit $REF in $REPO"
    if ! { git -c safe.directory="$REPO" clone -q --no-checkout "$REPO" "$SRC" &&
           git -C "$SRC" checkout -q --detach "$COMMIT"; } >"$LOGS/clone.log" 2>&1; then
        fail "git clone of $REPO at $COMMIT" "$LOGS/clone.log"
    fi
    WHAT="$REPO at $(git_repo log -1 --format='%h %s' "$COMMIT")"
fi
say "source: $WHAT"

# The README's two commands: the first indented block of its "Two commands" section,
# less the comments after them.
CMDS=$(awk '/^## /{ on = ($0 == "## Two commands") } on && /^    [^ ]/{ print; seen = 1; next } seen { exit }' \
           "$SRC/README.md" | sed 's/^ *//; s/[[:space:]]\{2,\}#.*$//')
[ "$(printf '%s\n' "$CMDS" | grep -c .)" = 2 ] ||
    fail "README.md's \"Two commands\" section does not hold two commands: $CMDS"

# 3. What a chroot needs: /proc, /sys, /dev (with pts and its own shm), and the package
#    cache shared between runs.
mnt -t proc proc "$ROOT/proc" || fail "mount /proc"
mnt -t sysfs sysfs "$ROOT/sys" || mnt --rbind /sys "$ROOT/sys" || fail "mount /sys"
mnt --bind /dev "$ROOT/dev" || fail "mount /dev"
mnt --bind /dev/pts "$ROOT/dev/pts" || fail "mount /dev/pts"
mnt -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm" || fail "mount /dev/shm"
mnt --bind "$CACHE/archives" "$ROOT/var/cache/apt/archives" || fail "mount the package cache"

# 4. The two commands, as root in the fresh root, each under its time limit.
n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    log=$LOGS/command$n.log
    say "command $n: $cmd"
    timed "$log" "$T_CMD" chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c "cd /root/ddpprof && $cmd" ||
        fail "command $n of the README, '$cmd' (exit status $?, after $STEP_S s)" "$log"
    say "command $n passed in $STEP_S s"
done <<EOF
$CMDS
EOF

# make test runs test_nsys, which skips (and so passes) when nsys cannot be had: here
# that is a failure, since the first command must have made the run visible in nsys.
if grep -q 'test_nsys: SKIPPED' "$LOGS"/command*.log; then
    fail "the Nsight Systems test was skipped" "$(grep -l 'test_nsys: SKIPPED' "$LOGS"/command*.log | head -n 1)"
fi
grep -q 'test_nvtx_ranges_in_nsys_trace' "$LOGS"/command*.log ||
    fail "the Nsight Systems test did not run" "$LOGS/command2.log"
say "PASSED: the README's two commands on a fresh $SUITE, $(($(now) - T0)) s in all (logs in $LOGS)"
