#!/usr/bin/python3
"""ddp_bucket_run.py — real PyTorch DDP (gloo, CPU processes, one thread each) at several
bucket_cap_mb in one job, each timed untraced and then traced, for bench/whatif_vs_pytorch.sh.

    /usr/bin/python3 bench/ddp_bucket_run.py --out DIR --bucket-cap-mb 1,5,25,100 [--world 4]
        [--layers 12] [--width 1024] [--batch 32] [--warmup 3] [--timed 8] [--active 5]
        [--trace shapes|plain]

The ranks meet once; then, for each cap in the order given (the caller rotates it), each rank
wraps a fresh MLP (LAYERS Linear(WIDTH, WIDTH) with ReLU between, the same initial weights,
MSE, SGD) in DistributedDataParallel at that cap and runs WARMUP untimed steps (DDP rebuilds
its buckets after the first), TIMED steps timed by the wall clock without the profiler, then
the PyTorch profiler (record_shapes=True, schedule wait=1, warmup=1, active=ACTIVE, so
ProfilerStep#N brackets each step) writing DIR/cap<C>/rank<R>.json.  Caps measured seconds
apart meet the same machine, which a shared machine's load makes matter.

The trace: this PyTorch (Debian's 1.13, built without Kineto) records each op's input shapes
under record_shapes=True but its export_chrome_trace writes `"args": {}`, so its list-form
trace has no message sizes.  With --trace shapes (the default) the file is written from the
same events as export_chrome_trace would write them, plus Kineto's `Input Dims` (the shapes
the profiler recorded) on every op that has them and, on the `gloo:` collective annotations,
Kineto's `Input type` ("float": the profiler of 1.13 records no dtypes; every gradient of this
fp32 model is float).  --trace plain: export_chrome_trace's own file.

Prints one line of JSON per cap: the job's step (ms: each rank's mean step, the slowest
rank's) over the untraced steps ("wall_ms") and over the trace's ProfilerSteps
("trace_ms"), per step the slowest rank's, DDP's rebuilt bucket sizes, the load average when
the cap began, the trace directory.  Exits 3 when torch is missing.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    print("torch unavailable: %s" % e, file=sys.stderr)
    sys.exit(3)

# The ranks, their rendezvous and the model are those of tests/import/ddp_trace.py's job.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "import"))
from gloo_mlp import join_gloo, mlp, run_ranks  # noqa: E402 (after the check for torch)


def write_trace(events, path):
    """export_chrome_trace's list form, with Kineto's Input Dims / Input type args."""
    out = []
    for e in events:
        if e.trace_name is None:
            continue
        args = {}
        shapes = [list(s) for s in (e.input_shapes or [])]
        if any(shapes):
            args["Input Dims"] = shapes
            if e.trace_name.startswith("gloo:"):
                args["Input type"] = ["float" if s else "" for s in shapes]
        out.append({"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                    "dur": e.time_range.elapsed_us(), "tid": e.thread, "pid": "CPU functions",
                    "args": args})
    with open(path, "w") as f:
        json.dump(out, f)


def profiler_steps(path):
    """The ProfilerStep#N durations of one trace file, in ms, by N."""
    with open(path) as f:
        ev = json.load(f)
    if isinstance(ev, dict):
        ev = ev.get("traceEvents", [])
    steps = {}
    for e in ev:
        n = e.get("name", "")
        if n.startswith("ProfilerStep#"):
            steps[int(n[len("ProfilerStep#"):])] = e["dur"] / 1e3
    return steps


def worker(rank, a, q):
    join_gloo(rank, a)
    for cap in a.caps:
        load = float(open("/proc/loadavg").read().split()[0])
        torch.manual_seed(0)
        ddp = DDP(mlp(a.layers, a.width), bucket_cap_mb=cap)
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
        loss_fn = torch.nn.MSELoss()
        torch.manual_seed(1 + rank)
        x, y = torch.randn(a.batch, a.width), torch.randn(a.batch, a.width)

        def step():
            opt.zero_grad()
            loss_fn(ddp(x), y).backward()
            opt.step()

        for _ in range(a.warmup):
            step()
        dist.barrier()
        wall = []
        t = time.perf_counter()
        for _ in range(a.timed):
            step()
            now = time.perf_counter()
            wall.append((now - t) * 1e3)
            t = now

        path = os.path.join(cap_dir(a.out, cap), "rank%d.json" % rank)

        def ready(prof):
            if a.trace == "plain":
                prof.export_chrome_trace(path)
            else:
                write_trace(prof.events(), path)

        dist.barrier()
        sched = torch.profiler.schedule(wait=1, warmup=1, active=a.active, repeat=1)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
                                    on_trace_ready=ready, record_shapes=True) as prof:
            for _ in range(a.active + 2):
                step()
                prof.step()
        d = ddp._get_ddp_logging_data() if rank == 0 else {}
        q.put((cap, rank, wall, d.get("rebuilt_bucket_sizes") or d.get("bucket_sizes"), load))
        dist.barrier()
    dist.destroy_process_group()


def cap_dir(out, cap):
    return os.path.join(out, "cap%g" % cap)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=32, help="samples per rank")
    p.add_argument("--bucket-cap-mb", default="25", help="caps, comma-separated, run in this order")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--timed", type=int, default=8)
    p.add_argument("--active", type=int, default=5)
    p.add_argument("--trace", choices=("shapes", "plain"), default="shapes")
    a = p.parse_args()
    a.caps = [float(c) for c in a.bucket_cap_mb.split(",")]
    for c in a.caps:
        os.makedirs(cap_dir(a.out, c), exist_ok=True)
    q = run_ranks(worker, a)
    res = [q.get() for _ in range(a.world * len(a.caps))]
    for order, cap in enumerate(a.caps):
        mine = sorted((r for r in res if r[0] == cap), key=lambda r: r[1])
        files = [os.path.join(cap_dir(a.out, cap), "rank%d.json" % r) for r in range(a.world)]
        steps = [profiler_steps(f) for f in files]
        # The job's period: each rank's mean step, the slowest rank's.
        wall = max(sum(r[2]) / len(r[2]) for r in mine)
        traced = max(sum(s.values()) / len(s) for s in steps) if all(steps) else None
        print(json.dumps({
            "bucket_cap_mb": cap, "order": order, "world": a.world, "layers": a.layers, "width": a.width,
            "batch": a.batch, "param_bytes": 4 * a.layers * (a.width * a.width + a.width),
            "buckets": mine[0][3], "load": mine[0][4], "wall_ms": wall,
            "wall_steps_ms": [round(max(v), 3) for v in zip(*(r[2] for r in mine))],
            "trace_ms": traced,
            "trace_steps_ms": [round(max(s[n] for s in steps), 3)
                               for n in sorted(set.intersection(*(set(s) for s in steps)))],
            "trace": a.trace, "dir": cap_dir(a.out, cap)}), flush=True)


if __name__ == "__main__":
    main()
