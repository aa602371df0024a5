#!/usr/bin/python3
"""kineto_gen.py — Kineto-format GPU traces of a simulated DDP job, one file per rank,
written to the format PyTorch's profiler writes (libkineto output_json.cpp; see
reference/import.md §1), for the importer's tests.  No third-party trace is copied: the
events are made here from a small model of a DDP step.

    /usr/bin/python3 tests/import/kineto_gen.py --out DIR [--world 2] [--steps 4]
        [--scheme kernel|devkernel|lower] [--timebase float|int] [--no-metadata]
        [--no-args] [--orphans N] [--slow-rank R] [--slow 1.5] [--gz] [--layers 4]
        [--events-per-layer 1] [--name-fmt rank{r}.json]

Per step and rank: ProfilerStep#N on the main thread; DistributedDataParallel.forward with
a buffer broadcast (c10d::broadcast_ > record_param_comms > NCCL broadcast kernel) and one
GEMM kernel per layer; autograd's evaluate_function nodes on the autograd thread (a
backward kernel per layer, then AccumulateGrad > reducer::mul_out kernels per parameter);
a bucket's allreduce (c10d::allreduce_ > record_param_comms > cudaLaunchKernel > NCCL
kernel on stream 40) once its two layers are ready; copy_bucket_to_grad memcpys (DtoD);
Optimizer.step#SGD.step kernels.  A collective's kernel ends on every rank at the last
arrival plus its transfer time.  --timebase float: baseTimeNanoseconds and float µs since
it (Kineto >= 2024); int: integer µs since the epoch (2022).  Writes DIR/expected.txt (JSON, named so that the directory holds only traces):
per rank HTA's figures computed here independently (hta/ breakdown and communication
analyzers' algorithms), the buckets, the collectives.
"""
import argparse
import gzip
import json
import math
import os
import random

BASE_NS = 1711964646000000000  # 217 x 7889238 s: a Kineto three-month base
EPOCH_US = 1669783687352244    # integer µs since the epoch, as 2022 traces have


def kernel_name(kind, scheme):
    if scheme == "devkernel":
        n = {"AllReduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
             "Broadcast": "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"}[kind]
    else:
        n = {"AllReduce": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
             "Broadcast": "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"}[kind]
    if scheme == "lower":
        n = n.replace("ncclKernel", "nccldevkernel")
    return n


class Rank:
    def __init__(self, r, a):
        self.r = r
        self.a = a
        self.ev = []
        self.corr = 1000 * (r + 1)
        self.ext = 1
        self.gpu_free = {7: 0.0, 40: 0.0}
        self.speed = a.slow if r == a.slow_rank else 1.0
        self.expect_kernels = []  # (ts_us, end_us, hta class, launched, step)

    def cpu(self, name, ts, dur, tid, cat="cpu_op", args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 1000 + self.r, "tid": tid,
             "ts": ts, "dur": dur, "args": dict(args or {})}
        e["args"]["External id"] = self.ext
        self.ext += 1
        self.ev.append(e)
        return e

    def launch(self, ts, tid, stream, name, dur, cat="kernel", args=None, start_at=None, step=None, orphan=False):
        """A runtime launch at ts on tid, and its device op on stream."""
        self.corr += 1
        c = self.corr
        if not orphan:
            self.cpu("cudaLaunchKernel" if cat == "kernel" else
                     ("cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaMemsetAsync"),
                     ts, 4.0, tid, cat="cuda_runtime", args={"cbid": 211, "correlation": c})
        start = max(self.gpu_free[stream], ts + 5.0) if start_at is None else start_at
        d = {"ph": "X", "cat": cat, "name": name, "pid": self.r, "tid": stream, "ts": start,
             "dur": dur, "args": dict(args or {})}
        d["args"].update({"device": self.r, "stream": stream, "correlation": c})
        self.ev.append(d)
        self.gpu_free[stream] = max(self.gpu_free[stream], start + dur)
        return d


def hta_class(name):
    if name.startswith("nccl") or name.startswith("hip") or name.startswith("hccl") or "ncclKernel" in name:
        return "comm"
    if name.startswith("Memcpy") or name.startswith("Memset") or name.startswith("dma"):
        return "mem"
    return "comp"


