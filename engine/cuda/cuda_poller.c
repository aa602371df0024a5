/* cuda_poller.c — the cuda device's poller thread: retires completed ops in order (a
 * span each, on the run's clock, unless CUPTI gives the spans), fails the device at an
 * injected fault, and is the watchdog of the comm stream (cuda_plan.h's verdict: an NCCL
 * asynchronous error or a collective past timeout_s aborts the communicator). */
#include "common/textcopy.h"
#include "engine/cuda/cuda_device_internal.h"

#include <stdio.h>
#include <time.h>

/* How often the GPU is asked while the host waits for it (the latency of
 * dev_synchronize), and otherwise: each poll is a few CUDA calls, which CUPTI records. */
#define POLL_WAITED_NS 100000
#define POLL_IDLE_NS 1000000
/* How often CUPTI's completed buffers are asked for. */
#define CUPTI_FLUSH_NS 200000000

static void fail_call(cuda_device *d, const char *call, cudaError_t rc)
{
    char msg[512];
    snprintf(msg, sizeof msg, "rank %d: %s: %s", d->base.rank, call, cudaGetErrorString(rc));
    cuda_device_fail(d, msg);
}

/* The op's times on the run's clock from its events and the anchor current when it was
 * enqueued (completed before the op was launched, so elapsed times are positive). */
static int time_op(cuda_device *d, const cuda_slot *slot, int64_t *start, int64_t *end)
{
    pthread_mutex_lock(&d->mu);
    cuda_anchor a = d->anchors[slot->anchor];
    if (a.gen != slot->anchor_gen) /* reused: the op waited very long; the latest serves */
        a = d->anchors[d->anchor_cur];
    pthread_mutex_unlock(&d->mu);
    float ms_start, ms_end;
    cudaError_t rc = cudaEventElapsedTime(&ms_start, a.ev, slot->start);
    if (rc == cudaSuccess)
        rc = cudaEventElapsedTime(&ms_end, a.ev, slot->end);
    if (rc != cudaSuccess) {
        fail_call(d, "cudaEventElapsedTime", rc);
        return -1;
    }
    *start = cuda_event_run_ns(a.host_ns, d->cfg.t0_ns, ms_start);
    *end = cuda_event_run_ns(a.host_ns, d->cfg.t0_ns, ms_end);
    return 0;
}

/* Retires the completed ops at the head of stream s.  0, or -1 once the device failed. */
static int retire(cuda_device *d, dev_stream s)
{
    cuda_stream *st = &d->st[s];
    for (;;) {
        pthread_mutex_lock(&d->mu);
        uint64_t retired = st->retired;
        bool failed = d->failed;
        pthread_mutex_unlock(&d->mu);
        if (failed)
            return -1;
        if (retired >= atomic_load(&st->enqueued))
            return 0;
        cuda_slot *slot = &st->slots[retired % CUDA_SLOTS];
        cudaError_t q = cudaEventQuery(slot->end);
        if (q == cudaErrorNotReady)
            return 0;
        if (q != cudaSuccess) {
            fail_call(d, "cudaEventQuery", q);
            return -1;
        }
        if (slot->fail) {
            char msg[640];
            snprintf(msg, sizeof msg, "rank %d: %s", d->base.rank, slot->fail_msg);
            cuda_device_fail(d, msg);
            return -1;
        }
        if ((!d->cupti || slot->events_span) && st->ring) {
            span sp = slot->meta;
            if (time_op(d, slot, &sp.start_ns, &sp.end_ns) != 0)
                return -1;
            if (d->cupti)
                cupti_collect_emit_timed(d->cupti, &sp);
            else
                span_ring_push(st->ring, &sp);
        }
        pthread_mutex_lock(&d->mu);
        st->retired++;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
    }
}

/* The watchdog's look at the comm stream and the communicator. */
static void watch(cuda_device *d)
{
    if (atomic_load(&d->abort_requested)) {
        /* Failed first: no NCCL call starts after this (cuda_launch.c checks), so the
         * abort can only meet a call already inside NCCL, which it is there to end. */
        pthread_mutex_lock(&d->mu);
        char why[512];
        text_copy(why, sizeof why, d->abort_why);
        pthread_mutex_unlock(&d->mu);
        cuda_device_fail(d, why);
        cuda_comm_abort_once(d);
        return;
    }
    if (!d->comm_ok || atomic_load(&d->comm_aborted))
        return;
    cuda_stream *st = &d->st[DEV_STREAM_COMM];
    pthread_mutex_lock(&d->mu);
    uint64_t retired = st->retired;
    pthread_mutex_unlock(&d->mu);
    int64_t now = cuda_host_clock_ns();
    cuda_watch_input in = {.rank = d->base.rank, .timeout_s = d->cfg.timeout_s, .now_ns = now, .seq = -1,
                           .bucket = -1, .iter = -1};
    if (retired < atomic_load(&st->enqueued)) {
        cuda_slot *slot = &st->slots[retired % CUDA_SLOTS];
        if (slot->coll) {
            if (!slot->start_seen) {
                cudaError_t q = cudaEventQuery(slot->start);
                if (q == cudaSuccess) {
                    slot->start_seen = true;
                    slot->start_seen_ns = now;
                } else if (q != cudaErrorNotReady) {
                    fail_call(d, "cudaEventQuery", q);
                    return;
                }
            }
            in.coll_started = slot->start_seen;
            in.coll_started_ns = slot->start_seen_ns;
            in.seq = slot->meta.seq;
            in.bucket = slot->meta.bucket;
            in.iter = slot->meta.iter;
            in.name = slot->meta.name;
        }
    }
    ncclResult_t async = ncclSuccess;
    ncclResult_t nr = ncclCommGetAsyncError(d->comm, &async);
    if (nr != ncclSuccess)
        async = nr;
    in.nccl_async = (int)async;
    in.nccl_text = ncclGetErrorString(async);
    char why[512];
    if (cuda_watch_decide(&in, why, sizeof why) != CUDA_WATCH_OK) {
        cuda_device_fail(d, why);
        cuda_comm_abort_once(d);
    }
}

void *cuda_poller_main(void *arg)
{
    cuda_device *d = arg;
    cudaError_t rc = cudaSetDevice(d->gpu); /* the current device is per thread */
    if (rc != cudaSuccess) {
        fail_call(d, "cudaSetDevice (poller)", rc);
        return NULL;
    }
    int64_t last_flush = cuda_host_clock_ns();
    for (;;) {
        pthread_mutex_lock(&d->mu);
        bool stop = d->stop, waited = d->waiters > 0;
        pthread_mutex_unlock(&d->mu);
        if (stop)
            break;
        for (int s = 0; s < DEV_STREAM_COUNT; s++)
            (void)retire(d, (dev_stream)s);
        watch(d);
        int64_t now = cuda_host_clock_ns();
        if (d->cupti && now - last_flush > CUPTI_FLUSH_NS) {
            char err[512];
            if (cupti_collect_flush(d->cupti, err, sizeof err) != 0) {
                char msg[640];
                snprintf(msg, sizeof msg, "rank %d: %s", d->base.rank, err);
                cuda_device_fail(d, msg);
            }
            last_flush = now;
        }
        /* Until the next poll, or sooner when a host thread starts waiting (or stop). */
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += waited ? POLL_WAITED_NS : POLL_IDLE_NS;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&d->mu);
        if (!d->stop && (waited || d->waiters == 0))
            pthread_cond_timedwait(&d->cv, &d->mu, &until);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}
