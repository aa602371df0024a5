#!/bin/sh
# import_big.sh — importing and reporting a big Kineto trace: time and peak memory of
# `ddpprof import` + `ddpprof report`, against Holistic Trace Analysis loading the same
# trace and computing its overlap and temporal breakdown, when HTA can be imported.
#
#   bench/import_big.sh [STEPS]        (default 190 steps: an 87 MB trace of one rank)
#   HTA_PATH=/path/to/HolisticTraceAnalysis bench/import_big.sh
#
# The trace is written by tests/import/kineto_gen.py (a simulated DDP job in the
# format PyTorch's profiler writes: 48 layers, 8 kernels each, NCCL allreduces) into
# build/bench-import/, kept between runs.  Also prints the results database's bytes per
# span (SQLite's dbstat).  Needs /usr/bin/time and /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
STEPS=${1:-190}
DIR=build/bench-import
TRACE=$DIR/trace-$STEPS
DB=$DIR/import.sqlite
BIN=${DDPPROF:-./ddpprof}
mkdir -p "$DIR"
if [ ! -f "$TRACE/rank0.json" ]; then
    /usr/bin/python3 tests/import/kineto_gen.py --out "$TRACE" --world 1 --steps "$STEPS" --layers 48 \
        --events-per-layer 8 >/dev/null
    rm -f "$TRACE/expected.txt"
fi
bytes=$(stat -c %s "$TRACE/rank0.json")
rm -f "$DB" "$DB-wal" "$DB-shm"
/usr/bin/time -f "%e %M" -o "$DIR/import.time" "$BIN" import "$TRACE" -o "$DB" >/dev/null
/usr/bin/time -f "%e %M" -o "$DIR/report.time" "$BIN" report "$DB" >/dev/null
read -r it im <"$DIR/import.time"
read -r rt rm_ <"$DIR/report.time"
spans=$(sqlite3 "$DB" "SELECT COUNT(*) FROM span_data")
per_span=$(sqlite3 "$DB" "SELECT printf('%.1f', SUM(pgsize) * 1.0 / $spans) FROM dbstat WHERE name IN ('span_data', 'span_run_seq', 'span_name', 'sqlite_autoindex_span_name_1')")
file_per_span=$(awk -v b="$(stat -c %s "$DB")" -v n="$spans" 'BEGIN { printf "%.1f", b / n }')
mb() { awk -v v="$1" -v d="$2" 'BEGIN { printf "%.1f", v / d }'; }
printf 'trace: %s, %s MB, %s spans imported\n' "$TRACE/rank0.json" "$(mb "$bytes" 1000000)" "$spans"
printf 'ddpprof import   %6.2f s  %7s MB peak\n' "$it" "$(mb "$im" 1024)"
printf 'ddpprof report   %6.2f s  %7s MB peak\n' "$rt" "$(mb "$rm_" 1024)"
printf 'store: %s bytes a span (span tables and string table, dbstat), %s bytes a span (whole file)\n' \
    "$per_span" "$file_per_span"
if [ -n "${HTA_PATH:-}" ] && PYTHONPATH="$HTA_PATH" /usr/bin/python3 -c 'import hta' 2>/dev/null; then
    cat >"$DIR/hta_bench.py" <<'PY'
import logging, sys, warnings
logging.disable(logging.WARNING)
warnings.filterwarnings("ignore")
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
print(a.get_comm_comp_overlap(visualize=False).to_string())
PY
    PYTHONPATH="$HTA_PATH" /usr/bin/time -f "%e %M" -o "$DIR/hta.time" /usr/bin/python3 "$DIR/hta_bench.py" "$TRACE" >/dev/null 2>&1
    read -r ht hm <"$DIR/hta.time"
    printf 'HTA load+analyse %6.2f s  %7s MB peak\n' "$ht" "$(mb "$hm" 1024)"
    awk -v it="$it" -v rt="$rt" -v im="$im" -v rm="$rm_" -v ht="$ht" -v hm="$hm" 'BEGIN {
        t = it + rt; m = im > rm ? im : rm
        printf "ddpprof (import + report) vs HTA: %.1fx less time, %.1fx less peak memory\n", ht / t, hm / m }'
else
    echo "HTA: not run (set HTA_PATH to a checkout of HolisticTraceAnalysis with pandas installed)"
fi
