#!/usr/bin/env bash
# whatif_vs_pytorch.sh — ground truth for a change: real PyTorch DDP (Debian's torch 1.13,
# gloo, CPU processes of one thread each) trained at several bucket_cap_mb and traced
# (bench/ddp_bucket_run.py); every trace imported and `ddpprof whatif -s
# ddp.bucket_cap_mb=...` from it predicting every cap.  Prints the measured step per cap
# (median and range over REPS repetitions) and, per source cap and target cap, the predicted
# step beside the measured one, with the error.  A refusal is printed with its reason.
# Asserts nothing: a benchmark.  2026-11-28 on the 2-core VM (load 4.5-5.9): replays within 7 %,
# larger caps predicted 25-45 % slower against 3-13 % measured, smaller ones unchanged against
# 3-11 % faster (docs/validation.md, "whatif against PyTorch DDP").
#
#   bench/whatif_vs_pytorch.sh     (REPS=7 CAPS="1 5 25 100" WORLD=4 LAYERS=12 WIDTH=1024
#                                   BATCH=32 TIMED=8 ACTIVE=5 TRACE=shapes OUT=a scratch dir)
#   REUSE=1 OUT=DIR bench/whatif_vs_pytorch.sh   (no PyTorch: DIR's traces predicted again)
#
# Interleaved: each repetition is one job that runs every cap in turn, seconds apart, the
# order rotated from one repetition to the next.  Each cap is measured twice: "wall", TIMED
# untraced steps by the clock in the script; "trace", the ProfilerStep#N of ACTIVE steps
# traced with record_shapes=True (the profiler slows them); both the job's period (each
# rank's mean step, the slowest rank's).  The prediction is of the traced job, so its error
# is given against both.  TRACE=shapes writes the trace with Kineto's `Input Dims`/`Input
# type` (this torch records shapes but its list-form export drops them); TRACE=plain keeps
# torch's own file, which gives whatif no message sizes.
set -u
cd "$(dirname "$0")/.." || exit 2
DDPPROF=${DDPPROF:-./ddpprof}
PY=/usr/bin/python3 # Debian's, with python3-torch; not the python3 first on PATH
REPS=${REPS:-7}
CAPS=${CAPS:-1 5 25 100}
WORLD=${WORLD:-4} LAYERS=${LAYERS:-12} WIDTH=${WIDTH:-1024} BATCH=${BATCH:-32}
TIMED=${TIMED:-8} ACTIVE=${ACTIVE:-5} TRACE=${TRACE:-shapes}
OUT=${OUT:-$(mktemp -d /tmp/ddpprof-whatif-pytorch.XXXXXX)}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT"
DB=$OUT/whatif.sqlite
rm -f "$DB" "$OUT/pred.tsv" "$OUT/refused.tsv" "$OUT/notes.tsv"
[ -n "${REUSE:-}" ] || rm -f "$OUT/runs.jsonl"
say() { printf '%s\n' "$*" >&2; }

[ -x "$DDPPROF" ] || { say "no $DDPPROF: make ddpprof"; exit 2; }
"$PY" -c 'import torch' 2>/dev/null || { say "$PY has no torch (apt install python3-torch)"; exit 2; }
printf 'whatif against PyTorch DDP: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
printf 'machine: %s cores, %s; ddpprof %s; torch %s\n' "$(getconf _NPROCESSORS_ONLN)" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$("$PY" -c 'import torch; print(torch.__version__)')"

