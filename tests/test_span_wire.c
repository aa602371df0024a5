/* test_span_wire.c — the span stream framing: exact bytes, round trips of every message
 * type, feeding in pieces down to one byte, corrupt and hostile input refused, truncated
 * input left pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profiler/span_wire.h"

static span make_span(int i)
{
    span s;
    memset(&s, 0, sizeof s);
    s.rank = 3 + i;
    s.iter = 100 * i - 7;
    s.stream = (uint8_t)(i % STREAM_COUNT);
    s.kind = (uint8_t)(i % SPAN_KIND_COUNT);
    s.layer = i % 2 ? -1 : i;
    s.bucket = i % 3 ? -1 : 2 * i;
    s.seq = i % 5 ? -1 : (int64_t)1 << 40 | i;
    s.bytes = (int64_t)25 << 20 | i;
    s.start_ns = INT64_MAX - 1000 * i;
    s.end_ns = i % 2 ? INT64_MIN + i : 123456789012345 + i;
    snprintf(s.name, sizeof s.name, "%s.layer%d", i % 2 ? "backward" : "allreduce bucket", i);
    return s;
}

static void assert_span_equal(const span *a, const span *b)
{
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->iter, b->iter);
    assert_int_equal(a->stream, b->stream);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->layer, b->layer);
    assert_int_equal(a->bucket, b->bucket);
    assert_true(a->seq == b->seq);
    assert_true(a->bytes == b->bytes);
    assert_true(a->start_ns == b->start_ns);
    assert_true(a->end_ns == b->end_ns);
    assert_string_equal(a->name, b->name);
}

/* Feeds everything and expects exactly one message. */
static void decode_one(span_wire_decoder *d, const unsigned char *buf, size_t n, span_wire_msg *m)
{
    char err[256] = "";
    assert_int_equal(span_wire_feed(d, buf, n), n);
    int rc = span_wire_next(d, m, err, sizeof err);
    if (rc != 1)
        fail_msg("next: %d %s", rc, err);
}

