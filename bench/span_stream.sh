#!/usr/bin/env bash
# span_stream.sh — the cost of ranks as processes: with run.ranks=processes every span a
# rank records is streamed over a socket to the coordinator (the parent), which writes
# it; with run.ranks=threads the rank threads hand spans to the writer in memory.  Runs
# `ddpprof run SCENARIO` N times in each mode (alternating, after one untimed warm-up of
# each), for the scenario as it is and with a larger span count (-s run.iterations=40),
# each run into a fresh database in a temp directory, and prints per case and mode:
#   * run wall:     the launcher's own "complete in X s" (from stderr), mean (min..max),
#   * process wall: the whole ddpprof process (bash `time`: start-up, the processes' own
#                   start and rendezvous, the final flush, the text report to /dev/null),
#   * spans stored and spans/s (spans / mean run wall),
#   * per rank, the mean step time (`ddpprof report --json`, runs[0].ranks[].step_ms),
#     averaged over the N runs,
# then processes minus threads (in % of threads), and the clock offset and uncertainty
# the coordinator measured for each rank of each processes run (table `rank`).
# Uses $DDPPROF when set, else builds ./ddpprof.  Needs jq or python3 (step times) and
# the sqlite3 CLI (clock offsets); what is missing is said, not fatal.
#
#   usage: bench/span_stream.sh [N [SCENARIO]]     (default: 3 scenarios/skewed.ini)
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
ROOT=$PWD
# shellcheck source=bench/run_lines.sh
. bench/run_lines.sh
run_args "$@"

if [[ -n ${DDPPROF:-} ]]; then
    BIN=$(readlink -f "$DDPPROF")
    [[ -x $BIN ]] || { echo "$0: DDPPROF=$DDPPROF is not an executable" >&2; exit 2; }
else
    BIN=$ROOT/ddpprof
    if ! make -C "$ROOT" ddpprof >/dev/null 2>&1; then
        [[ -x $BIN ]] || { make -C "$ROOT" ddpprof; exit 1; }
        echo "warning: 'make -C $ROOT ddpprof' failed; using the existing ./ddpprof" >&2
    fi
fi

# The launcher variables of an outer job would make each run one rank of it.
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT DDPPROF_COORDINATOR \
    DDPPROF_SWEEP_POINT DDPPROF_CLOCK_SKEW_NS OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE SLURM_PROCID

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-spanstream.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# Per-rank step_ms of run 1 of a database, one "rank step_ms" line per rank.
if command -v jq >/dev/null 2>&1; then
    step_times() { "$BIN" report "$1" --json | jq -r '.runs[0].ranks[] | "\(.rank) \(.step_ms)"'; }
elif command -v python3 >/dev/null 2>&1; then
    step_times() {
        "$BIN" report "$1" --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["runs"][0]["ranks"]:
    print(r["rank"], r["step_ms"])'
    }
else
    echo "note: neither jq nor python3: no per-rank step times" >&2
    step_times() { :; }
fi

# One run: case, mode, index, extra -s overrides...  Appends to $TMP/times:
#   "case mode run_wall process_wall spans"  and to $TMP/steps: "case mode rank step_ms".
one_run() {
    local cs=$1 mode=$2 i=$3
    shift 3
    local db=$TMP/$cs-$mode-$i.sqlite err=$TMP/$cs-$mode-$i.err tf=$TMP/$cs-$mode-$i.time
    local TIMEFORMAT=%R
    if ! { time "$BIN" run "$SCENARIO" -o "$db" -s run.ranks="$mode" "$@" >/dev/null 2>"$err"; } 2>"$tf"; then
        run_failed "$err" "$cs, $mode #$i"
    fi
    local wall spans pwall
    run_wall_spans "$err" "$cs, $mode #$i"
    pwall=$(tail -n 1 "$tf")
    echo "$cs $mode $wall $pwall $spans" >>"$TMP/times"
    step_times "$db" | while read -r rank ms; do echo "$cs $mode $rank $ms"; done >>"$TMP/steps"
    printf '  %-8s %-9s #%d  run %6.2f s  process %6.2f s  %6s spans\n' "$cs" "$mode" "$i" "$wall" "$pwall" "$spans"
}

echo "== span streaming: ddpprof run $SCENARIO, ranks=threads vs ranks=processes, $N runs each, alternating"
echo "   $(nproc) CPUs, $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true);" \
    "load avg $(cut -d' ' -f1-3 /proc/loadavg); $(date -Is)"
