#!/usr/bin/env python3
"""gpu_table.py — the table of bench/gpu_resnet50.sh: PyTorch DDP's traced job, ddpprof's
whatif replay of it and ddpprof's cuda run of the same job, side by side.

Reads OUT/torch/summary.json, OUT/torch.sqlite (run 1: the import, run 2: the replay),
OUT/ddpprof.sqlite (its last run) and the reports' JSON beside them; prints Markdown.
Every figure is a mean over the measured iterations (after warm-up) and the ranks.

  usage: gpu_table.py OUT
"""
import json
import os
import sqlite3
import statistics
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_figures(db_path, run_id, report_path):
    """The row's figures for one run, or None when it is missing."""
    if not os.path.exists(db_path):
        return None
    db = sqlite3.connect(db_path)
    if run_id is None:
        run_id = db.execute("SELECT max(id) FROM run").fetchone()[0]
    row = db.execute("SELECT warmup, world_size FROM run WHERE id=?", (run_id,)).fetchone()
    if row is None:
        return None
    warm = row[0] or 0
    rep = load_json(report_path)
    r = rep["runs"][0] if rep and rep.get("runs") else {}
    ranks = r.get("ranks") or []
    # Collective kernels on the comm stream, per rank and measured iteration.
    per = db.execute(
        "SELECT rank, iter, count(*), sum(bytes) FROM span WHERE run_id=? AND iter>=? AND stream='comm' "
        "AND kind IN ('allreduce','broadcast','all_gather','reduce_scatter','all_to_all') GROUP BY rank, iter",
        (run_id, warm)).fetchall()
    kernels = statistics.mean(c for _, _, c, _ in per) if per else float("nan")
    kbytes = statistics.mean(b or 0 for _, _, _, b in per) if per else float("nan")
    # Each bucket's allreduce span (arrival to end, the wait for the other rank included),
    # mean over ranks and iterations.
    ar = db.execute(
        "SELECT bucket, avg(end_ns - start_ns) FROM span WHERE run_id=? AND iter>=? AND kind='allreduce' "
        "AND bucket>=0 GROUP BY bucket ORDER BY bucket", (run_id, warm)).fetchall()
    return {
        "step_ms": r.get("step_ms_mean"),
        "buckets": [b.get("bytes") for b in r.get("buckets") or []],
        "transfer_ms": [b.get("transfer_ms") for b in r.get("buckets") or []],
        "allreduce_ms": [v / 1e6 for _, v in ar],
        "kernels": kernels,
        "kernel_mb": kbytes / 2**20 if kbytes == kbytes else kbytes,
        "overlap_pct": statistics.mean(x["overlap_pct"] for x in ranks) if ranks else None,
        "hta_overlap_pct": (statistics.mean(x["comm_overlap_pct"] for x in ranks)
                            if ranks and all(x.get("comm_overlap_pct") is not None for x in ranks) else None),
        "compute_ms": statistics.mean(x["compute_ms"] for x in ranks) if ranks else None,
        "exposed_ms": statistics.mean(x["exposed_comm_ms"] for x in ranks) if ranks else None,
    }


def fmt(v, digits=2):
    if v is None or v != v:
        return "–"
    if isinstance(v, list):
        return ", ".join(fmt(x, digits) for x in v) if v else "–"
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return str(v)


def main():
    out = sys.argv[1]
    summ = load_json(os.path.join(out, "torch", "summary.json"))
    cols = [("PyTorch (its trace, imported)", run_figures(os.path.join(out, "torch.sqlite"), 1,
                                                          os.path.join(out, "torch-report.json"))),
            ("ddpprof cuda run", run_figures(os.path.join(out, "ddpprof.sqlite"), None,
                                             os.path.join(out, "ddpprof-report.json"))),
            ("whatif replay", run_figures(os.path.join(out, "torch.sqlite"), 2,
                                          os.path.join(out, "replay-report.json")))]
    if summ:
        steps = [r["step_ms_median"] for r in summ["ranks"]]
        print("PyTorch %s on %s, NCCL %s: step without the profiler %s ms (median per rank); DDP's buckets %s"
              % (summ.get("torch"), summ.get("device"), summ.get("nccl"), fmt(steps),
                 [r["ddp_logging"].get("bucket_sizes") for r in summ["ranks"]][0]))
        for r in summ["ranks"]:
            avg = {k: v for k, v in r["ddp_logging"].items() if k.startswith("avg_")}
            if avg:
                print("  rank %d DDP logger (ns): %s" % (r["rank"], avg))
    print()
    print("| | " + " | ".join(name for name, _ in cols) + " |")
    print("|---|" + "---|" * len(cols))
    rows = [("step ms", "step_ms", 2), ("compute ms", "compute_ms", 2), ("exposed comm ms", "exposed_ms", 2),
            ("overlap % (ddpprof)", "overlap_pct", 1), ("overlap % (HTA)", "hta_overlap_pct", 1),
            ("bucket bytes", "buckets", 0), ("collective kernels / iteration", "kernels", 1),
            ("their MiB / iteration", "kernel_mb", 1), ("bucket allreduce ms", "allreduce_ms", 2),
            ("bucket transfer ms", "transfer_ms", 2)]
    for label, key, digits in rows:
        print("| %s | %s |" % (label, " | ".join(fmt(c[key], digits) if c else "–" for _, c in cols)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
