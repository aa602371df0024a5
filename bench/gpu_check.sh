#!/usr/bin/env bash
# gpu_check.sh — the cuda backend on a machine with a GPU: everything that cannot be
# checked without one, with the figures printed.
#
#   1. baseline.ini and skewed.ini at world_size 1 and 2 (WORLDS="1 2 4" for more) on the
#      GPUs here (ranks share a GPU when they outnumber them), compute = model and
#      compute = real, --verify:
#      step time, overlap and wait per run (the report's lines);
#   2. CUPTI kernel times against CUDA-event op times: the same run with CUPTI
#      (per-kernel spans) and with DDPPROF_CUPTI=0 (one CUDA-event span per op), compute
#      and comm busy time per iteration from each database;
#   3. the profiler's overhead: mean step time with CUPTI against without;
#   4. `ddpprof bench allreduce --backend cuda` (busbw) on the GPUs of this process;
#   5. the watchdog: a rank that hangs (fault.mode = hang) must fail the run with the
#      collective named within [run] timeout_s, exit 1, spans kept;
#   6. nsys, when it is installed: the run under Nsight Systems (CUPTI is then taken, so
#      ddpprof must say it falls back to CUDA events), with its NVTX and kernel summary.
# Writes its databases and logs under OUT (default: a temp directory), prints the figures.
#
#   usage: bench/gpu_check.sh [OUT]      (BACKEND=cpu runs the same runs on the cpu backend;
#          DDPPROF=PATH runs that binary instead of building ./ddpprof; each run is given
#          RUN_LIMIT_S seconds, default 120)
set -uo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
ROOT=$PWD
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-gpu.XXXXXX")}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
fail=0

say() { printf '\n== %s\n' "$*"; }

if [[ -z ${DDPPROF:-} ]]; then
    make -C "$ROOT" -j"$(nproc)" ddpprof >"$OUT/build.log" 2>&1 || { echo "build failed: $OUT/build.log" >&2; tail -20 "$OUT/build.log"; exit 1; }
    DDPPROF=./ddpprof
fi
WORLDS=${WORLDS:-1 2}
RUN_LIMIT_S=${RUN_LIMIT_S:-120}
$DDPPROF --version
command -v nvidia-smi >/dev/null && nvidia-smi -L