# 1. Measure, caps interleaved.
measure() {
    printf 'load before: %s\n' "$(uptime | sed 's/.*load average/load average/')"
    local caps
    read -r -a caps <<<"$CAPS"
    for r in $(seq 1 "$REPS"); do
        local order=() i n=${#caps[@]}
        for ((i = 0; i < n; i++)); do order+=("${caps[(i + r - 1) % n]}"); done
        d=$OUT/rep$r
        if "$PY" bench/ddp_bucket_run.py --out "$d" --bucket-cap-mb "$(IFS=,; echo "${order[*]}")" \
            --world "$WORLD" --layers "$LAYERS" --width "$WIDTH" --batch "$BATCH" --timed "$TIMED" \
            --active "$ACTIVE" --trace "$TRACE" >"$d.json" 2>"$d.err"; then
            "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    print(json.dumps({"rep": int(sys.argv[2]), "dir": j["dir"], "run": j}))
    print("rep %s cap %g: wall %.1f ms, trace %.1f ms, load %.2f" % (sys.argv[2], j["bucket_cap_mb"], j["wall_ms"],
          j["trace_ms"], j["load"]), file=sys.stderr)' "$d.json" "$r" >>"$OUT/runs.jsonl"
        else
            say "rep $r: PyTorch job failed (see $d.err)"
        fi
    done
    printf 'load after:  %s\n' "$(uptime | sed 's/.*load average/load average/')"
}

# 2. Import each traced run; from each, predict every cap.
job_step() { # run id -> the job's step, ms: mean over measured iterations of the slowest rank's
    sqlite3 "$DB" "select round(avg(s) / 1e6, 3) from (select max(step_ns) as s from iteration_stats where
        run_id = $1 and warmup = 0 group by iter)"
}
predict() { # per source run and target cap: a prediction, or the refusal's reason
    "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    j = json.loads(l); print(j["rep"], j["run"]["bucket_cap_mb"], j["dir"])' "$OUT/runs.jsonl" |
    while read -r r c d; do
        c=$(printf '%g' "$c")
        if ! "$DDPPROF" import "$d" -o "$DB" --name "cap$c-rep$r" >"$d.import" 2>&1; then
            for t in $CAPS; do
                printf '%s\t%s\t%s\timport: %s\n' "$c" "$r" "$t" "$(tail -n 1 "$d.import" | cut -c1-160)"
            done >>"$OUT/refused.tsv"
            continue
        fi
        id=$(sqlite3 "$DB" "select max(id) from run")
        src=$(job_step "$id")
        for t in $CAPS; do # the source's own cap: the replay, unchanged
            set -- -q
            [ "$(printf '%g' "$t")" = "$c" ] || set -- -q -s "ddp.bucket_cap_mb=$t"
            if ! "$DDPPROF" whatif "$DB" --run "$id" "$@" >"$d.whatif-$t" 2>&1; then
                printf '%s\t%s\t%s\t%s\n' "$c" "$r" "$t" "$(tail -n 1 "$d.whatif-$t" |
                    sed 's/^ddpprof: whatif: [^:]*: run [0-9]*: //' | cut -c1-160)" >>"$OUT/refused.tsv"
                continue
            fi
            [ "$t" != "$c" ] || printf '%s\t%s\t%s\n' "$c" "$r" "$(grep -E -m2 '^(sizes|model):' "$d.whatif-$t" |
                cut -c1-260 | paste -sd '|')" >>"$OUT/notes.tsv"
            printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$r" "$t" "$(job_step "$(sqlite3 "$DB" "select max(id) from run")")" \
                "$src" >>"$OUT/pred.tsv"
        done
    done
}
[ -n "${REUSE:-}" ] || measure # REUSE=1 OUT=DIR: that check's traces imported and predicted again
predict

# 3. The tables.
"$PY" - "$OUT" "$CAPS" <<'PY'
import json, os, statistics as st, sys
out, caps = sys.argv[1], [float(c) for c in sys.argv[2].split()]
runs = [json.loads(l) for l in open(os.path.join(out, "runs.jsonl"))]
caps = [c for c in caps if any(r["run"]["bucket_cap_mb"] == c for r in runs)]
j = runs[0]["run"]
print("job: %d ranks (gloo, 1 thread each), %d x Linear(%d, %d) fp32, batch %d a rank; caps %s MiB; %d jobs" % (
    j["world"], j["layers"], j["width"], j["width"], j["batch"], " ".join("%g" % c for c in caps),
    len({r["rep"] for r in runs})))
