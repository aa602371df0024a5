/* cpu_bench_dispatch.h — times what one stream op costs on the cpu backend beyond its
 * model (backend.h's bench_dispatch): `ranks` devices at once, each host enqueueing
 * `ops` timed ops without work (model_ns each) on its compute stream, as a run's
 * forward does.  The cost per op is the hand-off from host to stream thread, the
 * stream's wake-up after each modelled deadline and the span it records. */
#ifndef DDPPROF_CPU_BENCH_DISPATCH_H
#define DDPPROF_CPU_BENCH_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

int cpu_bench_dispatch(int ranks, int64_t model_ns, int ops, int warmup, double *us_per_op, char *err,
                       size_t errlen);

#endif