# run NAME SCENARIO [ENV=VALUE ...] -- [ddpprof run options]: one run into OUT/NAME.sqlite,
# its report in OUT/NAME.txt, its stderr in OUT/NAME.err; prints the report's key lines.
run() {
    local name=$1 scen=$2
    shift 2
    local envs=()
    while [[ $# -gt 0 && $1 != -- ]]; do envs+=("$1"); shift; done
    [[ ${1:-} == -- ]] && shift
    rm -f "$OUT/$name.sqlite"*
    local t0=$SECONDS
    env "${envs[@]}" timeout -k 5 "$RUN_LIMIT_S" $DDPPROF run "$scen" --backend "${BACKEND:-cuda}" -o "$OUT/$name.sqlite" "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err"
    local rc=$?
    printf '%-34s exit %d  %3d s  ' "$name" "$rc" $((SECONDS - t0))
    grep -E '^run [0-9]+ ' "$OUT/$name.err" | tail -1
    grep -E '^  (step time|ranks|error) ' "$OUT/$name.txt" | sed 's/^/      /'
    awk '/^  rank  speed/{p=1} p&&/^ *$/{exit} p' "$OUT/$name.txt" | sed 's/^/      /'
    grep -E 'CUPTI|shares GPU|NCCL' "$OUT/$name.err" | sort -u | head -4 | sed 's/^/      stderr: /'
    return $rc
}

speeds() { # the skew.speed list for N ranks: the first half 1.5x faster
    local n=$1 s="" i
    for ((i = 0; i < n; i++)); do s+="${s:+, }$([[ $i -lt $(((n + 1) / 2)) && $n -gt 1 ]] && echo 1.5 || echo 1.0)"; done
    echo "$s"
}

say "1. baseline and skewed, world_size $WORLDS, --verify (compute = model, then real)"
for compute in model real; do
    for ws in $WORLDS; do
        run "baseline-$compute-ws$ws" scenarios/baseline.ini -- --verify -s "run.world_size=$ws" -s "model.compute=$compute" || fail=1
        run "skewed-$compute-ws$ws" scenarios/skewed.ini -- --verify -s "run.world_size=$ws" -s "skew.speed=$(speeds "$ws")" \
            -s "model.compute=$compute" || fail=1
    done
done

say "2. CUPTI kernel spans against CUDA-event op spans (skewed, real, 2 ranks)"
run cupti-on scenarios/skewed.ini -- -s run.world_size=2 -s "skew.speed=$(speeds 2)" -s model.compute=real || fail=1
run cupti-off scenarios/skewed.ini DDPPROF_CUPTI=0 -- -s run.world_size=2 -s "skew.speed=$(speeds 2)" -s model.compute=real || fail=1
"$PY" - "$OUT/cupti-on.sqlite" "$OUT/cupti-off.sqlite" <<'PYEOF' || fail=1
import sqlite3, sys
# Busy time per (rank, stream) per measured iteration: the union of its spans, so that
# per-kernel spans (CUPTI) and per-op spans (events) are comparable.
def busy(path):
    db = sqlite3.connect(path)
    run = db.execute("SELECT max(id) FROM run").fetchone()[0]
    warm = db.execute("SELECT warmup FROM run WHERE id=?", (run,)).fetchone()[0]
    rows = db.execute("SELECT rank, stream, iter, start_ns, end_ns FROM span WHERE run_id=? AND iter>=? "
                      "AND stream IN ('compute','comm') ORDER BY rank, stream, iter, start_ns", (run, warm)).fetchall()
    acc, cur = {}, {}
    for r, s, it, a, b in rows:
        k = (r, s, it)
        lo, hi = cur.get(k, (None, None))
        if lo is None or a > hi:
            if lo is not None: acc[k] = acc.get(k, 0) + hi - lo
            cur[k] = (a, b)
        else:
            cur[k] = (lo, max(hi, b))
    for k, (lo, hi) in cur.items(): acc[k] = acc.get(k, 0) + hi - lo
    n = db.execute("SELECT count(*) FROM span WHERE run_id=?", (run,)).fetchone()[0]
    per = {}
    for (r, s, it), v in acc.items(): per.setdefault((r, s), []).append(v)
    return {k: sum(v) / len(v) / 1e6 for k, v in per.items()}, n
on, n_on = busy(sys.argv[1]); off, n_off = busy(sys.argv[2])
print(f"   spans: CUPTI {n_on}, CUDA events {n_off}")
print("   rank stream    CUPTI busy ms/iter  events busy ms/iter  diff %")
for k in sorted(set(on) | set(off)):
    a, b = on.get(k, float('nan')), off.get(k, float('nan'))
    print(f"   {k[0]:4d} {k[1]:8s} {a:18.3f} {b:20.3f} {100 * (a - b) / b if b else float('nan'):7.2f}")
PYEOF

say "3. profiler overhead: step time with CUPTI against without (3 runs each, skewed, real, 2 ranks)"
for i in 1 2 3; do
    run "ovh-on-$i" scenarios/skewed.ini -- -s run.world_size=2 -s "skew.speed=$(speeds 2)" -s model.compute=real >/dev/null || fail=1
    run "ovh-off-$i" scenarios/skewed.ini DDPPROF_CUPTI=0 -- -s run.world_size=2 -s "skew.speed=$(speeds 2)" -s model.compute=real >/dev/null || fail=1
done
for mode in on off; do
    printf '   CUPTI %-3s step time: ' "$mode"
    grep -h '^  step time' "$OUT"/ovh-$mode-*.txt | sed 's/^  step time *//' | tr '\n' ';'
    echo
done

say "4. ddpprof bench allreduce --backend cuda (GPUs of this process)"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
timeout -k 5 "$RUN_LIMIT_S" $DDPPROF bench allreduce --backend cuda --ranks 1 --sizes 1M,25M,100M,1G || fail=1
# Two ranks: on one GPU they share it, NCCL over loopback sockets.
timeout -k 5 "$RUN_LIMIT_S" $DDPPROF bench allreduce --backend cuda --ranks "$((ngpu > 1 ? ngpu : 2))" --sizes 1M,25M,100M || fail=1

say "5. watchdog: rank 1 hangs at iteration 3, timeout_s = 10 (must exit 1 naming the collective)"
run hung scenarios/baseline.ini -- -s run.world_size=2 -s fault.rank=1 -s fault.iter=3 -s fault.mode=hang -s run.timeout_s=10
rc=$?
if [[ $rc -ne 1 ]] || ! grep -q 'did not complete within\|collective' "$OUT/hung.err" "$OUT/hung.txt"; then
    echo "   WATCHDOG CHECK FAILED (exit $rc)"; fail=1
fi
"$PY" -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print('   spans kept:', db.execute('select count(*) from span').fetchone()[0])" "$OUT/hung.sqlite"

say "6. nsys"
if command -v nsys >/dev/null; then
    nsys profile --trace=cuda,nvtx,osrt --force-overwrite=true -o "$OUT/nsys-baseline" \
        $DDPPROF run scenarios/baseline.ini --backend cuda -o "$OUT/nsys.sqlite" -s run.world_size=2 \
        >"$OUT/nsys.txt" 2>"$OUT/nsys.err" || fail=1
    grep -E 'CUPTI' "$OUT/nsys.err" | sort -u | head -3
    nsys stats --report nvtx_sum,cuda_gpu_kern_sum "$OUT/nsys-baseline.nsys-rep" 2>/dev/null | head -40
else
    echo "   nsys not installed: skipped"
fi

echo
echo "databases and logs: $OUT"
[[ $fail -eq 0 ]] && echo "gpu_check: all steps ran" || echo "gpu_check: SOME STEPS FAILED (see above)"
exit $fail
