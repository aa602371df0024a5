/* cuda_device.c — the cuda device's life and its device.h entry points (contract in
 * cuda_device.h): placement, streams, cuBLAS, NCCL, events as tickets, managed memory. */
#include "textcopy.h"
#include "cuda_device_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DDPPROF_HAVE_NVTX
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

#include "backend.h"

int64_t cuda_host_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cuda_device_fail(cuda_device *d, const char *msg)
{
    pthread_mutex_lock(&d->mu);
    if (!d->failed) {
        d->failed = true;
        text_copy(d->error, sizeof d->error, msg);
        /* As on cpu, a rank's failure ends its collectives: the poller aborts the
         * communicator, so that no NCCL kernel of this rank waits for peers forever. */
        if (!d->abort_why[0])
            text_copy(d->abort_why, sizeof d->abort_why, msg);
    }
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    atomic_store(&d->abort_requested, true);
}

static bool is_failed(cuda_device *d)
{
    pthread_mutex_lock(&d->mu);
    bool f = d->failed;
    pthread_mutex_unlock(&d->mu);
    return f;
}

/* Waits until op slot `ticket` of stream `st` may be reused (its op retired). */
static int wait_for_slot(cuda_device *d, cuda_stream *st, uint64_t ticket)
{
    int rc = 0;
    pthread_mutex_lock(&d->mu);
    d->waiters++;
    pthread_cond_broadcast(&d->cv); /* the poller polls faster while someone waits */
    while (!d->failed && ticket > st->retired + CUDA_SLOTS)
        pthread_cond_wait(&d->cv, &d->mu);
    d->waiters--;
    if (d->failed)
        rc = -1;
    pthread_mutex_unlock(&d->mu);
    return rc;
}

static uint32_t colour_of(span_kind k)
{
    switch (k) {
    case SPAN_FORWARD: return 0xff4c9be8;
    case SPAN_BACKWARD: return 0xff2e7d32;
    case SPAN_COPY_IN:
    case SPAN_COPY_OUT: return 0xff9e9e9e;
    case SPAN_ALLREDUCE: return 0xffe65100;
    case SPAN_OPTIMIZER: return 0xff8e24aa;
    default: return 0xff607d8b;
    }
}

static void fill_meta(cuda_device *d, dev_stream s, const dev_op *op, span *m)
{
    memset(m, 0, sizeof *m);
    m->rank = d->base.rank;
    m->iter = op->iter;
    m->stream = s == DEV_STREAM_COMPUTE ? STREAM_COMPUTE : STREAM_COMM;
    m->kind = (uint8_t)op->kind;
    m->layer = op->layer;
    m->bucket = op->bucket;
    m->seq = op->seq;
    m->bytes = op->bytes;
    text_copy(m->name, sizeof m->name, op->name);
}

static int cuda_enqueue(device *base, dev_stream s, const dev_op *op)
{
    cuda_device *d = (cuda_device *)base;
    cuda_stream *st = &d->st[s];
    char err[512] = "", msg[640];
    cuda_op_plan plan;
    if (cuda_plan_op(op, s, &plan, err, sizeof err) != 0)
        goto fail;
    uint64_t ticket = atomic_load(&st->enqueued) + 1;
    if (wait_for_slot(d, st, ticket) != 0)
        return -1;
    if (cuda_anchor_refresh(d, false, err, sizeof err) != 0)
        goto fail;
    cuda_slot *slot = &st->slots[(ticket - 1) % CUDA_SLOTS];
    fill_meta(d, s, op, &slot->meta);
    slot->coll = plan.coll != CUDA_COLL_NONE;
    slot->fail = plan.fail;
    if (plan.fail)
        snprintf(slot->fail_msg, sizeof slot->fail_msg, "%s failed (injected fault)", op->name);
    slot->anchor = d->anchor_cur;
    slot->anchor_gen = d->anchors[d->anchor_cur].gen;
    slot->start_seen = false;

    char label[SPAN_NAME + 48];
    if (op->phase_begin) {
        snprintf(label, sizeof label, "rank %d / %s", d->base.rank, span_kind_name(op->kind));
        prof_nvtx_push(d->cfg.nvtx, label, colour_of(op->kind));
    }
    if (op->kind == SPAN_ALLREDUCE)
        snprintf(label, sizeof label, "rank %d / bucket %d allreduce", d->base.rank, op->bucket);
    else
        snprintf(label, sizeof label, "rank %d / %s %s", d->base.rank, span_kind_name(op->kind), op->name);
    prof_nvtx_push(d->cfg.nvtx, label, colour_of(op->kind));
    /* The op's launches (NCCL's and cuBLAS's included) inside its external id. */
    bool pushed = false;
    int rc = d->cupti ? cupti_collect_push(d->cupti, &slot->meta, err, sizeof err) : 0;
    pushed = d->cupti && rc == 0;
    if (rc == 0)
        rc = cuda_launch_op(d, s, op, &plan, err, sizeof err);
    if (pushed) {
        char pop_err[256];
        if (cupti_collect_pop(d->cupti, pop_err, sizeof pop_err) != 0 && rc == 0) {
            text_copy(err, sizeof err, pop_err);
            rc = -1;
        }
    }
    prof_nvtx_pop(d->cfg.nvtx);
    if (op->phase_end)
        prof_nvtx_pop(d->cfg.nvtx);
    if (rc != 0)
        goto fail;
    atomic_store(&st->enqueued, ticket);
    return 0;
fail:
    snprintf(msg, sizeof msg, "rank %d: %s", d->base.rank, err);
    cuda_device_fail(d, msg);
    return -1;
}

