/* cuda_bench.h — backend_ops.bench_allreduce for the cuda backend: in-place fp32 SUM
 * ncclAllReduce over `ranks` GPUs of this process (one communicator per GPU,
 * ncclCommInitAll, launched as one group), timed with CUDA events.  Ranks beyond the GPUs
 * present need processes (ranks sharing a GPU); the benchmark refuses them and says so
 * (`ddpprof run` with ranks = processes covers that case). */
#ifndef DDPPROF_CUDA_BENCH_H
#define DDPPROF_CUDA_BENCH_H

#include <stddef.h>
#include <stdint.h>

int cuda_bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                         size_t errlen);

#endif
