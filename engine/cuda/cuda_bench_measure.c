/* cuda_bench_measure.c — the allreduce benchmark's timed rounds (cuda_bench_measure.h):
 * one grouped allreduce per rank a round, timed on each rank's stream with CUDA
 * events, whether the ranks are GPUs of this process or one rank per process. */
#include "engine/cuda/cuda_bench_measure.h"

static int round_of(bench_state *b, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        TRY_NCCL(ncclGroupStart());
        for (int r = 0; r < b->ranks; r++)
            TRY_NCCL(ncclAllReduce(b->buf[r], b->buf[r], (size_t)b->count, ncclFloat32, ncclSum, b->comm[r],
                                   b->stream[r]));
        TRY_NCCL(ncclGroupEnd());
    }
    return 0;
}

int cuda_bench_measure(bench_state *b, int iters, int warmup, double *us, char *err, size_t errlen)
{
    if (round_of(b, warmup, err, errlen) != 0)
        return -1;
    for (int r = 0; r < b->ranks; r++) {
        TRY_CUDA(cudaSetDevice(r));
        TRY_CUDA(cudaEventRecord(b->start[r], b->stream[r]));
    }
    if (round_of(b, iters, err, errlen) != 0)
        return -1;
    double sum_ms = 0;
    for (int r = 0; r < b->ranks; r++) {
        TRY_CUDA(cudaSetDevice(r));
        TRY_CUDA(cudaEventRecord(b->end[r], b->stream[r]));
        TRY_CUDA(cudaEventSynchronize(b->end[r]));
        float ms;
        TRY_CUDA(cudaEventElapsedTime(&ms, b->start[r], b->end[r]));
        sum_ms += ms;
    }
    *us = sum_ms / b->ranks / iters * 1e3;
    return 0;
}
