/* cuda_device_ops.c — the cuda device's device.h entry points (contract in
 * cuda_device.h), its device_ops table: ops launched as they are enqueued
 * (cuda_launch.c), events as tickets, synchronisation through the poller, managed
 * memory.  Its creation and end are in cuda_device_life.c. */
#include "common/textcopy.h"
#include "engine/cuda/cuda_device_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend.h"

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
    slot->events_span = d->cupti && cuda_plan_runs_no_kernel(&plan, d->base.world_size);
    slot->fail = plan.fail;
    if (plan.fail)
        snprintf(slot->fail_msg, sizeof slot->fail_msg, "%s failed (injected fault)", op->name);
    slot->anchor = d->anchor_cur;
    slot->anchor_gen = d->anchors[d->anchor_cur].gen;
    slot->start_seen = false;

    char label[SPAN_NAME + 48];
    if (op->phase_begin) {
        snprintf(label, sizeof label, "rank %d / %s", d->base.rank, span_kind_name(op->kind));
        prof_nvtx_push(d->cfg.nvtx, label, prof_nvtx_colour(op->kind));
    }
    if (op->kind == SPAN_ALLREDUCE)
        snprintf(label, sizeof label, "rank %d / bucket %d allreduce", d->base.rank, op->bucket);
    else
        snprintf(label, sizeof label, "rank %d / %s %s", d->base.rank, span_kind_name(op->kind), op->name);
    prof_nvtx_push(d->cfg.nvtx, label, prof_nvtx_colour(op->kind));
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
    if (cuda_device_failed(d))
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

/* Host <-> GPU copies and clearing run on the device's own transfer stream (non-blocking,
 * so they never wait behind, or hold up, a stream that waits inside NCCL) and are waited
 * for there.  cudaMemcpyDefault: unified addressing tells the direction. */
static int transfer_done(cuda_device *d, const char *what, size_t bytes, cudaError_t rc)
{
    if (rc == cudaSuccess)
        rc = cudaStreamSynchronize(d->xfer_stream);
    if (rc == cudaSuccess)
        return 0;
    char msg[512];
    snprintf(msg, sizeof msg, "rank %d: %s of %zu bytes: %s", d->base.rank, what, bytes, cudaGetErrorString(rc));
    cuda_device_fail(d, msg);
    return -1;
}

static int cuda_copy(device *base, void *dst, const void *src, size_t bytes)
{
    cuda_device *d = (cuda_device *)base;
    return transfer_done(d, "cudaMemcpyAsync", bytes,
                         cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, d->xfer_stream));
}

static int cuda_zero(device *base, void *p, size_t bytes)
{
    cuda_device *d = (cuda_device *)base;
    return transfer_done(d, "cudaMemsetAsync", bytes, cudaMemsetAsync(p, 0, bytes, d->xfer_stream));
}

/* Device memory (cudaMalloc), zeroed: parameters, gradients, buckets and the collectives'
 * small buffers, which the host reaches through cuda_copy / cuda_zero only. */
static void *cuda_alloc(device *base, size_t bytes)
{
    cuda_device *d = (cuda_device *)base;
    void *p = NULL;
    cudaError_t rc = cudaMalloc(&p, bytes);
    if (rc != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        char msg[512];
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
            free_b = total_b = 0;
        snprintf(msg, sizeof msg,
                 "rank %d: cudaMalloc(%zu MiB) on GPU %d: %s (%zu MiB free of %zu): use a smaller model or fewer "
                 "ranks per GPU",
                 d->base.rank, bytes >> 20, d->gpu, cudaGetErrorString(rc), free_b >> 20, total_b >> 20);
        cuda_device_fail(d, msg);
        return NULL;
    }
    if (cuda_zero(base, p, bytes) != 0) {
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

const device_ops cuda_device_ops = {
    .enqueue = cuda_enqueue,
    .record = cuda_record,
    .wait = cuda_wait,
    .synchronize = cuda_synchronize,
    .now_ns = cuda_now,
    .error = cuda_error,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
    .zero = cuda_zero,
};

