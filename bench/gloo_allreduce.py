#!/usr/bin/python3
"""gloo_allreduce.py — PyTorch's gloo allreduce among N processes on this machine, printed
as nccl-tests (and `ddpprof bench allreduce`) print: size, count, type, redop, time (us),
algbw and busbw in GB/s (1e9 B/s; busbw = algbw * 2(n-1)/n).

Runs with Debian's PyTorch (/usr/bin/python3, torch 1.13), not the python3 first on PATH:

    /usr/bin/python3 bench/gloo_allreduce.py [--ranks 4] [--sizes 1M,25M,100M] [--iters 20] [--warmup 3]

Each rank is a process (torch.multiprocessing spawn) with one float32 tensor; the process
group uses the gloo backend over TCP on 127.0.0.1 at a free port.  Per size: one checked
allreduce (every rank must end with the sum of 1..n), --warmup untimed ones, a barrier,
then --iters timed all_reduce(SUM) calls; a rank's time is its elapsed time / iters and
the printed time is the mean over ranks (as ddpprof bench does).  Each rank is held to
one intra-op thread (torch.set_num_threads(1)) so the n processes do not oversubscribe.
Exits 3 if torch (or torch.distributed with gloo) is unavailable.
"""
import argparse
import os
import re
import socket
import sys
import time


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)[bB]?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (e.g. 4K, 25M, 1G)")
    mult = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2).lower()]
    n = int(float(m.group(1)) * mult)
    if n < 4:
        raise argparse.ArgumentTypeError(f"'{text}': at least 4 bytes")
    return n


def parse_sizes(text):
    return [parse_size(t) for t in text.split(",") if t.strip()]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, sizes, iters, warmup):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        if rank == 0:
            print(f"# gloo allreduce: torch {torch.__version__}, {world} ranks (processes), "
                  f"{iters} iterations after {warmup} warm-up", flush=True)
            print("# %10s  %12s  %6s  %5s  %10s  %7s  %7s" %
                  ("size", "count", "type", "redop", "time", "algbw", "busbw"))
            print("# %10s  %12s  %6s  %5s  %10s  %7s  %7s" %
                  ("(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)"), flush=True)
        for nbytes in sizes:
            count = nbytes // 4
            buf = torch.full((count,), float(rank + 1), dtype=torch.float32)
            dist.all_reduce(buf, op=dist.ReduceOp.SUM)
            want = world * (world + 1) / 2
            if not bool((buf == want).all()):
                raise RuntimeError(f"rank {rank}: allreduce of {count} floats gave a wrong sum")
            buf.zero_()  # keeps repeated in-place sums finite
            for _ in range(warmup):
                dist.all_reduce(buf, op=dist.ReduceOp.SUM)
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(buf, op=dist.ReduceOp.SUM)
            t1 = time.perf_counter()
            dist.barrier()
            t = torch.tensor([(t1 - t0) / iters], dtype=torch.float64)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            if rank == 0:
                t_us = t.item() / world * 1e6
                algbw = count * 4 / (t_us * 1e-6) / 1e9
                busbw = algbw * (2.0 * (world - 1) / world if world > 1 else 0.0)
                print("%12d  %12d  %6s  %5s  %10.1f  %7.2f  %7.2f" %
                      (count * 4, count, "float", "sum", t_us, algbw, busbw), flush=True)
            del buf
    finally:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description="PyTorch gloo allreduce bandwidth (nccl-tests columns)")
    ap.add_argument("--ranks", type=int, default=4, help="processes (default 4)")
    ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1M,25M,100M"),
                    help="comma-separated sizes in bytes, K/M/G binary suffixes (default 1M,25M,100M)")
    ap.add_argument("--iters", type=int, default=20, help="timed iterations (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed iterations first (default 3)")
    args = ap.parse_args()
    if not 1 <= args.ranks <= 64:
        ap.error("--ranks: want an integer in [1, 64]")
    if args.iters < 1 or args.warmup < 0:
        ap.error("--iters must be >= 1 and --warmup >= 0")
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"gloo_allreduce: {sys.executable} has no torch ({e})", file=sys.stderr)
        return 3
    if not dist.is_available() or not dist.is_gloo_available():
        print(f"gloo_allreduce: torch {torch.__version__} has no gloo backend", file=sys.stderr)
        return 3
    # All ranks on this host: keep gloo on the loopback interface.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(worker, args=(args.ranks, free_port(), args.sizes, args.iters, args.warmup),
             nprocs=args.ranks, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