/* Heartbeat bytes pinned: the format is little-endian whatever the host. */
static void test_exact_bytes(void **state)
{
    (void)state;
    unsigned char buf[64];
    size_t n = span_wire_encode_heartbeat(buf, sizeof buf, 0x01020304, -2);
    const unsigned char want[] = {'D', 'D', 'W', '1', 4, 0, 0, 0, 12, 0, 0, 0, 4, 3, 2, 1,
                                  0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(buf, want, sizeof want);

    span s = make_span(0);
    strcpy(s.name, "ab");
    s.rank = 7;
    s.stream = STREAM_COMM;
    s.kind = SPAN_ALLREDUCE;
    s.start_ns = 0x1122334455667788;
    unsigned char b[256];
    n = span_wire_encode_batch(b, sizeof b, &s, 1);
    assert_int_equal(n, SPAN_WIRE_HEADER + 4 + SPAN_WIRE_SPAN_FIXED + 2);
    assert_int_equal(span_wire_batch_size(&s, 1), n);
    const unsigned char *p = b + SPAN_WIRE_HEADER;
    assert_int_equal(p[0], 1); /* one span */
    assert_int_equal(p[4], 7); /* rank */
    assert_int_equal(p[12], STREAM_COMM);
    assert_int_equal(p[13], SPAN_ALLREDUCE);
    assert_int_equal(p[14], 2); /* name length */
    assert_int_equal(p[4 + 36], 0x88);
    assert_int_equal(p[4 + 43], 0x11);
    assert_memory_equal(p + 4 + SPAN_WIRE_SPAN_FIXED, "ab", 2);
}

static void test_batch_round_trip(void **state)
{
    (void)state;
    enum { N = 40 };
    span in[N];
    for (int i = 0; i < N; i++)
        in[i] = make_span(i);
    memset(in[1].name, 0, sizeof in[1].name); /* empty name */
    memset(in[2].name, 'x', sizeof in[2].name - 1);
    in[2].name[SPAN_NAME - 1] = '\0'; /* the longest name */
    memset(in[3].name, 'y', sizeof in[3].name); /* no terminator at all: cut to 95 */

    size_t need = span_wire_batch_size(in, N);
    unsigned char *buf = malloc(need);
    assert_non_null(buf);
    assert_int_equal(span_wire_encode_batch(buf, need, in, N), need);
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    span_wire_msg m;
    decode_one(d, buf, need, &m);
    assert_int_equal(m.type, SPAN_WIRE_BATCH);
    assert_int_equal(m.nspans, N);
    in[3].name[SPAN_NAME - 1] = '\0';
    for (int i = 0; i < N; i++)
        assert_span_equal(&m.spans[i], &in[i]);
    assert_int_equal(strlen(m.spans[2].name), SPAN_NAME - 1);
    char err[128];
    assert_int_equal(span_wire_next(d, &m, err, sizeof err), 0);
    assert_int_equal(span_wire_pending(d), 0);

    /* An empty batch is legal. */
    unsigned char small[32];
    size_t n = span_wire_encode_batch(small, sizeof small, NULL, 0);
    assert_int_equal(n, SPAN_WIRE_HEADER + 4);
    decode_one(d, small, n, &m);
    assert_int_equal(m.type, SPAN_WIRE_BATCH);
    assert_int_equal(m.nspans, 0);
    span_wire_decoder_destroy(d);
    free(buf);
}

static void test_control_round_trip(void **state)
{
    (void)state;
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    unsigned char buf[SPAN_WIRE_HEADER + 8 + SPAN_WIRE_MAX_ERROR];
    span_wire_msg m;

    size_t n = span_wire_encode_done(buf, sizeof buf, 12, 987654321012);
    decode_one(d, buf, n, &m);
    assert_int_equal(m.type, SPAN_WIRE_RANK_DONE);
    assert_int_equal(m.rank, 12);
    assert_true(m.total_spans == 987654321012);

    n = span_wire_encode_heartbeat(buf, sizeof buf, 3, INT64_MIN);
    decode_one(d, buf, n, &m);
    assert_int_equal(m.type, SPAN_WIRE_HEARTBEAT);
    assert_int_equal(m.rank, 3);
    assert_true(m.clock_ns == INT64_MIN);

    n = span_wire_encode_failed(buf, sizeof buf, 2, "allreduce seq 14 timed out after 30.0 s");
    decode_one(d, buf, n, &m);
    assert_int_equal(m.type, SPAN_WIRE_RANK_FAILED);
    assert_int_equal(m.rank, 2);
    assert_string_equal(m.error, "allreduce seq 14 timed out after 30.0 s");

    n = span_wire_encode_failed(buf, sizeof buf, 0, "");
    decode_one(d, buf, n, &m);
    assert_string_equal(m.error, "");

    /* A reason longer than the limit is cut, not refused. */
    char *longtext = malloc(3000);
    assert_non_null(longtext);
    memset(longtext, 'e', 2999);
    longtext[2999] = '\0';
    n = span_wire_encode_failed(buf, sizeof buf, 1, longtext);
    assert_int_equal(n, SPAN_WIRE_HEADER + 6 + SPAN_WIRE_MAX_ERROR);
    decode_one(d, buf, n, &m);
    assert_int_equal(strlen(m.error), SPAN_WIRE_MAX_ERROR);
    free(longtext);
    span_wire_decoder_destroy(d);
}

static void test_encoder_refusals(void **state)
{
    (void)state;
    unsigned char buf[4096];
    span s = make_span(1);
    size_t n = span_wire_batch_size(&s, 1);
    assert_int_equal(span_wire_encode_batch(buf, n - 1, &s, 1), 0);
    assert_int_equal(span_wire_encode_batch(buf, n, &s, 1), n);
    assert_int_equal(span_wire_encode_batch(buf, sizeof buf, &s, -1), 0);
    assert_int_equal(span_wire_batch_size(&s, SPAN_WIRE_MAX_BATCH + 1), 0);
    s.stream = STREAM_COUNT;
    assert_int_equal(span_wire_encode_batch(buf, sizeof buf, &s, 1), 0);
    s = make_span(1);
    s.kind = SPAN_KIND_COUNT;
    assert_int_equal(span_wire_encode_batch(buf, sizeof buf, &s, 1), 0);
    s = make_span(1);
    s.rank = -1;
    assert_int_equal(span_wire_encode_batch(buf, sizeof buf, &s, 1), 0);
    assert_int_equal(span_wire_encode_done(buf, sizeof buf, -1, 0), 0);
    assert_int_equal(span_wire_encode_done(buf, sizeof buf, 0, -5), 0);
    assert_int_equal(span_wire_encode_done(buf, SPAN_WIRE_HEADER + 11, 0, 0), 0);
    assert_int_equal(span_wire_encode_heartbeat(buf, SPAN_WIRE_HEADER + 11, 0, 0), 0);
    assert_int_equal(span_wire_encode_failed(buf, SPAN_WIRE_HEADER + 8, 0, "abc"), 0);
    assert_int_equal(span_wire_encode_failed(buf, SPAN_WIRE_HEADER + 9, 0, "abc"), SPAN_WIRE_HEADER + 9);
}

/* A stream of mixed messages: append one of each kind, return the length. */
static size_t build_stream(unsigned char *buf, size_t cap, int nspans)
{
    span sp[64];
    for (int i = 0; i < nspans; i++)
        sp[i] = make_span(i);
    size_t n = 0, w;
    w = span_wire_encode_heartbeat(buf + n, cap - n, 1, 555);
    assert_true(w > 0);
    n += w;
    w = span_wire_encode_batch(buf + n, cap - n, sp, nspans);
    assert_true(w > 0);
    n += w;
    w = span_wire_encode_failed(buf + n, cap - n, 1, "rank 1 lost its GPU");
    assert_true(w > 0);
    n += w;
    w = span_wire_encode_done(buf + n, cap - n, 1, nspans);
    assert_true(w > 0);
    n += w;
    return n;
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    unsigned char buf[16384];
    size_t n = build_stream(buf, sizeof buf, 17);
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    span_wire_msg m;
    char err[256];
    int got = 0;
    span_wire_type order[] = {SPAN_WIRE_HEARTBEAT, SPAN_WIRE_BATCH, SPAN_WIRE_RANK_FAILED, SPAN_WIRE_RANK_DONE};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(span_wire_feed(d, buf + i, 1), 1);
        int rc = span_wire_next(d, &m, err, sizeof err);
        assert_int_not_equal(rc, -1);
        if (rc == 1) {
            assert_true(got < 4);
            assert_int_equal(m.type, order[got]);
            if (m.type == SPAN_WIRE_BATCH) {
                assert_int_equal(m.nspans, 17);
                span want = make_span(16);
                assert_span_equal(&m.spans[16], &want);
            }
            got++;
            assert_int_equal(span_wire_pending(d), 0); /* completes exactly on its last byte */
        }
    }
    assert_int_equal(got, 4);
    span_wire_decoder_destroy(d);
}

