/* cuda_device_life.c — a cuda device's creation and end (contract in cuda_device.h):
 * placement on a GPU and NCCL's environment, streams and events, cuBLAS, the NCCL
 * communicator, CUPTI or its fallback, the poller thread; abort; destroy. */
#include "common/textcopy.h"
#include "engine/cuda/cuda_device_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DDPPROF_HAVE_NVTX
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

#include "engine/backend.h"
#include "engine/backend_common.h"

/* ---- creation ---------------------------------------------------------------------------- */

static const char *env_get(const char *name) { return getenv(name); }

static int set_nccl_env(const cuda_placement *p, char *err, size_t errlen)
{
    for (int i = 0; i < p->nvars; i++)
        if (setenv(p->vars[i].name, p->vars[i].value, p->vars[i].overwrite) != 0) {
            snprintf(err, errlen, "setenv %s: %s", p->vars[i].name, strerror(errno));
            return -1;
        }
    return 0;
}

#define CUDA_TRY(call)                                                                                        \
    do {                                                                                                      \
        cudaError_t rc_ = (call);                                                                             \
        if (rc_ != cudaSuccess) {                                                                             \
            snprintf(err, errlen, "rank %d: %s: %s", c->rank, #call, cudaGetErrorString(rc_));                \
            return -1;                                                                                        \
        }                                                                                                     \
    } while (0)

/* Stream i's span ring (DEV_STREAM_COUNT: the host's), or NULL without a recorder. */
static span_ring *ring_of(const cuda_device_config *c, int i)
{
    return c->rec ? recorder_ring(c->rec, (c->rank - c->first_rank) * BACKEND_RINGS_PER_RANK + i) : NULL;
}

static int create_streams(cuda_device *d, const cuda_device_config *c, char *err, size_t errlen)
{
    for (int i = 0; i < DEV_STREAM_COUNT; i++) {
        cuda_stream *st = &d->st[i];
        st->slots = calloc(CUDA_SLOTS, sizeof *st->slots);
        if (!st->slots) {
            snprintf(err, errlen, "rank %d: out of memory for op slots", c->rank);
            return -1;
        }
        CUDA_TRY(cudaStreamCreateWithFlags(&st->s, cudaStreamNonBlocking));
        for (int k = 0; k < CUDA_SLOTS; k++) {
            CUDA_TRY(cudaEventCreate(&st->slots[k].start));
            CUDA_TRY(cudaEventCreate(&st->slots[k].end));
        }
        st->ring = ring_of(c, i);
    }
    CUDA_TRY(cudaStreamCreateWithFlags(&d->clock_stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&d->xfer_stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaMalloc((void **)&d->stamps, DEV_STREAM_COUNT * sizeof *d->stamps));
    for (int k = 0; k < CUDA_ANCHORS; k++)
        CUDA_TRY(cudaEventCreate(&d->anchors[k].ev));
#ifdef DDPPROF_HAVE_NVTX
    char name[64];
    snprintf(name, sizeof name, "rank %d compute", c->rank);
    nvtxNameCudaStreamA(d->st[DEV_STREAM_COMPUTE].s, name);
    snprintf(name, sizeof name, "rank %d comm", c->rank);
    nvtxNameCudaStreamA(d->st[DEV_STREAM_COMM].s, name);
    snprintf(name, sizeof name, "GPU %d (rank %d%s)", d->gpu, c->rank, d->place.shared ? ", shared" : "");
    nvtxNameCudaDeviceA(d->gpu, name);
#endif
    return 0;
}

static int create_libraries(cuda_device *d, const cuda_device_config *c, char *err, size_t errlen)
{
    char why[384];
    if (cuda_blas_load(&d->blas_lib, why, sizeof why) != 0) {
        snprintf(err, errlen, "rank %d: %s", c->rank, why);
        return -1;
    }
    cublasStatus_t bs = d->blas_lib.create(&d->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "rank %d: cublasCreate: %s", c->rank, cuda_blas_status(&d->blas_lib, bs));
        return -1;
    }
    d->blas_ok = true;
    if ((bs = d->blas_lib.set_stream(d->blas, d->st[DEV_STREAM_COMPUTE].s)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "rank %d: cublasSetStream: %s", c->rank, cuda_blas_status(&d->blas_lib, bs));
        return -1;
    }
    /* Blocks until every rank of the world has called it. */
    ncclResult_t nr = ncclCommInitRank(&d->comm, c->world_size, c->id, c->rank);
    if (nr != ncclSuccess) {
        snprintf(err, errlen, "rank %d: ncclCommInitRank (%d ranks%s): %s", c->rank, c->world_size,
                 d->place.shared ? ", sharing a GPU" : "", ncclGetErrorString(nr));
        return -1;
    }
    d->comm_ok = true;
    return 0;
}

static int start_profiling(cuda_device *d, const cuda_device_config *c, char *err, size_t errlen)
{
    if (!c->cupti) {
        fprintf(stderr, "ddpprof: rank %d: CUPTI off (DDPPROF_CUPTI=0): ops timed with CUDA events\n", c->rank);
        return 0;
    }
    cupti_collect_config cc = {.rank = c->rank,
                               .compute_ring = d->st[DEV_STREAM_COMPUTE].ring,
                               .comm_ring = d->st[DEV_STREAM_COMM].ring,
                               .t0_ns = c->t0_ns,
                               .host_clock_ns = cuda_host_clock_ns};
    char why[512];
    int rc = cupti_collect_start(&cc, &d->cupti, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "rank %d: %s", c->rank, why);
        return -1;
    }
    if (rc > 0) {
        fprintf(stderr, "ddpprof: rank %d: CUPTI not available (%s): ops timed with CUDA events, NVTX kept\n",
                c->rank, why);
        d->cupti = NULL;
        return 0;
    }
    if (cupti_collect_map_stream(d->cupti, d->st[DEV_STREAM_COMPUTE].s, STREAM_COMPUTE, err, errlen) != 0 ||
        cupti_collect_map_stream(d->cupti, d->st[DEV_STREAM_COMM].s, STREAM_COMM, err, errlen) != 0)
        return -1;
    return 0;
}

