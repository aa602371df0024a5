/* cupti_decode.c — CUPTI activity buffers into spans, and CUPTI's clock onto the run's
 * (contract in cupti_decode.h).  Records are copied out of the buffer into local structs
 * before any field is read, so nothing depends on the buffer's alignment. */
#include "engine/cuda/cupti_decode.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cupti.h>

_Static_assert(CUPTI_DECODE_EXTERNAL_KIND == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
               "CUPTI_DECODE_EXTERNAL_KIND must name CUSTOM0");
/* The walk hands CUPTI a size rounded down to 8 (see the header); that is only sound if
 * every record is a multiple of 8 long. */
_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0 && sizeof(CUpti_ActivityMemcpy6) % 8 == 0 &&
                   sizeof(CUpti_ActivityMemset4) % 8 == 0 && sizeof(CUpti_ActivityExternalCorrelation) % 8 == 0 &&
                   sizeof(CUpti_ActivityAPI) % 8 == 0,
               "CUPTI activity records are 8-byte multiples");

#define DEFAULT_OPS 16384
#define DEFAULT_PENDING 8192
#define DEFAULT_CORR_SLOTS 65536
/* Far above any real need; refusing more keeps a bad argument from taking the memory. */
#define MAX_SLOTS ((size_t)1 << 24)
#define MAX_STREAMS 64

/* ---- clock ------------------------------------------------------------------------------ */

static int64_t add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static int64_t sub_sat(int64_t a, int64_t b)
{
    if (b == INT64_MIN)
        return a >= 0 ? INT64_MAX : a - b;
    return add_sat(a, -b);
}

/* a - b of two unsigned timestamps, as a signed count. */
static int64_t udiff(uint64_t a, uint64_t b)
{
    if (a >= b)
        return a - b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a - b);
    return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

/* The usable reading with the smallest bracket, or -1. */
static int best_read(const cupti_clock_read *reads, size_t n, size_t *best)
{
    int found = 0;
    int64_t best_bracket = 0;
    for (size_t i = 0; reads && i < n; i++) {
        const cupti_clock_read *r = &reads[i];
        if (r->cupti_ns == 0 || r->host_after_ns < r->host_before_ns)
            continue;
        int64_t bracket = sub_sat(r->host_after_ns, r->host_before_ns);
        if (!found || bracket < best_bracket) {
            found = 1;
            best_bracket = bracket;
            *best = i;
        }
    }
    return found ? 0 : -1;
}

static int64_t midpoint(const cupti_clock_read *r)
{
    return r->host_before_ns + sub_sat(r->host_after_ns, r->host_before_ns) / 2;
}

int cupti_clock_sync(cupti_clock *c, const cupti_clock_read *reads, size_t n, int64_t t0_ns)
{
    size_t b;
    if (!c || best_read(reads, n, &b) != 0)
        return -1;
    c->cupti_ref = reads[b].cupti_ns;
    c->host_ref = midpoint(&reads[b]);
    c->bracket_ns = sub_sat(reads[b].host_after_ns, reads[b].host_before_ns);
    c->t0_ns = t0_ns;
    c->drift = 0.0;
    return 0;
}

int cupti_clock_fit(cupti_clock *c, const cupti_clock_read *reads, size_t n)
{
    size_t b;
    if (!c || best_read(reads, n, &b) != 0 || reads[b].cupti_ns <= c->cupti_ref)
        return -1;
    double dc = (double)udiff(reads[b].cupti_ns, c->cupti_ref);
    double dh = (double)sub_sat(midpoint(&reads[b]), c->host_ref);
    double drift = dh / dc - 1.0;
    if (!(drift >= -CUPTI_CLOCK_MAX_DRIFT && drift <= CUPTI_CLOCK_MAX_DRIFT))
        return -1;
    c->drift = drift;
    return 0;
}

int64_t cupti_clock_to_run(const cupti_clock *c, uint64_t cupti_ns)
{
    int64_t d = udiff(cupti_ns, c->cupti_ref);
    /* |d * drift| < 2^63 * 1e-3: the product fits, and rounding it alone keeps d exact. */
    double corr = (double)d * c->drift;
    int64_t icorr = (int64_t)(corr < 0 ? corr - 0.5 : corr + 0.5);
    return add_sat(add_sat(sub_sat(c->host_ref, c->t0_ns), d), icorr);
}

