"""ddp_run.py — what the parity scripts (ddp_probe.py, mlp_ddp.py) share: their ranks
started as processes that meet on a free port of 127.0.0.1, and their way out once
every rank is done.  Imports torch: a script imports it where it imports torch, so that a
missing torch is that import's ImportError (and the script's exit 77).
"""
import os
import socket
import sys

import torch.distributed as dist
import torch.multiprocessing as mp


def spawn(worker, a):
    """Runs worker(rank, a) in a.world processes and waits for them; a.port is set to a
    free port of 127.0.0.1 first, for their rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        a.port = s.getsockname()[1]
    mp.spawn(worker, args=(a,), nprocs=a.world, join=True)


def leave():
    """Waits for every rank, then exits without tearing the process group down: the
    reducer holds the Python process group, and tearing both down at interpreter exit
    crashes torch 1.13 (or, after join(), can hang in gloo's teardown); there is nothing
    left to release."""
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
