/* cupti_collect.c — CUPTI activity collection into the rank's span rings (contract in
 * cupti_collect.h; decoding in cupti_decode.c).  CUPTI's buffer callbacks take no user
 * pointer, so the one collector of the process is reached through `active`, set while
 * collection is on and read only by those callbacks. */
#include "engine/cuda/cupti_collect.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUFFER_BYTES ((size_t)8 << 20)
#define CLOCK_READS 16

struct cupti_collect {
    cupti_collect_config cfg;
    cupti_op_table *ops;
    cupti_decode *dec;
    cupti_clock clock;
    bool enabled[8];
    atomic_llong outside; /* records of no ddpprof op, counted and not stored */
};

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static _Atomic(cupti_collect *) active;

static const char *cupti_text(CUptiResult rc)
{
    const char *s = NULL;
    if (cuptiGetResultString(rc, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* CUPTI wants 8-byte alignment; a failed allocation gives it no buffer, and it counts
     * what it could not store as dropped. */
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    cupti_collect *c = atomic_load(&active);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    if (c && buffer) {
        char err[256];
        if (cupti_decode_buffer(c->dec, buffer, valid, dropped, err, sizeof err) != 0)
            fprintf(stderr, "ddpprof: rank %d: CUPTI buffer cut short: %s\n", c->cfg.rank, err);
    }
    free(buffer);
}

static void emit_span(void *user, const span *sp)
{
    cupti_collect *c = user;
    /* Work outside every op ddpprof launched (NCCL's and cuBLAS's set-up, a flush's
     * leftovers) belongs to no iteration: an iteration of -1 in the span table would be
     * taken for a step by the analysis. */
    if (sp->iter < 0) {
        atomic_fetch_add(&c->outside, 1);
        return;
    }
    if (c->cfg.emit) {
        c->cfg.emit(c->cfg.emit_user, sp);
        return;
    }
    span_ring *ring = sp->stream == STREAM_COMM ? c->cfg.comm_ring : c->cfg.compute_ring;
    if (ring)
        span_ring_push(ring, sp);
}

static int read_clocks(const cupti_collect *c, cupti_clock_read *reads, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        reads[i].host_before_ns = c->cfg.host_clock_ns();
        CUptiResult rc = cuptiGetTimestamp(&reads[i].cupti_ns);
        reads[i].host_after_ns = c->cfg.host_clock_ns();
        if (rc != CUPTI_SUCCESS) {
            snprintf(err, errlen, "cuptiGetTimestamp: %s", cupti_text(rc));
            return -1;
        }
    }
    return 0;
}

static void disable_all(cupti_collect *c)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (c->enabled[i]) {
            CUptiResult rc = cuptiActivityDisable(kinds[i]);
            if (rc != CUPTI_SUCCESS)
                fprintf(stderr, "ddpprof: rank %d: cuptiActivityDisable(%d): %s\n", c->cfg.rank, (int)kinds[i],
                        cupti_text(rc));
            c->enabled[i] = false;
        }
}

static void free_collector(cupti_collect *c)
{
    cupti_decode_destroy(c->dec);
    cupti_op_table_destroy(c->ops);
    free(c);
}

void cupti_collect_emit_timed(cupti_collect *c, const span *sp)
{
    cupti_decode_emit_timed(c->dec, sp);
}

