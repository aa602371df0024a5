/* cuda_backend.c — the `cuda` backend's ops table (backend.h): one rank per process on
 * its GPU.  The coordinator's world is the NCCL unique id, handed to the rank processes
 * as text through the rendezvous (nccl_id.h); a rank's world holds that id and its one
 * device (cuda_device.h), which an abort reaches. */
#include "common/textcopy.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_bench.h"
#include "engine/cuda/cuda_device.h"
#include "engine/cuda/cuda_plan.h"
#include "engine/cuda/nccl_id.h"

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
    snprintf(why, whylen, "%d CUDA GPU%s", n, n > 1 ? "s" : "");
    return 1;
}

struct backend_world {
    char nccl_id[NCCL_ID_TEXT];
    /* A rank's world (attach_to): what its device is built from. */
    bool rank_side;
    backend_world_args args;
    ncclUniqueId id;
    pthread_mutex_t mu;
    bool aborted;
    char why[512];
    device *dev;
};

static int world_create(const backend_world_args *a, backend_world **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!a->create_shared && !a->attach_to) {
        snprintf(err, errlen, "the cuda backend runs one rank per process (ranks = processes)");
        return -1;
    }
    backend_world *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        snprintf(err, errlen, "pthread_mutex_init failed");
        return -1;
    }
    int rc = a->create_shared ? nccl_id_new(w->nccl_id, err, errlen) : nccl_id_parse(a->attach_to, &w->id, err, errlen);
    if (rc != 0) {
        pthread_mutex_destroy(&w->mu);
        free(w);
        return -1;
    }
    if (a->attach_to) {
        text_copy(w->nccl_id, sizeof w->nccl_id, a->attach_to);
        w->rank_side = true;
        w->args = *a;
    }
    *out = w;
    return 0;
}

static void world_abort(backend_world *w, const char *why)
{
    pthread_mutex_lock(&w->mu);
    if (!w->aborted) {
        w->aborted = true;
        text_copy(w->why, sizeof w->why, why);
    }
    /* Under the lock: device_destroy clears w->dev under it before the device goes. */
    if (w->dev)
        cuda_device_abort(w->dev, why);
    pthread_mutex_unlock(&w->mu);
}

static int world_aborted(backend_world *w, char *why, size_t whylen)
{
    pthread_mutex_lock(&w->mu);
    int a = w->aborted;
    if (a)
        text_copy(why, whylen, w->why);
    pthread_mutex_unlock(&w->mu);
    return a;
}

static const char *world_handle(backend_world *w) { return w->nccl_id; }

static void world_unlink(backend_world *w) { (void)w; }

static void world_destroy(backend_world *w)
{
    if (!w)
        return;
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* DDPPROF_CUPTI=0 turns CUPTI off (the profiler-overhead benchmark's baseline). */
static bool cupti_wanted(void)
{
    const char *v = getenv("DDPPROF_CUPTI");
    return !(v && !strcmp(v, "0"));
}

static device *device_create(backend_world *w, int rank, char *err, size_t errlen)
{
    if (!w->rank_side) {
        snprintf(err, errlen, "rank %d: the cuda backend's devices live in the rank processes", rank);
        return NULL;
    }
    pthread_mutex_lock(&w->mu);
    bool busy = w->dev != NULL;
    pthread_mutex_unlock(&w->mu);
    if (busy) {
        snprintf(err, errlen, "rank %d: the cuda backend runs one rank per process", rank);
        return NULL;
    }
    cuda_device_config c = {.rank = rank,
                            .world_size = w->args.sc->world_size,
                            .id = w->id,
                            .rec = w->args.rec,
                            .first_rank = w->args.first_rank,
                            .nvtx = w->args.nvtx,
                            .t0_ns = w->args.t0_ns ? w->args.t0_ns : cuda_host_clock_ns(),
                            .timeout_s = w->args.sc->timeout_s,
                            .cupti = cupti_wanted(),
                            .owner = w};
    device *d = cuda_device_create(&c, err, errlen);
    if (!d)
        return NULL;
    pthread_mutex_lock(&w->mu);
    w->dev = d;
    bool aborted = w->aborted;
    char why[512];
    text_copy(why, sizeof why, w->why);
    pthread_mutex_unlock(&w->mu);
    if (aborted)
        cuda_device_abort(d, why);
    return d;
}

static void device_destroy(device *d)
{
    if (!d)
        return;
    backend_world *w = cuda_device_owner(d);
    pthread_mutex_lock(&w->mu);
    w->dev = NULL;
    pthread_mutex_unlock(&w->mu);
    cuda_device_destroy(d);
}

static span_ring *host_ring(device *d) { return cuda_device_host_ring(d); }

static const char *env_get(const char *name) { return getenv(name); }

/* Said of a run whose ranks on this machine outnumber its GPUs.  The coordinator runs on
 * the machine of rank 0: its node's ranks are the launcher's local world when there is a
 * launcher, else every rank (ddpprof started them all here). */
static int placement_note(const scenario *sc, char *note, size_t notelen)
{
    char why[256];
    int ngpus = gpu_count(why, sizeof why);
    int local_rank, local_world;
    cuda_local_ranks(env_get, 0, sc->world_size, &local_rank, &local_world);
    if (ngpus <= 0 || local_world <= ngpus)
        return 0;
    cuda_placement p;
    if (cuda_place_rank(0, 0, local_world, ngpus, &p, why, sizeof why) != 0)
        return 0;
    snprintf(note, notelen,
             "%d ranks share %d GPU%s (up to %d a GPU): they time-slice it, NCCL over loopback sockets",
             local_world, ngpus, ngpus > 1 ? "s" : "", p.ranks_on_device);
    return 1;
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
    .clock_ns = cuda_host_clock_ns,
    .device_create = device_create,
    .device_destroy = device_destroy,
    .host_ring = host_ring,
    .bench_allreduce = cuda_bench_allreduce,
    .one_rank_per_process = true,
    .placement_note = placement_note,
};
