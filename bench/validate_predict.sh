#!/usr/bin/env bash
# validate_predict.sh — how well `ddpprof predict` (the sim backend) reproduces measured
# cpu runs.  For every shipped scenario that runs on cpu (all of scenarios/ but
# hung_rank.ini, whose rank hangs on purpose, the sim-only paper scenarios and
# equivalence.ini, which compares weights) it runs the scenario on the cpu backend
# (`ddpprof run --backend cpu`) and predicts it (`ddpprof predict`) into one database,
# then prints one Markdown table: the job step time and every rank's overlap, measured vs
# predicted, with the errors, against the targets (5% on step time, 5 points on overlap).
#
# The model learns this machine first, and what it learned is given to every prediction
# with -s.  CALIBRATION=runs (the default): from recorded cpu runs of
# bench/calibration_runs.ini (ResNet-18 at 2 and 4 ranks, three bucket caps; none of the
# validated scenarios) and bench/calibration_small.ini (a small MLP whose memory fits in
# the caches, which teaches the copies' bandwidths in cache alone), `ddpprof calibrate
# --from`, so each op's cost is what it cost with a whole run beside it.  CALIBRATION=probes: `ddpprof calibrate`'s probes, each cost
# measured alone.  Either way the prediction gets [device] mem_bw_gbps (the reducer's copies) and
# op_overhead_us / op_wakeup_us (each stream op's dispatch cost, where the backend
# measures it), copy_out_gbps / optimizer_gbps / grad_write_gbps / comm_slowdown / comm_wakeup_us where calibrate --from
# learns them (and host_cores, the cores the cpu ranks share, cache_mb and the
# cache_*_gbps bandwidths and cache_op_* wake-ups in cache), always,
# and [network] (the measured allreduce times, algorithm = measured, with the ring fit's
# latency_us / bandwidth_gbps for other world sizes and broadcasts); a scenario that paces
# its allreduces to a link of its own ([network] pace = true) keeps that link and gets the
# measured times alone: the cpu run holds each allreduce to the link or to its real
# time, whichever is longer, and predict then does the same.  The cpu run itself gets no override.
# A [sweep] scenario gives one row per point (runs paired in order).
#
#   usage: bench/validate_predict.sh [SCENARIO.ini ...]      (default: scenarios/*.ini)
#   env:   DDPPROF=./ddpprof  PYTHON=/usr/bin/python3
#          PREDICT="ddpprof predict" (the command that predicts; e.g. PREDICT="./ddpprof run
#          --backend cpu" checks this script's plumbing by comparing two cpu runs)
#          CALIBRATION=runs | probes (above)
#          CALIBRATE_ARGS="--ranks 2,4" (passed to ddpprof calibrate, probes only)
#          RUNS=1: rounds of cpu runs, each of every calibration point then of every
#          scenario (so calibration and measurement meet the same machine as it drifts);
#          with more, the measured figures are the median over the runs (per figure),
#          which steadies them on a busy machine
#          SHORT_S=2 SHORT_ROUND_S=4 SHORT_MAX=20: a scenario whose cpu run takes under
#          SHORT_S seconds (timed in the first round) runs a round as many times as fit in
#          SHORT_ROUND_S seconds at that pace (at least 2, at most SHORT_MAX), and is
#          predicted as many times as it is measured (nvtx_small, resnet18_buckets: tens
#          of milliseconds of measured steps each); so does a calibration sweep that short
#          (calibration_small.ini)
#          DRAWS=3*RUNS (RUNS with NOISE_FLOOR=1): predictions of each scenario, each with
#          its own draws of the machine's noise (host.noise_seed = 1, 2, ...); the
#          predicted figures are the median over them, as the measured ones are over the
#          runs: a single draw of a rare event (one stall, which rank gets the cores
#          first) is not the model's answer, and with five draws a rank's median overlap
#          still moved by 2-4 points between models that differ by little
#          SELF_DRAWS=10: predictions of each calibration point from its own recorded
#          scenario, for a second table: the calibration runs against the model learned
#          from them (0: none; CALIBRATION=runs only)
#          NOISE_FLOOR=1: "predict" with a second cpu run of the same scenario, without any
#          override, run in the same rounds beside each first run (the order alternating
#          by round): how far two measurements of one scenario differ on this machine now
#          REUSE=bench/results/validate_predict-<timestamp>: no cpu run at all; predict
#          again against that earlier check's measurements (its database and calibration
#          runs are copied, and calibrate --from learns again from the latter): seconds
#          instead of minutes after a change to the model
#          CACHE_MB=N: the host's last-level cache for calibrate --from (--cache-mb), where
#          the kernel lists none (some virtual machines: calibrate --from then says so and
#          learns no bandwidths in cache, and nvtx_small's copies are predicted at the
#          large models' speed)
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
RUNS=${RUNS:-1}
SHORT_S=${SHORT_S:-2}
SHORT_ROUND_S=${SHORT_ROUND_S:-4}
SHORT_MAX=${SHORT_MAX:-20}
# Predictions cost seconds: three per measured run by default (the noise floor's second
# set of cpu runs, as many as the first).
if [ "$NOISE_FLOOR" = 1 ]; then
    DRAWS=${DRAWS:-$RUNS}