/* Many full-size batches in chunks larger than the decoder's buffer. */
static void test_large_chunks(void **state)
{
    (void)state;
    enum { BATCHES = 5 };
    span *sp = malloc(SPAN_WIRE_MAX_BATCH * sizeof *sp);
    unsigned char *buf = malloc(BATCHES * SPAN_WIRE_MAX_MSG);
    assert_non_null(sp);
    assert_non_null(buf);
    for (int i = 0; i < SPAN_WIRE_MAX_BATCH; i++) {
        sp[i] = make_span(i);
        memset(sp[i].name, 'a' + i % 26, SPAN_NAME - 1);
        sp[i].name[SPAN_NAME - 1] = '\0';
    }
    size_t n = 0;
    for (int b = 0; b < BATCHES; b++) {
        sp[0].iter = b;
        size_t w = span_wire_encode_batch(buf + n, BATCHES * SPAN_WIRE_MAX_MSG - n, sp, SPAN_WIRE_MAX_BATCH);
        assert_int_equal(w, SPAN_WIRE_MAX_MSG); /* the largest message there can be */
        n += w;
    }
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    size_t used = 0;
    int got = 0;
    char err[256];
    span_wire_msg m;
    while (used < n) {
        size_t chunk = n - used < 200000 ? n - used : 200000;
        size_t took = span_wire_feed(d, buf + used, chunk);
        used += took;
        int rc;
        while ((rc = span_wire_next(d, &m, err, sizeof err)) == 1) {
            assert_int_equal(m.nspans, SPAN_WIRE_MAX_BATCH);
            assert_int_equal(m.spans[0].iter, got);
            assert_span_equal(&m.spans[SPAN_WIRE_MAX_BATCH - 1], &sp[SPAN_WIRE_MAX_BATCH - 1]);
            got++;
        }
        assert_int_equal(rc, 0);
        if (took == 0 && used < n)
            fail_msg("decoder stalled at %zu of %zu", used, n);
    }
    assert_int_equal(got, BATCHES);
    span_wire_decoder_destroy(d);
    free(buf);
    free(sp);
}