def merge(iv):
    iv = sorted(iv)
    out = []
    cummax = None
    for ts, end in iv:
        if not out or ts > cummax:
            out.append([ts, end])
        else:
            out[-1][1] = max(out[-1][1], end)
        cummax = end if cummax is None else max(cummax, end)
    return out


def hta_figures(kernels, rounding):
    """HTA's temporal breakdown and comm/comp overlap of kernels [(ts, end, cls)] in µs."""
    if rounding:
        kernels = [(math.ceil(ts), math.floor(end), c) for ts, end, c in kernels]
    allm = merge([(t, e) for t, e, c in kernels])
    kernel = allm[-1][1] - allm[0][0]
    run = sum(e - t for t, e in allm)
    comp = merge([(t, e) for t, e, c in kernels if c == "comp"])
    comm = merge([(t, e) for t, e, c in kernels if c == "comm"])
    compute = sum(e - t for t, e in comp)
    edges = [(t, 1) for t, e in comm] + [(e, -1) for t, e in comm] + \
            [(t, 2) for t, e in comp] + [(e, -2) for t, e in comp]
    edges.sort(key=lambda x: x[0])
    run_ = 0
    ov = 0
    for i, (t, d) in enumerate(edges):
        run_ += d
        if run_ == 3 and i + 1 < len(edges):
            ov += edges[i + 1][0] - t
    commt = sum(e - t for t, e in comm)
    return {"idle_pct": round(100 * (kernel - run) / kernel, 2),
            "compute_pct": round(100 * compute / kernel, 2),
            "non_compute_pct": round(100 * (kernel - compute - (kernel - run)) / kernel, 2),
            "comm_overlap_pct": round(100 * ov / commt, 2) if commt else None}


NSYS_SCHEMA = """
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ENUM_NSYS_EVENT_TYPE(id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INT, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU(id INTEGER NOT NULL, name TEXT, busLocation TEXT, uuid TEXT,
  totalMemory INTEGER, smCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  mangledName INTEGER, launchType INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
  blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
  doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,
  jsonText TEXT);
"""