for mode in threads processes; do
    "$BIN" run "$SCENARIO" -o "$TMP/warmup-$mode.sqlite" -q -s run.ranks=$mode >/dev/null 2>&1 || {
        echo "$0: warm-up run ($mode) failed" >&2
        exit 1
    }
done
: >"$TMP/times"
: >"$TMP/steps"
for cs in default iters40; do
    extra=()
    [[ $cs == iters40 ]] && extra=(-s run.iterations=40)
    for ((i = 1; i <= N; i++)); do
        if ((i % 2)); then
            one_run $cs threads "$i" "${extra[@]}"
            one_run $cs processes "$i" "${extra[@]}"
        else
            one_run $cs processes "$i" "${extra[@]}"
            one_run $cs threads "$i" "${extra[@]}"
        fi
    done
done

echo
echo "case default: $SCENARIO as it is; case iters40: with -s run.iterations=40"
awk -v steps="$TMP/steps" '
    { k = $1 " " $2; n[k]++; rw[k] += $3; pw[k] += $4; sp[k] = $5
      if (!(k in rmin) || $3 < rmin[k]) rmin[k] = $3; if ($3 > rmax[k]) rmax[k] = $3 }
    END {
        while ((getline line < steps) > 0) {
            split(line, f, " "); k = f[1] " " f[2]; sk = k " " f[3]
            st[sk] += f[4]; sn[sk]++; if (f[3] + 1 > nr[f[1]]) nr[f[1]] = f[3] + 1
        }
        fmt = "%-8s %-9s  %-25s  %-13s  %7s  %9s  %s\n"
        printf fmt, "case", "mode", "run wall mean (min..max)", "process wall", "spans", "spans/s",
               "mean step ms per rank"
        ncase = split("default iters40", cases, " ")
        for (c = 1; c <= ncase; c++) {
            cs = cases[c]
            for (m = 1; m <= 2; m++) {
                md = m == 1 ? "threads" : "processes"; k = cs " " md
                if (!(k in n)) continue
                rw[k] /= n[k]; pw[k] /= n[k]
                ranks = ""
                for (r = 0; r < nr[cs]; r++) {
                    sk = k " " r
                    ms[sk] = sn[sk] ? st[sk] / sn[sk] : 0
                    ranks = ranks sprintf("%s%.1f", r ? " " : "", ms[sk])
                }
                printf fmt, cs, md, sprintf("%6.3f s (%.2f..%.2f)", rw[k], rmin[k], rmax[k]),
                       sprintf("%6.3f s", pw[k]), sp[k], sprintf("%9.0f", sp[k] / rw[k]), ranks
            }
            kt = cs " threads"; kp = cs " processes"
            if (!(kt in n) || !(kp in n)) continue
            ranks = ""
            for (r = 0; r < nr[cs]; r++) {
                t = ms[kt " " r]; p = ms[kp " " r]
                ranks = ranks sprintf("%s%+.1f%%", r ? " " : "", t ? 100 * (p - t) / t : 0)
            }
            printf fmt, cs, "proc-thr", sprintf("%+6.1f %%", 100 * (rw[kp] - rw[kt]) / rw[kt]),
                   sprintf("%+6.1f %%", 100 * (pw[kp] - pw[kt]) / pw[kt]), "",
                   sprintf("%+8.1f%%", 100 * (sp[kp] / rw[kp] - sp[kt] / rw[kt]) / (sp[kt] / rw[kt])), ranks
        }
    }' "$TMP/times"

echo
echo "clock offsets measured by the coordinator (processes runs; offset +- uncertainty, ns):"
if command -v sqlite3 >/dev/null 2>&1; then
    for db in "$TMP"/*-processes-*.sqlite; do
        printf '  %-22s %s\n' "$(basename "$db" .sqlite)" "$(sqlite3 -separator ' ' "$db" \
            "SELECT group_concat('r' || rank || ' ' || coalesce(clock_offset_ns, 'NULL') || ' +- ' ||
                    coalesce(clock_uncertainty_ns, 'NULL'), ',  ') FROM (SELECT * FROM rank ORDER BY rank)")"
    done
else
    echo "  (no sqlite3 CLI)"
fi
echo "(difference = (processes - threads) / threads of the means; load avg now $(cut -d' ' -f1-3 /proc/loadavg))"
