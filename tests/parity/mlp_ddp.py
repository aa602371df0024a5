#!/usr/bin/python3
"""PyTorch DDP (gloo, CPU processes) training the mlp that ddpprof trains, on the same
initial weights and data, for the parity tests (tests/test_parity.c).

Input file (--data, float32, little endian): the initial parameters flat in registration
order, then every sample of the data set in global order: `width` inputs and then either
`width` targets (mse) or one class (cross_entropy).  The data set is split over ranks by
torch's own DistributedSampler (shuffle off) and DataLoader.

Output (--out, float32): rank 0's averaged gradients after the first synchronised step,
then its final weights, both flat in registration order.  --json receives rank 0's DDP
logger data (bucket sizes, initial and rebuilt) and the buckets a logging comm hook saw
(a separate model, so that the gradients above come from DDP's built-in path).
Exits 77 when torch is missing (the test is skipped then).
"""
import argparse
import datetime
import json
import os
import sys

try:
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    from ddp_run import leave, spawn
except ImportError as e:
    print("skip: %s" % e, file=sys.stderr)
    sys.exit(77)


def build(a):
    mods = []
    for i in range(a.layers):
        mods.append(torch.nn.Linear(a.width, a.width))
        if i < a.layers - 1:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)


def load(a, model):
    raw = np.fromfile(a.data, dtype="<f4")
    off = 0
    with torch.no_grad():
        for p in model.parameters():
            n = p.numel()
            p.copy_(torch.from_numpy(raw[off:off + n].copy()).view_as(p))
            off += n
    per = a.width + (1 if a.loss == "cross_entropy" else a.width)
    samples = raw[off:].reshape(-1, per)
    x = torch.from_numpy(samples[:, :a.width].copy())
    if a.loss == "cross_entropy":
        y = torch.from_numpy(samples[:, a.width].copy()).long()
    else:
        y = torch.from_numpy(samples[:, a.width:].copy())
    return x, y


def flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors]).numpy().astype("<f4")


def hook_log(seen):
    def hook(state, bucket):
        buf = bucket.buffer()
        seen.append({"index": bucket.index(), "bytes": buf.numel() * buf.element_size(),
                     "dtype": str(buf.dtype).replace("torch.", ""),
                     "params": [int(i) for i in bucket.parameters_index()] if hasattr(bucket, "parameters_index") else None})
        fut = dist.all_reduce(buf.div_(dist.get_world_size()), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    return hook


def train(a, model, x, y, rank, world, steps, on_first=None):
    if a.rank_steps:
        # Uneven inputs: this rank has data for its own number of steps, inside join().
        mine = int(a.rank_steps.split(",")[rank])
        with model.join(divide_by_initial_world_size=not a.divide_by_ranks_training):
            train_steps(a, model, x, y, rank, world, min(steps, mine), on_first)
        return
    train_steps(a, model, x, y, rank, world, steps, on_first)


def train_steps(a, model, x, y, rank, world, steps, on_first=None):
    loader = DataLoader(TensorDataset(x, y), batch_size=a.per_rank_batch,
                        sampler=DistributedSampler(TensorDataset(x, y), num_replicas=world, rank=rank, shuffle=False))
    loss_fn = torch.nn.MSELoss(reduction=a.reduction) if a.loss == "mse" else \
        torch.nn.CrossEntropyLoss(reduction=a.reduction)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    for step, (xb, yb) in enumerate(loader):
        if step == steps:
            break
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(xb), yb) * a.loss_scale
        loss.backward()
        if step == 0 and on_first:
            on_first()
        opt.step()


def worker(rank, a):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    dist.init_process_group("gloo", rank=rank, world_size=a.world, timeout=datetime.timedelta(seconds=120))
    model = build(a)
    x, y = load(a, model)
    ddp = DDP(model, bucket_cap_mb=a.bucket_cap_mb)
    if a.hook != "none":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook if a.hook == "fp16"
                               else default_hooks.bf16_compress_hook)
    grads = []
    train(a, ddp, x, y, rank, a.world, a.steps, lambda: grads.append(flat([p.grad for p in model.parameters()])))
    logging = ddp._get_ddp_logging_data()
    if a.rank_steps:
        if rank == 0:
            np.concatenate([grads[0], flat(model.parameters())]).tofile(a.out)
        leave()
    # A second model with a logging comm hook: which buckets are sent, in which order.
    model2 = build(a)
    load(a, model2)
    seen = []
    ddp2 = DDP(model2, bucket_cap_mb=a.bucket_cap_mb)
    ddp2.register_comm_hook(None, hook_log(seen))
    train(a, ddp2, x, y, rank, a.world, min(a.steps, 3))
    if rank == 0:
        np.concatenate([grads[0], flat(model.parameters())]).tofile(a.out)
        if a.json:
            keep = {k: v for k, v in logging.items() if isinstance(v, (int, float, str))}
            with open(a.json, "w") as f:
                json.dump({"logging": keep, "hook_buckets": seen}, f, indent=1)
    leave()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--width", type=int, required=True)
    p.add_argument("--per-rank-batch", type=int, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--loss", choices=["mse", "cross_entropy"], default="mse")
    p.add_argument("--reduction", choices=["mean", "sum"], default="mean")
    p.add_argument("--loss-scale", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--json")
    p.add_argument("--rank-steps", help="uneven inputs under join(): steps per rank, e.g. 3,1")
    p.add_argument("--divide-by-ranks-training", action="store_true")
    p.add_argument("--hook", choices=["none", "fp16", "bf16"], default="none")
    a = p.parse_args()
    spawn(worker, a)


if __name__ == "__main__":
    main()
