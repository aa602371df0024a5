#!/usr/bin/python3
"""ddp_mlp_step.py — PyTorch DDP (gloo, CPU processes) training the mlp that ddpprof's
`mlp` preset trains (Linear + ReLU layers, MSE, SGD), for bench/vs_pytorch.sh.

    /usr/bin/python3 bench/ddp_mlp_step.py --world 2 --layers 4 --width 1024 --batch 64 \
        --bucket-cap-mb 1 --iters 20 --warmup 3

Each rank is a process held to one intra-op thread; a step is forward, loss, backward
(DDP's bucketed allreduce overlapping it), SGD.  Prints one line of JSON: the mean step
time of the slowest rank over the measured steps, and the DDP logger's averages
(avg_backward_compute_time, avg_backward_comm_time, avg_backward_compute_comm_overlap_time,
in ns) with its overlap ratio.  Exits 3 when torch is missing.
"""
import argparse
import json
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    print("torch unavailable: %s" % e, file=sys.stderr)
    sys.exit(3)

from gloo_mlp import join_gloo, mlp, run_ranks  # noqa: E402 (after the check for torch)


def worker(rank, a, q):
    join_gloo(rank, a)
    torch.manual_seed(0)
    ddp = DDP(mlp(a.layers, a.width), bucket_cap_mb=a.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x, y = torch.randn(a.batch, a.width), torch.randn(a.batch, a.width)
    times = []
    for it in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
        if it >= a.warmup:
            times.append(time.perf_counter() - t0)
    step = torch.tensor([sum(times) / len(times)])
    dist.all_reduce(step, op=dist.ReduceOp.MAX)
    ddp(x)  # the logger takes the last step's figures at the next forward
    if rank == 0:
        d = ddp._get_ddp_logging_data()
        comm = d.get("avg_backward_comm_time", 0)
        q.put({"step_ms": step.item() * 1e3,
               "avg_backward_compute_time": d.get("avg_backward_compute_time"),
               "avg_backward_comm_time": comm,
               "avg_backward_compute_comm_overlap_time": d.get("avg_backward_compute_comm_overlap_time"),
               "logger_overlap_pct": 100.0 * d.get("avg_backward_compute_comm_overlap_time", 0) / comm
               if comm else None})
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=64, help="samples per rank")
    p.add_argument("--bucket-cap-mb", type=float, default=1.0)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    q = run_ranks(worker, a)
    print(json.dumps(q.get()))


if __name__ == "__main__":
    main()
