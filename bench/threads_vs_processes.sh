#!/usr/bin/env bash
# threads_vs_processes.sh — the same scenario with its ranks as threads and as processes,
# side by side: per rank the mean step time, overlap % and wait (ms) over N runs of each
# (alternating), from `ddpprof report --json`; then the clock offsets and uncertainties
# the coordinator measured in the processes runs.  The two should agree within the
# machine's noise: the collectives, the reducer and the trainer are the same code.
#   usage: bench/threads_vs_processes.sh [N [SCENARIO]]   (default: 3 scenarios/skewed.ini)
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
N=${1:-3}
SCENARIO=${2:-scenarios/skewed.ini}
BIN=${DDPPROF:-./ddpprof}
[ -x "$BIN" ] || make ddpprof >/dev/null
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT DDPPROF_COORDINATOR \
    OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE SLURM_PROCID
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-tvp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for i in $(seq 1 "$N"); do
    for mode in threads processes; do
        "$BIN" run "$SCENARIO" -q -s run.ranks=$mode -o "$TMP/$mode.sqlite"
    done
done
for mode in threads processes; do "$BIN" report "$TMP/$mode.sqlite" --json > "$TMP/$mode.json"; done
/usr/bin/env python3 - "$TMP" "$SCENARIO" "$N" <<'PY'
import json, sys, statistics as st
tmp, scenario, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = {m: json.load(open(f"{tmp}/{m}.json"))["runs"] for m in ("threads", "processes")}
print(f"{scenario}: {n} runs of each, means per rank (ms, %)")
print(f"{'rank':>4}  {'step thr':>9} {'step proc':>9}  {'overlap thr':>11} {'overlap proc':>12}  {'wait thr':>8} {'wait proc':>9}")
ranks = len(data["threads"][0]["ranks"])
for r in range(ranks):
    def mean(m, key):
        return st.mean(run["ranks"][r][key] for run in data[m] if run["ranks"][r][key] is not None)
    print(f"{r:>4}  {mean('threads','step_ms'):9.1f} {mean('processes','step_ms'):9.1f}  "
          f"{mean('threads','overlap_pct'):11.1f} {mean('processes','overlap_pct'):12.1f}  "
          f"{mean('threads','wait_ms'):8.1f} {mean('processes','wait_ms'):9.1f}")
job = {m: st.mean(run["step_ms_mean"] for run in data[m]) for m in data}
print(f"job step time: threads {job['threads']:.1f} ms, processes {job['processes']:.1f} ms "
      f"({100 * (job['processes'] / job['threads'] - 1):+.1f} %)")
PY
sqlite3 "$TMP/processes.sqlite" "select 'clock offsets (ns) and uncertainty (ns), run ' || run_id || ': ' || group_concat('rank ' || rank || ' ' || clock_offset_ns || ' +- ' || clock_uncertainty_ns, ', ') from rank group by run_id"
