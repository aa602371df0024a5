#!/bin/sh
# install-nsys.sh — makes NVIDIA Nsight Systems' `nsys` available for tests/test_nsys.c.
#
# Debian ships nsys in non-free (nsight-systems, nsight-systems-target), a component
# this machine's own sources leave out. Rather than edit /etc/apt, this script points
# apt at a sources list and a lists directory of its own, so the system's package state
# is left exactly as it was. Idempotent: exits 0 at once when nsys is already there.
# Exit 0 when nsys is on PATH afterwards, non-zero (with the reason) otherwise.
set -u

if command -v nsys >/dev/null 2>&1; then
    exit 0
fi

if [ "$(id -u 2>/dev/null || echo 1)" = 0 ]; then
    SUDO=
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "install-nsys: nsys is missing and installing it needs root (or passwordless sudo)" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-nsys: nsys is missing and this is not a Debian system (no apt-get)" >&2
    exit 1
fi

# Reuse the mirror this machine's own sources name, so that a machine behind a local
# mirror keeps using it; deb.debian.org when none can be read.
MIRROR=$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*debian\)\/\{0,1\}[[:space:]]*$/\1/p' \
             /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
if [ -z "$MIRROR" ]; then
    MIRROR=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\(http[^[:space:]]*debian\)\/\{0,1\}[[:space:]].*/\2/p' \
                 /etc/apt/sources.list 2>/dev/null | head -n 1)
fi
MIRROR=${MIRROR:-http://deb.debian.org/debian}

SUITE=bookworm
if [ -r /etc/os-release ]; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] && SUITE=$codename
fi

STATE=/var/lib/ddpprof-nsys
LIST=$STATE/sources.list
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
SIGNED=
[ -r "$KEYRING" ] && SIGNED="[signed-by=$KEYRING] "

$SUDO mkdir -p "$STATE/lists/partial" || { echo "install-nsys: cannot create $STATE" >&2; exit 1; }
printf 'deb %s%s %s main contrib non-free\n' "$SIGNED" "$MIRROR" "$SUITE" | $SUDO tee "$LIST" >/dev/null \
    || { echo "install-nsys: cannot write $LIST" >&2; exit 1; }

# A lists directory of its own keeps `apt-get update` from discarding the system's lists
# (bookworm-updates, security) that this sources list does not name; no package cache
# file, so the system's is not overwritten with one built from these lists.
set -- -o Dir::Etc::sourcelist="$LIST" -o Dir::Etc::sourceparts=- \
       -o Dir::State::Lists="$STATE/lists" \
       -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=

echo "install-nsys: installing nsight-systems from $MIRROR $SUITE non-free" >&2
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" -q update; then
    echo "install-nsys: apt-get update of $MIRROR $SUITE failed" >&2
    exit 1
fi
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" -q -y --no-install-recommends \
        install nsight-systems-target nsight-systems; then
    echo "install-nsys: apt-get install nsight-systems-target nsight-systems failed" >&2
    exit 1
fi

if ! command -v nsys >/dev/null 2>&1; then
    echo "install-nsys: nsight-systems installed but nsys is still not on PATH" >&2
    exit 1
fi
echo "install-nsys: $(nsys --version 2>/dev/null)" >&2
exit 0
