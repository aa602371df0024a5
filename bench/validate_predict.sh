#!/usr/bin/env bash
# validate_predict.sh — how well `ddpprof predict` (the sim backend) reproduces measured
# cpu runs.  For every shipped scenario that runs on cpu (all of scenarios/ but
# hung_rank.ini, whose rank hangs on purpose) it runs the scenario on the cpu backend
# (`ddpprof run --backend cpu`) and predicts it (`ddpprof predict`) into one database,
# then prints one Markdown table: the job step time and every rank's overlap, measured vs
# predicted, with the errors, against the targets (5% on step time, 5 points on overlap).
#
# The model learns this machine first: `ddpprof calibrate` runs once, and its fit is
# given to every prediction with -s: [device] mem_bw_gbps (the reducer's copies) always,
# and [network] latency_us / bandwidth_gbps / algorithm = ring unless the scenario paces
# its allreduces to a link of its own ([network] pace = true: the cpu run then follows
# that link, and so must the prediction).  The cpu run itself gets no override.
# A [sweep] scenario gives one row per point (runs paired in order).
#
#   usage: bench/validate_predict.sh [SCENARIO.ini ...]      (default: scenarios/*.ini)
#   env:   DDPPROF=./ddpprof  PYTHON=/usr/bin/python3
#          PREDICT="ddpprof predict" (the command that predicts; e.g. PREDICT="./ddpprof run
#          --backend cpu" checks this script's plumbing by comparing two cpu runs)
#          CALIBRATE_ARGS="--ranks 2,4" (passed to ddpprof calibrate)
#          NOISE_FLOOR=1: "predict" with a second cpu run of the same scenario, without any
#          override: how far two measurements of one scenario differ on this machine now
# Output: the table on stdout; the database, the calibration and every log under
# bench/results/validate_predict-<timestamp>/.
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
ROOT=$PWD
DDPPROF=${DDPPROF:-$ROOT/ddpprof}
PYTHON=${PYTHON:-/usr/bin/python3}
NOISE_FLOOR=${NOISE_FLOOR:-0}
if [ "$NOISE_FLOOR" = 1 ]; then
    PREDICT="$DDPPROF run --backend cpu"
fi
PREDICT=${PREDICT:-$DDPPROF predict}
CALIBRATE_ARGS=${CALIBRATE_ARGS:---ranks 2,4}

