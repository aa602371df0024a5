#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages ddpprof builds and tests with, if missing.
# Idempotent and quick when everything is there (dpkg -s only).  Needs root or sudo
# when something must be installed.
set -euo pipefail

packages=(gcc make pkg-config libsqlite3-dev sqlite3 libinih-dev libopenblas-dev libjansson-dev libcmocka-dev)

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "ddpprof: installing missing packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "ddpprof: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists may be missing or stale: refresh once, then install.
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
    $sudo apt-get update
    $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