/* ---- op table --------------------------------------------------------------------------- */

typedef struct {
    uint64_t id; /* 0: empty */
    span op;
} op_slot;

struct cupti_op_table {
    pthread_mutex_t mu;
    uint64_t first, next;
    size_t cap;
    op_slot *slot;
};

int cupti_op_table_create(size_t capacity, uint64_t first_id, cupti_op_table **out)
{
    *out = NULL;
    if (capacity == 0)
        capacity = DEFAULT_OPS;
    if (capacity > MAX_SLOTS || first_id == 0 || first_id > UINT64_MAX / 2)
        return -1;
    cupti_op_table *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->slot = calloc(capacity, sizeof *t->slot);
    if (!t->slot || pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t->slot);
        free(t);
        return -1;
    }
    t->first = t->next = first_id;
    t->cap = capacity;
    *out = t;
    return 0;
}

void cupti_op_table_destroy(cupti_op_table *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->slot);
    free(t);
}

uint64_t cupti_op_table_add(cupti_op_table *t, const span *op)
{
    pthread_mutex_lock(&t->mu);
    uint64_t id = t->next++;
    op_slot *s = &t->slot[(id - t->first) % t->cap];
    s->id = id;
    s->op = *op;
    s->op.name[SPAN_NAME - 1] = '\0';
    pthread_mutex_unlock(&t->mu);
    return id;
}

int cupti_op_table_get(cupti_op_table *t, uint64_t id, span *out)
{
    int found = 0;
    pthread_mutex_lock(&t->mu);
    if (id >= t->first && id < t->next) {
        const op_slot *s = &t->slot[(id - t->first) % t->cap];
        if (s->id == id) {
            *out = s->op;
            found = 1;
        }
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

/* ---- decoder ---------------------------------------------------------------------------- */

typedef enum { REC_KERNEL, REC_MEMCPY, REC_MEMSET } rec_what;

/* A GPU record reduced to what a span needs, kept while its correlation is unknown. */
typedef struct {
    uint32_t corr;  /* the launching API call's correlation id */
    uint32_t corr2; /* memcpy: the runtime call's, which may be the one with our id; 0 none */
    uint32_t cuda_stream;
    uint8_t what;      /* rec_what */
    uint8_t copy_kind; /* CUpti_ActivityMemcpyKind */
    uint64_t start, end, bytes;
    char name[SPAN_NAME];
} gpu_rec;

typedef struct {
    uint32_t corr;
    bool used;
    uint64_t ext;
} corr_slot;

typedef struct {
    uint32_t cuda_stream;
    int32_t rank;
    uint8_t stream;
} stream_map;

struct cupti_decode {
    pthread_mutex_t mu;
    cupti_decode_config cfg;
    corr_slot *corr;
    gpu_rec *pend; /* ring: pend_count records from pend_head */
    size_t pend_head, pend_count;
    stream_map streams[MAX_STREAMS];
    int nstreams;
    cupti_decode_stats st;
};

int cupti_decode_create(const cupti_decode_config *cfg, cupti_decode **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg || !cfg->emit) {
        snprintf(err, errlen, "cupti decoder: no span sink");
        return -1;
    }
    cupti_decode_config c = *cfg;
    if (c.max_pending == 0)
        c.max_pending = DEFAULT_PENDING;
    if (c.corr_slots == 0)
        c.corr_slots = DEFAULT_CORR_SLOTS;
    if (c.max_pending > MAX_SLOTS || c.corr_slots > MAX_SLOTS || c.rank < 0) {
        snprintf(err, errlen, "cupti decoder: max_pending and corr_slots must be at most %zu, rank >= 0",
                 MAX_SLOTS);
        return -1;
    }
    /* The record structs are this header's; a libcupti of another major version lays
     * them out differently, and an older one writes shorter records. */
    uint32_t version = 0;
    CUptiResult rc = cuptiGetVersion(&version);
    if (rc != CUPTI_SUCCESS) {
        const char *s = NULL;
        if (cuptiGetResultString(rc, &s) != CUPTI_SUCCESS || !s)
            s = "unknown error";
        snprintf(err, errlen, "cupti decoder: cuptiGetVersion: %s", s);
        return -1;
    }
    if (version < CUPTI_API_VERSION || version / 10000 != CUPTI_API_VERSION / 10000) {
        snprintf(err, errlen, "cupti decoder: libcupti API version %u, built for %u", version,
                 (unsigned)CUPTI_API_VERSION);
        return -1;
    }
    cupti_decode *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "cupti decoder: out of memory");
        return -1;
    }
    d->corr = calloc(c.corr_slots, sizeof *d->corr);
    d->pend = calloc(c.max_pending, sizeof *d->pend);
    if (!d->corr || !d->pend || pthread_mutex_init(&d->mu, NULL) != 0) {
        free(d->corr);
        free(d->pend);
        free(d);
        snprintf(err, errlen, "cupti decoder: out of memory");
        return -1;
    }
    d->cfg = c;
    *out = d;
    return 0;
}

