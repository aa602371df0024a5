#!/usr/bin/env python3
"""torch_ddp_resnet50.py — PyTorch DDP training torchvision's ResNet-50 on synthetic data,
the job ddpprof's `resnet50` preset describes, with the PyTorch profiler on every rank.

Each rank trains the same model (fp32, SGD) at `--batch` samples per rank and DDP's
`--bucket-cap-mb`; several ranks may share one GPU (NCCL is then told each rank is its own
host and talks over loopback sockets, as ddpprof's cuda backend does).  Per rank it writes:

  OUT/traces/rank<R>.json  the profiler's Kineto trace of --active steps (record_shapes=True),
                        after --wait + --warmup steps; `ddpprof import OUT/traces`
  OUT/summary.json      step times without the profiler (median, per rank), the bucket
                        sizes DDP formed, and DDP's own runtime statistics

  usage: torch_ddp_resnet50.py OUT [--world 2] [--batch 32] [--bucket-cap-mb 25]
                               [--device cuda|cpu] [--image 224] [--timed 20] [--model resnet50]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, args, port):
    import torch
    import torch.distributed as dist
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP

    cuda = args.device == "cuda"
    if cuda:
        ngpu = torch.cuda.device_count()
        gpu = rank % ngpu
        if args.world > ngpu:
            # NCCL refuses two ranks of one host on one GPU: a host id per rank, sockets on
            # loopback (the environment ddpprof's cuda backend sets, engine/cuda/cuda_plan.c).
            os.environ["NCCL_HOSTID"] = "torch-rank-%d" % rank
            for k, v in (("NCCL_NET", "Socket"), ("NCCL_SOCKET_IFNAME", "lo"), ("NCCL_P2P_DISABLE", "1"),
                         ("NCCL_SHM_DISABLE", "1"), ("NCCL_NVLS_ENABLE", "0")):
                os.environ.setdefault(k, v)
        torch.cuda.set_device(gpu)
        dev = torch.device("cuda", gpu)
    else:
        torch.set_num_threads(args.threads)
        dev = torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=args.world)
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)().to(dev)
    ddp = DDP(model, device_ids=[dev.index] if cuda else None, bucket_cap_mb=args.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator(device="cpu").manual_seed(rank)
    x = torch.randn(args.batch, 3, args.image, args.image, generator=gen).to(dev)
    y = torch.randint(0, 1000, (args.batch,), generator=gen).to(dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()
        opt.step()

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    for _ in range(args.untimed):
        step()
    sync()
    dist.barrier()
    times = []
    for _ in range(args.timed):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)

    from torch.profiler import ProfilerActivity, profile, schedule
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    path = os.path.join(args.out, "traces", "rank%d.json" % rank)
    dist.barrier()
    with profile(activities=acts, record_shapes=True,
                 schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active),
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(args.wait + args.warmup + args.active):
            step()
            prof.step()
    sync()

    stats = {}
    try:
        data = ddp._get_ddp_logging_data()
        for k, v in data.items():
            if k.startswith("avg_") or k in ("bucket_sizes", "bucket_cap_bytes", "num_buckets_reduced",
                                             "rebuilt_bucket_sizes", "rebuilt_per_bucket_param_indices",
                                             "nccl_version", "backend_name"):
                stats[k] = v
    except Exception as e:  # an older or newer DDP without it: said, not fatal
        stats["error"] = repr(e)
    result = {"rank": rank, "step_ms": times, "step_ms_median": statistics.median(times),
              "ddp_logging": stats}
    gathered = [None] * args.world
    dist.all_gather_object(gathered, result)
    if rank == 0:
        import torch as t
        summary = {"model": args.model, "world": args.world, "batch": args.batch, "bucket_cap_mb": args.bucket_cap_mb,
                   "device": t.cuda.get_device_name(dev) if cuda else "cpu", "image": args.image,
                   "torch": t.__version__, "nccl": ".".join(map(str, t.cuda.nccl.version())) if cuda else None,
                   "ranks": gathered}
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--model", default="resnet50", help="a torchvision model (resnet50, resnet18, ...)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--bucket-cap-mb", type=float, default=25)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads per rank (cpu)")
    ap.add_argument("--untimed", type=int, default=5)
    ap.add_argument("--timed", type=int, default=20)
    ap.add_argument("--wait", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--active", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "traces"), exist_ok=True)
    import torch.multiprocessing as mp
    mp.start_processes(rank_main, args=(args, free_port()), nprocs=args.world, start_method="spawn")
    with open(os.path.join(args.out, "summary.json")) as f:
        s = json.load(f)
    for r in s["ranks"]:
        print("rank %d: step %.2f ms (median of %d, no profiler); DDP buckets %s" %
              (r["rank"], r["step_ms_median"], len(r["step_ms"]), r["ddp_logging"].get("bucket_sizes", "?")))


if __name__ == "__main__":
    sys.exit(main())
