/* cuda_backend.c — the `cuda` backend as far as it is built: it finds the GPUs and says
 * whether a run can use them.  Its device (compute and comm CUDA streams linked by
 * events, cuBLAS GEMMs, NCCL allreduces, CUPTI records) is not built yet, so even with a
 * GPU present it refuses a run with that reason rather than pretend; `auto` then picks
 * the cpu backend and says why. */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"

/* The GPUs this process can use, or -1 with the reason (no driver, no device). */
static int gpu_count(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        snprintf(why, whylen, "no CUDA GPU here (cudaGetDeviceCount: %s)", cudaGetErrorString(rc));
        return -1;
    }
    if (n == 0)
        snprintf(why, whylen, "no CUDA GPU here (cudaGetDeviceCount found none)");
    return n;
}

static int available(char *why, size_t whylen)
{
    int n = gpu_count(why, whylen);
    if (n <= 0)
        return 0;
    snprintf(why, whylen,
             "%d CUDA GPU%s found, but this ddpprof's cuda device (CUDA streams, cuBLAS, NCCL, CUPTI) is not "
             "built yet",
             n, n > 1 ? "s" : "");
    return 0;
}

static int world_create(const backend_world_args *a, backend_world **out, char *err, size_t errlen)
{
    (void)a;
    *out = NULL;
    available(err, errlen);
    return -1;
}

static int bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen)
{
    (void)ranks, (void)bytes, (void)iters, (void)warmup, (void)us_per_iter;
    available(err, errlen);
    return -1;
}

const backend_ops cuda_backend_ops = {
    .name = "cuda",
    .available = available,
    .world_create = world_create,
    .bench_allreduce = bench_allreduce,
};