void cupti_decode_destroy(cupti_decode *d)
{
    if (!d)
        return;
    pthread_mutex_destroy(&d->mu);
    free(d->corr);
    free(d->pend);
    free(d);
}

int cupti_decode_map_stream(cupti_decode *d, uint32_t cuda_stream, int rank, span_stream s)
{
    if (rank < 0 || (unsigned)s >= STREAM_COUNT)
        return -1;
    int rc = 0;
    pthread_mutex_lock(&d->mu);
    int i = 0;
    while (i < d->nstreams && d->streams[i].cuda_stream != cuda_stream)
        i++;
    if (i == MAX_STREAMS) {
        rc = -1;
    } else {
        d->streams[i] = (stream_map){.cuda_stream = cuda_stream, .rank = rank, .stream = (uint8_t)s};
        if (i == d->nstreams)
            d->nstreams++;
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

void cupti_decode_set_clock(cupti_decode *d, const cupti_clock *c)
{
    pthread_mutex_lock(&d->mu);
    d->cfg.clock = *c;
    pthread_mutex_unlock(&d->mu);
}

void cupti_decode_emit_timed(cupti_decode *d, const span *sp)
{
    pthread_mutex_lock(&d->mu);
    d->st.spans++;
    d->cfg.emit(d->cfg.user, sp);
    pthread_mutex_unlock(&d->mu);
}

void cupti_decode_get_stats(cupti_decode *d, cupti_decode_stats *out)
{
    pthread_mutex_lock(&d->mu);
    *out = d->st;
    out->pending = (int64_t)d->pend_count;
    pthread_mutex_unlock(&d->mu);
}

/* Copies at most SPAN_NAME-1 bytes, never ending inside a UTF-8 sequence. */
static void copy_name(char dst[SPAN_NAME], const char *src)
{
    size_t n = strnlen(src, SPAN_NAME);
    if (n > SPAN_NAME - 1) {
        n = SPAN_NAME - 1;
        /* src[n] is the first byte left out: back off while it continues a character. */
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* NCCL's kernels: ncclKernel_*, ncclDevKernel_*, mangled (_Z<len>ncclDevKernel_...) or not. */
static bool is_nccl_kernel(const char *name)
{
    if (name[0] == '_' && name[1] == 'Z') {
        name += 2;
        while (isdigit((unsigned char)*name))
            name++;
    }
    return strncasecmp(name, "nccl", 4) == 0;
}

static const char *memcpy_name(uint8_t copy_kind)
{
    static const char *const names[] = {"memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
                                        "memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
                                        "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
    return copy_kind < sizeof names / sizeof names[0] ? names[copy_kind] : "memcpy";
}

static const stream_map *find_stream(const cupti_decode *d, uint32_t cuda_stream)
{
    for (int i = 0; i < d->nstreams; i++)
        if (d->streams[i].cuda_stream == cuda_stream)
            return &d->streams[i];
    return NULL;
}

static void emit(cupti_decode *d, span *sp, const gpu_rec *r)
{
    sp->start_ns = cupti_clock_to_run(&d->cfg.clock, r->start);
    sp->end_ns = cupti_clock_to_run(&d->cfg.clock, r->end);
    d->st.spans++;
    d->cfg.emit(d->cfg.user, sp);
}

static void emit_inferred(cupti_decode *d, const gpu_rec *r)
{
    span sp = {.rank = d->cfg.rank, .iter = -1, .layer = -1, .bucket = -1, .seq = -1};
    const stream_map *m = find_stream(d, r->cuda_stream);
    bool nccl = r->what == REC_KERNEL && is_nccl_kernel(r->name);
    sp.stream = m ? m->stream : nccl ? STREAM_COMM : STREAM_COMPUTE;
    if (m)
        sp.rank = m->rank;
    switch ((rec_what)r->what) {
    case REC_KERNEL:
        sp.kind = nccl || sp.stream == STREAM_COMM ? SPAN_ALLREDUCE : SPAN_FORWARD;
        break;
    case REC_MEMCPY:
        sp.kind = r->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH || r->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOH
                      ? SPAN_COPY_OUT
                      : SPAN_COPY_IN;
        break;
    case REC_MEMSET:
        sp.kind = SPAN_COPY_IN;
        break;
    }
    sp.bytes = r->what == REC_KERNEL ? 0 : (int64_t)(r->bytes > INT64_MAX ? INT64_MAX : r->bytes);
    memcpy(sp.name, r->name, sizeof sp.name);
    d->st.inferred++;
    emit(d, &sp, r);
}

static bool corr_lookup(const cupti_decode *d, uint32_t corr, uint64_t *ext)
{
    const corr_slot *s = &d->corr[corr % d->cfg.corr_slots];
    if (!s->used || s->corr != corr)
        return false;
    *ext = s->ext;
    return true;
}

/* Emits `r` if its correlation is known (with the op's fields, or inferred when the op
 * is unknown); false when it must wait. */
static bool try_emit(cupti_decode *d, const gpu_rec *r)
{
    uint64_t ext;
    if (!corr_lookup(d, r->corr, &ext) && !(r->corr2 && corr_lookup(d, r->corr2, &ext)))
        return false;
    span sp;
    if (d->cfg.ops && cupti_op_table_get(d->cfg.ops, ext, &sp)) {
        if (!sp.name[0])
            memcpy(sp.name, r->name, sizeof sp.name);
        d->st.matched++;
        emit(d, &sp, r);
    } else {
        d->st.stale++;
        emit_inferred(d, r);
    }
    return true;
}

static void take_gpu_record(cupti_decode *d, const gpu_rec *r)
{
    if (r->start == 0 || r->end == 0 || r->end < r->start) {
        d->st.untimed++;
        return;
    }
    if (try_emit(d, r))
        return;
    if (d->pend_count == d->cfg.max_pending) {
        d->st.overflow++;
        emit_inferred(d, &d->pend[d->pend_head]);
        d->pend_head = (d->pend_head + 1) % d->cfg.max_pending;
        d->pend_count--;
    }
    d->pend[(d->pend_head + d->pend_count) % d->cfg.max_pending] = *r;
    d->pend_count++;
}

/* Emits the waiting records whose correlation is now known, keeping the others in order. */
static void match_pending(cupti_decode *d)
{
    size_t cap = d->cfg.max_pending, kept = 0;
    for (size_t i = 0; i < d->pend_count; i++) {
        gpu_rec *r = &d->pend[(d->pend_head + i) % cap];
        if (try_emit(d, r))
            continue;
        if (kept != i)
            d->pend[(d->pend_head + kept) % cap] = *r;
        kept++;
    }
    d->pend_count = kept;
}

void cupti_decode_flush(cupti_decode *d)
{
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < d->pend_count; i++)
        emit_inferred(d, &d->pend[(d->pend_head + i) % d->cfg.max_pending]);
    d->pend_head = d->pend_count = 0;
    pthread_mutex_unlock(&d->mu);
}

/* The struct size of the kinds whose layout this file knows; 0 for the others. */
static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
        return sizeof(CUpti_ActivityAPI);
    default:
        return 0;
    }
}

/* Reads one complete record at `rec` (its size checked by the caller). */
static void take_record(cupti_decode *d, CUpti_ActivityKind kind, const uint8_t *rec)
{
    gpu_rec g = {0};
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        CUpti_ActivityKernel10 k;
        memcpy(&k, rec, sizeof k);
        g = (gpu_rec){.corr = k.correlationId, .cuda_stream = k.streamId, .what = REC_KERNEL,
                      .start = k.start, .end = k.end};
        copy_name(g.name, k.name ? k.name : "kernel");
        take_gpu_record(d, &g);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        CUpti_ActivityMemcpy6 m;
        memcpy(&m, rec, sizeof m);
        g = (gpu_rec){.corr = m.correlationId, .corr2 = m.runtimeCorrelationId, .cuda_stream = m.streamId,
                      .what = REC_MEMCPY, .copy_kind = m.copyKind, .start = m.start, .end = m.end,
                      .bytes = m.bytes};
        copy_name(g.name, memcpy_name(m.copyKind));
        take_gpu_record(d, &g);
        return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        CUpti_ActivityMemset4 m;
        memcpy(&m, rec, sizeof m);
        g = (gpu_rec){.corr = m.correlationId, .cuda_stream = m.streamId, .what = REC_MEMSET, .start = m.start,
                      .end = m.end, .bytes = m.bytes};
        copy_name(g.name, "memset");
        take_gpu_record(d, &g);
        return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        CUpti_ActivityExternalCorrelation e;
        memcpy(&e, rec, sizeof e);
        if (e.externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
            d->st.skipped++;
            return;
        }
        d->st.correlations++;
        d->corr[e.correlationId % d->cfg.corr_slots] = (corr_slot){.corr = e.correlationId, .used = true,
                                                                     .ext = e.externalId};
        return;
    }
    default:
        d->st.skipped++;
        return;
    }
}

