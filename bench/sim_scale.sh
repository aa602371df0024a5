#!/usr/bin/env bash
# sim_scale.sh — how the sim backend scales with the ranks.  Predicts
# bench/gpt2_1p5b_4096.ini (a 1.5B-parameter GPT-2, 10 iterations, per-rank skew,
# record.detail = phase) at each world size of WORLDS and prints, for each, the wall and
# CPU time, the peak memory, the database's size and the spans stored, and the same per
# rank (flat per-rank figures: cost linear in ranks); then `whatif -s run.world_size=W`
# of a 16-rank prediction recorded op by op (whatif derives a scenario from such a run;
# the prediction at W ranks records phases).  Each figure is set beside issue 43's
# targets on a 2-core machine: 16,384 ranks < 30 s, 65,536 < 120 s, and at 65,536
# ranks < 2 GiB of memory and a database < 200 MB.  A benchmark: it prints figures, it
# asserts nothing; the machine's load is printed with them.
# Ops per rank-iteration (every forward, backward, copy, allreduce and optimizer op the
# engine enqueues) are counted from a 2-rank run with record.detail = op.
#
#   usage: bench/sim_scale.sh          env: WORLDS="4096 16384 65536"  WHATIF_WORLD=65536
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
WORLDS=${WORLDS:-"4096 16384 65536"}
WHATIF_WORLD=${WHATIF_WORLD:-65536}
SCEN=bench/gpt2_1p5b_4096.ini
make -s ddpprof >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

./ddpprof predict "$SCEN" -q -o "$TMP/ops.db" -s run.world_size=2 -s network.gpus_per_node=2 \
    -s record.detail=op -s run.iterations=3
OPS_PER_RANK_ITER=$(sqlite3 "$TMP/ops.db" "select count(*) * 1.0 / count(distinct rank || '.' || iter) from span where stream != 'host' and iter > 0")

echo "# sim_scale: $(date -u +%F), $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
echo "# ops per rank-iteration: $OPS_PER_RANK_ITER"

# One timed command: prints "wall_s cpu_s max_kib" of "$@".
timed() {
    /usr/bin/time -o "$TMP/time" -f "%e %U %S %M" "$@" >/dev/null 2>"$TMP/cmd.err" ||
        { echo "failed: $*: $(tail -3 "$TMP/cmd.err")" >&2; return 1; }
    awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$TMP/time"
}

# Prints a world size's figures and the targets that apply to it.
figures() {
    local label=$1 w=$2 wall=$3 cpu=$4 kib=$5 db=$6 iters
    local spans ranks_with_spans
    iters=$(sqlite3 "$db" "select iterations + warmup from run where id = (select max(id) from run)")
    spans=$(sqlite3 "$db" "select count(*) from span_data where run_id = (select max(id) from run)")
    ranks_with_spans=$(sqlite3 "$db" "select count(*) from rank where run_id = (select max(id) from run) and spans is not 0")
    awk -v label="$label" -v w="$w" -v wall="$wall" -v cpu="$cpu" -v kib="$kib" -v bytes="$(stat -c %s "$db")" \
        -v spans="$spans" -v rs="$ranks_with_spans" -v opri="$OPS_PER_RANK_ITER" -v iters="$iters" 'BEGIN {
        printf "%s %6d ranks x %d iterations: %6.1f s wall, %6.1f s CPU, %6.0f MiB peak, database %5.1f MB, %d spans (%d ranks with spans)\n",
               label, w, iters, wall, cpu, kib / 1024, bytes / 1e6, spans, rs;
        printf "            per rank: %.2f ms CPU, %.1f KiB; %.2f M simulated ops/s of CPU\n",
               cpu * 1000 / w, kib / w, opri * w * iters / cpu / 1e6;
        if (w == 16384) printf "            target: < 30 s wall: %s\n", wall < 30 ? "met" : "NOT met";
        if (w == 65536) printf "            targets: < 120 s wall: %s; < 2 GiB: %s; database < 200 MB: %s\n",
                               wall < 120 ? "met" : "NOT met", kib < 2 * 1024 * 1024 ? "met" : "NOT met",
                               bytes < 200e6 ? "met" : "NOT met" }'
}

for w in $WORLDS; do
    rm -f "$TMP"/w.db*
    echo "# $(uptime | sed 's/.*load average/load average/')"
    read -r WALL CPU KIB < <(timed ./ddpprof predict "$SCEN" -q -o "$TMP/w.db" -s run.world_size="$w") || continue
    figures "predict" "$w" "$WALL" "$CPU" "$KIB" "$TMP/w.db"
    if [ "$w" = 4096 ]; then
        REPORT_S=$( { /usr/bin/time -f "%e" ./ddpprof report "$TMP/w.db" >/dev/null; } 2>&1 | tail -1)
        echo "            ddpprof report of it: $REPORT_S s"
    fi
done

# whatif: derive from a 16-rank op-by-op prediction, predict at WHATIF_WORLD ranks.
rm -f "$TMP"/src.db*
./ddpprof predict "$SCEN" -q -o "$TMP/src.db" -s run.world_size=16 -s run.iterations=3 -s record.detail=op
echo "# $(uptime | sed 's/.*load average/load average/')"
if read -r WALL CPU KIB < <(timed ./ddpprof whatif "$TMP/src.db" --run 1 -q -s run.world_size="$WHATIF_WORLD" \
    -s record.detail=phase); then
    figures "whatif " "$WHATIF_WORLD" "$WALL" "$CPU" "$KIB" "$TMP/src.db"
fi
