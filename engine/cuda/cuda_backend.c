/* cuda_backend.c — the `cuda` backend as far as it is built: it finds the GPUs and says
 * whether a run can use them.  Its device (compute and comm CUDA streams linked by
 * events, cuBLAS GEMMs, NCCL allreduces, CUPTI records) is not built yet, so even with a
 * GPU present it refuses a run with that reason rather than pretend; `auto` then picks
 * the cpu backend and says why.  What a coordinator needs already works without a GPU:
 * its world is the NCCL unique id, handed to the rank processes as text through the
 * rendezvous (nccl_id.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "nccl_id.h"

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

/* The coordinator's view of a run's world: the NCCL id the ranks will build their
 * communicator from (it needs no GPU), and the abort flag. */
struct backend_world {
    char nccl_id[NCCL_ID_TEXT];
    bool aborted;
    char why[512];
};

static int world_create(const backend_world_args *a, backend_world **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!a->create_shared) {
        /* A rank's own world needs its GPU, and the device is not built yet. */
        available(err, errlen);
        return -1;
    }
    backend_world *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (nccl_id_new(w->nccl_id, err, errlen) != 0) {
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

static void world_abort(backend_world *w, const char *why)
{
    if (!w->aborted) {
        w->aborted = true;
        snprintf(w->why, sizeof w->why, "%s", why);
    }
}

static int world_aborted(backend_world *w, char *why, size_t whylen)
{
    if (w->aborted)
        snprintf(why, whylen, "%s", w->why);
    return w->aborted;
}

static const char *world_handle(backend_world *w) { return w->nccl_id; }

static void world_unlink(backend_world *w) { (void)w; }

static void world_destroy(backend_world *w) { free(w); }

/* Every op of the table is set, so that no caller meets a NULL: a rank's device needs
 * the part not built yet, and says so. */
static device *device_create(backend_world *w, int rank, char *err, size_t errlen)
{
    (void)w, (void)rank;
    available(err, errlen);
    return NULL;
}

static void device_destroy(device *d) { (void)d; }

static span_ring *host_ring(device *d)
{
    (void)d;
    return NULL;
}

/* The host clock the coordinator puts a run's origin on (CUPTI's is related to it by
 * cupti_decode.h's clock sync). */
static int64_t host_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen)
{
    (void)ranks, (void)bytes, (void)iters, (void)warmup, (void)us_per_iter;
    available(err, errlen);
    return -1;
}

static int bench_copy(int ranks, int64_t bytes, float scale, int iters, int warmup, double *us_per_copy, char *err,
                      size_t errlen)
{
    (void)ranks, (void)bytes, (void)scale, (void)iters, (void)warmup, (void)us_per_copy;
    available(err, errlen);
    return -1;
}

const backend_ops cuda_backend_ops = {
    .name = "cuda",
    .available = available,
    .world_create = world_create,
    .world_abort = world_abort,
    .world_aborted = world_aborted,
    .world_handle = world_handle,
    .world_unlink = world_unlink,
    .world_destroy = world_destroy,
    .clock_ns = host_clock_ns,
    .device_create = device_create,
    .device_destroy = device_destroy,
    .host_ring = host_ring,
    .bench_allreduce = bench_allreduce,
    .bench_copy = bench_copy,
};