def rows(name):
    p = os.path.join(out, name)
    return [l.rstrip("\n").split("\t") for l in open(p)] if os.path.exists(p) else []
pred, refused, notes = rows("pred.tsv"), rows("refused.tsv"), rows("notes.tsv")
def med(v): return st.median(v) if v else float("nan")
def rng(v): return "%.1f-%.1f" % (min(v), max(v)) if v else "-"
def spread(v): return 100.0 * (max(v) - min(v)) / med(v) if v else float("nan")
meas = {}
for c in caps:
    rs = [r["run"] for r in runs if r["run"]["bucket_cap_mb"] == c]
    imp = [float(p[4]) for p in pred if float(p[0]) == c and float(p[2]) == c]
    meas[c] = ([r["wall_ms"] for r in rs], [r["trace_ms"] for r in rs], imp,
               rs[0]["buckets"] if rs else "", [r["load"] for r in rs])
print("\nmeasured, per cap (median, min-max over reps; spread = range / median)")
print("%7s %5s  %20s %7s  %20s %7s  %10s  %s" % ("cap MiB", "reps", "wall step ms", "spread", "trace step ms",
      "spread", "import ms", "DDP's buckets, bytes"))
for c in caps:
    w, t, i, b, _ = meas[c]
    print("%7g %5d  %8.1f %11s %6.1f%%  %8.1f %11s %6.1f%%  %10.1f  %s" % (c, len(w), med(w), rng(w), spread(w),
          med(t), rng(t), spread(t), med(i), b))
loads = [r["run"]["load"] for r in runs]
if loads:
    print("load average (1 min) at each run's start: %.2f-%.2f, median %.2f" % (min(loads), max(loads), med(loads)))
print("\npredicted from each source cap's traced runs (median, min-max over reps) beside the measured medians;")
print("change: the target's step over the source's, measured (trace) and predicted (over whatif's own replay);")
print("replay, own run: the replay over the imported step of the run it replays (median over reps)")
print("%7s %7s  %9s %9s  %20s  %9s %9s  %9s %9s" % ("source", "target", "wall ms", "trace ms", "predicted ms",
      "vs trace", "vs wall", "change", "change"))
print("%7s %7s  %9s %9s  %20s  %9s %9s  %9s %9s" % ("cap", "cap", "median", "median", "median, range", "", "",
      "measured", "predicted"))
for s in caps:
    for t in caps:
        p = [float(x[3]) for x in pred if float(x[0]) == s and float(x[2]) == t]
        base = {x[1]: float(x[3]) for x in pred if float(x[0]) == s and float(x[2]) == s}
        ch = [float(x[3]) / base[x[1]] - 1 for x in pred if float(x[0]) == s and float(x[2]) == t and x[1] in base]
        w, tr = med(meas[t][0]), med(meas[t][1])
        if p:
            m = med(p)
            print("%7g %7g  %9.1f %9.1f  %8.1f %11s  %+8.1f%% %+8.1f%%  %s" % (s, t, w, tr, m, rng(p),
                  100 * (m - tr) / tr, 100 * (m - w) / w, "replay, own run %+.1f%%" % (100 * med(
                  [float(x[3]) / float(x[4]) - 1 for x in pred if float(x[0]) == s and float(x[2]) == s]))
                  if s == t else "%+8.1f%% %+8.1f%%" % (
                  100 * (tr / med(meas[s][1]) - 1), 100 * med(ch))))
        else:
            why = sorted({x[3] for x in refused if float(x[0]) == s and float(x[2]) == t})
            print("%7g %7g  %9.1f %9.1f  refused: %s" % (s, t, w, tr, "; ".join(why) or "no run"))
if notes:
    print("\nwhatif's notes, per source cap (first rep):")
    for s in caps:
        n = [x[2] for x in notes if float(x[0]) == s]
        if n:
            print("  cap %g: %s" % (s, n[0].replace("|", "\n" + " " * (9 + len("%g" % s)))))
PY
say "runs, traces, logs and the database in $OUT"
