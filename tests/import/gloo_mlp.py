"""gloo_mlp.py — what the scripts that run PyTorch DDP (gloo, CPU processes) on
ddpprof's `mlp` share: tests/import/ddp_trace.py and bench/ddp_mlp_step.py (which puts
this folder on its path).  free_port() gives a free port of 127.0.0.1 for the ranks'
rendezvous; join_gloo() makes a rank, held to one intra-op thread, join the group there;
mlp_training() builds the model every rank trains, Linear + ReLU layers under DDP, with
its SGD, MSE loss and one fixed batch.  Imports torch: a script imports it where it
imports torch, so that a missing torch is that import's ImportError.
"""
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_gloo(rank, a):
    """Rank `rank` of a.world, on one intra-op thread, joins the gloo group at a.port."""
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    dist.init_process_group("gloo", rank=rank, world_size=a.world)


def mlp_training(a, first=()):
    """Seeds torch with 0, then: the modules `first`, then a.layers Linear(a.width,
    a.width) with a ReLU between each two, under DDP (a.bucket_cap_mb); SGD (lr 1e-3) over
    its parameters, MSE, and a batch x, y of a.batch random samples.  Returns (ddp, opt,
    loss_fn, x, y)."""
    torch.manual_seed(0)
    mods = list(first)
    for i in range(a.layers):
        mods.append(torch.nn.Linear(a.width, a.width))
        if i < a.layers - 1:
            mods.append(torch.nn.ReLU())
    ddp = DDP(torch.nn.Sequential(*mods), bucket_cap_mb=a.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    x, y = torch.randn(a.batch, a.width), torch.randn(a.batch, a.width)
    return ddp, opt, loss_fn, x, y