else
    DRAWS=${DRAWS:-$((3 * RUNS))}
fi
CALIBRATION=${CALIBRATION:-runs}
REUSE=${REUSE:-}
if [ -n "$REUSE" ] && [ "$NOISE_FLOOR" = 1 ]; then
    echo "validate_predict: REUSE and NOISE_FLOOR=1 exclude each other (the noise floor runs again)" >&2
    exit 2
fi
if [ -n "$REUSE" ] && [ ! -f "$REUSE/validate.sqlite" -o ! -f "$REUSE/pairs.tsv" ]; then
    echo "validate_predict: REUSE=$REUSE: no validate.sqlite and pairs.tsv there" >&2
    exit 2
fi
case "$CALIBRATION" in runs | probes) ;; *) echo "validate_predict: CALIBRATION=$CALIBRATION: want runs or probes" >&2; exit 2 ;; esac
case "$RUNS" in '' | *[!0-9]* | 0) echo "validate_predict: RUNS=$RUNS: want a positive integer" >&2; exit 2 ;; esac
case "$DRAWS" in '' | *[!0-9]* | 0) echo "validate_predict: DRAWS=$DRAWS: want a positive integer" >&2; exit 2 ;; esac
case "$SHORT_MAX" in '' | *[!0-9]* | 0) echo "validate_predict: SHORT_MAX=$SHORT_MAX: want a positive integer" >&2; exit 2 ;; esac
case "$SHORT_ROUND_S" in '' | *[!0-9]*) echo "validate_predict: SHORT_ROUND_S=$SHORT_ROUND_S: want a whole number of seconds" >&2; exit 2 ;; esac
case "$SHORT_S" in '' | *[!0-9]*) echo "validate_predict: SHORT_S=$SHORT_S: want a whole number of seconds" >&2; exit 2 ;; esac

