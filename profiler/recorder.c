/* recorder.c — per-thread SPSC span rings drained by one writer thread into SQLite.
 *
 * Contract: recorder.h.  The writer's failure is published with one release store of
 * `failed` after the error text is complete, and the text is never written again, so
 * readers (recorder_failed, a producer on a full ring) need only an acquire load.
 */
#include "common/textcopy.h"
#include "profiler/recorder.h"
#include "profiler/stats_live.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING_CAP 8192 /* power of two */
#define BATCH_MAX 16384
#define DRAIN_PERIOD_NS 10000000

struct span_ring {
    _Alignas(64) atomic_uint_fast64_t head; /* next slot the producer writes */
    _Alignas(64) atomic_uint_fast64_t tail; /* next slot the writer reads */
    atomic_int_fast64_t dropped;            /* written by the producer only */
    const atomic_int *writer_failed;
    span slots[RING_CAP];
};

struct recorder {
    store *st;
    recorder_sink sink; /* instead of a store: spans go elsewhere (a rank process's stream) */
    void *sink_user;
    int64_t run_id;
    const bool *keep;  /* nkeep entries; NULL: every rank's spans are stored */
    int nkeep;
    stats_live *live;  /* NULL: no statistics as they come */
    int nrings;
    span_ring *rings;
    span *batch;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    atomic_int_fast64_t written;
    atomic_int_fast64_t dropped; /* the failed batch and what the rings held after it */
    atomic_int failed;
    char error[512];
};

int recorder_create_sink(recorder_sink sink, void *user, int nrings, recorder **out)
{
    if (recorder_create(NULL, 0, nrings, out) != 0)
        return -1;
    (*out)->sink = sink;
    (*out)->sink_user = user;
    return 0;
}

int recorder_create(store *st, int64_t run_id, int nrings, recorder **out)
{
    recorder *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->rings = aligned_alloc(64, (size_t)nrings * sizeof *r->rings);
    r->batch = malloc(BATCH_MAX * sizeof *r->batch);
    if (!r->rings || !r->batch) {
        free(r->rings);
        free(r->batch);
        free(r);
        return -1;
    }
    atomic_init(&r->failed, 0);
    for (int i = 0; i < nrings; i++) {
        atomic_init(&r->rings[i].head, 0);
        atomic_init(&r->rings[i].tail, 0);
        atomic_init(&r->rings[i].dropped, 0);
        r->rings[i].writer_failed = &r->failed;
    }
    r->st = st;
    r->run_id = run_id;
    r->nrings = nrings;
    atomic_init(&r->stop, false);
    atomic_init(&r->written, 0);
    atomic_init(&r->dropped, 0);
    *out = r;
    return 0;
}

span_ring *recorder_ring(recorder *r, int index) { return &r->rings[index]; }

void recorder_keep_spans(recorder *r, const bool *keep, int nkeep, stats_live *live)
{
    r->keep = keep;
    r->nkeep = nkeep;
    r->live = live;
}

