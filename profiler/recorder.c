/* recorder.c — per-thread SPSC span rings drained by one writer thread into SQLite. */
#include "../engine/textcopy.h"
#include "recorder.h"

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
    span slots[RING_CAP];
};

struct recorder {
    store *st;
    int64_t run_id;
    int nrings;
    span_ring *rings;
    span *batch;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    atomic_int_fast64_t written;
    int failed;
    char error[512];
};

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
    for (int i = 0; i < nrings; i++) {
        atomic_init(&r->rings[i].head, 0);
        atomic_init(&r->rings[i].tail, 0);
    }
    r->st = st;
    r->run_id = run_id;
    r->nrings = nrings;
    atomic_init(&r->stop, false);
    atomic_init(&r->written, 0);
    *out = r;
    return 0;
}

span_ring *recorder_ring(recorder *r, int index) { return &r->rings[index]; }

void span_ring_push(span_ring *ring, const span *s)
{
    uint_fast64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    while (head - atomic_load_explicit(&ring->tail, memory_order_acquire) >= RING_CAP) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    ring->slots[head & (RING_CAP - 1)] = *s;
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
}

static void flush(recorder *r, size_t n)
{
    if (n == 0)
        return;
    if (r->st && !r->failed) {
        char err[512];
        if (store_write_spans(r->st, r->run_id, r->batch, n, err, sizeof err) != 0) {
            r->failed = 1;
            snprintf(r->error, sizeof r->error, "writing spans: %.480s", err);
            return;
        }
    }
    atomic_fetch_add(&r->written, (int_fast64_t)n);
}

static void drain(recorder *r)
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
                flush(r, n);
                n = 0;
            }
        }
        atomic_store_explicit(&ring->tail, tail, memory_order_release);
    }
    flush(r, n);
}

static void *writer_main(void *arg)
{
    recorder *r = arg;
    while (!atomic_load(&r->stop)) {
        struct timespec ts = {0, DRAIN_PERIOD_NS};
        nanosleep(&ts, NULL);
        drain(r);
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
    } else {
        drain(r);
    }
    if (r->failed) {
        text_copy(err, errlen, r->error);
        return -1;
    }
    return 0;
}

int64_t recorder_written(const recorder *r) { return atomic_load(&((recorder *)r)->written); }

void recorder_destroy(recorder *r)
{
    if (!r)
        return;
    free(r->rings);
    free(r->batch);
    free(r);
}
