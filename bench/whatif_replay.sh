#!/usr/bin/env bash
# whatif_replay.sh — how well `ddpprof whatif` replays what it derives from: every run the
# recorded scenarios make on the cpu backend and every trace the import tests make, each
# derived and predicted unchanged, measured against replayed step (the job's, mean over
# measured iterations) and DDP's overlap per rank; and the DDP traces of real jobs in
# ../shared/traces (TRACES=DIR), where present.  Prints a table; asserts nothing.
#
#   bench/whatif_replay.sh            (DDPPROF=./ddpprof, OUT=a scratch directory)
#
# Traces: tests/import/kineto_gen.py (Kineto JSON with NCCL kernels: both naming schemes,
# both time bases, a slow rank; an Nsight Systems export) and tests/import/ddp_trace.py
# (a real PyTorch 1.13 gloo job on CPU, 4 processes, one rank slowed; its list-form trace
# gives no message sizes, so its buckets are their times' equivalent bytes).
set -u
cd "$(dirname "$0")/.."
DDPPROF=${DDPPROF:-./ddpprof}
OUT=${OUT:-$(mktemp -d /tmp/ddpprof-whatif-bench.XXXXXX)}
mkdir -p "$OUT"
DB=$OUT/replay.sqlite
rm -f "$DB"
SCENARIOS="baseline skewed bucket_sweep resnet18_buckets no_sync nvtx_small"

say() { printf '%s\n' "$*" >&2; }
calc() { awk "BEGIN { print $* }"; } # arithmetic without bc (not in a minimal Debian)

# Each source run: "ID LABEL".
sources=()
for s in $SCENARIOS; do
    before=$(sqlite3 "$DB" "select coalesce(max(id), 0) from run" 2>/dev/null || echo 0)
    "$DDPPROF" run "scenarios/$s.ini" -o "$DB" -q --backend cpu >/dev/null 2>"$OUT/$s.err" || { say "run $s failed"; continue; }
    for id in $(sqlite3 "$DB" "select id from run where id > $before order by id"); do
        sources+=("$id cpu:$(sqlite3 "$DB" "select name from run where id = $id")")
    done
done
gen() { /usr/bin/python3 tests/import/kineto_gen.py --out "$OUT/$1" "${@:2}" >/dev/null; }
gen k_kernel --world 4 --steps 6 --layers 8 --slow-rank 2 --slow 1.5
gen k_devkernel_int --world 2 --steps 5 --layers 6 --scheme devkernel --timebase int
gen k_world3 --world 3 --steps 6 --layers 10 --events-per-layer 4
gen nsys --world 2 --steps 5 --layers 6 --format nsys
/usr/bin/python3 tests/import/ddp_trace.py --out "$OUT/torch" --world 4 --slow-rank 2 --slow-ms 40 --steps 6 \
    >/dev/null 2>&1 || say "no PyTorch job (torch missing?)"
for t in k_kernel k_devkernel_int k_world3 nsys torch; do
    [ -d "$OUT/$t" ] || continue
    "$DDPPROF" import "$OUT/$t" -o "$DB" --name "$t" >/dev/null 2>"$OUT/$t.err" || { say "import $t failed"; continue; }
    sources+=("$(sqlite3 "$DB" "select max(id) from run") trace:$t")
done

# Real jobs' traces (../shared/traces, or TRACES=DIR): each DDP one's files, one job a run.
TRACES=${TRACES:-../shared/traces}
if [ -d "$TRACES" ]; then
    for job in "$TRACES"/tracelens_mi300x_rank0of8 "$TRACES"/hta_a100_rank0of16 "$TRACES"/hta_sampled_2of128 \
        "$TRACES"/hta_v100_ws1 "$TRACES"/hta_gloo_cpu_rank34of300; do
        [ -d "$job" ] || continue
        t=real:$(basename "$job")
        "$DDPPROF" import "$job"/*.json.gz -o "$DB" --name "$t" >/dev/null 2>"$OUT/${t#real:}.err" || { say "import $t failed"; continue; }
        sources+=("$(sqlite3 "$DB" "select max(id) from run") $t")
    done
else
    say "no real traces at $TRACES (TRACES=DIR names them)"
fi

per_rank_sql() { # run id -> "rank step_ms overlap_pct" lines
    sqlite3 -separator ' ' "$DB" "select rank, round(avg(step_ns) / 1e6, 3), round(100.0 * sum(overlap_ns) /
        nullif(sum(comm_ns), 0), 1) from iteration_stats where run_id = $1 and warmup = 0 group by rank order by rank"
}
job_step() {
    sqlite3 "$DB" "select round(avg(s) / 1e6, 3) from (select max(step_ns) as s from iteration_stats where
        run_id = $1 and warmup = 0 group by iter)"
}

printf '%-34s %4s  %10s %10s %7s  %9s %9s %6s\n' "source" "rank" "step ms" "replayed" "error" "overlap" "replayed" "diff"
for src in "${sources[@]}"; do
    id=${src%% *}
    label=${src#* }
    before=$(sqlite3 "$DB" "select max(id) from run")
    if ! "$DDPPROF" whatif "$DB" --run "$id" -q >"$OUT/whatif-$id.out" 2>&1; then
        printf '%-34s  refused: %s\n' "$label" "$(tail -n 1 "$OUT/whatif-$id.out" | cut -c1-110)"
        continue
    fi
    rep=$(sqlite3 "$DB" "select max(id) from run")
    [ "$rep" != "$before" ] || continue
    a=$(job_step "$id")
    b=$(job_step "$rep")
    printf '%-34s %4s  %10s %10s %6.1f%%\n' "$label" "job" "$a" "$b" "$(calc "100 * ($b - $a) / $a")"
    paste -d ' ' <(per_rank_sql "$id") <(per_rank_sql "$rep") | while read -r r sa oa _ sb ob; do
        d=$( [ -n "$oa" ] && [ -n "$ob" ] && calc "$ob - $oa" || echo 0)
        printf '%-34s %4s  %10s %10s %6.1f%%  %9s %9s %+6.1f\n' "" "$r" "$sa" "$sb" \
            "$(calc "100 * ($sb - $sa) / $sa")" "${oa:--}" "${ob:--}" "$d"
    done
done
say "databases and logs in $OUT"
