/* trace_export.h — a recorded run as trace-event JSON for timeline viewers.
 *
 * Contract: both writers stream one run's spans from the results database to `out`
 * (no span is held in memory, so a run of millions of spans exports in constant
 * memory) and read, through profiler/'s read API, only tables of the README's database
 * contract (run, rank, span) and the collective_arrival view.  Timestamps are microseconds with
 * three decimals (the ns of the database, exactly).  Return 0, or -1 with err (an
 * SQLite error, "no run with id N", a write error).
 *
 * trace_export_chrome: the Chrome trace-event format (chrome://tracing, Perfetto UI).
 *   One process per rank (pid = rank, process_name "rank R", process_labels with its
 *   speed), one thread per stream (tid 0 host, 1 compute, 2 comm; thread_name), every
 *   span an "X" event: name = span name, cat = kind, args {kind, iter, layer, bucket,
 *   bytes, seq} (null where they do not apply).  Each collective gets flow arrows
 *   (v1 flow events, cat "collective", name "allreduce seq S"): for every rank that
 *   arrived before the last one, an "s" at the last arrival on the last-arriving
 *   rank's allreduce and an "f" (bp "e") at the same instant on the waiting rank's
 *   allreduce, flow id = seq * world_size + waiting rank + 1.  Top-level "otherData"
 *   names the run.
 *
 * trace_export_kineto: one rank's file in the PyTorch profiler's (Kineto's) layout,
 *   for Holistic Trace Analysis: "distributedInfo" first ({"rank": R, "world_size":
 *   W, backend nccl, one process group of all ranks}), host spans as "cpu_op" on the
 *   host pid (100000 + R), a "ProfilerStep#N" user_annotation per iteration, and the
 *   compute and comm streams' spans as "kernel" events on device pid R with
 *   args.stream 7 (compute) and 13 (comm), each launched by a "cudaLaunchKernel"
 *   runtime event with the same correlation id.  Allreduces are named
 *   "ncclDevKernel_AllReduce_Sum_f32_RING_LL" and broadcasts
 *   "ncclDevKernel_Broadcast_RING_LL" (HTA: communication); compute kernels are named
 *   "<kind>: <span name>", never matching HTA's non-compute patterns (HTA:
 *   computation).
 *
 * Ownership: the writers borrow st and out for the call and free what they read before
 * they return; trace_run_ranks() hands its array to the caller.
 */
#ifndef DDPPROF_TRACE_EXPORT_H
#define DDPPROF_TRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/store.h"

#define TRACE_KINETO_HOST_PID_BASE 100000
#define TRACE_KINETO_COMPUTE_STREAM 7
#define TRACE_KINETO_COMM_STREAM 13
#define TRACE_KINETO_ALLREDUCE_KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
#define TRACE_KINETO_BROADCAST_KERNEL "ncclDevKernel_Broadcast_RING_LL"

int trace_export_chrome(store *st, int64_t run_id, FILE *out, char *err, size_t errlen);

int trace_export_kineto(store *st, int64_t run_id, int rank, FILE *out, char *err, size_t errlen);

/* The ranks of a run (the rank table's, plus any that recorded spans without a row
 * there), ascending, into a malloc'ed *ranks the caller frees (*ranks NULL and *n 0 on
 * failure).  0 or -1 with err. */
int trace_run_ranks(store *st, int64_t run_id, int **ranks, size_t *n, char *err, size_t errlen);

#endif
