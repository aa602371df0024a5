#!/bin/sh
# bootstrap.sh — from a bare Debian machine to a built ./ddpprof. Needs only sh and
# apt-get (and sudo when not root); safe to run again (it installs only what is missing).
#   1. make, gcc, pkg-config and the libraries (install-deps.sh, the list in common.sh);
#   2. `make deps`, which also installs Nsight Systems (nsys and its NVTX3 headers,
#      Debian's non-free nsight-systems and nsight-systems-target) when the CUDA toolkit's
#      NVTX3 headers are absent;
#   3. `make all`, which only builds ./ddpprof.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make deps
make all