static int setup(cuda_device *d, const cuda_device_config *c, char *err, size_t errlen)
{
    int ngpus = 0;
    CUDA_TRY(cudaGetDeviceCount(&ngpus));
    int local_rank, local_world;
    cuda_local_ranks(env_get, c->rank, c->world_size, &local_rank, &local_world);
    if (cuda_place_rank(c->rank, local_rank, local_world, ngpus, &d->place, err, errlen) != 0)
        return -1;
    /* Before the first NCCL call of the process: NCCL reads its host id once. */
    if (set_nccl_env(&d->place, err, errlen) != 0)
        return -1;
    d->gpu = d->place.device;
    d->host_ring = ring_of(c, DEV_STREAM_COUNT);
    CUDA_TRY(cudaSetDevice(d->gpu));
    if (create_streams(d, c, err, errlen) != 0)
        return -1;
    if (cuda_anchor_refresh(d, true, err, errlen) != 0)
        return -1;
    /* CUPTI before the libraries, so that their set-up work is recorded too. */
    if (start_profiling(d, c, err, errlen) != 0 || create_libraries(d, c, err, errlen) != 0)
        return -1;
    int prc = pthread_create(&d->poller, NULL, cuda_poller_main, d);
    if (prc != 0) {
        snprintf(err, errlen, "rank %d: cannot start the GPU poller thread: %s", c->rank, strerror(prc));
        return -1;
    }
    d->poller_running = true;
    return 0;
}

device *cuda_device_create(const cuda_device_config *c, char *err, size_t errlen)
{
    cuda_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "rank %d: out of memory", c->rank);
        return NULL;
    }
    d->base.ops = &cuda_device_ops;
    d->base.rank = c->rank;
    d->base.world_size = c->world_size;
    d->cfg = *c;
    atomic_init(&d->comm_aborted, false);
    atomic_init(&d->abort_requested, false);
    if (pthread_mutex_init(&d->mu, NULL) != 0) {
        free(d);
        snprintf(err, errlen, "rank %d: pthread_mutex_init failed", c->rank);
        return NULL;
    }
    if (backend_cond_init_monotonic(&d->cv) != 0) {
        pthread_mutex_destroy(&d->mu);
        free(d);
        snprintf(err, errlen, "rank %d: pthread_cond_init failed", c->rank);
        return NULL;
    }
    if (setup(d, c, err, errlen) != 0) {
        cuda_device_destroy(&d->base);
        return NULL;
    }
    if (d->place.shared)
        fprintf(stderr, "ddpprof: rank %d shares GPU %d with %d other rank%s (NCCL over loopback sockets)\n",
                c->rank, d->gpu, d->place.ranks_on_device - 1, d->place.ranks_on_device > 2 ? "s" : "");
    return &d->base;
}