static dev_event cuda_record(device *base, dev_stream s)
{
    cuda_device *d = (cuda_device *)base;
    return (dev_event){.stream = s, .ticket = atomic_load(&d->st[s].enqueued)};
}

static int cuda_wait(device *base, dev_stream s, dev_event ev)
{
    cuda_device *d = (cuda_device *)base;
    if (is_failed(d))
        return -1;
    if (ev.ticket == 0 || ev.stream < 0 || ev.stream >= DEV_STREAM_COUNT || ev.stream == (int)s)
        return 0; /* nothing before it, or a stream's own order */
    cuda_stream *other = &d->st[ev.stream];
    pthread_mutex_lock(&d->mu);
    bool done = ev.ticket <= other->retired;
    pthread_mutex_unlock(&d->mu);
    if (done)
        return 0;
    /* Not retired, so its slot was not reused: slot reuse waits for retirement. */
    cudaEvent_t e = other->slots[(ev.ticket - 1) % CUDA_SLOTS].end;
    cudaError_t rc = cudaStreamWaitEvent(d->st[s].s, e, 0);
    if (rc != cudaSuccess) {
        char msg[512];
        snprintf(msg, sizeof msg, "rank %d: cudaStreamWaitEvent: %s", d->base.rank, cudaGetErrorString(rc));
        cuda_device_fail(d, msg);
        return -1;
    }
    return 0;
}

static int cuda_synchronize(device *base, dev_stream s)
{
    cuda_device *d = (cuda_device *)base;
    cuda_stream *st = &d->st[s];
    pthread_mutex_lock(&d->mu);
    d->waiters++;
    pthread_cond_broadcast(&d->cv); /* the poller polls faster while someone waits */
    while (!d->failed && st->retired < atomic_load(&st->enqueued))
        pthread_cond_wait(&d->cv, &d->mu);
    d->waiters--;
    bool failed = d->failed;
    pthread_mutex_unlock(&d->mu);
    if (!failed)
        return 0;
    /* The caller may free what the stream's ops use once this returns: wait for the GPU
     * to leave them, once the poller has aborted the communicator (NCCL kernels end). */
    for (int i = 0; i < 50000 && d->comm_ok && d->poller_running && !atomic_load(&d->comm_aborted); i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    (void)cudaStreamSynchronize(st->s); /* its error is the failure already reported */
    return -1;
}

static int64_t cuda_now(device *base)
{
    cuda_device *d = (cuda_device *)base;
    return cuda_host_clock_ns() - d->cfg.t0_ns;
}

static const char *cuda_error(device *base)
{
    cuda_device *d = (cuda_device *)base;
    pthread_mutex_lock(&d->mu);
    const char *e = d->error;
    pthread_mutex_unlock(&d->mu);
    return e;
}

/* Managed memory, zeroed, preferring this GPU: the host reads it only between steps
 * (--verify, the rebuild's broadcast), so pages live on the GPU while it trains. */
static void *cuda_alloc(device *base, size_t bytes)
{
    cuda_device *d = (cuda_device *)base;
    void *p = NULL;
    char msg[512];
    cudaError_t rc = cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
    if (rc != cudaSuccess) {
        snprintf(msg, sizeof msg, "rank %d: cudaMallocManaged(%zu bytes): %s", d->base.rank, bytes,
                 cudaGetErrorString(rc));
        cuda_device_fail(d, msg);
        return NULL;
    }
    struct cudaMemLocation loc = {.type = cudaMemLocationTypeDevice, .id = d->gpu};
    if ((rc = cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, loc)) != cudaSuccess ||
        (rc = cudaMemset(p, 0, bytes)) != cudaSuccess || (rc = cudaDeviceSynchronize()) != cudaSuccess) {
        snprintf(msg, sizeof msg, "rank %d: preparing %zu bytes of managed memory: %s", d->base.rank, bytes,
                 cudaGetErrorString(rc));
        cuda_device_fail(d, msg);
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void cuda_release(device *base, void *p)
{
    cuda_device *d = (cuda_device *)base;
    cudaError_t rc = cudaFree(p);
    if (rc != cudaSuccess) {
        char msg[512];
        snprintf(msg, sizeof msg, "rank %d: cudaFree: %s", d->base.rank, cudaGetErrorString(rc));
        cuda_device_fail(d, msg);
    }
}

static const device_ops cuda_ops = {
    .enqueue = cuda_enqueue,
    .record = cuda_record,
    .wait = cuda_wait,
    .synchronize = cuda_synchronize,
    .now_ns = cuda_now,
    .error = cuda_error,
    .alloc = cuda_alloc,
    .release = cuda_release,
};

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

/* The poller's timed waits are on CLOCK_MONOTONIC, like every clock here. */
static int init_cond_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc == 0 ? 0 : -1;
}

device *cuda_device_create(const cuda_device_config *c, char *err, size_t errlen)
{
    cuda_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "rank %d: out of memory", c->rank);
        return NULL;
    }
    d->base.ops = &cuda_ops;
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
    if (init_cond_monotonic(&d->cv) != 0) {
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
        if (is_failed(d))
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
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

span_ring *cuda_device_host_ring(device *base) { return ((cuda_device *)base)->host_ring; }

void *cuda_device_owner(device *base) { return ((cuda_device *)base)->cfg.owner; }
