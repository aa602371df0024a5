#!/usr/bin/env bash
# profiler_overhead.sh — the profiler's own cost: runs `ddpprof run SCENARIO` N times with
# span recording and N times with --no-record (spans counted, not stored), alternating the
# two (after one untimed warm-up run), each into a fresh database in a temp directory, and
# prints per mode the mean (min..max) of
#   * run wall:     the launcher's own "complete in X s" (rank threads start to join; the
#                   recorder drains spans to SQLite concurrently), parsed from stderr, and
#   * process wall: the whole ddpprof process (bash `time`), which adds start-up, the final
#                   span flush and, for recorded runs only, the text report (sent to /dev/null;
#                   --no-record prints none),
# the recorded-minus-unrecorded difference in %, and the spans recorded / counted (and, with
# the sqlite3 CLI, the rows actually in each mode's span table).
# Builds ./ddpprof if needed.  Runs are not quiet (-q would silence the "complete in" line).
#
#   usage: bench/profiler_overhead.sh [N [SCENARIO]]     (default: 3 scenarios/skewed.ini)
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
ROOT=$PWD
# shellcheck source=bench/run_lines.sh
. bench/run_lines.sh
run_args "$@"

if ! make -C "$ROOT" ddpprof >/dev/null 2>&1; then
    [[ -x $ROOT/ddpprof ]] || { make -C "$ROOT" ddpprof; exit 1; }
    echo "warning: 'make -C $ROOT ddpprof' failed; using the existing ./ddpprof" >&2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-overhead.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# One run: mode (rec|norec), index.  Appends "mode run_wall process_wall spans" to $TMP/times.
one_run() {
    local mode=$1 i=$2 flag=() err=$TMP/$1-$2.err tf=$TMP/$1-$2.time
    [[ $mode == rec ]] || flag=(--no-record)
    local TIMEFORMAT=%R
    if ! { time "$ROOT/ddpprof" run "$SCENARIO" -o "$TMP/$mode-$i.sqlite" "${flag[@]}" >/dev/null 2>"$err"; } \
        2>"$tf"; then
        run_failed "$err" "$mode #$i"
    fi
    local wall spans
    run_wall_spans "$err" "$mode #$i"
    echo "$mode $wall $(tail -n 1 "$tf") $spans" >>"$TMP/times"
    printf '  %-6s #%d  run %6.2f s  process %6.2f s  %s spans\n' "$mode" "$i" "$wall" "$(tail -n 1 "$tf")" "$spans"
}

echo "== profiler overhead: ddpprof run $SCENARIO, $N runs per mode (recorded / --no-record), alternating"
echo "   $(nproc) CPUs, $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true);" \
    "load avg $(cut -d' ' -f1-3 /proc/loadavg); $(date -Is)"
"$ROOT/ddpprof" run "$SCENARIO" -o "$TMP/warmup.sqlite" --no-record >/dev/null 2>&1 || {
    echo "$0: warm-up run failed" >&2
    exit 1
}
for ((i = 1; i <= N; i++)); do
    if ((i % 2)); then one_run rec "$i"; one_run norec "$i"; else one_run norec "$i"; one_run rec "$i"; fi
done

awk '
    { n[$1]++; rw[$1] += $2; pw[$1] += $3; sp[$1] = $4
      if (!($1 in rmin) || $2 < rmin[$1]) rmin[$1] = $2; if ($2 > rmax[$1]) rmax[$1] = $2
      if (!($1 in pmin) || $3 < pmin[$1]) pmin[$1] = $3; if ($3 > pmax[$1]) pmax[$1] = $3 }
    function span(mean, lo, hi) { return sprintf("%6.3f s (%.2f..%.2f)", mean, lo, hi) }
    END {
        for (m in n) { rw[m] /= n[m]; pw[m] /= n[m] }
        fmt = "%-19s  %-27s  %-31s  %s\n"
        printf "\n" fmt, "mode", "run wall, mean (min..max)", "process wall, mean (min..max)", "spans"
        printf fmt, "recording", span(rw["rec"], rmin["rec"], rmax["rec"]),
               span(pw["rec"], pmin["rec"], pmax["rec"]), sp["rec"] " recorded"
        printf fmt, "--no-record", span(rw["norec"], rmin["norec"], rmax["norec"]),
               span(pw["norec"], pmin["norec"], pmax["norec"]), sp["norec"] " counted, not stored"
        printf "%-19s  %-27s  %s\n", "recording overhead",
               sprintf("%+6.1f %%", 100 * (rw["rec"] - rw["norec"]) / rw["norec"]),
               sprintf("%+6.1f %%", 100 * (pw["rec"] - pw["norec"]) / pw["norec"])
    }' "$TMP/times"
if command -v sqlite3 >/dev/null 2>&1; then
    in_db() { sqlite3 "$TMP/$1-1.sqlite" 'SELECT count(*) FROM span' 2>/dev/null || echo '?'; }
    echo "rows in the span table: $(in_db rec) (recorded run #1), $(in_db norec) (--no-record run #1)"
fi
echo "(overhead = (recorded - unrecorded) / unrecorded of the means; load avg now $(cut -d' ' -f1-3 /proc/loadavg))"
