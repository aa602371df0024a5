/* span_wire.c — see span_wire.h. */
#include "profiler/span_wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

/* ---- little-endian fields ------------------------------------------------------- */

static void put_u8(unsigned char **p, unsigned v) { *(*p)++ = (unsigned char)v; }

static void put_u16(unsigned char **p, unsigned v)
{
    put_u8(p, v & 0xff);
    put_u8(p, (v >> 8) & 0xff);
}

static void put_u32(unsigned char **p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put_u8(p, (v >> (8 * i)) & 0xff);
}

static void put_u64(unsigned char **p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        put_u8(p, (unsigned)((v >> (8 * i)) & 0xff));
}

static void put_i32(unsigned char **p, int32_t v) { put_u32(p, (uint32_t)v); }
static void put_i64(unsigned char **p, int64_t v) { put_u64(p, (uint64_t)v); }

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static unsigned get_u16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Two's complement back to signed without relying on implementation-defined casts. */
static int32_t get_i32(const unsigned char *p)
{
    uint32_t u = get_u32(p);
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

static int64_t get_i64(const unsigned char *p)
{
    uint64_t u = get_u64(p);
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static void put_header(unsigned char **p, span_wire_type type, uint32_t payload)
{
    put_u32(p, SPAN_WIRE_MAGIC);
    put_u16(p, (unsigned)type);
    put_u16(p, 0);
    put_u32(p, payload);
}

/* ---- encoders ------------------------------------------------------------------- */

static size_t name_len(const span *s) { return strnlen(s->name, SPAN_NAME - 1); }

size_t span_wire_batch_size(const span *spans, int n)
{
    if (n < 0 || n > SPAN_WIRE_MAX_BATCH || (n > 0 && !spans))
        return 0;
    size_t bytes = SPAN_WIRE_HEADER + 4;
    for (int i = 0; i < n; i++) {
        const span *s = &spans[i];
        if (s->rank < 0 || s->stream >= STREAM_COUNT || s->kind >= SPAN_KIND_COUNT)
            return 0;
        bytes += SPAN_WIRE_SPAN_FIXED + name_len(s);
    }
    return bytes;
}

size_t span_wire_encode_batch(void *buf, size_t cap, const span *spans, int n)
{
    size_t total = span_wire_batch_size(spans, n);
    if (total == 0 || !buf || cap < total)
        return 0;
    unsigned char *p = buf;
    put_header(&p, SPAN_WIRE_BATCH, (uint32_t)(total - SPAN_WIRE_HEADER));
    put_u32(&p, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        const span *s = &spans[i];
        size_t nl = name_len(s);
        put_i32(&p, s->rank);
        put_i32(&p, s->iter);
        put_u8(&p, s->stream);
        put_u8(&p, s->kind);
        put_u8(&p, (unsigned)nl);
        put_u8(&p, 0);
        put_i32(&p, s->layer);
        put_i32(&p, s->bucket);
        put_i64(&p, s->seq);
        put_i64(&p, s->bytes);
        put_i64(&p, s->start_ns);
        put_i64(&p, s->end_ns);
        memcpy(p, s->name, nl);
        p += nl;
    }
    return total;
}

static size_t encode_rank_i64(void *buf, size_t cap, span_wire_type type, int32_t rank, int64_t v)
{
    size_t total = SPAN_WIRE_HEADER + 12;
    if (!buf || cap < total || rank < 0)
        return 0;
    unsigned char *p = buf;
    put_header(&p, type, 12);
    put_i32(&p, rank);
    put_i64(&p, v);
    return total;
}

size_t span_wire_encode_done(void *buf, size_t cap, int32_t rank, int64_t total_spans)
{
    if (total_spans < 0)
        return 0;
    return encode_rank_i64(buf, cap, SPAN_WIRE_RANK_DONE, rank, total_spans);
}

size_t span_wire_encode_heartbeat(void *buf, size_t cap, int32_t rank, int64_t clock_ns)
{
    return encode_rank_i64(buf, cap, SPAN_WIRE_HEARTBEAT, rank, clock_ns);
}

size_t span_wire_encode_failed(void *buf, size_t cap, int32_t rank, const char *error)
{
    size_t len = error ? strnlen(error, SPAN_WIRE_MAX_ERROR) : 0;
    size_t total = SPAN_WIRE_HEADER + 6 + len;
    if (!buf || cap < total || rank < 0)
        return 0;
    unsigned char *p = buf;
    put_header(&p, SPAN_WIRE_RANK_FAILED, (uint32_t)(6 + len));
    put_i32(&p, rank);
    put_u16(&p, (unsigned)len);
    if (len)
        memcpy(p, error, len);
    return total;
}

size_t span_wire_encode_ints(void *buf, size_t cap, int32_t rank, const int64_t *v, int n)
{
    if (!buf || n < 0 || n > SPAN_WIRE_MAX_INTS || rank < 0)
        return 0;
    size_t total = SPAN_WIRE_HEADER + 8 + (size_t)n * 8;
    if (cap < total)
        return 0;
    unsigned char *p = buf;
    put_header(&p, SPAN_WIRE_INTS, (uint32_t)(8 + (size_t)n * 8));
    put_i32(&p, rank);
    put_u32(&p, (uint32_t)n);
    for (int i = 0; i < n; i++)
        put_i64(&p, v[i]);
    return total;
}

/* ---- decoder -------------------------------------------------------------------- */

/* The buffer and span array start small and grow to what the messages need (at most
 * SPAN_WIRE_MAX_MSG / SPAN_WIRE_MAX_BATCH), so rank 0 can hold one decoder per rank
 * without paying for the largest batch on each. */
#define INITIAL_BUF 4096

struct span_wire_decoder {
    unsigned char *buf;
    size_t cap;
    size_t start, end; /* unread bytes are buf[start, end) */
    bool failed;
    char error[256];
    span *spans;
    int spans_cap;
    int64_t *ints;
    int ints_cap;
};

span_wire_decoder *span_wire_decoder_create(void)
{
    span_wire_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->buf = malloc(INITIAL_BUF);
    if (!d->buf) {
        free(d);
        return NULL;
    }
    d->cap = INITIAL_BUF;
    return d;
}

void span_wire_decoder_destroy(span_wire_decoder *d)
{
    if (!d)
        return;
    free(d->buf);
    free(d->spans);
    free(d->ints);
    free(d);
}

size_t span_wire_pending(const span_wire_decoder *d) { return d->end - d->start; }

static bool payload_ok(unsigned type, uint32_t len);

/* Size of the message at the front once its header is in and sane, else 0. */
static size_t front_size(const span_wire_decoder *d)
{
    if (d->end - d->start < SPAN_WIRE_HEADER)
        return 0;
    const unsigned char *h = d->buf + d->start;
    uint32_t len = get_u32(h + 8);
    if (get_u32(h) != SPAN_WIRE_MAGIC || get_u16(h + 6) != 0 || !payload_ok(get_u16(h + 4), len))
        return 0; /* span_wire_next will say what is wrong */
    return SPAN_WIRE_HEADER + (size_t)len;
}

size_t span_wire_feed(span_wire_decoder *d, const void *data, size_t len)
{
    const unsigned char *src = data;
    size_t took = 0;
    while (!d->failed && took < len) {
        if (d->start > 0 && d->cap - d->end < len - took) {
            memmove(d->buf, d->buf + d->start, d->end - d->start);
            d->end -= d->start;
            d->start = 0;
        }
        size_t space = d->cap - d->end;
        if (space == 0) {
            size_t need = front_size(d);
            if (need <= d->cap)
                break; /* a complete message (or a bad header) waits for span_wire_next */
            size_t grow = d->cap * 2 > need ? d->cap * 2 : need;
            if (grow > SPAN_WIRE_MAX_MSG)
                grow = SPAN_WIRE_MAX_MSG;
            unsigned char *nb = realloc(d->buf, grow);
            if (!nb) {
                d->failed = true;
                snprintf(d->error, sizeof d->error, "span stream: out of memory for a %zu-byte message", need);
                break;
            }
            d->buf = nb;
            d->cap = grow;
            continue;
        }
        size_t n = len - took < space ? len - took : space;
        memcpy(d->buf + d->end, src + took, n);
        d->end += n;
        took += n;
    }
    return took;
}

static int fail(span_wire_decoder *d, char *err, size_t errlen, const char *msg, long long v)
{
    d->failed = true;
    snprintf(d->error, sizeof d->error, "corrupt span stream: %s (%lld)", msg, v);
    set_err(err, errlen, "%s", d->error);
    return -1;
}

/* Payload bounds per type: refused from the header alone. */
static bool payload_ok(unsigned type, uint32_t len)
{
    switch (type) {
    case SPAN_WIRE_BATCH: return len >= 4 && len <= SPAN_WIRE_MAX_PAYLOAD;
    case SPAN_WIRE_RANK_DONE:
    case SPAN_WIRE_HEARTBEAT: return len == 12;
    case SPAN_WIRE_RANK_FAILED: return len >= 6 && len <= 6 + SPAN_WIRE_MAX_ERROR;
    case SPAN_WIRE_INTS: return len >= 8 && len <= 8 + 8 * SPAN_WIRE_MAX_INTS && (len - 8) % 8 == 0;
    default: return false;
    }
}

static int decode_batch(span_wire_decoder *d, const unsigned char *p, uint32_t len,
                        span_wire_msg *out, char *err, size_t errlen)
{
    uint32_t n = get_u32(p);
    if (n > SPAN_WIRE_MAX_BATCH)
        return fail(d, err, errlen, "too many spans in a batch", n);
    /* Count against bytes before allocating: a lying count must not buy memory. */
    if ((size_t)n * SPAN_WIRE_SPAN_FIXED > len - 4)
        return fail(d, err, errlen, "batch shorter than its span count", n);
    if ((int)n > d->spans_cap) {
        span *ns = realloc(d->spans, (size_t)n * sizeof *ns);
        if (!ns) {
            d->failed = true;
            snprintf(d->error, sizeof d->error, "span stream: out of memory for %u spans", n);
            set_err(err, errlen, "%s", d->error);
            return -1;
        }
        d->spans = ns;
        d->spans_cap = (int)n;
    }
    size_t off = 4;
    for (uint32_t i = 0; i < n; i++) {
        if (len - off < SPAN_WIRE_SPAN_FIXED)
            return fail(d, err, errlen, "batch shorter than its span count, at span", i);
        const unsigned char *q = p + off;
        span *s = &d->spans[i];
        memset(s, 0, sizeof *s);
        s->rank = get_i32(q);
        s->iter = get_i32(q + 4);
        unsigned stream = q[8], kind = q[9], nl = q[10], pad = q[11];
        s->layer = get_i32(q + 12);
        s->bucket = get_i32(q + 16);
        s->seq = get_i64(q + 20);
        s->bytes = get_i64(q + 28);
        s->start_ns = get_i64(q + 36);
        s->end_ns = get_i64(q + 44);
        if (s->rank < 0)
            return fail(d, err, errlen, "negative rank in a span", s->rank);
        if (stream >= STREAM_COUNT)
            return fail(d, err, errlen, "span stream out of range", stream);
        if (kind >= SPAN_KIND_COUNT)
            return fail(d, err, errlen, "span kind out of range", kind);
        if (nl >= SPAN_NAME)
            return fail(d, err, errlen, "span name too long", nl);
        if (pad != 0)
            return fail(d, err, errlen, "non-zero padding byte", pad);
        off += SPAN_WIRE_SPAN_FIXED;
        if (len - off < nl)
            return fail(d, err, errlen, "span name runs past the batch, at span", i);
        if (memchr(p + off, '\0', nl))
            return fail(d, err, errlen, "NUL inside a span name, at span", i);
        s->stream = (uint8_t)stream;
        s->kind = (uint8_t)kind;
        memcpy(s->name, p + off, nl);
        s->name[nl] = '\0';
        off += nl;
    }
    if (off != len)
        return fail(d, err, errlen, "bytes left over after the batch's spans", (long long)(len - off));
    out->nspans = (int)n;
    out->spans = d->spans;
    return 1;
}

int span_wire_next(span_wire_decoder *d, span_wire_msg *out, char *err, size_t errlen)
{
    if (d->failed) {
        set_err(err, errlen, "%s", d->error);
        return -1;
    }
    size_t avail = d->end - d->start;
    if (avail < SPAN_WIRE_HEADER)
        return 0;
    const unsigned char *h = d->buf + d->start;
    uint32_t magic = get_u32(h);
    unsigned type = get_u16(h + 4), flags = get_u16(h + 6);
    uint32_t len = get_u32(h + 8);
    if (magic != SPAN_WIRE_MAGIC)
        return fail(d, err, errlen, "bad magic", magic);
    if (type < SPAN_WIRE_BATCH || type > SPAN_WIRE_INTS)
        return fail(d, err, errlen, "unknown message type", type);
    if (flags != 0)
        return fail(d, err, errlen, "unknown flags", flags);
    if (!payload_ok(type, len))
        return fail(d, err, errlen, "payload size impossible for its type", len);
    if (avail < SPAN_WIRE_HEADER + (size_t)len)
        return 0;
    const unsigned char *p = h + SPAN_WIRE_HEADER;
    memset(out, 0, sizeof *out);
    out->type = (span_wire_type)type;
    int rc = 1;
    switch (type) {
    case SPAN_WIRE_BATCH:
        rc = decode_batch(d, p, len, out, err, errlen);
        break;
    case SPAN_WIRE_RANK_DONE:
    case SPAN_WIRE_HEARTBEAT: {
        out->rank = get_i32(p);
        int64_t v = get_i64(p + 4);
        if (out->rank < 0)
            return fail(d, err, errlen, "negative rank", out->rank);
        if (type == SPAN_WIRE_RANK_DONE) {
            if (v < 0)
                return fail(d, err, errlen, "negative span total", v);
            out->total_spans = v;
        } else {
            out->clock_ns = v;
        }
        break;
    }
    case SPAN_WIRE_RANK_FAILED: {
        out->rank = get_i32(p);
        unsigned sl = get_u16(p + 4);
        if (out->rank < 0)
            return fail(d, err, errlen, "negative rank", out->rank);
        if (sl > SPAN_WIRE_MAX_ERROR || sl != len - 6)
            return fail(d, err, errlen, "error text length disagrees with the payload", sl);
        if (memchr(p + 6, '\0', sl))
            return fail(d, err, errlen, "NUL inside the error text", sl);
        memcpy(out->error, p + 6, sl);
        out->error[sl] = '\0';
        break;
    }
    case SPAN_WIRE_INTS: {
        out->rank = get_i32(p);
        uint32_t n = get_u32(p + 4);
        if (out->rank < 0)
            return fail(d, err, errlen, "negative rank", out->rank);
        if ((size_t)n * 8 != len - 8)
            return fail(d, err, errlen, "value count disagrees with the payload", n);
        if ((int)n > d->ints_cap) {
            int64_t *ni = realloc(d->ints, (size_t)(n ? n : 1) * sizeof *ni);
            if (!ni)
                return fail(d, err, errlen, "out of memory for values", n);
            d->ints = ni;
            d->ints_cap = (int)n;
        }
        for (uint32_t i = 0; i < n; i++)
            d->ints[i] = get_i64(p + 8 + 8 * (size_t)i);
        out->nints = (int)n;
        out->ints = d->ints;
        break;
    }
    }
    if (rc == 1) {
        d->start += SPAN_WIRE_HEADER + (size_t)len;
        if (d->start == d->end)
            d->start = d->end = 0;
    }
    return rc;
}