void cuda_device_abort(device *base, const char *why)
{
    cuda_device *d = (cuda_device *)base;
    if (atomic_load(&d->abort_requested))
        return;
    pthread_mutex_lock(&d->mu);
    if (!d->abort_why[0])
        text_copy(d->abort_why, sizeof d->abort_why, why);
    pthread_mutex_unlock(&d->mu);
    atomic_store(&d->abort_requested, true);
}

void cuda_comm_abort_once(cuda_device *d)
{
    if (!d->comm_ok || atomic_exchange(&d->comm_aborted, true))
        return;
    ncclResult_t nr = ncclCommAbort(d->comm);
    if (nr != ncclSuccess)
        fprintf(stderr, "ddpprof: rank %d: ncclCommAbort: %s\n", d->base.rank, ncclGetErrorString(nr));
}

static void warn_cuda(int rank, const char *call, cudaError_t rc)
{
    if (rc != cudaSuccess)
        fprintf(stderr, "ddpprof: rank %d: %s: %s\n", rank, call, cudaGetErrorString(rc));
}

void cuda_device_destroy(device *base)
{
    if (!base)
        return;
    cuda_device *d = (cuda_device *)base;
    int rank = d->base.rank;
    if (d->poller_running) {
        pthread_mutex_lock(&d->mu);
        d->stop = true;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->poller, NULL);
    }
    if (d->comm_ok) {
        if (cuda_device_failed(d))
            cuda_comm_abort_once(d);
        else {
            ncclResult_t nr = ncclCommDestroy(d->comm);
            if (nr != ncclSuccess)
                fprintf(stderr, "ddpprof: rank %d: ncclCommDestroy: %s\n", rank, ncclGetErrorString(nr));
        }
    }
    if (d->cupti) {
        cupti_decode_stats s;
        int64_t outside = 0;
        cupti_collect_stop(d->cupti, &s, &outside);
        /* Always said: a count of zero is the evidence that nothing was lost. */
        fprintf(stderr,
                "ddpprof: rank %d: CUPTI: %lld GPU records, %lld spans (%lld tied to their op, %lld inferred), "
                "%lld outside any op (not stored), %lld dropped by CUPTI, %lld buffers cut short\n",
                rank, (long long)s.records, (long long)s.spans, (long long)s.matched, (long long)s.inferred,
                (long long)outside, (long long)s.dropped, (long long)s.bad_buffers);
    }
    if (d->blas_ok) {
        cublasStatus_t bs = d->blas_lib.destroy(d->blas);
        if (bs != CUBLAS_STATUS_SUCCESS)
            fprintf(stderr, "ddpprof: rank %d: cublasDestroy: %s\n", rank, cuda_blas_status(&d->blas_lib, bs));
    }
    cuda_blas_unload(&d->blas_lib);
    void *const buffers[] = {d->gemm_a, d->gemm_b, d->gemm_c, d->half, d->stamps};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        if (buffers[i])
            warn_cuda(rank, "cudaFree", cudaFree(buffers[i]));
    for (int i = 0; i < DEV_STREAM_COUNT; i++) {
        cuda_stream *st = &d->st[i];
        if (st->slots)
            for (int k = 0; k < CUDA_SLOTS; k++) {
                if (st->slots[k].start)
                    warn_cuda(rank, "cudaEventDestroy", cudaEventDestroy(st->slots[k].start));
                if (st->slots[k].end)
                    warn_cuda(rank, "cudaEventDestroy", cudaEventDestroy(st->slots[k].end));
            }
        free(st->slots);
        if (st->s)
            warn_cuda(rank, "cudaStreamDestroy", cudaStreamDestroy(st->s));
    }
    for (int k = 0; k < CUDA_ANCHORS; k++)
        if (d->anchors[k].ev)
            warn_cuda(rank, "cudaEventDestroy", cudaEventDestroy(d->anchors[k].ev));
    if (d->clock_stream)
        warn_cuda(rank, "cudaStreamDestroy", cudaStreamDestroy(d->clock_stream));
    if (d->xfer_stream)
        warn_cuda(rank, "cudaStreamDestroy", cudaStreamDestroy(d->xfer_stream));
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

span_ring *cuda_device_host_ring(device *base) { return ((cuda_device *)base)->host_ring; }

void *cuda_device_owner(device *base) { return ((cuda_device *)base)->cfg.owner; }
