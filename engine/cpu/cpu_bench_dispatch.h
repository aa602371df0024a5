/* cpu_bench_dispatch.h — times what one stream op costs on the cpu backend beyond its
 * model (backend.h's bench_dispatch): `ranks` devices at once, each host enqueueing
 * `ops` ops without work (model_ns each) on its compute stream.  Timed ops (model_ns >
 * 0) are enqueued at once, as a run's forward is: the cost per op is the hand-off, the
 * stream's wake-up after each deadline and the span it records.  Untimed ops go one at
 * a time, the host waiting for each: the stream idles in between and pays its wake-up
 * on every op, as when a backward pass's copies reach a stream that has run dry (the
 * host's own wake-up is counted too, an upper bound). */
#ifndef DDPPROF_CPU_BENCH_DISPATCH_H
#define DDPPROF_CPU_BENCH_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

int cpu_bench_dispatch(int ranks, int64_t model_ns, int ops, int warmup, double *us_per_op, char *err,
                       size_t errlen);

#endif
