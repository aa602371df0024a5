#!/usr/bin/env bash
# allreduce_vs_peers.sh — puts the cpu backend's shared-memory allreduce
# (`ddpprof bench allreduce`) next to its peers on this machine:
#   * PyTorch's gloo allreduce among the same number of processes (bench/gloo_allreduce.py,
#     run with Debian's /usr/bin/python3 and its torch 1.13), and
#   * memcpy bandwidth with 1 thread and with one thread per online CPU (bench/memcpy_bw.c),
#     the physical limit for moving the bytes at all.
# It builds ./ddpprof if needed (make -C the repo root) and bench/results/memcpy_bw, runs all
# three, prints machine facts, each raw output and one comparison table (busbw in GB/s = 1e9 B/s,
# nccl-tests' convention: busbw = algbw * 2(n-1)/n; memcpy counted as bytes copied per second,
# memory traffic being twice that), and saves everything under bench/results/<timestamp>/.
# If /usr/bin/python3 has no torch the gloo column reads n/a; nothing else fails because of it.
#
#   usage: bench/allreduce_vs_peers.sh        (or: make bench)
#   env:   RANKS=4  SIZES=1M,25M,100M  PYTHON=/usr/bin/python3  CC=cc
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
ROOT=$PWD
RANKS=${RANKS:-4}
SIZES=${SIZES:-1M,25M,100M}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$ROOT/bench/results/allreduce_vs_peers-$STAMP
mkdir -p "$OUT"

# --- build -------------------------------------------------------------------------
if ! make -C "$ROOT" ddpprof >"$OUT/make.log" 2>&1; then
    if [[ -x $ROOT/ddpprof ]]; then
        echo "warning: 'make -C $ROOT ddpprof' failed (see $OUT/make.log); using the existing ./ddpprof" >&2
    else
        cat "$OUT/make.log" >&2
        echo "error: cannot build ./ddpprof" >&2
        exit 1
    fi
fi
MEMCPY_BIN=$ROOT/bench/results/memcpy_bw
if [[ ! -x $MEMCPY_BIN || $ROOT/bench/memcpy_bw.c -nt $MEMCPY_BIN ]]; then
    "$CC" -O2 -std=c11 -pthread -Wall -Wextra -Werror -o "$MEMCPY_BIN" "$ROOT/bench/memcpy_bw.c"
fi

# --- machine facts -----------------------------------------------------------------
NPROC=$(nproc)
CPU_MODEL=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
[[ -n $CPU_MODEL ]] || CPU_MODEL=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}' || true)
[[ -n $CPU_MODEL ]] || CPU_MODEL=unknown
MEM_TOTAL=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null || echo unknown)
{
    echo "== machine"
    echo "date:      $(date -Is)"
    echo "host:      $(uname -n) ($(uname -sr))"
    echo "nproc:     $NPROC"
    echo "cpu model: $CPU_MODEL"
    echo "memory:    $MEM_TOTAL"
    echo "load avg:  $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ddpprof:   $ROOT/ddpprof ($(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo 'no git'))"
} | tee "$OUT/machine.txt"
echo

# --- runs --------------------------------------------------------------------------
echo "== ddpprof bench allreduce --ranks $RANKS --sizes $SIZES"
"$ROOT/ddpprof" bench allreduce --ranks "$RANKS" --sizes "$SIZES" | tee "$OUT/ddpprof.txt"
echo

GLOO_NOTE=""
echo "== $PYTHON bench/gloo_allreduce.py --ranks $RANKS --sizes $SIZES"
if ! "$PYTHON" -c 'import torch, torch.distributed as d; assert d.is_available() and d.is_gloo_available()' \
    >/dev/null 2>&1; then
    GLOO_NOTE="$PYTHON has no torch with gloo: gloo column n/a"
    echo "$GLOO_NOTE" | tee "$OUT/gloo.txt"
elif ! "$PYTHON" "$ROOT/bench/gloo_allreduce.py" --ranks "$RANKS" --sizes "$SIZES" 2>"$OUT/gloo.err" |
    tee "$OUT/gloo.txt"; then
    cat "$OUT/gloo.err" >&2
    GLOO_NOTE="gloo_allreduce.py failed (see $OUT/gloo.err): gloo column n/a"
    echo "$GLOO_NOTE"
fi
echo

echo "== bench/results/memcpy_bw --sizes $SIZES"
"$MEMCPY_BIN" --sizes "$SIZES" | tee "$OUT/memcpy.txt"
echo

# --- comparison table --------------------------------------------------------------
# Rows keyed by size in bytes: ddpprof and gloo busbw are column 7 of their data lines;
# memcpy_bw's are "size threads reps time copy_GBps rw_GBps".
table() {
    awk -v ranks="$RANKS" -v nproc="$NPROC" '
        FNR == 1 { file = FILENAME == ARGV[1] ? 1 : FILENAME == ARGV[2] ? 2 : 3 }
        /^#/ || NF == 0 { next }
        file == 1 { order[++n] = $1; dd[$1] = $7 }
        file == 2 && NF >= 7 && $1 ~ /^[0-9]+$/ { gl[$1] = $7 }
        file == 3 && $2 == 1 { m1[$1] = $5 }
        file == 3 && ($2 > 1 || nproc == 1) { mn[$1] = $5; mt[$1] = $2 }
        function human(b) {
            if (b % 1073741824 == 0) return (b / 1073741824) "G"
            if (b % 1048576 == 0) return (b / 1048576) "M"
            if (b % 1024 == 0) return (b / 1024) "K"
            return b
        }
        function v(a, k) { return (k in a) ? a[k] : "n/a" }
        END {
            printf "%-18s | %17s | %20s | %15s | %15s\n", "size", "ddpprof cpu busbw",
                   "gloo (" ranks " procs) busbw", "memcpy 1-thread", "memcpy all-thr"
            printf "%-18s | %17s | %20s | %15s | %15s\n", "(B)", "(GB/s)", "(GB/s)", "(GB/s copied)",
                   "(" nproc " thr, GB/s)"
            printf "%s\n", "-------------------+-------------------+----------------------+-----------------+----------------"
            for (i = 1; i <= n; i++) {
                k = order[i]
                printf "%-18s | %17s | %20s | %15s | %15s\n", human(k) " (" k ")", v(dd, k), v(gl, k),
                       v(m1, k), v(mn, k)
            }
        }' "$OUT/ddpprof.txt" "$OUT/gloo.txt" "$OUT/memcpy.txt"
}
{
    echo "== comparison ($RANKS ranks; $NPROC online CPUs; busbw = algbw*2(n-1)/n; memcpy = bytes copied/s, traffic 2x)"
    table
    [[ -z $GLOO_NOTE ]] || echo "note: $GLOO_NOTE"
    echo "load avg after the runs: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews all columns)"
} | tee "$OUT/summary.txt"
echo
echo "raw outputs saved in ${OUT#"$ROOT"/}/"
