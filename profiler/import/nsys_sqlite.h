/* nsys_sqlite.h — an Nsight Systems report exported to SQLite (`nsys export --type
 * sqlite`) into trace ranks, one per profiled process that did GPU work or holds
 * ranges.
 *
 * Contract: reads CUPTI_ACTIVITY_KIND_KERNEL (names through StringIds: demangledName,
 * else shortName), CUPTI_ACTIVITY_KIND_MEMCPY and _MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME
 * (the launches: correlationId within a process), and NVTX_EVENTS push/pop and
 * start/end ranges (their text, or textId through StringIds) as host events, so that
 * PyTorch's ranges (ProfilerStep#N, DistributedDataParallel.forward, ...) and
 * ddpprof's own ("rank 1 / bucket 0 allreduce") mean what they mean in a PyTorch
 * trace.  A table that is missing is an empty one; a file with none of them is not
 * an Nsight Systems export.  Times are ns since the session start; with
 * TARGET_INFO_SESSION_START_TIME they become wall-clock ns.  Processes are told apart
 * by globalPid (pid = globalPid >> 24 & 0xffffff); the rank of a process is NVTX's
 * when ddpprof's ranges name it, else left to the caller (file name, --rank, or the
 * order of the processes' pids).  Returns 0, or -1 with err ("PATH: what").
 */
#ifndef DDPPROF_NSYS_SQLITE_H
#define DDPPROF_NSYS_SQLITE_H

#include <stddef.h>

#include "profiler/import/trace_model.h"

int nsys_sqlite_read(const char *path, int file_idx, const trace_limits *lim, trace_rank ***out, int *nout,
                     char *err, size_t errlen);

#endif
