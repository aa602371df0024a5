"""gloo_mlp.py — what the PyTorch DDP benchmarks (ddp_mlp_step.py, ddp_bucket_run.py)
share: ranks as spawned CPU processes meeting over gloo on this host, and the MLP that
ddpprof's `mlp` preset trains (LAYERS Linear(WIDTH, WIDTH) with ReLU between).

Imported, not run.  Needs torch: an importer checks for it first and exits 3 without it.
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run_ranks(worker, a):
    """Runs worker(rank, a, q) in a.world spawned processes, which meet on a free local
    port (set as a.port), and returns q, the queue they put their results on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        a.port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.start_processes(worker, args=(a, q), nprocs=a.world, join=True, start_method="spawn")
    return q


def join_gloo(rank, a):
    """In rank's process: one intra-op thread (ranks share the cores, as ddpprof's do),
    then the gloo process group of a.world ranks on a.port."""
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    dist.init_process_group("gloo", rank=rank, world_size=a.world)


def mlp(layers, width):
    """The model, with weights from torch's generator as it stands (the caller seeds it)."""
    mods = []
    for i in range(layers):
        mods.append(torch.nn.Linear(width, width))
        if i < layers - 1:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)