if [ $# -gt 0 ]; then
    SCENARIOS=("$@")
else
    SCENARIOS=()
    for f in "$ROOT"/scenarios/*.ini; do
        case "$(basename "$f")" in hung_rank.ini) continue ;; esac
        SCENARIOS+=("$f")
    done
fi

if [ ! -x "$DDPPROF" ]; then
    echo "validate_predict: $DDPPROF is missing: build it with make" >&2
    exit 2
fi
# shellcheck disable=SC2086
if ! $PREDICT --help >/dev/null 2>&1; then
    echo "validate_predict: '$PREDICT' is not available: this ddpprof has no predict command (the sim" >&2
    echo "backend is not built in), so there is nothing to compare the measured runs with." >&2
    "$DDPPROF" --version >&2 || true
    exit 2
fi

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$ROOT/bench/results/validate_predict-$STAMP
mkdir -p "$OUT"
DB=$OUT/validate.sqlite
CAL=$OUT/calibration.ini

# shellcheck disable=SC2086
"$DDPPROF" calibrate --backend cpu $CALIBRATE_ARGS -o "$CAL" >"$OUT/calibrate.txt" 2>"$OUT/calibrate.log" || {
    echo "validate_predict: ddpprof calibrate failed (see $OUT/calibrate.log)" >&2
    exit 1
}
value() { sed -n "s/^$1 *= *//p" "$CAL" | head -1; }
LAT=$(value latency_us)
BW=$(value bandwidth_gbps)
MEM=$(value mem_bw_gbps)
NET_OVERRIDES=(-s network.latency_us="$LAT" -s network.bandwidth_gbps="$BW" -s network.algorithm=ring)
DEV_OVERRIDES=()
[ -n "$MEM" ] && DEV_OVERRIDES=(-s device.mem_bw_gbps="$MEM")
if [ "$NOISE_FLOOR" = 1 ]; then
    NET_OVERRIDES=()
    DEV_OVERRIDES=()
fi

max_id() { sqlite3 "$DB" 'SELECT COALESCE(MAX(id), 0) FROM run' 2>/dev/null || echo 0; }

PAIRS=$OUT/pairs.tsv
: >"$PAIRS"
for scen in "${SCENARIOS[@]}"; do
    name=$(basename "$scen" .ini)
    before=$(max_id)
    if ! "$DDPPROF" run "$scen" --backend cpu -o "$DB" -q >"$OUT/$name.run.log" 2>&1; then
        echo "validate_predict: $name: the cpu run failed (see $OUT/$name.run.log)" >&2
        exit 1
    fi
    mid=$(max_id)
    link=calibrated
    overrides=("${DEV_OVERRIDES[@]}")
    if [ "$NOISE_FLOOR" = 1 ]; then
        link="none (noise floor)"
    elif grep -Eq '^[[:space:]]*pace[[:space:]]*=[[:space:]]*(true|1|yes|on)' "$scen"; then
        link="scenario's (paced)"
    else
        overrides+=("${NET_OVERRIDES[@]}")
    fi
    # shellcheck disable=SC2086
    if ! $PREDICT "$scen" -o "$DB" -q "${overrides[@]}" >"$OUT/$name.predict.log" 2>&1; then
        echo "validate_predict: $name: predict failed (see $OUT/$name.predict.log)" >&2
        exit 1
    fi
    after=$(max_id)
    if [ $((mid - before)) -ne $((after - mid)) ]; then
        echo "validate_predict: $name: $((mid - before)) measured runs but $((after - mid)) predicted" >&2
        exit 1
    fi
    for ((i = 1; i <= mid - before; i++)); do
        printf '%s\t%s\t%d\t%d\n' "$name" "$link" $((before + i)) $((mid + i)) >>"$PAIRS"
    done
done

what="predict vs measured"
[ "$NOISE_FLOOR" = 1 ] && what="noise floor: a second cpu run vs the first"
echo "## $what (cpu backend, $(nproc) cores; calibration: latency ${LAT} us, bandwidth ${BW} GB/s${MEM:+, mem_bw ${MEM} GB/s})"
echo
"$PYTHON" - "$DDPPROF" "$DB" "$PAIRS" <<'PY'
import json, subprocess, sys
ddpprof, db, pairs = sys.argv[1:4]
STEP_TARGET, OVERLAP_TARGET = 5.0, 5.0
print("| scenario | link | runs (cpu / sim) | step measured ms | step predicted ms | step error | "
      "overlap measured % (per rank) | overlap predicted % | worst overlap error | within targets |")
print("|---|---|---|---:|---:|---:|---|---|---:|---|")
ok_all = True
for line in open(pairs):
    name, link, a, b = line.rstrip("\n").split("\t")
    doc = json.loads(subprocess.run([ddpprof, "compare", db, "--run", a, "--run", b, "--json"],
                                    check=True, capture_output=True, text=True).stdout)
    label = doc["a"]["name"] or name
    step = doc["step_ms"]
    meas = [r["overlap_pct"]["a"] for r in doc["ranks"]]
    pred = [r["overlap_pct"]["b"] for r in doc["ranks"]]
    diffs = [abs(r["overlap_pct"]["diff"]) for r in doc["ranks"] if r["overlap_pct"]["diff"] is not None]
    fmt = lambda xs: " / ".join("-" if x is None else "%.1f" % x for x in xs)
    step_err = step["rel_pct"]
    worst = max(diffs) if diffs else None
    ok = step_err is not None and abs(step_err) <= STEP_TARGET and (worst is None or worst <= OVERLAP_TARGET)
    ok_all &= ok
    print("| %s | %s | %s / %s | %.3f | %.3f | %s | %s | %s | %s | %s |" % (
        label, link, a, b, step["a"], step["b"],
        "-" if step_err is None else "%+.1f%%" % step_err, fmt(meas), fmt(pred),
        "-" if worst is None else "%.1f pts" % worst, "yes" if ok else "**no**"))
print()
print("Targets: step time within %.0f%%, every rank's overlap within %.0f points. %s" % (
    STEP_TARGET, OVERLAP_TARGET, "All met." if ok_all else "Not all met."))
PY
echo
echo "(database, calibration and logs in ${OUT#"$ROOT"/})"
