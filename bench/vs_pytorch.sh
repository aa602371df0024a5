#!/bin/sh
# vs_pytorch.sh — step time and overlap of ddpprof (cpu backend, compute = real) and of
# PyTorch DDP (gloo, CPU processes) on the same mlp, batch and bucket cap, side by side.
#
#   bench/vs_pytorch.sh [WORLD] [LAYERS] [WIDTH] [BATCH_PER_RANK] [BUCKET_CAP_MB] [ITERS]
#
# Both hold each rank to one BLAS thread.  Overlap is given twice: the DDP logger's ratio
# avg_backward_compute_comm_overlap_time / avg_backward_comm_time (ddpprof's view
# ddp_logging_avg, PyTorch's _get_ddp_logging_data()), and for ddpprof also |M ∩ C| / |M|
# over the timeline (iteration_stats).  Needs ./ddpprof built and /usr/bin/python3 with torch.
set -eu
WORLD=${1:-2} LAYERS=${2:-4} WIDTH=${3:-1024} BATCH=${4:-64} CAP=${5:-1} ITERS=${6:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/mlp.ini" <<INI
[run]
name = vs_pytorch
backend = cpu
world_size = $WORLD
iterations = $ITERS
warmup = 3
[model]
preset = mlp
layers = $LAYERS
hidden = $WIDTH
batch = $BATCH
compute = real
[ddp]
bucket_cap_mb = $CAP
INI
OPENBLAS_NUM_THREADS=1 "$here/ddpprof" run "$tmp/mlp.ini" -o "$tmp/db.sqlite" -q >/dev/null
ours=$(sqlite3 -separator ' ' "$tmp/db.sqlite" "
  SELECT printf('%.3f', (SELECT AVG(s) / 1e6 FROM (SELECT MAX(step_ns) AS s FROM iteration_stats WHERE NOT warmup GROUP BY iter))),
         printf('%.1f', (SELECT 100.0 * AVG(avg_backward_compute_comm_overlap_time * 1.0 / avg_backward_comm_time) FROM ddp_logging_avg)),
         printf('%.1f', (SELECT 100.0 * SUM(overlap_ns) / SUM(comm_ns) FROM iteration_stats WHERE NOT warmup));")
theirs=$(/usr/bin/python3 "$here/bench/ddp_mlp_step.py" --world "$WORLD" --layers "$LAYERS" --width "$WIDTH" \
         --batch "$BATCH" --bucket-cap-mb "$CAP" --iters "$ITERS" --warmup 3 2>/dev/null)
py_step=$(printf '%s' "$theirs" | /usr/bin/python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["step_ms"])')
py_ovl=$(printf '%s' "$theirs" | /usr/bin/python3 -c 'import json,sys; v=json.load(sys.stdin)["logger_overlap_pct"]; print("-" if v is None else "%.1f" % v)')
set -- $ours
printf 'mlp %d x %d, %d ranks, batch %d per rank, bucket_cap_mb %s, %d steps\n' "$LAYERS" "$WIDTH" "$WORLD" "$BATCH" "$CAP" "$ITERS"
printf '%-26s %10s %22s %20s\n' "" "step ms" "logger overlap %" "timeline overlap %"
printf '%-26s %10s %22s %20s\n' "ddpprof (cpu, real)" "$1" "$2" "$3"
printf '%-26s %10s %22s %20s\n' "PyTorch DDP (gloo)" "$py_step" "$py_ovl" "-"
