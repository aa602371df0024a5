#!/usr/bin/python3
"""ddp_trace.py — a real PyTorch DDP job (gloo, CPU processes) profiled by torch.profiler,
one trace file per rank, for the importer's end-to-end tests.

    /usr/bin/python3 tests/import/ddp_trace.py --out DIR [--world 4] [--slow-rank 2[,3...]]
        [--slow-ms 30] [--steps 6] [--layers 4] [--width 512] [--bucket-cap-mb 1]

Each rank trains an MLP under DistributedDataParallel and writes DIR/rank<R>.json through
the profiler's on_trace_ready (export_chrome_trace), with a schedule of wait=1, warmup=1,
active=STEPS so that ProfilerStep#N marks each step.  The slow rank sleeps --slow-ms inside
its forward (so the others wait for it inside each allreduce).  Prints one line of JSON:
the files written and the bucket sizes DDP used.  Exits 3 when torch is missing.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    from gloo_mlp import free_port, join_gloo, mlp_training
except ImportError as e:
    print("torch unavailable: %s" % e, file=sys.stderr)
    sys.exit(3)


class Slow(torch.nn.Module):
    """Sleeps in forward on the slow rank: a straggler the others wait for."""

    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds

    def forward(self, x):
        if self.seconds > 0:
            time.sleep(self.seconds)
        return x


def worker(rank, a):
    join_gloo(rank, a)
    slow = [int(r) for r in str(a.slow_rank).split(",") if r != ""]
    ddp, opt, loss_fn, x, y = mlp_training(a, [Slow(a.slow_ms / 1000.0 if rank in slow else 0.0)])
    path = os.path.join(a.out, "rank%d.json" % rank)

    def ready(prof):
        prof.export_chrome_trace(path)

    sched = torch.profiler.schedule(wait=1, warmup=1, active=a.steps, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=sched, on_trace_ready=ready,
                                record_shapes=True) as prof:
        for _ in range(a.steps + 2):
            opt.zero_grad()
            loss_fn(ddp(x), y).backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--slow-rank", default="2", help="the slow rank, or several: 2,3")
    p.add_argument("--slow-ms", type=float, default=30.0)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--bucket-cap-mb", type=float, default=1.0)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    a.port = free_port()
    mp.spawn(worker, args=(a,), nprocs=a.world, join=True)
    files = [os.path.join(a.out, "rank%d.json" % r) for r in range(a.world)]
    print(json.dumps({"files": files, "world": a.world, "slow_rank": a.slow_rank}))


if __name__ == "__main__":
    main()