int cupti_collect_start(const cupti_collect_config *cfg, cupti_collect **out, char *why, size_t whylen)
{
    *out = NULL;
    why[0] = '\0';
    cupti_collect *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, whylen, "out of memory for the CUPTI collector");
        return -1;
    }
    c->cfg = *cfg;
    atomic_init(&c->outside, 0);
    cupti_clock_read reads[CLOCK_READS];
    if (cupti_op_table_create(0, (uint64_t)cfg->host_clock_ns(), &c->ops) != 0) {
        snprintf(why, whylen, "out of memory for the CUPTI op table");
        free_collector(c);
        return -1;
    }
    if (read_clocks(c, reads, CLOCK_READS, why, whylen) != 0 ||
        cupti_clock_sync(&c->clock, reads, CLOCK_READS, cfg->t0_ns) != 0) {
        if (!why[0])
            snprintf(why, whylen, "no usable reading of CUPTI's clock against the host's");
        free_collector(c);
        return 1;
    }
    cupti_decode_config dc = {.rank = cfg->rank, .ops = c->ops, .clock = c->clock, .emit = emit_span, .user = c};
    if (cupti_decode_create(&dc, &c->dec, why, whylen) != 0) {
        free_collector(c);
        return 1;
    }
    cupti_collect *expected = NULL;
    if (!atomic_compare_exchange_strong(&active, &expected, c)) {
        snprintf(why, whylen, "CUPTI is already collecting for this process");
        free_collector(c);
        return 1;
    }
    CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        snprintf(why, whylen, "cuptiActivityRegisterCallbacks: %s", cupti_text(rc));
        goto unavailable;
    }
    for (size_t i = 0; i < NKINDS; i++) {
        /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and the like: another profiler
         * (nsys, a framework's) holds CUPTI. */
        if ((rc = cuptiActivityEnable(kinds[i])) != CUPTI_SUCCESS) {
            snprintf(why, whylen, "cuptiActivityEnable(%d): %s", (int)kinds[i], cupti_text(rc));
            goto unavailable;
        }
        c->enabled[i] = true;
    }
    *out = c;
    return 0;
unavailable:
    disable_all(c);
    atomic_store(&active, NULL);
    free_collector(c);
    return 1;
}

int cupti_collect_map_stream(cupti_collect *c, cudaStream_t s, span_stream which, char *err, size_t errlen)
{
    uint32_t id = 0;
    CUptiResult rc = cuptiGetStreamIdEx(NULL, (CUstream)s, 0, &id);
    if (rc != CUPTI_SUCCESS) {
        snprintf(err, errlen, "cuptiGetStreamIdEx: %s", cupti_text(rc));
        return -1;
    }
    if (cupti_decode_map_stream(c->dec, id, c->cfg.rank, which) != 0) {
        snprintf(err, errlen, "cannot map CUDA stream %u for CUPTI's records", id);
        return -1;
    }
    return 0;
}

int cupti_collect_push(cupti_collect *c, const span *op, char *err, size_t errlen)
{
    uint64_t id = cupti_op_table_add(c->ops, op);
    CUptiResult rc = cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
    if (rc != CUPTI_SUCCESS) {
        snprintf(err, errlen, "cuptiActivityPushExternalCorrelationId: %s", cupti_text(rc));
        return -1;
    }
    return 0;
}

int cupti_collect_pop(cupti_collect *c, char *err, size_t errlen)
{
    (void)c;
    uint64_t last = 0;
    CUptiResult rc = cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    if (rc != CUPTI_SUCCESS) {
        snprintf(err, errlen, "cuptiActivityPopExternalCorrelationId: %s", cupti_text(rc));
        return -1;
    }
    return 0;
}

/* Refits the clock's drift with fresh readings (a failed fit keeps the old clock). */
static void refit_clock(cupti_collect *c)
{
    cupti_clock_read reads[CLOCK_READS];
    char ignored[128];
    if (read_clocks(c, reads, CLOCK_READS, ignored, sizeof ignored) == 0 &&
        cupti_clock_fit(&c->clock, reads, CLOCK_READS) == 0)
        cupti_decode_set_clock(c->dec, &c->clock);
}

int cupti_collect_flush(cupti_collect *c, char *err, size_t errlen)
{
    refit_clock(c);
    CUptiResult rc = cuptiActivityFlushAll(0);
    if (rc != CUPTI_SUCCESS) {
        snprintf(err, errlen, "cuptiActivityFlushAll: %s", cupti_text(rc));
        return -1;
    }
    return 0;
}

void cupti_collect_stop(cupti_collect *c, cupti_decode_stats *stats, int64_t *outside)
{
    if (!c)
        return;
    refit_clock(c);
    CUptiResult rc = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (rc != CUPTI_SUCCESS)
        fprintf(stderr, "ddpprof: rank %d: cuptiActivityFlushAll: %s\n", c->cfg.rank, cupti_text(rc));
    disable_all(c);
    cupti_decode_flush(c->dec);
    if (stats)
        cupti_decode_get_stats(c->dec, stats);
    if (outside)
        *outside = atomic_load(&c->outside);
    atomic_store(&active, NULL);
    free_collector(c);
}