void span_ring_push(span_ring *ring, const span *s)
{
    uint_fast64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    while (head - atomic_load_explicit(&ring->tail, memory_order_acquire) >= RING_CAP) {
        /* The run is being aborted; the span has nowhere to go. */
        if (atomic_load_explicit(ring->writer_failed, memory_order_acquire)) {
            atomic_store_explicit(&ring->dropped,
                                  atomic_load_explicit(&ring->dropped, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            return;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    ring->slots[head & (RING_CAP - 1)] = *s;
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
}

/* Returns -1 once the writer has failed (now or before): nothing more is written. */
static int flush(recorder *r, size_t n)
{
    /* Every span counts in the statistics; only the chosen ranks' are stored.  A live
     * that runs out of memory says so itself (stats_live_exact), and the statistics
     * then come from the stored spans: not a reason to stop recording. */
    for (size_t i = 0; r->live && i < n; i++)
        (void)stats_live_add(r->live, &r->batch[i]);
    if (r->keep) {
        size_t kept = 0;
        for (size_t i = 0; i < n; i++)
            if (r->batch[i].rank < 0 || r->batch[i].rank >= r->nkeep || r->keep[r->batch[i].rank])
                r->batch[kept++] = r->batch[i];
        n = kept;
    }
    if (n == 0)
        return 0;
    if (r->st || r->sink) {
        char err[480];
        int rc = r->sink ? r->sink(r->sink_user, r->batch, n, err, sizeof err)
                         : store_write_spans(r->st, r->run_id, r->batch, n, err, sizeof err);
        if (rc != 0) {
            snprintf(r->error, sizeof r->error, "writing spans: %s", err);
            atomic_fetch_add(&r->dropped, (int_fast64_t)n);
            atomic_store_explicit(&r->failed, 1, memory_order_release);
            return -1;
        }
    }
    atomic_fetch_add(&r->written, (int_fast64_t)n);
    return 0;
}

static int drain(recorder *r)
{
    size_t n = 0;
    for (int i = 0; i < r->nrings; i++) {
        span_ring *ring = &r->rings[i];
        uint_fast64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
        uint_fast64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
        while (tail != head) {
            r->batch[n++] = ring->slots[tail & (RING_CAP - 1)];
            tail++;
            if (n == BATCH_MAX) {
                atomic_store_explicit(&ring->tail, tail, memory_order_release);
                if (flush(r, n) < 0)
                    return -1;
                n = 0;
            }
        }
        atomic_store_explicit(&ring->tail, tail, memory_order_release);
    }
    return flush(r, n);
}

static void *writer_main(void *arg)
{
    recorder *r = arg;
    while (!atomic_load(&r->stop)) {
        struct timespec ts = {0, DRAIN_PERIOD_NS};
        nanosleep(&ts, NULL);
        if (drain(r) < 0)
            return NULL;
    }
    drain(r);
    return NULL;
}

int recorder_start(recorder *r)
{
    if (pthread_create(&r->thread, NULL, writer_main, r) != 0)
        return -1;
    r->started = true;
    return 0;
}

int recorder_failed(recorder *r, char *err, size_t errlen)
{
    if (!atomic_load_explicit(&r->failed, memory_order_acquire))
        return 0;
    if (err)
        text_copy(err, errlen, r->error);
    return 1;
}

int recorder_stop(recorder *r, char *err, size_t errlen)
{
    if (r->started) {
        atomic_store(&r->stop, true);
        int rc = pthread_join(r->thread, NULL);
        r->started = false;
        if (rc != 0) {
            snprintf(err, errlen, "joining the span writer: %s", strerror(rc));
            return -1;
        }
    } else if (!atomic_load(&r->failed)) {
        drain(r);
    }
    if (atomic_load_explicit(&r->failed, memory_order_acquire)) {
        /* What the rings still hold will never be written: count it, once. */
        for (int i = 0; i < r->nrings; i++) {
            span_ring *ring = &r->rings[i];
            uint_fast64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
            uint_fast64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
            atomic_fetch_add(&r->dropped, (int_fast64_t)(head - tail));
            atomic_store_explicit(&ring->tail, head, memory_order_release);
        }
        text_copy(err, errlen, r->error);
        return -1;
    }
    return 0;
}

int64_t recorder_written(const recorder *r) { return atomic_load(&((recorder *)r)->written); }

int64_t recorder_dropped(const recorder *r)
{
    recorder *m = (recorder *)r;
    int64_t n = atomic_load(&m->dropped);
    for (int i = 0; i < m->nrings; i++)
        n += atomic_load_explicit(&m->rings[i].dropped, memory_order_relaxed);
    return n;
}

void recorder_destroy(recorder *r)
{
    if (!r)
        return;
    free(r->rings);
    free(r->batch);
    free(r);
}
