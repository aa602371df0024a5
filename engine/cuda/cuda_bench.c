/* cuda_bench.c — the cuda backend's allreduce benchmark (see cuda_bench.h): ranks as the
 * GPUs of this process, or, beyond the GPUs, as processes (cuda_bench_procs.c); both
 * timed by cuda_bench_measure.c. */
#include "engine/cuda/cuda_bench.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/cuda/cuda_bench_measure.h"
#include "engine/cuda/cuda_bench_procs.h"
#include "engine/cuda/cuda_kernels.h"

static int setup(bench_state *b, char *err, size_t errlen)
{
    int devs[MAX_RANKS];
    for (int r = 0; r < b->ranks; r++)
        devs[r] = r;
    TRY_NCCL(ncclCommInitAll(b->comm, b->ranks, devs));
    for (int r = 0; r < b->ranks; r++) {
        TRY_CUDA(cudaSetDevice(r));
        TRY_CUDA(cudaStreamCreateWithFlags(&b->stream[r], cudaStreamNonBlocking));
        TRY_CUDA(cudaMalloc((void **)&b->buf[r], (size_t)b->count * sizeof(float)));
        TRY_CUDA((cudaError_t)cuda_k_fill(b->stream[r], b->buf[r], b->count));
        TRY_CUDA(cudaEventCreate(&b->start[r]));
        TRY_CUDA(cudaEventCreate(&b->end[r]));
    }
    return 0;
}

static void teardown(bench_state *b)
{
    for (int r = 0; r < b->ranks; r++) {
        if (b->comm[r]) {
            ncclResult_t nr = ncclCommDestroy(b->comm[r]);
            if (nr != ncclSuccess)
                fprintf(stderr, "ddpprof: bench: ncclCommDestroy: %s\n", ncclGetErrorString(nr));
        }
        if (cudaSetDevice(r) != cudaSuccess)
            continue;
        cudaError_t rc = cudaSuccess;
        if (b->buf[r])
            rc = cudaFree(b->buf[r]);
        if (rc == cudaSuccess && b->start[r])
            rc = cudaEventDestroy(b->start[r]);
        if (rc == cudaSuccess && b->end[r])
            rc = cudaEventDestroy(b->end[r]);
        if (rc == cudaSuccess && b->stream[r])
            rc = cudaStreamDestroy(b->stream[r]);
        if (rc != cudaSuccess)
            fprintf(stderr, "ddpprof: bench: releasing GPU %d: %s\n", r, cudaGetErrorString(rc));
    }
}

/* ---- ranks as processes (more ranks than GPUs) -------------------------------------- */

int cuda_bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                         size_t errlen)
{
    err[0] = '\0';
    int ngpus = 0;
    cudaError_t rc = cudaGetDeviceCount(&ngpus);
    if (rc != cudaSuccess || ngpus == 0) {
        snprintf(err, errlen, "no CUDA GPU here (cudaGetDeviceCount: %s)",
                 rc != cudaSuccess ? cudaGetErrorString(rc) : "none found");
        return -1;
    }
    if (ranks < 1 || ranks > MAX_RANKS) {
        snprintf(err, errlen, "%d ranks: the benchmark takes 1 to %d", ranks, MAX_RANKS);
        return -1;
    }
    const char *child = getenv(CUDA_BENCH_CHILD_ENV);
    if (child)
        return cuda_bench_child(child, ranks, ngpus, bytes, iters, warmup, us_per_iter, err, errlen);
    /* More ranks than GPUs: ranks share them, and NCCL allows that only between
     * processes (a host id each). */
    if (ranks > ngpus)
        return cuda_bench_processes(ranks, bytes, iters, warmup, us_per_iter, err, errlen);
    bench_state *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->ranks = ranks;
    b->count = bytes / 4;
    int out = setup(b, err, errlen);
    if (out == 0)
        out = cuda_bench_measure(b, iters, warmup, us_per_iter, err, errlen);
    teardown(b);
    free(b);
    return out;
}
