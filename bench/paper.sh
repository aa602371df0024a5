#!/usr/bin/env bash
# paper.sh — predictions of scenarios/paper_resnet50.ini and scenarios/paper_bert.ini
# next to the figures of Li et al., "PyTorch Distributed: Experiences on Accelerating
# Data Parallel Training" (VLDB 2020), as measured from the paper's plots
# (DESIGN.md's reference/ddp.md, tables A to D), with the error of each:
#   1. Fig. 6: how much overlapping backward with communication cuts the step (NCCL,
#      32 GPUs, 25 MB buckets): predicted 1 - step / (compute + communication), the
#      paper's 1 - overlapped / non-overlapped total.
#   2. Fig. 8: the step against bucket_cap_mb at 32 GPUs (bucket 0, one allreduce per
#      gradient, is bucket_cap_mb = first_bucket_mb = 0.001 MiB), and which is slowest.
#   3. Fig. 10: ResNet50 at 256 GPUs synchronising every 1, 2, 4 and 8 iterations
#      (mean over all iterations, as the paper's average latency).
#   4. Fig. 9: ResNet50 from 1 to 256 GPUs (weak scaling).
# The two scenarios were set from the paper's Fig. 6 (compute and communication time of
# one step at 32 GPUs, bucket 25 MB); everything else is predicted.  Runs record one span
# per phase (record.detail = phase: the same figures, fewer rows).
#
#   usage: bench/paper.sh
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
make -s ddpprof >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3

# predict FILE [-s k=v]... -> "step_ms compute_ms comm_ms" (rank 0's compute and comm)
predict() {
    rm -f "$TMP"/p.db*
    ./ddpprof predict "$@" -s record.detail=phase -o "$TMP/p.db" --json 2>/dev/null | $PY -c '
import json, sys
r = json.load(sys.stdin)
r = r["runs"][0] if "runs" in r else r
k = r["ranks"][0]
print(r["step_ms_mean"], k["compute_ms"], k["comm_ms"])'
}

pct_err() { awk -v p="$1" -v q="$2" 'BEGIN { printf "%+.1f%%", 100 * (p - q) / q }'; }

echo "== Fig. 6: step cut by overlapping backward with communication (NCCL, 32 GPUs, 25 MB) =="
printf "%-10s %12s %12s %10s\n" model predicted paper error
for m in resnet50:38.0 bert:35.3; do
    name=${m%%:*} paper=${m##*:}
    read -r step c comm <<<"$(predict scenarios/paper_$name.ini)"
    red=$(awk -v s="$step" -v c="$c" -v m="$comm" 'BEGIN { printf "%.1f", 100 * (1 - s / (c + m)) }')
    printf "%-10s %11s%% %11s%% %+9.1f points\n" "$name" "$red" "$paper" "$(awk -v a="$red" -v b="$paper" 'BEGIN { print a - b }')"
done

echo
echo "== Fig. 8: step (s) against bucket size at 32 GPUs (NCCL) =="
for m in "resnet50:0 5 10 25 50:0.189 0.122 0.121 0.121 0.118" \
         "bert:0 5 10 25 50 100 200:0.567 0.450 0.441 0.451 0.468 0.451 0.454"; do
    name=${m%%:*} rest=${m#*:} sizes=${rest%%:*} papers=${rest#*:}
    read -r -a P <<<"$papers"
    printf "%-10s %8s %10s %8s %8s\n" "$name" "MB" predicted paper error
    i=0 slowest="" worst=0
    for b in $sizes; do
        cap=$b first=1
        if [ "$b" = 0 ]; then cap=0.001 first=0.001; fi
        if awk -v b="$cap" 'BEGIN { exit !(b < 1) }'; then first=$cap; fi
        read -r step _ _ <<<"$(predict scenarios/paper_$name.ini -s ddp.bucket_cap_mb=$cap -s ddp.first_bucket_mb=$first)"
        s=$(awk -v x="$step" 'BEGIN { printf "%.3f", x / 1000 }')
        printf "%-10s %8s %10s %8s %8s\n" "" "$b" "$s" "${P[$i]}" "$(pct_err "$s" "${P[$i]}")"
        if awk -v a="$s" -v b="$worst" 'BEGIN { exit !(a > b) }'; then worst=$s slowest=$b; fi
        i=$((i + 1))
    done
    echo "           slowest predicted: bucket $slowest MB (paper: 0)"
done

echo
echo "== Fig. 10: ResNet50 at 256 GPUs, allreduce every n iterations: cut of the mean step against n = 1 =="
printf "%-14s %10s %10s %10s %8s\n" no_sync_every "step (s)" predicted paper error
base=""
for m in 1:0.306 2:0.229 4:0.191 8:0.197; do
    n=${m%%:*} paper=${m##*:}
    read -r step _ _ <<<"$(predict scenarios/paper_resnet50.ini -s run.world_size=256 -s ddp.no_sync_every=$n \
        -s run.warmup=8 -s run.iterations=16)"
    [ -n "$base" ] || base=$step
    cut=$(awk -v s="$step" -v b="$base" 'BEGIN { printf "%.1f", 100 * (s - b) / b }')
    pcut=$(awk -v s="$paper" 'BEGIN { printf "%.1f", 100 * (s - 0.306) / 0.306 }')
    printf "%-14s %10.3f %9s%% %9s%% %+7.1f points\n" "$n" "$(awk -v x="$step" 'BEGIN { print x / 1000 }')" "$cut" "$pcut" \
        "$(awk -v a="$cut" -v b="$pcut" 'BEGIN { print a - b }')"
done

echo
echo "== Fig. 9: ResNet50 (NCCL) step against GPUs, constant work per GPU, relative to 1 GPU =="
echo "   (Figs. 9 and 10 come from a shared cluster whose 1-GPU step, 0.149 s, is not Fig. 8's setup:"
echo "    the shape is compared, as step(n) / step(1))"
printf "%-6s %10s %10s %10s %8s\n" GPUs "step (s)" predicted paper error
base=""
for m in 1:0.149 8:0.195 16:0.218 32:0.255 64:0.252 128:0.261 256:0.304; do
    n=${m%%:*} paper=${m##*:}
    gpn=8
    [ "$n" -ge 8 ] || gpn=$n
    read -r step _ _ <<<"$(predict scenarios/paper_resnet50.ini -s run.world_size=$n -s network.gpus_per_node=$gpn)"
    [ -n "$base" ] || base=$step
    r=$(awk -v s="$step" -v b="$base" 'BEGIN { printf "%.2f", s / b }')
    pr=$(awk -v s="$paper" 'BEGIN { printf "%.2f", s / 0.149 }')
    printf "%-6s %10.3f %10s %10s %8s\n" "$n" "$(awk -v x="$step" 'BEGIN { print x / 1000 }')" "$r" "$pr" "$(pct_err "$r" "$pr")"
done