if [ $# -gt 0 ]; then
    SCENARIOS=("$@")
else
    SCENARIOS=()
    for f in "$ROOT"/scenarios/*.ini; do
        case "$(basename "$f")" in hung_rank.ini) continue ;; esac
        # Scenarios written for the sim alone (the paper's 32 to 256 V100s) and the
        # equivalence runs (trained weights, not time) have no cpu measurement to match.
        if grep -Eq '^[[:space:]]*(backend[[:space:]]*=[[:space:]]*sim|equivalence[[:space:]]*=[[:space:]]*(true|1|yes|on))' "$f"; then
            continue
        fi
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

if [ -n "$REUSE" ]; then
    cp "$REUSE/validate.sqlite" "$DB"
    # The earlier predictions stay in the copy; only pairs written below are compared.
    if [ "$CALIBRATION" = probes ]; then
        cp "$REUSE/calibration.ini" "$CAL"
    elif [ ! -f "$REUSE/calibration.sqlite" ]; then
        echo "validate_predict: REUSE=$REUSE has no calibration runs (calibration.sqlite): use CALIBRATION=probes" >&2
        exit 2
    fi
fi
if [ "$CALIBRATION" = runs ]; then
    # Learn from recorded runs of other scenarios (bench/calibration_runs.ini), with the
    # whole run beside each op, as predictions of this machine's runs need.
    CALDB=$OUT/calibration.sqlite
    if [ -n "$REUSE" ]; then
        cp "$REUSE/calibration.sqlite" "$CALDB"
    fi
fi

max_id() { sqlite3 "$DB" 'SELECT COALESCE(MAX(id), 0) FROM run' 2>/dev/null || echo 0; }

# The measurements, round by round: each round runs the calibration points once, then
# every scenario once, so the calibration and the runs it is checked against meet the
# same machine (a shared machine drifts by several percent within minutes).  As many runs
# of each calibration point as of each validated scenario: what is learned is as steady
# as what it is checked against.  MEASURED_IDS: scenario, point, run id.
MEASURED_IDS=$OUT/measured.tsv
: >"$MEASURED_IDS"
# A scenario whose cpu run takes under SHORT_S seconds runs repeats_for times a round:
# one or two measured iterations of a millisecond step, or a single synchronised step,
# are noise (the halves of ten runs of nvtx_small differed by 24 % in step time and 10
# points in overlap; with thirty runs, two sets in the same rounds still differed by
# 9.3 %: its runs' mean steps spread from 1.2 to 2.7 ms); more runs cost seconds.
declare -A REPEATS=() CAL_REPEATS=()
repeats_for() { # milliseconds one run took: how many runs a round
    local n
    if (($1 >= SHORT_S * 1000)); then
        echo 1
        return
    fi
    n=$(((SHORT_ROUND_S * 1000 + $1 - 1) / ($1 > 0 ? $1 : 1)))
    ((n < 2)) && n=2
    ((n > SHORT_MAX)) && n=$SHORT_MAX
    echo "$n"
}
# The noise floor's second set of runs, SECOND_IDS, is measured in the same rounds,
# each run beside one of the first set (which goes first alternates by round): set
# against set, with the machine's drift in both as it is in the measurement and the
# calibration a prediction is checked with (run in a block after the first set, the
# MLP's second set came out 21 % faster on a machine that had sped up).
SECOND_IDS=$OUT/second.tsv
: >"$SECOND_IDS"
run_scenario() { # scenario file, name[, ids file]: one cpu run, its ids appended to the file (MEASURED_IDS)
    local before after i ids=${3:-$MEASURED_IDS}
    before=$(max_id)
    if ! "$DDPPROF" run "$1" --backend cpu -o "$DB" -q >>"$OUT/$2.run.log" 2>&1; then
        echo "validate_predict: $2: the cpu run failed (see $OUT/$2.run.log)" >&2
        exit 1
    fi
    after=$(max_id)
    for ((i = 1; i <= after - before; i++)); do
        printf '%s\t%d\t%d\n' "$2" "$i" $((before + i)) >>"$ids"
    done
}
measure_once() { # scenario file, name, round: one run (two for the noise floor)
    if [ "$NOISE_FLOOR" != 1 ]; then
        run_scenario "$1" "$2"
    elif (($3 % 2)); then
        run_scenario "$1" "$2"
        run_scenario "$1" "$2" "$SECOND_IDS"
    else
        run_scenario "$1" "$2" "$SECOND_IDS"
        run_scenario "$1" "$2"
    fi
}
run_calibration() { # bench/NAME.ini: one run of its points into the calibration database
    "$DDPPROF" run "$ROOT/bench/$1.ini" --backend cpu -o "$CALDB" -q >>"$OUT/calibrate.log" 2>&1 || {
        echo "validate_predict: the calibration runs ($1.ini) failed (see $OUT/calibrate.log)" >&2
        exit 1
    }
}
if [ -z "$REUSE" ]; then
    for ((r = 1; r <= RUNS; r++)); do
        if [ "$CALIBRATION" = runs ] && [ "$NOISE_FLOOR" != 1 ]; then
            for cal in calibration_runs calibration_small; do
                # A short calibration sweep runs repeats_for times a round, as a short
                # scenario does: the small model's allreduces stall for milliseconds in
                # 1-8 % of them, and from ten runs of a point the learned share moved
                # 2-8x between checks.
                start=$(date +%s%N)
                run_calibration "$cal"
                if [ -z "${CAL_REPEATS[$cal]:-}" ]; then
                    took_ms=$((($(date +%s%N) - start) / 1000000))
                    CAL_REPEATS[$cal]=$(repeats_for "$took_ms")
                fi
                for ((k = 2; k <= CAL_REPEATS[$cal]; k++)); do
                    run_calibration "$cal"
                done
            done
        fi
        for scen in "${SCENARIOS[@]}"; do
            name=$(basename "$scen" .ini)
            start=$(date +%s%N)
            measure_once "$scen" "$name" "$r"
            if [ -z "${REPEATS[$name]:-}" ]; then
                took_ms=$((($(date +%s%N) - start) / 1000000 / (NOISE_FLOOR == 1 ? 2 : 1)))
                REPEATS[$name]=$(repeats_for "$took_ms")
            fi
            for ((k = 2; k <= REPEATS[$name]; k++)); do
                measure_once "$scen" "$name" "$r"
            done
        done
    done
fi

if [ "$NOISE_FLOOR" = 1 ]; then
    : >"$CAL" # cpu runs against cpu runs: nothing to learn
elif [ "$CALIBRATION" = runs ]; then
    # shellcheck disable=SC2046
    "$DDPPROF" calibrate --from "$CALDB" $(sqlite3 "$CALDB" "SELECT '--run ' || id FROM run") ${CACHE_MB:+--cache-mb "$CACHE_MB"} -o "$CAL" \
        >"$OUT/calibrate.txt" 2>>"$OUT/calibrate.log" || {
        echo "validate_predict: ddpprof calibrate --from failed (see $OUT/calibrate.log)" >&2
        exit 1
    }
elif [ -z "$REUSE" ]; then
    # shellcheck disable=SC2086
    "$DDPPROF" calibrate --backend cpu $CALIBRATE_ARGS -o "$CAL" >"$OUT/calibrate.txt" 2>"$OUT/calibrate.log" || {
        echo "validate_predict: ddpprof calibrate failed (see $OUT/calibrate.log)" >&2
        exit 1
    }
fi
# A key's value in the calibration; a list may continue on indented lines.
value() {
    awk -v key="$1" '
        $0 ~ "^" key " *=" { sub("^" key " *= *", ""); v = $0; on = 1; next }
        on && /^[ \t]+[^ \t;]/ { sub(/^[ \t]+/, ""); v = v " " $0; next }
        { on = 0 }
        END { print v }' "$CAL"
}
LAT=$(value latency_us)
BW=$(value bandwidth_gbps)
MEM=$(value mem_bw_gbps)
ALG=$(value algorithm)
# The measured allreduce times (a paced scenario keeps its own link as the floor).
MEASURED=()
if [ "$ALG" = measured ]; then
    MEASURED=(-s network.algorithm=measured -s network.measured_ranks="$(value measured_ranks)"
        -s network.measured_bytes="$(value measured_bytes)" -s network.measured_us="$(value measured_us)")
fi
NET_OVERRIDES=(-s network.latency_us="$LAT" -s network.bandwidth_gbps="$BW")
if [ "$ALG" = measured ]; then
    NET_OVERRIDES+=("${MEASURED[@]}")
else
    NET_OVERRIDES+=(-s network.algorithm=ring)
fi
# Every [device] and [host] term the calibration gives, as an override: the keys of those
# sections, whatever they are, so a term calibrate learns is never left out here.
section_keys() {
    awk -v want="[$1]" '/^\[/ { on = ($0 == want); next }
         on && /^[a-z_]+ *=/ { sub(/ *=.*/, ""); print }' "$CAL"
}
DEV_OVERRIDES=()
for section in device host; do
    for key in $(section_keys "$section"); do
        v=$(value "$key")
        [ -n "$v" ] && DEV_OVERRIDES+=(-s "$section.$key=$v")
    done