static const char *cupti_text(CUptiResult rc)
{
    const char *s = NULL;
    if (cuptiGetResultString(rc, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

int cupti_decode_buffer(cupti_decode *d, uint8_t *buf, size_t valid, size_t dropped, char *err, size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&d->mu);
    d->st.buffers++;
    d->st.dropped += dropped > INT64_MAX ? INT64_MAX : (int64_t)dropped;
    if (!buf && valid > 0) {
        snprintf(err, errlen, "CUPTI activity buffer: NULL with %zu valid bytes", valid);
        rc = -1;
        goto out;
    }
    /* CUPTI reads a record's 4-byte kind before it checks what is left; with a multiple of
     * 8 every record start has 0 or at least 8 bytes behind it. */
    size_t usable = valid & ~(size_t)7;
    size_t end_known = 0;   /* where the last record read ends, when its size is known */
    bool size_known = true; /* an empty buffer ends where it starts */
    size_t nread = 0;
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult r = usable ? cuptiActivityGetNextRecord(buf, usable, &rec) : CUPTI_ERROR_MAX_LIMIT_REACHED;
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
            break;
        if (r != CUPTI_SUCCESS) {
            snprintf(err, errlen, "CUPTI activity buffer (%zu bytes): record %zu is unreadable: %s", valid,
                     nread + 1, cupti_text(r));
            rc = -1;
            break;
        }
        const uint8_t *p = (const uint8_t *)rec;
        if (p < buf || (size_t)(p - buf) > usable - sizeof(CUpti_ActivityKind)) {
            snprintf(err, errlen, "CUPTI activity buffer: record outside the %zu valid bytes", valid);
            rc = -1;
            break;
        }
        size_t off = (size_t)(p - buf);
        CUpti_ActivityKind kind;
        memcpy(&kind, p, sizeof kind);
        size_t need = record_size(kind);
        /* CUPTI checks this against its own struct size; ours is what we are about to read. */
        if (need > usable - off) {
            snprintf(err, errlen, "CUPTI activity buffer: record of kind %d at offset %zu needs %zu bytes, %zu left",
                     (int)kind, off, need, valid - off);
            rc = -1;
            break;
        }
        d->st.records++;
        nread++;
        take_record(d, kind, p);
        size_known = need != 0;
        end_known = off + need;
    }
    /* CUPTI ends the walk without complaint at a partial record: only the bytes left say so. */
    if (rc == 0 && ((size_known && end_known != valid) || usable != valid)) {
        size_t from = size_known ? end_known : usable;
        snprintf(err, errlen, "CUPTI activity buffer truncated: %zu bytes at offset %zu hold no complete record",
                 valid - from, from);
        rc = -1;
    }
    match_pending(d);
out:
    if (rc != 0)
        d->st.bad_buffers++;
    pthread_mutex_unlock(&d->mu);
    return rc;
}