def write_nsys(ranks, a, expected):
    """Nsight Systems' SQLite export schema (the tables and columns the importer reads,
    as `nsys export --type sqlite` names them): one file per rank, or one for all."""
    import sqlite3
    session_ns = 1711964646000000000 + 123456789012  # the session's start on the wall clock
    dbs = {}

    def db_for(r):
        key = 0 if a.format == "nsys-one" else r
        if key not in dbs:
            name = "job.sqlite" if a.format == "nsys-one" else "rank%d.sqlite" % r
            path = os.path.join(a.out, name)
            if os.path.exists(path):
                os.remove(path)
            c = sqlite3.connect(path)
            c.executescript(NSYS_SCHEMA)
            c.executemany("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)",
                          [(59, "NvtxPushPopRange", "NVTX PushPop Range"),
                           (60, "NvtxStartEndRange", "NVTX StartEnd Range"),
                           (75, "NvtxDomainCreate", "NVTX Domain Create")])
            c.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (session_ns,))
            dbs[key] = [c, {}]
        return dbs[key]

    def sid(d, text):
        c, ids = d
        if text not in ids:
            ids[text] = len(ids) + 1
            c.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    for rk in ranks:
        d = db_for(rk.r)
        c = d[0]
        pid = 4000 + rk.r
        gpid = pid << 24
        kern = []
        last_start = max(e["ts"] for e in rk.ev if e["name"].startswith("ProfilerStep#"))
        last_ns = int(round(last_start * 1000)) + 1000000
        corr_ok = set()
        for e in rk.ev:
            ts = int(round(e["ts"] * 1000)) + 1000000
            end = ts + int(round(e["dur"] * 1000))
            cat = e.get("cat")
            if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
                corr = e["args"]["correlation"]
                stream = e["args"]["stream"]
                if cat == "kernel":
                    n = sid(d, e["name"])
                    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, contextId, streamId,"
                              " correlationId, globalPid, demangledName, shortName) VALUES (?,?,?,?,?,?,?,?,?)",
                              (ts, end, rk.r, 1, stream, corr, gpid, n, n))
                elif cat == "gpu_memcpy":
                    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId, contextId, streamId,"
                              " correlationId, globalPid, bytes, copyKind) VALUES (?,?,?,?,?,?,?,?,8)",
                              (ts, end, rk.r, 1, stream, corr, gpid, e["args"]["bytes"]))
                else:
                    c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET(start, end, deviceId, contextId, streamId,"
                              " correlationId, globalPid, value, bytes) VALUES (?,?,?,?,?,?,?,0,?)",
                              (ts, end, rk.r, 1, stream, corr, gpid, e["args"]["bytes"]))
                # whole µs on the wall clock as the importer rounds them: start up, end down
                kern.append((corr, -((-(session_ns + ts)) // 1000), (session_ns + end) // 1000,
                             hta_class(e["name"] if cat == "kernel" else
                                       ("Memcpy DtoD" if cat == "gpu_memcpy" else "Memset"))))
            elif cat == "cuda_runtime":
                c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,0,NULL)",
                          (ts, end, 1, gpid + e["tid"], e["args"]["correlation"], sid(d, e["name"])))
                if -((-(session_ns + ts)) // 1000) < -((-(session_ns + last_ns)) // 1000):
                    corr_ok.add(e["args"]["correlation"])
            else:
                # host ops as PyTorch's NVTX ranges (emit_nvtx appends the sequence number)
                text = e["name"] if e["name"].startswith("ProfilerStep") else e["name"] + ", seq = 7"
                c.execute("INSERT INTO NVTX_EVENTS(start, end, eventType, text, globalTid, domainId)"
                          " VALUES (?,?,59,?,?,0)", (ts, end, text, gpid + e["tid"]))
        kern = [(t, e_, k) for corr, t, e_, k in kern if corr in corr_ok]
        expected["ranks"][str(rk.r)] = hta_figures(kern, False)
    for c, ids in dbs.values():
        c.commit()
        c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--first-step", type=int, default=3)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--events-per-layer", type=int, default=1)
    p.add_argument("--scheme", default="kernel", choices=["kernel", "devkernel", "lower"])
    p.add_argument("--timebase", default="float", choices=["float", "int"])
    p.add_argument("--no-metadata", action="store_true")
    p.add_argument("--no-args", action="store_true")
    p.add_argument("--orphans", type=int, default=0)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow", type=float, default=1.5)
    p.add_argument("--gz", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--name-fmt", default="rank{r}.json")
    p.add_argument("--format", default="kineto", choices=["kineto", "nsys", "nsys-one"],
                   help="nsys: an Nsight Systems SQLite export per rank (rank{r}.sqlite); nsys-one: one"
                        " export holding every rank's process (job.sqlite)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    random.seed(a.seed)
    ranks = [Rank(r, a) for r in range(a.world)]
    param_numel = 256 * 256
    buckets = [(l, l + 1) for l in range(a.layers - 1, -1, -2)]  # two layers a bucket, last layers first
    t = 1000.0
    seq = 0
    steps = []
    for s in range(a.steps):
        n = a.first_step + s
        step_start = t
        arrivals = {}
        # forward (main thread 1) and backward (autograd thread 2) per rank
        fwd_end = {}
        for rk in ranks:
            rk.step_ev = rk.cpu("ProfilerStep#%d" % n, step_start, 0, 1, cat="user_annotation")
            ft = step_start + 10
            fwd = rk.cpu("DistributedDataParallel.forward", ft, 0, 1)
            # buffer broadcast before the layers
            bc = rk.cpu("c10d::broadcast_", ft + 2, 20, 1)
            args = {} if a.no_args else {"Collective name": "broadcast", "In msg nelems": 512,
                                         "Out msg nelems": 512, "Group size": a.world, "dtype": "Float",
                                         "Process Group Name": "0", "Process Group Description": "default_pg",
                                         "Process Group Ranks": str(list(range(a.world)))}
            rk.cpu("record_param_comms", ft + 3, 15, 1, args=args)
            rk.bc_launch = ft + 5
            lt = ft + 30
            for l in range(a.layers):
                lin = rk.cpu("aten::linear", lt, 20, 1)
                for k in range(a.events_per_layer):
                    rk.launch(lt + 2 + k, 1, 7, "void gemm_kernel<float>(int, float const*, float*)",
                              300.0 * rk.speed / a.events_per_layer, step=n)
                lt += 25
            fwd["dur"] = lt - ft
            fwd_end[rk.r] = lt
        # the broadcast kernel: all ranks end together
        bstart = {rk.r: max(rk.gpu_free[40], rk.bc_launch + 5) for rk in ranks}
        bend = max(bstart.values()) + 8.0
        for rk in ranks:
            rk.launch(rk.bc_launch, 1, 40, kernel_name("Broadcast", a.scheme), bend - bstart[rk.r],
                      args={} if a.no_args else {"Collective name": "broadcast", "In msg nelems": 512,
                                                 "dtype": "Float", "Process Group Name": "0"},
                      start_at=bstart[rk.r])
        # backward: per layer (reversed) a backward node, then AccumulateGrad x2 (weight, bias)
        launches = {}
        for rk in ranks:
            bt = max(fwd_end[rk.r], rk.gpu_free[7]) + 20
            for b, layers in enumerate(buckets):
                for l in layers:
                    ev = rk.cpu("autograd::engine::evaluate_function: AddmmBackward0", bt, 30, 2)
                    for k in range(a.events_per_layer):
                        rk.launch(bt + 2 + k, 2, 7, "void gemm_kernel<float>(int, float const*, float*)",
                                  600.0 * rk.speed / a.events_per_layer)
                    bt += 35
                    for pidx in range(2):
                        acc = rk.cpu("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", bt, 15, 2)
                        rk.cpu("torch::distributed::reducer::mul_out", bt + 2, 8, 2)
                        rk.launch(bt + 3, 2, 7, "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float> >(int)",
                                  20.0 * rk.speed)
                        bt += 18
                # the bucket's allreduce, launched from the last AccumulateGrad
                nbytes = 2 * (param_numel + 256) * 4
                ar = rk.cpu("c10d::allreduce_", bt, 12, 2)
                cargs = {} if a.no_args else {"Collective name": "allreduce", "In msg nelems": nbytes // 4,
                                              "Out msg nelems": nbytes // 4, "Group size": a.world,
                                              "dtype": "Float", "Process Group Name": "0",
                                              "Process Group Description": "default_pg",
                                              "Process Group Ranks": str(list(range(a.world)))}
                rk.cpu("record_param_comms", bt + 1, 10, 2, args=cargs)
                # the NCCL stream waits for the compute stream (cudaStreamWaitEvent)
                launches[(rk.r, b)] = (bt + 2, max(rk.gpu_free[7], bt + 7))
                bt += 14
            rk.bwd_cpu_end = bt
        for b in range(len(buckets)):
            arr = {rk.r: max(ranks[rk.r].gpu_free[40], launches[(rk.r, b)][1]) for rk in ranks}
            end = max(arr.values()) + 150.0
            for rk in ranks:
                nbytes = 2 * (param_numel + 256) * 4
                rk.launch(launches[(rk.r, b)][0], 2, 40, kernel_name("AllReduce", a.scheme), end - arr[rk.r],
                          args={} if a.no_args else {"Collective name": "allreduce", "In msg nelems": nbytes // 4,
                                                     "Out msg nelems": nbytes // 4, "dtype": "Float",
                                                     "Process Group Name": "0", "Group size": a.world},
                          start_at=arr[rk.r])
            seq += 1
        # copy_bucket_to_grad and the optimizer, on the main thread after backward
        step_end = 0
        for rk in ranks:
            ct = max(rk.bwd_cpu_end, rk.gpu_free[40]) + 5
            for b in range(len(buckets)):
                rk.cpu("torch.distributed.ddp.reducer::copy_bucket_to_grad", ct, 10, 1)
                rk.launch(ct + 1, 1, 7, "Memcpy DtoD (Device -> Device)", 6.0, cat="gpu_memcpy",
                          args={"bytes": 2 * (param_numel + 256) * 4})
                ct += 12
            op = rk.cpu("Optimizer.step#SGD.step", ct, 40, 1)
            for l in range(a.layers):
                rk.launch(ct + 2 + l, 1, 7, "void at::native::multi_tensor_apply_kernel<float>(int)", 15.0)
            rk.launch(ct + 30, 1, 7, "Memset (Device)", 2.0, cat="gpu_memset", args={"bytes": 1024})
            ct += 45
            step_end = max(step_end, ct, rk.gpu_free[7])
        for rk in ranks:
            rk.step_ev["dur"] = step_end - step_start
        steps.append(n)
        t = step_end + 50
    # orphan kernels (their launch is not in the file)
    for rk in ranks:
        for k in range(a.orphans):
            rk.launch(1500.0 + 100 * k, 1, 7, "void orphan_kernel(int)", 10.0, orphan=True)
    expected = {"world": a.world, "steps": steps, "buckets": len(buckets), "nparams_per_bucket": 4,
                "bucket_bytes": None if a.no_args else 2 * (param_numel + 256) * 4, "ranks": {}}
    if a.format != "kineto":
        write_nsys(ranks, a, expected)
        with open(os.path.join(a.out, "expected.txt"), "w") as f:
            json.dump(expected, f, indent=1)
        print(json.dumps({"out": a.out, "expected": expected}))
        return
    for rk in ranks:
        evs = []
        for e in sorted(rk.ev, key=lambda e: (e["ts"], -e["dur"])):
            e = dict(e)
            if a.timebase == "float":
                # µs since the base, with three decimals as Kineto prints them
                e["ts"] = round(e["ts"] + 4458676388068.751, 3)
                e["dur"] = round(e["dur"], 3)
            else:
                e["ts"] = int(round(e["ts"])) + EPOCH_US
                e["dur"] = int(round(e["dur"]))
            evs.append(e)
        # HTA's selection: device ops launched (a runtime event) before the last step
        # starts, on the times as written (HTA rounds float µs: start up, end down)
        last_start = max(e["ts"] for e in evs if e["name"].startswith("ProfilerStep#"))
        if a.timebase == "float":
            last_start = math.ceil(last_start)
        corr_ok = {e["args"]["correlation"] for e in evs if e.get("cat") == "cuda_runtime" and
                   (math.ceil(e["ts"]) if a.timebase == "float" else e["ts"]) < last_start}
        kern = [(e["ts"], e["ts"] + e["dur"], hta_class(e["name"])) for e in evs
                if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset") and e["args"]["correlation"] in corr_ok]
        expected["ranks"][str(rk.r)] = hta_figures(kern, a.timebase == "float")
        evs.append({"ph": "M", "name": "process_name", "pid": rk.r, "tid": 0, "args": {"name": "GPU %d" % rk.r}})
        evs.append({"ph": "s", "id": 1, "pid": 1000 + rk.r, "tid": 1, "ts": evs[0]["ts"], "cat": "ac2g", "name": "ac2g"})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": i, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85196873728,
                                     "computeMajor": 8, "computeMinor": 0} for i in range(a.world)]}
        if not a.no_metadata:
            doc["distributedInfo"] = {"backend": "nccl", "rank": rk.r, "world_size": a.world}
        if a.timebase == "float":
            doc["displayTimeUnit"] = "ms"
            doc["baseTimeNanoseconds"] = BASE_NS
        doc["traceEvents"] = evs
        doc["traceName"] = a.name_fmt.format(r=rk.r)
        path = os.path.join(a.out, a.name_fmt.format(r=rk.r) + (".gz" if a.gz else ""))
        text = json.dumps(doc).replace("}, {", "},\n  {")
        if a.gz:
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
    with open(os.path.join(a.out, "expected.txt"), "w") as f:
        json.dump(expected, f, indent=1)
    print(json.dumps({"out": a.out, "expected": expected}))


if __name__ == "__main__":
    main()
