#!/bin/sh
# install-nsys.sh — makes NVIDIA Nsight Systems available: `nsys` on PATH (for
# tests/test_nsys.c and `nsys profile`) and its NVTX3 headers (for the build, when the
# CUDA toolkit's are absent).
#
# Debian ships both in non-free (nsight-systems, nsight-systems-target), a component a
# default install leaves out; apt_install_nonfree in common.sh installs them without
# touching /etc/apt. Idempotent: exits 0 at once when nsys is on PATH and NVTX3 headers
# are there (the CUDA toolkit's under $CUDA_HOME, default /usr/local/cuda, or
# nsight-systems-target's). Exit 0 when nsys is on PATH afterwards, non-zero (with the
# reason) otherwise.
set -u
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"

have_nvtx() {
    for h in "${CUDA_HOME:-/usr/local/cuda}"/include/nvtx3/nvToolsExt.h \
             /usr/lib/*/nsight-systems/target-linux-*/nvtx/include/nvtx3/nvToolsExt.h; do
        [ -f "$h" ] && return 0
    done
    return 1
}

if command -v nsys >/dev/null 2>&1 && have_nvtx; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-nsys: Nsight Systems is missing and this is not a Debian system (no apt-get)" >&2
    exit 1
fi
if ! find_root no-prompt; then
    echo "install-nsys: Nsight Systems is missing and installing it needs root (or passwordless sudo)" >&2
    exit 1
fi
# shellcheck disable=SC2086 # package names, split on purpose
if ! apt_install_nonfree $DDPPROF_NSYS; then
    echo "install-nsys: apt-get install $DDPPROF_NSYS failed" >&2
    exit 1
fi
if ! command -v nsys >/dev/null 2>&1; then
    echo "install-nsys: $DDPPROF_NSYS installed but nsys is still not on PATH" >&2
    exit 1
fi
echo "install-nsys: $(nsys --version 2>/dev/null)" >&2
exit 0