done
OVH=$(value op_overhead_us)
WAKE=$(value op_wakeup_us)
if [ "$NOISE_FLOOR" = 1 ]; then
    NET_OVERRIDES=()
    DEV_OVERRIDES=()
    MEASURED=()
fi

# A scenario's runs of every round in an ids file, one line per point, comma-separated.
point_ids() { # name, ids file
    awk -F'\t' -v n="$1" '$1 == n { ids[$2] = ids[$2] (ids[$2] == "" ? "" : ",") $3; if ($2 > np) np = $2 }
                         END { for (i = 1; i <= np; i++) print ids[i] }' "$2"
}
PAIRS=$OUT/pairs.tsv
: >"$PAIRS"
for scen in "${SCENARIOS[@]}"; do
    name=$(basename "$scen" .ini)
    if [ -n "$REUSE" ]; then
        # This scenario's measured runs in the earlier check, point by point.
        mapfile -t reused < <(awk -F'\t' -v n="$name" '$1 == n { print $3 }' "$REUSE/pairs.tsv")
        if [ ${#reused[@]} -eq 0 ]; then
            echo "validate_predict: $name: REUSE=$REUSE did not measure it" >&2
            exit 2
        fi
    else
        mapfile -t reused < <(point_ids "$name" "$MEASURED_IDS")
    fi
    link=calibrated
    overrides=("${DEV_OVERRIDES[@]}")
    if [ "$NOISE_FLOOR" = 1 ]; then
        link="none (noise floor)"
    elif grep -Eq '^[[:space:]]*pace[[:space:]]*=[[:space:]]*(true|1|yes|on)' "$scen"; then
        # The cpu run holds each allreduce to the scenario's link, and takes longer where
        # its real allreduce does: predict takes the longer of the two as well.
        link="scenario's (paced)"
        overrides+=("${MEASURED[@]}")
    else
        overrides+=("${NET_OVERRIDES[@]}")
    fi
    # DRAWS predictions, each with its own draws of the machine's noise (host.noise_seed
    # 1, 2, ...: the same jitter and skew), point by point as the measured runs are; as
    # many as the runs measured where those are more (a short scenario's).
    predicted=()
    if [ "$NOISE_FLOOR" = 1 ]; then
        mapfile -t predicted < <(point_ids "$name" "$SECOND_IDS")
        for ((i = 0; i < ${#reused[@]}; i++)); do
            printf '%s\t%s\t%s\t%s\n' "$name" "$link" "${reused[i]}" "${predicted[i]}" >>"$PAIRS"
        done
        continue
    fi
    : >"$OUT/$name.predict.log"
    ndraws=$(awk -F, '{ print NF }' <<<"${reused[0]}")
    [ "$ndraws" -ge "$DRAWS" ] || ndraws=$DRAWS
    for ((k = 1; k <= ndraws; k++)); do
        noise=()
        [ "$NOISE_FLOOR" = 1 ] || noise=(-s "host.noise_seed=$k")
        mid=$(max_id)
        # shellcheck disable=SC2086
        if ! $PREDICT "$scen" -o "$DB" -q "${overrides[@]}" "${noise[@]}" >>"$OUT/$name.predict.log" 2>&1; then
            echo "validate_predict: $name: predict failed (see $OUT/$name.predict.log)" >&2
            exit 1
        fi
        after=$(max_id)
        points=$((after - mid))
        if [ "${#reused[@]}" -ne "$points" ]; then
            echo "validate_predict: $name: $points points predicted, ${#reused[@]} measured${REUSE:+ in $REUSE}" >&2
            exit 1
        fi
        for ((i = 1; i <= points; i++)); do
            predicted[i - 1]="${predicted[i - 1]:+${predicted[i - 1]},}$((mid + i))"
        done
    done
    for ((i = 0; i < ${#reused[@]}; i++)); do
        printf '%s\t%s\t%s\t%s\n' "$name" "$link" "${reused[i]}" "${predicted[i]}" >>"$PAIRS"
    done
done

what="predict vs measured"
[ "$NOISE_FLOOR" = 1 ] && what="noise floor: a second cpu run vs the first"
echo "## $what (cpu backend, $(nproc) cores; calibration from $CALIBRATION: ${ALG:-ring} allreduce times, ring fit latency ${LAT} us, bandwidth ${BW} GB/s${MEM:+, mem_bw ${MEM} GB/s}${OVH:+, op_overhead ${OVH} us}${WAKE:+, op_wakeup ${WAKE} us})"
echo
# The table of a database's pairs (scenario, link, measured ids, predicted ids).
table() {
"$PYTHON" - "$DDPPROF" "$1" "$2" <<'PY'
import json, statistics, subprocess, sys
ddpprof, db, pairs = sys.argv[1:4]
STEP_TARGET, OVERLAP_TARGET = 5.0, 5.0

def compare(a, b):
    out = subprocess.run([ddpprof, "compare", db, "--run", a, "--run", b, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

print("| scenario | link | runs (cpu / sim) | step measured ms | step predicted ms | step error | "
      "overlap measured % (per rank) | overlap predicted % | worst overlap error | within targets |")
print("|---|---|---|---:|---:|---:|---|---|---:|---|")
ok_all = True
nrows = nrows_ok = nsteps_ok = 0
worst_sum = 0.0
nmeasured, npredicted = set(), set()
def rank_medians(docs, side, nr):
    return [median([d["ranks"][k]["overlap_pct"][side] for d in docs if k < len(d["ranks"])]) for k in range(nr)]

for line in open(pairs):
    name, link, measured, predicted = line.rstrip("\n").split("\t")
    measured, predicted = measured.split(","), predicted.split(",")
    # Each measured run beside the first prediction, and the first measured run beside
    # each prediction: a figure of either side is the median over its runs.
    docs = [compare(a, predicted[0]) for a in measured]
    pdocs = [compare(measured[0], b) for b in predicted]
    nmeasured.add(len(docs))
    npredicted.add(len(pdocs))
    label = docs[0]["a"]["name"] or name
    step_a = median([d["step_ms"]["a"] for d in docs])
    step_b = median([d["step_ms"]["b"] for d in pdocs])
    nr = len(docs[0]["ranks"])
    meas = rank_medians(docs, "a", nr)
    pred = rank_medians(pdocs, "b", nr)
    diffs = [abs(p - m) for m, p in zip(meas, pred) if m is not None and p is not None]
    fmt = lambda xs: " / ".join("-" if x is None else "%.1f" % x for x in xs)
    step_err = None if not step_a or step_b is None else 100.0 * (step_b - step_a) / step_a
    worst = max(diffs) if diffs else None
    ok = step_err is not None and abs(step_err) <= STEP_TARGET and (worst is None or worst <= OVERLAP_TARGET)
    ok_all &= ok
    nrows += 1
    nrows_ok += ok
    nsteps_ok += step_err is not None and abs(step_err) <= STEP_TARGET
    worst_sum += worst or 0.0
    print("| %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, link, " ".join(measured), " ".join(predicted), "-" if step_a is None else "%.3f" % step_a,
        "-" if step_b is None else "%.3f" % step_b,
        "-" if step_err is None else "%+.1f%%" % step_err, fmt(meas), fmt(pred),
        "-" if worst is None else "%.1f pts" % worst, "yes" if ok else "**no**"))
print()
def counts(ns):
    lo, hi = min(ns), max(ns)
    return "%d" % lo if lo == hi else "%d to %d" % (lo, hi)
print("Targets: step time within %.0f%%, every rank's overlap within %.0f points%s%s. %s" % (
    STEP_TARGET, OVERLAP_TARGET,
    "; measured figures are medians over %s runs" % counts(nmeasured) if max(nmeasured) > 1 else "",
    "; predicted figures medians over %s draws of the machine's noise" % counts(npredicted) if max(npredicted) > 1 else "",
    "All met." if ok_all else "Not all met."))
print("%d of %d rows within both targets, %d of %d steps within %.0f%%; the sum of the rows' worst overlap "
      "errors %.1f points." % (nrows_ok, nrows, nsteps_ok, nrows, STEP_TARGET, worst_sum))
PY
}
table "$DB" "$PAIRS"
echo

# The calibration runs themselves, each predicted from its own effective scenario (as
# recorded with the run) with the terms learned from all of them: where the model cannot
# reproduce the runs it learned from, it lacks a mechanism rather than a value (a small
# model's allreduces in cache, whose rare stalls of milliseconds doubled their mean, were
# missing so, and no validated scenario showed it).  SELF_DRAWS predictions of each point.
SELF_DRAWS=${SELF_DRAWS:-10}
if [ "$CALIBRATION" = runs ] && [ "$NOISE_FLOOR" != 1 ] && [ "$SELF_DRAWS" != 0 ]; then
    SELF_DB=$OUT/self.sqlite
    SELF_PAIRS=$OUT/self_pairs.tsv
    cp "$CALDB" "$SELF_DB"
    : >"$SELF_PAIRS"
    mkdir -p "$OUT/self"
    : >"$OUT/self.predict.log"
    while IFS='|' read -r first ids; do
        sqlite3 "$SELF_DB" "SELECT scenario FROM run WHERE id = $first" >"$OUT/self/$first.ini"
        predicted=""
        for ((k = 1; k <= SELF_DRAWS; k++)); do
            mid=$(DB=$SELF_DB max_id)
            if ! $PREDICT "$OUT/self/$first.ini" -o "$SELF_DB" -q "${DEV_OVERRIDES[@]}" "${NET_OVERRIDES[@]}" \
                -s "host.noise_seed=$k" >>"$OUT/self.predict.log" 2>&1; then
                echo "validate_predict: calibration run $first: predict failed (see $OUT/self.predict.log)" >&2
                exit 1
            fi
            predicted="${predicted:+$predicted,}$((mid + 1))"
        done
        printf '%s\t%s\t%s\t%s\n' "calibration run $first" calibrated "$ids" "$predicted" >>"$SELF_PAIRS"
    done < <(sqlite3 "$CALDB" "SELECT MIN(id), group_concat(id) FROM run WHERE status = 'complete' GROUP BY name ORDER BY MIN(id)")
    echo "## the calibration runs, predicted from their own scenarios with the terms learned from them"
    echo
    table "$SELF_DB" "$SELF_PAIRS"
    echo
fi
echo "(database, calibration and logs in ${OUT#"$ROOT"/})"
