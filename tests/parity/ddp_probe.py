#!/usr/bin/python3
"""What PyTorch DDP (gloo, CPU processes) does, collective by collective, for the parity
tests (tests/test_parity.c): the buckets (initial, from
torch.distributed._compute_bucket_assignment_by_size, and rebuilt, from the reducer's
logged bucket info), every collective DDP issues at construction and in each iteration
(op, dtype, bytes and the host time of the call, which on gloo is the launch; seen
through a process group that wraps gloo's and logs each call), and the DDP logger's
fields, those of each iteration as the logger holds them at the next forward.  Writes JSON to --out.  Exits 77 when torch is missing.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP

    from ddp_run import leave, spawn
except ImportError as e:
    print("skip: %s" % e, file=sys.stderr)
    sys.exit(77)


class LoggingGroup(dist.ProcessGroup):
    """Forwards every collective to gloo's group, recording op, dtype and bytes."""

    def __init__(self, inner, log):
        super().__init__(inner.rank(), inner.size())
        self.inner, self.log = inner, log

    def _rec(self, op, tensors):
        # The clock of the logger's CPU timer (CLOCK_REALTIME, ns).
        now = time.time_ns()
        for t in tensors:
            self.log.append({"op": op, "dtype": str(t.dtype).replace("torch.", ""),
                             "bytes": t.numel() * t.element_size(), "t_ns": now})

    def allreduce(self, tensors, opts=dist.AllreduceOptions()):
        self._rec("allreduce", tensors)
        return self.inner.allreduce(tensors, opts)

    def broadcast(self, tensors, opts=dist.BroadcastOptions()):
        self._rec("broadcast", tensors)
        return self.inner.broadcast(tensors, opts)

    def allgather(self, outs, ins, opts=None):
        self._rec("allgather", ins)
        return self.inner.allgather(outs, ins)

    def barrier(self, opts=dist.BarrierOptions()):
        return self.inner.barrier(opts)

    def getBackendName(self):
        # Not "gloo": DDP's logger would cast this object to ProcessGroupGloo.
        return "logging-gloo"


def build(a):
    if a.model == "resnet18":
        import torchvision
        return torchvision.models.resnet18()
    mods = []
    for i in range(a.layers):
        mods.append(torch.nn.Linear(a.width, a.width))
        if a.model == "mlp_bn":
            mods.append(torch.nn.BatchNorm1d(a.width))
        if i < a.layers - 1:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)


def write_params_file(model, path):
    """The model as ddpprof's parameter-list file (docs/custom_model.md): each module's
    parameters, then its buffers, with the kind its module type gives them."""
    kinds = ((torch.nn.Linear, "linear"), (torch.nn.modules.batchnorm._NormBase, "norm"),
             (torch.nn.LayerNorm, "norm"), (torch.nn.GroupNorm, "norm"),
             (torch.nn.modules.conv._ConvNd, "conv"))
    with open(path, "w") as f:
        for mname, mod in model.named_modules():
            kind = next((k for t, k in kinds if isinstance(mod, t)), None)
            for pname, p in mod.named_parameters(recurse=False):
                if isinstance(mod, torch.nn.Embedding):
                    k = "embedding"
                else:
                    k = "%s.%s" % (kind, pname) if kind and pname in ("weight", "bias") else "param"
                f.write("%s %s %s\n" % ((mname + "." if mname else "") + pname, k,
                                        "x".join(map(str, p.shape)) or "()"))
            for bname, b in mod.named_buffers(recurse=False):
                k = "buffer.int64" if b.dtype == torch.int64 else "buffer"
                f.write("%s %s %s\n" % ((mname + "." if mname else "") + bname, k,
                                        "x".join(map(str, b.shape)) or "()"))


def batch(a):
    if a.model == "resnet18":
        return torch.randn(a.batch, 3, 32, 32)
    return torch.randn(a.batch, a.width)


def logger_ints(ddp):
    """The logger's runtime figures as they stand (an iteration's, taken at the next
    forward)."""
    data = ddp._get_ddp_logging_data()
    keys = ("forward_compute_time", "backward_compute_time", "backward_comm_time",
            "backward_compute_comm_overlap_time", "forward_compute_time_start",
            "backward_compute_time_start", "backward_compute_time_end", "backward_comm_time_start",
            "backward_comm_time_end", "avg_forward_compute_time", "avg_backward_compute_time",
            "avg_backward_comm_time", "avg_backward_compute_comm_overlap_time", "iteration")
    return {k: int(data[k]) for k in keys if k in data}


