/* cuda_bench.h — backend_ops.bench_allreduce for the cuda backend: in-place fp32 SUM
 * ncclAllReduce timed with CUDA events (mean over ranks of the time per iteration).
 * With no more ranks than GPUs, the ranks are the GPUs of this process (one communicator
 * each, ncclCommInitAll, launched as one group).  With more, ranks share GPUs, which NCCL
 * allows only between processes: each rank is this executable run again
 * (/proc/self/exe bench allreduce ... for the one size) with DDPPROF_CUDA_BENCH_CHILD
 * naming its rank, the fd it answers on and the NCCL id; it sets cuda_plan.h's sharing
 * environment, times its rank and writes the time (or "error ...") back.
 *
 * Ownership: the in-process benchmark's communicators, streams, device buffers and
 * events are created and released within the call; nothing is kept. */
#ifndef DDPPROF_CUDA_BENCH_H
#define DDPPROF_CUDA_BENCH_H

#include <stddef.h>
#include <stdint.h>

int cuda_bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                         size_t errlen);

#endif
