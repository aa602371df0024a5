/* cpu_bench_copy.h — times the reducer's bucket copies as the cpu backend runs them
 * (backend.h's bench_copy): the same cpu_work_run() a compute stream calls for a
 * copy_in or copy_out op, on `ranks` threads at once.
 *
 * Ownership: the copiers' buffers are allocated and freed within the call; nothing is
 * kept, and err and us_per_copy are the caller's. */
#ifndef DDPPROF_CPU_BENCH_COPY_H
#define DDPPROF_CPU_BENCH_COPY_H

#include <stddef.h>
#include <stdint.h>

int cpu_bench_copy(int ranks, int64_t bytes, float scale, int iters, int warmup, double *us_per_copy, char *err,
                   size_t errlen);

#endif
