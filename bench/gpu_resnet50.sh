#!/usr/bin/env bash
# gpu_resnet50.sh — ResNet-50 DDP on one machine's GPU three ways, for docs/validation.md:
#
#   1. PyTorch DDP (NCCL), torchvision's ResNet-50, synthetic data, WORLD ranks (default 2,
#      sharing the GPU when it is one), batch 32 per rank, 25 MiB buckets: the profiler's
#      traces of every rank (record_shapes=True) and step times without the profiler
#      (bench/torch_ddp_resnet50.py);
#   2. `ddpprof import` of those traces and `ddpprof whatif` replaying them (run 2 of the
#      same database);
#   3. ddpprof's cuda backend running the matching scenario (paper_resnet50.ini's resnet50
#      preset, batch 32, 25 MiB, compute = real: the GEMMs of the layers' sizes), its first
#      bucket 25 MiB as well: PyTorch since 2.3 closes the first bucket at the cap when
#      bucket_cap_mb is given, as the script does.
# Writes under OUT (default: a temp directory): torch/ (traces, summary.json), torch.sqlite,
# ddpprof.sqlite, each run's report as text and JSON, and the logs; then prints the table
# (bench/gpu_table.py).
#
#   usage: bench/gpu_resnet50.sh [OUT]        (WORLD=N, ITERS=N, PYTHON=python3; to try it
#          without a GPU: BACKEND=cpu TORCH_ARGS="--device cpu --image 64 --batch 4")
set -uo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/ddpprof-resnet50.XXXXXX")}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
WORLD=${WORLD:-2}
ITERS=${ITERS:-12}
DDPPROF=${DDPPROF:-./ddpprof}
BACKEND=${BACKEND:-cuda}
read -r -a TORCH_EXTRA <<<"${TORCH_ARGS:-}"
fail=0

step() { printf '\n== %s\n' "$*"; }

step "1. PyTorch DDP, ResNet-50, $WORLD ranks, batch 32, 25 MiB buckets"
PYTHONUNBUFFERED=1 "$PY" bench/torch_ddp_resnet50.py "$OUT/torch" --world "$WORLD" --batch 32 --bucket-cap-mb 25 \
    "${TORCH_EXTRA[@]}" >"$OUT/torch.log" 2>&1 || { echo "PyTorch run failed:"; tail -30 "$OUT/torch.log"; fail=1; }
tail -n "$WORLD" "$OUT/torch.log"

step "2. ddpprof import of its traces, report, whatif replay"
rm -f "$OUT/torch.sqlite"*
if $DDPPROF import "$OUT/torch/traces" -o "$OUT/torch.sqlite" >"$OUT/import.log" 2>&1; then
    $DDPPROF report "$OUT/torch.sqlite" --run 1 >"$OUT/torch-report.txt" 2>&1 || fail=1
    $DDPPROF report "$OUT/torch.sqlite" --run 1 --json -o "$OUT/torch-report.json" 2>>"$OUT/import.log" || fail=1
    $DDPPROF whatif "$OUT/torch.sqlite" --run 1 >"$OUT/whatif.txt" 2>&1 || fail=1
    $DDPPROF report "$OUT/torch.sqlite" --run 2 --json -o "$OUT/replay-report.json" 2>>"$OUT/import.log" || fail=1
    sed -n '1,40p' "$OUT/torch-report.txt"
    tail -4 "$OUT/whatif.txt"
else
    echo "import failed:"; tail -20 "$OUT/import.log"; fail=1
fi

step "3. ddpprof's cuda backend: resnet50, $WORLD ranks, batch 32, 25 MiB, compute = real"
rm -f "$OUT/ddpprof.sqlite"*
if $DDPPROF run scenarios/paper_resnet50.ini --backend "$BACKEND" -o "$OUT/ddpprof.sqlite" -s "run.world_size=$WORLD" \
    -s model.compute=real -s "run.iterations=$ITERS" -s run.warmup=3 -s device.preset=h200 -s network.gpus_per_node=0 \
    -s ddp.first_bucket_mb=25 \
    >"$OUT/ddpprof-report.txt" 2>"$OUT/ddpprof.err"; then
    $DDPPROF report "$OUT/ddpprof.sqlite" --json -o "$OUT/ddpprof-report.json" 2>>"$OUT/ddpprof.err" || fail=1
    sed -n '1,30p' "$OUT/ddpprof-report.txt"
else
    echo "cuda run failed:"; tail -20 "$OUT/ddpprof.err"; fail=1
fi

step "4. the table"
"$PY" bench/gpu_table.py "$OUT" || fail=1
echo "outputs: $OUT"
exit $fail