def worker(rank, a):
    torch.set_num_threads(1)
    torch.manual_seed(rank)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    dist.init_process_group("gloo", rank=rank, world_size=a.world)
    log = []
    group = LoggingGroup(dist.group.WORLD, log)
    # join() asks torch.distributed about the group: register it as the world's twin.
    c10d = dist.distributed_c10d
    c10d._pg_group_ranks[group] = {i: i for i in range(a.world)}
    c10d._pg_map[group] = c10d._pg_map[c10d._get_default_group()]
    model = build(a)
    if rank == 0 and a.params_file:
        write_params_file(model, a.params_file)
    params = list(model.parameters())
    cap = int(a.bucket_cap_mb * 1024 * 1024)
    initial, _ = dist._compute_bucket_assignment_by_size(
        params, [sys.maxsize] if (a.static_graph or not a.find_unused) else
        [dist._DEFAULT_FIRST_BUCKET_BYTES, cap])
    ddp = DDP(model, process_group=group, bucket_cap_mb=a.bucket_cap_mb, static_graph=a.static_graph,
              find_unused_parameters=a.find_unused, broadcast_buffers=not a.no_broadcast_buffers,
              gradient_as_bucket_view=a.grad_as_bucket_view)
    if a.hook != "none":
        ddp.register_comm_hook(group, default_hooks.fp16_compress_hook if a.hook == "fp16"
                               else default_hooks.bf16_compress_hook)
    phases = [{"phase": "construction", "collectives": list(log)}]
    if a.rank_steps:
        # Uneven inputs: this rank trains its own number of steps inside join().
        steps = [int(x) for x in a.rank_steps.split(",")][rank]
        with ddp.join(divide_by_initial_world_size=not a.divide_by_ranks_training):
            for it in range(steps):
                ddp(batch(a)).sum().backward()
        with open("%s.rank%d" % (a.out, rank), "w") as f:
            json.dump(log, f)
        leave()
    per_iter = []
    for it in range(a.iters):
        del log[:]
        out = ddp(batch(a))
        if it > 0:
            per_iter.append(logger_ints(ddp))
        out.sum().backward()
        phases.append({"phase": "iteration %d" % it, "collectives": list(log)})
    # The logger takes its figures (and the rebuilt buckets) at the next forward.
    ddp(batch(a))
    per_iter.append(logger_ints(ddp))
    data = ddp._get_ddp_logging_data()
    if rank == 0:
        out = {
            "params": [{"name": n, "numel": p.numel()} for n, p in model.named_parameters()],
            "initial_buckets": [list(map(int, b)) for b in reversed(initial)],
            "bucket_sizes": [int(x) for x in data.get("bucket_sizes", "").split(",") if x.strip()],
            "rebuilt_bucket_sizes": [int(x) for x in data.get("rebuilt_bucket_sizes", "").split(",") if x.strip()],
            "rebuilt_per_bucket_param_indices": [list(map(int, b.split())) for b in
                                                 data.get("rebuilt_per_bucket_param_indices", "").split(",")
                                                 if b.strip()],
            "logging": {k: v for k, v in data.items() if isinstance(v, (int, float, str))},
            "phases": phases,
            "logging_per_iter": per_iter,
        }
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
    leave()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "mlp_bn", "resnet18"], default="mlp")
    p.add_argument("--params-file", help="also write the model as ddpprof's parameter-list file")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--width", type=int, default=32)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    p.add_argument("--static-graph", action="store_true")
    p.add_argument("--find-unused", action="store_true")
    p.add_argument("--no-broadcast-buffers", action="store_true")
    p.add_argument("--grad-as-bucket-view", action="store_true")
    p.add_argument("--hook", choices=["none", "fp16", "bf16"], default="none")
    p.add_argument("--rank-steps", help="uneven inputs under join(): steps per rank, e.g. 4,2,3; writes"
                   " each rank's whole sequence of collectives to OUT.rankN")
    p.add_argument("--divide-by-ranks-training", action="store_true",
                   help="join(divide_by_initial_world_size=False)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    spawn(worker, a)


if __name__ == "__main__":
    main()