static void test_truncated_pending(void **state)
{
    (void)state;
    unsigned char buf[16384];
    size_t n = build_stream(buf, sizeof buf, 9);
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    assert_int_equal(span_wire_feed(d, buf, n - 1), n - 1);
    span_wire_msg m;
    char err[128];
    int got = 0, rc;
    while ((rc = span_wire_next(d, &m, err, sizeof err)) == 1)
        got++;
    assert_int_equal(rc, 0);
    assert_int_equal(got, 3);
    assert_int_equal(span_wire_pending(d), SPAN_WIRE_HEADER + 12 - 1); /* the DONE minus a byte */
    assert_int_equal(span_wire_next(d, &m, err, sizeof err), 0); /* asking again changes nothing */
    span_wire_decoder_destroy(d);

    /* A header cut short is pending too. */
    d = span_wire_decoder_create();
    assert_non_null(d);
    assert_int_equal(span_wire_feed(d, buf, 5), 5);
    assert_int_equal(span_wire_next(d, &m, err, sizeof err), 0);
    assert_int_equal(span_wire_pending(d), 5);
    span_wire_decoder_destroy(d);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Decoding buf[0, n) must fail with an error containing frag, and stay failed. */
static void expect_corrupt(const unsigned char *buf, size_t n, const char *frag)
{
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    span_wire_feed(d, buf, n);
    span_wire_msg m;
    char err[256] = "";
    int rc = span_wire_next(d, &m, err, sizeof err);
    if (rc != -1 || !strstr(err, frag))
        fail_msg("expected an error with '%s', got %d '%s'", frag, rc, err);
    err[0] = '\0';
    assert_int_equal(span_wire_next(d, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, frag));
    assert_int_equal(span_wire_feed(d, buf, n), 0);
    span_wire_decoder_destroy(d);
}

static void test_corrupt(void **state)
{
    (void)state;
    unsigned char good[4096], b[4096];
    span two[2] = {make_span(1), make_span(2)};
    size_t n = span_wire_encode_batch(good, sizeof good, two, 2);
    assert_true(n > 0);
    const size_t s0 = SPAN_WIRE_HEADER + 4; /* first span */

#define MUTATE(stmt, frag)                                                                          \
    do {                                                                                            \
        memcpy(b, good, n);                                                                         \
        stmt;                                                                                       \
        expect_corrupt(b, n, frag);                                                                 \
    } while (0)
    MUTATE(b[0] ^= 1, "bad magic");
    MUTATE(b[4] = 9, "unknown message type");
    MUTATE(b[4] = 0, "unknown message type");
    MUTATE(b[6] = 1, "unknown flags");
    MUTATE(put32(b + SPAN_WIRE_HEADER, SPAN_WIRE_MAX_BATCH + 1), "too many spans");
    MUTATE(put32(b + SPAN_WIRE_HEADER, 3), "shorter than its span count");
    MUTATE(put32(b + SPAN_WIRE_HEADER, SPAN_WIRE_MAX_BATCH), "shorter than its span count");
    MUTATE(put32(b + SPAN_WIRE_HEADER, 1), "bytes left over");
    MUTATE(b[s0 + 3] = 0x80, "negative rank in a span");
    MUTATE(b[s0 + 8] = STREAM_COUNT, "span stream out of range");
    MUTATE(b[s0 + 9] = SPAN_KIND_COUNT, "span kind out of range");
    MUTATE(b[s0 + 9] = 255, "span kind out of range");
    MUTATE(b[s0 + 10] = SPAN_NAME, "span name too long");
    MUTATE(b[s0 + 10] = 200, "span name too long");
    MUTATE(b[s0 + 11] = 1, "padding");
    MUTATE(b[s0 + SPAN_WIRE_SPAN_FIXED + 1] = '\0', "NUL inside a span name");
    /* The second span's name claims more bytes than the payload holds. */
    MUTATE(b[n - strlen(two[1].name) - SPAN_WIRE_SPAN_FIXED + 10] = 90, "runs past the batch");
#undef MUTATE

    /* A header announcing a huge payload is refused before any of it arrives. */
    unsigned char hdr[SPAN_WIRE_HEADER];
    memcpy(hdr, good, SPAN_WIRE_HEADER);
    put32(hdr + 8, 0xffffffffu);
    expect_corrupt(hdr, sizeof hdr, "payload size impossible");
    put32(hdr + 8, SPAN_WIRE_MAX_PAYLOAD + 1);
    expect_corrupt(hdr, sizeof hdr, "payload size impossible");
    put32(hdr + 8, 3);
    expect_corrupt(hdr, sizeof hdr, "payload size impossible");

    size_t dn = span_wire_encode_done(b, sizeof b, 1, 5);
    put32(b + 8, 13);
    expect_corrupt(b, dn, "payload size impossible");
    dn = span_wire_encode_done(b, sizeof b, 1, 5);
    b[SPAN_WIRE_HEADER + 11] = 0x80; /* total spans negative */
    expect_corrupt(b, dn, "negative span total");
    dn = span_wire_encode_heartbeat(b, sizeof b, 1, 5);
    b[SPAN_WIRE_HEADER + 3] = 0xff;
    expect_corrupt(b, dn, "negative rank");

    size_t fn = span_wire_encode_failed(b, sizeof b, 1, "boom");
    b[SPAN_WIRE_HEADER + 4] = 5; /* text length 5, payload has 4 */
    expect_corrupt(b, fn, "error text length");
    fn = span_wire_encode_failed(b, sizeof b, 1, "boom");
    b[SPAN_WIRE_HEADER + 7] = '\0';
    expect_corrupt(b, fn, "NUL inside the error text");
    fn = span_wire_encode_failed(b, sizeof b, 1, "boom");
    put32(b + 8, 6 + SPAN_WIRE_MAX_ERROR + 1);
    expect_corrupt(b, fn, "payload size impossible");
}

/* Random damage to a valid stream, fed in random pieces: the decoder returns errors or
 * messages, and every message it returns is well formed. */
static void test_fuzz(void **state)
{
    (void)state;
    unsigned char good[16384], b[16384];
    size_t n = build_stream(good, sizeof good, 23);
    uint64_t x = 0x9e3779b97f4a7c15u;
    int errors = 0, messages = 0;
    span_wire_decoder *d = span_wire_decoder_create();
    assert_non_null(d);
    for (int trial = 0; trial < 3000; trial++) {
        memcpy(b, good, n);
        int flips = 1 + trial % 4;
        for (int f = 0; f < flips; f++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[x % n] = (unsigned char)(x >> 32);
        }
        span_wire_decoder_destroy(d);
        d = span_wire_decoder_create();
        assert_non_null(d);
        size_t used = 0;
        int rc = 0;
        while (used < n && rc >= 0) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t chunk = 1 + x % 64;
            if (chunk > n - used)
                chunk = n - used;
            used += span_wire_feed(d, b + used, chunk);
            span_wire_msg m;
            char err[256];
            while ((rc = span_wire_next(d, &m, err, sizeof err)) == 1) {
                messages++;
                assert_true(m.type >= SPAN_WIRE_BATCH && m.type <= SPAN_WIRE_HEARTBEAT);
                assert_true(m.nspans >= 0 && m.nspans <= SPAN_WIRE_MAX_BATCH);
                for (int i = 0; i < m.nspans; i++) {
                    assert_true(m.spans[i].stream < STREAM_COUNT);
                    assert_true(m.spans[i].kind < SPAN_KIND_COUNT);
                    assert_true(strlen(m.spans[i].name) < SPAN_NAME);
                    assert_true(m.spans[i].rank >= 0);
                }
                assert_true(strlen(m.error) <= SPAN_WIRE_MAX_ERROR);
            }
            if (rc < 0) {
                errors++;
                assert_true(strstr(err, "corrupt span stream") != NULL);
            }
        }
    }
    span_wire_decoder_destroy(d);
    /* Both outcomes happen: damage is caught, and damage to free-form fields passes. */
    assert_true(errors > 100);
    assert_true(messages > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_bytes),
        cmocka_unit_test(test_batch_round_trip),
        cmocka_unit_test(test_control_round_trip),
        cmocka_unit_test(test_encoder_refusals),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_large_chunks),
        cmocka_unit_test(test_truncated_pending),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
