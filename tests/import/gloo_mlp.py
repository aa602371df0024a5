"""gloo_mlp.py — what the scripts that run PyTorch DDP (gloo, CPU processes) on
ddpprof's `mlp` share: tests/import/ddp_trace.py, bench/ddp_mlp_step.py and
bench/ddp_bucket_run.py (the bench scripts put this folder on their path).  free_port()
gives a free port of 127.0.0.1 for the ranks' rendezvous; run_ranks() spawns the ranks
there; join_gloo() makes a rank, held to one intra-op thread, join the group; mlp() is
the model, Linear + ReLU layers; mlp_training() builds what every rank trains: the mlp
under DDP, with its SGD, MSE loss and one fixed batch.  Imports torch: a script imports
it where it imports torch, so that a missing torch is that import's ImportError.
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(worker, a):
    """Runs worker(rank, a, q) in a.world spawned processes, which meet on a free local
    port (set as a.port), and returns q, the queue they put their results on."""
    a.port = free_port()
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    mp.start_processes(worker, args=(a, q), nprocs=a.world, join=True, start_method="spawn")
    return q


def join_gloo(rank, a):
    """Rank `rank` of a.world, on one intra-op thread, joins the gloo group at a.port."""
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


def mlp_training(a, first=()):
    """Seeds torch with 0, then: the modules `first`, then a.layers Linear(a.width,
    a.width) with a ReLU between each two, under DDP (a.bucket_cap_mb); SGD (lr 1e-3) over
    its parameters, MSE, and a batch x, y of a.batch random samples.  Returns (ddp, opt,
    loss_fn, x, y)."""
    torch.manual_seed(0)
    ddp = DDP(torch.nn.Sequential(*first, *mlp(a.layers, a.width)), bucket_cap_mb=a.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x, y = torch.randn(a.batch, a.width), torch.randn(a.batch, a.width)
    return ddp, opt, loss_fn, x, y
