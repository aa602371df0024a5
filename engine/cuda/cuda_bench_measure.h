/* cuda_bench_measure.h — the timing both ways of running the allreduce benchmark share
 * (cuda_bench.c: ranks as the GPUs of this process; cuda_bench_procs.c: one rank per
 * process): the ranks' communicators, streams, buffers and events, and the timed
 * rounds over them.
 *
 * Ownership: a bench_state and its communicators, streams, buffers and events belong to
 * whoever filled it (cuda_bench.c, cuda_bench_procs.c), which also releases them;
 * cuda_bench_measure() borrows it for the call and allocates nothing. */
#ifndef DDPPROF_CUDA_BENCH_MEASURE_H
#define DDPPROF_CUDA_BENCH_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define MAX_RANKS 64

typedef struct {
    ncclComm_t comm[MAX_RANKS];
    cudaStream_t stream[MAX_RANKS];
    float *buf[MAX_RANKS];
    cudaEvent_t start[MAX_RANKS], end[MAX_RANKS];
    int ranks;
    int64_t count;
} bench_state;

/* Times `iters` rounds after `warmup` (each round: one allreduce per rank, grouped);
 * *us the mean over ranks of the time per round.  0, or -1 with err. */
int cuda_bench_measure(bench_state *b, int iters, int warmup, double *us, char *err, size_t errlen);

/* For the benchmark's functions that return 0, or -1 with (err, errlen): a failed
 * CUDA or NCCL call returns -1 with the call and its error in err. */
#define TRY_CUDA(call)                                                                                        \
    do {                                                                                                      \
        cudaError_t rc_ = (call);                                                                             \
        if (rc_ != cudaSuccess) {                                                                             \
            snprintf(err, errlen, "%s: %s", #call, cudaGetErrorString(rc_));                                  \
            return -1;                                                                                        \
        }                                                                                                     \
    } while (0)

#define TRY_NCCL(call)                                                                                        \
    do {                                                                                                      \
        ncclResult_t rc_ = (call);                                                                            \
        if (rc_ != ncclSuccess) {                                                                             \
            snprintf(err, errlen, "%s: %s", #call, ncclGetErrorString(rc_));                                  \
            return -1;                                                                                        \
        }                                                                                                     \
    } while (0)

#endif
