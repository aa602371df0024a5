#!/bin/sh
# install-deps.sh — installs the Debian packages ddpprof builds and tests with, if missing
# (the list is DDPPROF_DEPS in common.sh). Idempotent and quick when everything is there
# (dpkg -s only). Needs root or sudo when something must be installed.
set -eu
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"

missing=
for p in $DDPPROF_DEPS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "ddpprof: installing missing packages:$missing" >&2
find_root prompt || { echo "ddpprof: need root or sudo to install:$missing" >&2; exit 1; }
# shellcheck disable=SC2086 # package names, split on purpose
apt_install $missing
