#!/usr/bin/env bash
# sim_scale.sh — how fast the sim backend is: predicts bench/gpt2_1p5b_4096.ini (4096
# ranks of a 1.5B-parameter GPT-2, 10 iterations, per-rank skew, record.detail = phase,
# every rank in the database) and prints its wall time (the run, then the whole command
# with the text report), peak memory, spans written and simulated ops per second; then
# doubles run.world_size from 4096 until a prediction (without the report) takes more
# than LIMIT_S seconds, and prints the largest world size simulated within it.
# Ops per rank-iteration (every forward, backward, copy, allreduce and optimizer op the
# engine enqueues) are counted from a 2-rank run with record.detail = op.
#
#   usage: bench/sim_scale.sh          env: LIMIT_S=60  MAX_WORLD=65536
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
LIMIT_S=${LIMIT_S:-60}
MAX_WORLD=${MAX_WORLD:-65536}
SCEN=bench/gpt2_1p5b_4096.ini
make -s ddpprof >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Ops per rank-iteration, from spans recorded one per op (the host's wait excluded).
./ddpprof predict "$SCEN" -q -o "$TMP/ops.db" -s run.world_size=2 -s network.gpus_per_node=2 \
    -s record.detail=op -s run.iterations=3
OPS_PER_RANK_ITER=$(sqlite3 "$TMP/ops.db" "select count(*) * 1.0 / count(distinct rank || '.' || iter) from span where stream != 'host' and iter > 0")


echo "# sim_scale: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
echo "# ops per rank-iteration: $OPS_PER_RANK_ITER"
read -r WALL_S CPU_S KB < <(/usr/bin/time -f "%e %U+%S %M" ./ddpprof predict "$SCEN" -q -o "$TMP/run.db" 2>&1 >/dev/null | tail -1)
CPU_S=$(awk "BEGIN { print $CPU_S }")
SPANS=$(sqlite3 "$TMP/run.db" "select count(*) from span")
RANKS_IN_DB=$(sqlite3 "$TMP/run.db" "select count(distinct rank) from span")
REPORT_S=$( { /usr/bin/time -f "%e" ./ddpprof report "$TMP/run.db" >/dev/null; } 2>&1 | tail -1)
awk -v wall="$WALL_S" -v cpu="$CPU_S" -v kb="$KB" -v spans="$SPANS" -v ranks="$RANKS_IN_DB" -v opri="$OPS_PER_RANK_ITER" -v rep="$REPORT_S" 'BEGIN {
    ops = opri * 4096 * 10;
    printf "4096 ranks x 10 iterations: predict -q %.1f s wall, %.1f s CPU (simulation and span writer threads), ddpprof report afterwards %.1f s; peak RSS %.0f MiB, %d spans, %d ranks in the database\n", wall, cpu, rep, kb / 1024, spans, ranks;
    printf "simulated ops: %.0f, %.2f M ops/s of wall time, %.0f spans/s written\n", ops, ops / wall / 1e6, spans / wall }'

best=0
w=4096
while [ "$w" -le "$MAX_WORLD" ]; do
    rm -f "$TMP"/w.db*
    if ! timeout "$LIMIT_S" /usr/bin/time -f "%e" ./ddpprof predict "$SCEN" -q -o "$TMP/w.db" -s run.world_size=$w >"$TMP/w.log" 2>&1; then
        echo "world size $w: not done within $LIMIT_S s"
        break
    fi
    echo "world size $w: $(tail -1 "$TMP/w.log") s"
    best=$w
    w=$((w * 2))
done
echo "largest world size simulated within $LIMIT_S s: $best"
