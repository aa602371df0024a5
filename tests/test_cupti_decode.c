/* test_cupti_decode.c — the CUPTI activity decoder and clock conversion, without a GPU.
 *
 * Buffers are built in memory from CUDA 13's record structs, packed back to back the
 * way CUPTI lays them out, and walked by the real libcupti (cuptiActivityGetNextRecord
 * needs no driver).  Buffers that must not be read past their end are placed against an
 * inaccessible page, so an over-read crashes the test instead of passing unnoticed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cupti.h>

#include "engine/cuda/cupti_decode.h"

/* ---- buffers ----------------------------------------------------------------------------- */

typedef struct {
    _Alignas(8) uint8_t b[8192];
    size_t len;
} buf;

static void put(buf *b, const void *rec, size_t n)
{
    assert_true(b->len + n <= sizeof b->b);
    memcpy(b->b + b->len, rec, n);
    b->len += n;
}

static void add_ec(buf *b, uint32_t corr, uint64_t ext, CUpti_ExternalCorrelationKind kind)
{
    CUpti_ActivityExternalCorrelation e;
    memset(&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = kind;
    e.externalId = ext;
    e.correlationId = corr;
    put(b, &e, sizeof e);
}

static void add_kernel(buf *b, uint32_t corr, uint32_t stream, uint64_t start, uint64_t end, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr;
    k.streamId = stream;
    k.start = start;
    k.end = end;
    k.name = name;
    put(b, &k, sizeof k);
}

static void add_memcpy(buf *b, uint32_t corr, uint32_t rt_corr, uint32_t stream, CUpti_ActivityMemcpyKind ck,
                       uint64_t start, uint64_t end, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)ck;
    m.correlationId = corr;
    m.runtimeCorrelationId = rt_corr;
    m.streamId = stream;
    m.start = start;
    m.end = end;
    m.bytes = bytes;
    put(b, &m, sizeof m);
}

static void add_memset(buf *b, uint32_t corr, uint32_t stream, uint64_t start, uint64_t end, uint64_t bytes)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.correlationId = corr;
    m.streamId = stream;
    m.start = start;
    m.end = end;
    m.bytes = bytes;
    put(b, &m, sizeof m);
}

static void add_api(buf *b, CUpti_ActivityKind kind, uint32_t corr)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.correlationId = corr;
    a.start = 1;
    a.end = 2;
    put(b, &a, sizeof a);
}

/* `n` bytes copied to end exactly where an inaccessible page starts. */
typedef struct {
    uint8_t *map;
    size_t maplen;
    uint8_t *data;
} guarded;

static guarded guard(const void *bytes, size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (n + pg - 1) / pg + 1;
    guarded g = {.maplen = (data_pages + 1) * pg};
    g.map = mmap(NULL, g.maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g.map != MAP_FAILED);
    assert_int_equal(mprotect(g.map + data_pages * pg, pg, PROT_NONE), 0);
    g.data = g.map + data_pages * pg - n;
    memcpy(g.data, bytes, n);
    return g;
}

static void unguard(guarded *g)
{
    munmap(g->map, g->maplen);
}

/* ---- decoder fixture ---------------------------------------------------------------------- */

#define MAX_GOT 64

typedef struct {
    span got[MAX_GOT];
    int n;
} sink;

static void collect(void *user, const span *sp)
{
    sink *s = user;
    assert_true(s->n < MAX_GOT);
    s->got[s->n++] = *sp;
}

/* Identity clock: run ns = CUPTI ns. */
static const cupti_clock ident = {0};

static cupti_decode *make(sink *s, cupti_op_table *ops, int rank, size_t max_pending, size_t corr_slots)
{
    cupti_decode_config cfg = {.rank = rank, .max_pending = max_pending, .corr_slots = corr_slots, .ops = ops,
                               .clock = ident, .emit = collect, .user = s};
    cupti_decode *d = NULL;
    char err[256] = "";
    int rc = cupti_decode_create(&cfg, &d, err, sizeof err);
    if (rc != 0)
        fail_msg("create: %s", err);
    return d;
}

static int decode(cupti_decode *d, buf *b, size_t dropped)
{
    char err[256] = "";
    return cupti_decode_buffer(d, b->b, b->len, dropped, err, sizeof err);
}

static span op(int rank, int iter, span_stream st, span_kind k, const char *name, int layer, int bucket,
               int64_t seq, int64_t bytes)
{
    span s = {.rank = rank, .iter = iter, .stream = (uint8_t)st, .kind = (uint8_t)k, .layer = layer,
              .bucket = bucket, .seq = seq, .bytes = bytes, .start_ns = 111, .end_ns = 222};
    snprintf(s.name, sizeof s.name, "%s", name);
    return s;
}

static const span *find(const sink *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->got[i].name, name) == 0)
            return &s->got[i];
    return NULL;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* The decoder relies on libcupti walking a hand-built buffer with no GPU or driver. */
static void test_cupti_walks_buffer_without_gpu(void **state)
{
    (void)state;
    buf b = {0};
    add_ec(&b, 7, 42, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 7, 1, 100, 200, "k");
    add_memcpy(&b, 8, 0, 1, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 300, 400, 16);
    CUpti_Activity *r = NULL;
    size_t want[] = {0, sizeof(CUpti_ActivityExternalCorrelation),
                     sizeof(CUpti_ActivityExternalCorrelation) + sizeof(CUpti_ActivityKernel10)};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(cuptiActivityGetNextRecord(b.b, b.len, &r), CUPTI_SUCCESS);
        assert_int_equal((size_t)((uint8_t *)r - b.b), want[i]);
    }
    assert_int_equal(cuptiActivityGetNextRecord(b.b, b.len, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

static void test_matched_kernel_fields_and_times(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(16, 1000, &t), 0);
    span o = op(1, 3, STREAM_COMPUTE, SPAN_BACKWARD, "layer2 backward", 2, -1, -1, 4096);
    uint64_t id = cupti_op_table_add(t, &o);
    assert_int_equal(id, 1000);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 0, 0);
    /* CUPTI 1e12 ns is host 5e9 ns; the run started at host 4e9 ns. */
    cupti_clock c = {.cupti_ref = 1000000000000ull, .host_ref = 5000000000, .t0_ns = 4000000000};
    cupti_decode_set_clock(d, &c);
    buf b = {0};
    add_api(&b, CUPTI_ACTIVITY_KIND_RUNTIME, 7);
    add_ec(&b, 7, id, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 7, 13, 1000000000500ull, 1000000002500ull, "_Z4gemmPfS_");
    assert_int_equal(decode(d, &b, 0), 0);
    assert_int_equal(s.n, 1);
    const span *sp = &s.got[0];
    assert_int_equal(sp->rank, 1);
    assert_int_equal(sp->iter, 3);
    assert_int_equal(sp->stream, STREAM_COMPUTE);
    assert_int_equal(sp->kind, SPAN_BACKWARD);
    assert_int_equal(sp->layer, 2);
    assert_int_equal(sp->bucket, -1);
    assert_int_equal(sp->seq, -1);
    assert_int_equal(sp->bytes, 4096);
    assert_string_equal(sp->name, "layer2 backward");
    assert_int_equal(sp->start_ns, 1000000500);
    assert_int_equal(sp->end_ns, 1000002500);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.records, 3);
    assert_int_equal(st.skipped, 1);
    assert_int_equal(st.correlations, 1);
    assert_int_equal(st.spans, 1);
    assert_int_equal(st.matched, 1);
    assert_int_equal(st.inferred, 0);
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.bad_buffers, 0);
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

/* An allreduce op's NCCL kernel, a memcpy tied through its runtime correlation, an op with
 * no name (the kernel's is kept), and one op making two spans (a graph: one correlation). */
static void test_matched_copies_nccl_and_graph(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(0, 1, &t), 0);
    span ar = op(0, 5, STREAM_COMM, SPAN_ALLREDUCE, "bucket 1 allreduce", -1, 1, 9, 1 << 20);
    span cp = op(0, 5, STREAM_COMPUTE, SPAN_COPY_IN, "bucket 1 copy in", 4, 1, -1, 512);
    span anon = op(0, 5, STREAM_COMPUTE, SPAN_OPTIMIZER, "", -1, -1, -1, 0);
    uint64_t id_ar = cupti_op_table_add(t, &ar), id_cp = cupti_op_table_add(t, &cp),
             id_anon = cupti_op_table_add(t, &anon);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 0, 0);
    buf b = {0};
    add_ec(&b, 20, id_ar, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 20, 3, 1000, 5000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    add_ec(&b, 31, id_cp, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0); /* the runtime call */
    add_memcpy(&b, 30, 31, 2, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 600, 700, 512);
    add_ec(&b, 40, id_anon, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 40, 2, 800, 900, "sgd_step");
    add_kernel(&b, 40, 2, 950, 990, "sgd_step");
    assert_int_equal(decode(d, &b, 0), 0);
    assert_int_equal(s.n, 4);
    const span *a = find(&s, "bucket 1 allreduce");
    assert_non_null(a);
    assert_int_equal(a->kind, SPAN_ALLREDUCE);
    assert_int_equal(a->stream, STREAM_COMM);
    assert_int_equal(a->bucket, 1);
    assert_int_equal(a->seq, 9);
    assert_int_equal(a->bytes, 1 << 20);
    assert_int_equal(a->start_ns, 1000);
    assert_int_equal(a->end_ns, 5000);
    const span *c = find(&s, "bucket 1 copy in");
    assert_non_null(c);
    assert_int_equal(c->kind, SPAN_COPY_IN);
    assert_int_equal(c->layer, 4);
    assert_int_equal(c->start_ns, 600);
    assert_int_equal(c->end_ns, 700);
    assert_string_equal(s.got[2].name, "sgd_step");
    assert_int_equal(s.got[2].kind, SPAN_OPTIMIZER);
    assert_int_equal(s.got[2].start_ns, 800);
    assert_int_equal(s.got[3].kind, SPAN_OPTIMIZER);
    assert_int_equal(s.got[3].start_ns, 950);
    assert_int_equal(s.got[3].end_ns, 990);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.matched, 4);
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

static void test_out_of_order_correlation_across_buffers(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(0, 1, &t), 0);
    span f = op(0, 1, STREAM_COMPUTE, SPAN_FORWARD, "fwd", 0, -1, -1, 0);
    span g = op(0, 1, STREAM_COMPUTE, SPAN_BACKWARD, "bwd", 0, -1, -1, 0);
    span h = op(0, 2, STREAM_COMPUTE, SPAN_FORWARD, "fwd2", 1, -1, -1, 0);
    uint64_t idf = cupti_op_table_add(t, &f), idg = cupti_op_table_add(t, &g), idh = cupti_op_table_add(t, &h);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 0, 0);
    buf b1 = {0}, b2 = {0}, b3 = {0}, b4 = {0};
    add_kernel(&b1, 20, 1, 100, 200, "k_fwd");
    add_kernel(&b1, 21, 1, 300, 400, "k_bwd");
    assert_int_equal(decode(d, &b1, 0), 0);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(s.n, 0);
    assert_int_equal(st.pending, 2);
    add_ec(&b2, 21, idg, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_ec(&b2, 20, idf, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    assert_int_equal(decode(d, &b2, 0), 0);
    assert_int_equal(s.n, 2);
    const span *a = find(&s, "fwd"), *b = find(&s, "bwd");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->start_ns, 100);
    assert_int_equal(a->kind, SPAN_FORWARD);
    assert_int_equal(b->start_ns, 300);
    assert_int_equal(b->kind, SPAN_BACKWARD);
    /* The correlation first, the kernel in a later buffer. */
    add_ec(&b3, 30, idh, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    assert_int_equal(decode(d, &b3, 0), 0);
    assert_int_equal(s.n, 2);
    add_kernel(&b4, 30, 1, 500, 600, "k_fwd2");
    assert_int_equal(decode(d, &b4, 0), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.got[2].name, "fwd2");
    assert_int_equal(s.got[2].iter, 2);
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.matched, 3);
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.buffers, 4);
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

/* Kinds that make no span are skipped and counted; a kind libcupti does not know ends the
 * buffer, after what came before it. */
static void test_unknown_kinds_skipped_and_counted(void **state)
{
    (void)state;
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 0, 0, 0);
    buf b = {0};
    add_api(&b, CUPTI_ACTIVITY_KIND_DRIVER, 5);
    add_kernel(&b, 5, 1, 10, 20, "a");
    CUpti_ActivityOverhead3 o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    put(&b, &o, sizeof o);
    add_ec(&b, 6, 99, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1); /* someone else's id */
    add_kernel(&b, 6, 1, 30, 40, "b");
    assert_int_equal(decode(d, &b, 0), 0);
    cupti_decode_flush(d);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.records, 5);
    assert_int_equal(st.skipped, 3);
    assert_int_equal(st.correlations, 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.got[0].name, "a");
    assert_string_equal(s.got[1].name, "b");

    buf u = {0};
    add_kernel(&u, 7, 1, 50, 60, "c");
    CUpti_Activity bogus = {.kind = (CUpti_ActivityKind)0x7ff0};
    uint8_t pad[24] = {0};
    memcpy(pad, &bogus, sizeof bogus);
    put(&u, pad, sizeof pad);
    add_kernel(&u, 8, 1, 70, 80, "never");
    char err[256] = "";
    assert_int_equal(cupti_decode_buffer(d, u.b, u.len, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "unreadable"));
    cupti_decode_flush(d);
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.bad_buffers, 1);
    assert_int_equal(st.records, 6);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.got[2].name, "c");
    assert_null(find(&s, "never"));
    cupti_decode_destroy(d);
}

static void test_truncated_buffer_refused_without_overread(void **state)
{
    (void)state;
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 0, 0, 0);
    buf b = {0};
    add_ec(&b, 9, 1, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 9, 1, 10, 20, "cut");
    size_t ec = sizeof(CUpti_ActivityExternalCorrelation);
    /* Cut inside the kernel record, inside its kind field, and 2 bytes into it. */
    size_t cuts[] = {ec + 100, ec + 2, ec + 8, 2, ec + sizeof(CUpti_ActivityKernel10) - 8};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        guarded g = guard(b.b, cuts[i]);
        char err[256] = "";
        assert_int_equal(cupti_decode_buffer(d, g.data, cuts[i], 0, err, sizeof err), -1);
        assert_non_null(strstr(err, "truncated"));
        unguard(&g);
    }
    cupti_decode_flush(d);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(s.n, 0);
    assert_int_equal(st.bad_buffers, 5);
    assert_int_equal(st.correlations, 4); /* every cut but the 2-byte one keeps the correlation */

    /* A whole buffer ending at the page edge is read to its end and no further. */
    guarded g = guard(b.b, b.len);
    char err[256] = "";
    assert_int_equal(cupti_decode_buffer(d, g.data, b.len, 0, err, sizeof err), 0);
    unguard(&g);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.got[0].name, "cut");

    assert_int_equal(cupti_decode_buffer(d, NULL, 16, 0, err, sizeof err), -1);
    assert_int_equal(cupti_decode_buffer(d, NULL, 0, 0, err, sizeof err), 0);
    cupti_decode_destroy(d);
}

/* The pending store holds max_pending records; older ones leave it as inferred spans. */
static void test_pending_store_bounded(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(0, 1, &t), 0);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 4, 0);
    uint64_t ids[6];
    buf k = {0}, e = {0};
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "op%d", i);
        span o = op(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, name, i, -1, -1, 0);
        ids[i] = cupti_op_table_add(t, &o);
    }
    static const char *const knames[6] = {"k0", "k1", "k2", "k3", "k4", "k5"};
    for (int i = 0; i < 6; i++)
        add_kernel(&k, (uint32_t)(100 + i), 1, (uint64_t)(10 * i + 10), (uint64_t)(10 * i + 15), knames[i]);
    assert_int_equal(decode(d, &k, 0), 0);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.overflow, 2);
    assert_int_equal(st.pending, 4);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.got[0].name, "k0"); /* the oldest go first */
    assert_string_equal(s.got[1].name, "k1");
    assert_int_equal(s.got[0].iter, -1);
    assert_int_equal(s.got[1].start_ns, 20);
    for (int i = 0; i < 6; i++)
        add_ec(&e, (uint32_t)(100 + i), ids[i], CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    assert_int_equal(decode(d, &e, 0), 0);
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.matched, 4);
    assert_int_equal(st.inferred, 2);
    assert_int_equal(st.pending, 0);
    assert_int_equal(s.n, 6);
    for (int i = 2; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "op%d", i);
        const span *sp = find(&s, name);
        assert_non_null(sp);
        assert_int_equal(sp->layer, i);
        assert_int_equal(sp->start_ns, 10 * i + 10);
    }
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

/* Correlations live in corr_slots slots: one reused by a later call is forgotten. */
static void test_correlation_slots_bounded(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(0, 1, &t), 0);
    span o = op(0, 0, STREAM_COMPUTE, SPAN_FORWARD, "old", 0, -1, -1, 0);
    span n = op(0, 0, STREAM_COMPUTE, SPAN_FORWARD, "new", 1, -1, -1, 0);
    uint64_t ido = cupti_op_table_add(t, &o), idn = cupti_op_table_add(t, &n);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 0, 4);
    buf b = {0};
    add_ec(&b, 1, ido, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_ec(&b, 5, idn, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0); /* 5 % 4 == 1 % 4 */
    add_kernel(&b, 1, 1, 10, 20, "k_old");
    add_kernel(&b, 5, 1, 30, 40, "k_new");
    assert_int_equal(decode(d, &b, 0), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.got[0].name, "new");
    cupti_decode_flush(d);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.got[1].name, "k_old");
    assert_int_equal(s.got[1].iter, -1);
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

static void test_inferred_kinds_and_stream_mapping(void **state)
{
    (void)state;
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 3, 0, 0);
    assert_int_equal(cupti_decode_map_stream(d, 5, 2, STREAM_COMM), 0);
    assert_int_equal(cupti_decode_map_stream(d, 6, 2, STREAM_COMPUTE), 0);
    assert_int_equal(cupti_decode_map_stream(d, 7, 2, STREAM_COUNT), -1);
    assert_int_equal(cupti_decode_map_stream(d, 7, -1, STREAM_COMM), -1);
    buf b = {0};
    add_kernel(&b, 1, 5, 10, 20, "reduce_kernel");     /* on the mapped comm stream */
    add_kernel(&b, 2, 6, 30, 40, "gemm");              /* mapped compute stream */
    add_kernel(&b, 3, 99, 50, 60, "ncclKernel_Broadcast_RING_LL"); /* unmapped, NCCL's */
    add_kernel(&b, 4, 99, 70, 80, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorage");
    add_kernel(&b, 5, 99, 90, 95, "NCCLdevkernel_lowercase_test");
    add_kernel(&b, 6, 99, 100, 110, "_Z4relu");
    add_kernel(&b, 7, 99, 120, 130, "_Z12notnccl");
    add_memcpy(&b, 8, 0, 99, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 140, 150, 64);
    add_memcpy(&b, 9, 0, 6, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 160, 170, 128);
    add_memset(&b, 10, 5, 180, 190, 256);
    assert_int_equal(decode(d, &b, 0), 0);
    assert_int_equal(s.n, 0);
    cupti_decode_flush(d);
    assert_int_equal(s.n, 10);
    struct {
        const char *name;
        int rank;
        span_stream stream;
        span_kind kind;
        int64_t bytes;
    } want[] = {
        {"reduce_kernel", 2, STREAM_COMM, SPAN_ALLREDUCE, 0},
        {"gemm", 2, STREAM_COMPUTE, SPAN_FORWARD, 0},
        {"ncclKernel_Broadcast_RING_LL", 3, STREAM_COMM, SPAN_ALLREDUCE, 0},
        {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorage", 3, STREAM_COMM, SPAN_ALLREDUCE, 0},
        {"NCCLdevkernel_lowercase_test", 3, STREAM_COMM, SPAN_ALLREDUCE, 0},
        {"_Z4relu", 3, STREAM_COMPUTE, SPAN_FORWARD, 0},
        {"_Z12notnccl", 3, STREAM_COMPUTE, SPAN_FORWARD, 0},
        {"memcpy DtoH", 3, STREAM_COMPUTE, SPAN_COPY_OUT, 64},
        {"memcpy HtoD", 2, STREAM_COMPUTE, SPAN_COPY_IN, 128},
        {"memset", 2, STREAM_COMM, SPAN_COPY_IN, 256},
    };
    for (int i = 0; i < 10; i++) {
        const span *sp = &s.got[i];
        assert_string_equal(sp->name, want[i].name);
        assert_int_equal(sp->rank, want[i].rank);
        assert_int_equal(sp->stream, want[i].stream);
        assert_int_equal(sp->kind, want[i].kind);
        assert_int_equal(sp->bytes, want[i].bytes);
        assert_int_equal(sp->iter, -1);
        assert_int_equal(sp->layer, -1);
        assert_int_equal(sp->bucket, -1);
        assert_int_equal(sp->seq, -1);
    }
    /* A stream mapped again takes its new place. */
    assert_int_equal(cupti_decode_map_stream(d, 5, 4, STREAM_COMPUTE), 0);
    buf c = {0};
    add_kernel(&c, 11, 5, 200, 210, "reduce_kernel2");
    assert_int_equal(decode(d, &c, 0), 0);
    cupti_decode_flush(d);
    assert_int_equal(s.n, 11);
    assert_int_equal(s.got[10].rank, 4);
    assert_int_equal(s.got[10].stream, STREAM_COMPUTE);
    assert_int_equal(s.got[10].kind, SPAN_FORWARD);
    /* The map holds 64 streams. */
    int ok = 0;
    for (uint32_t i = 1000; i < 1100; i++)
        ok += cupti_decode_map_stream(d, i, 0, STREAM_COMPUTE) == 0;
    assert_int_equal(ok, 64 - 2);
    cupti_decode_destroy(d);
}

static void test_name_truncation(void **state)
{
    (void)state;
    char ascii[200], exact[SPAN_NAME], utf[SPAN_NAME + 8];
    memset(ascii, 'a', sizeof ascii - 1);
    ascii[sizeof ascii - 1] = '\0';
    memset(exact, 'b', SPAN_NAME - 1);
    exact[SPAN_NAME - 1] = '\0';
    /* 93 ASCII bytes, then "€" (3 bytes) straddling the 95-byte limit, then more. */
    memset(utf, 'c', 93);
    memcpy(utf + 93, "\xe2\x82\xac", 3);
    memcpy(utf + 96, "dd", 3);
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 0, 0, 0);
    buf b = {0};
    add_kernel(&b, 1, 1, 10, 20, ascii);
    add_kernel(&b, 2, 1, 10, 20, exact);
    add_kernel(&b, 3, 1, 10, 20, utf);
    add_kernel(&b, 4, 1, 10, 20, NULL);
    assert_int_equal(decode(d, &b, 0), 0);
    cupti_decode_flush(d);
    assert_int_equal(s.n, 4);
    assert_int_equal(strlen(s.got[0].name), SPAN_NAME - 1);
    assert_memory_equal(s.got[0].name, ascii, SPAN_NAME - 1);
    assert_string_equal(s.got[1].name, exact);
    assert_int_equal(strlen(s.got[2].name), 93);
    assert_memory_equal(s.got[2].name, utf, 93);
    assert_string_equal(s.got[3].name, "kernel");
    cupti_decode_destroy(d);
}

static void test_untimed_and_stale(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(2, 50, &t), 0);
    span o = op(0, 0, STREAM_COMPUTE, SPAN_FORWARD, "x", 0, -1, -1, 0);
    uint64_t first = cupti_op_table_add(t, &o);
    cupti_op_table_add(t, &o);
    cupti_op_table_add(t, &o); /* forgets `first` */
    span got;
    assert_int_equal(cupti_op_table_get(t, first, &got), 0);
    assert_int_equal(cupti_op_table_get(t, first + 2, &got), 1);
    sink s = {0};
    cupti_decode *d = make(&s, t, 0, 0, 0);
    buf b = {0};
    add_ec(&b, 1, first, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 1, 1, 10, 20, "forgotten op");
    add_ec(&b, 2, 12345, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    add_kernel(&b, 2, 1, 30, 40, "never an op");
    add_kernel(&b, 3, 1, 0, 0, "no timing");
    add_kernel(&b, 4, 1, 60, 50, "ends before start");
    assert_int_equal(decode(d, &b, 0), 0);
    cupti_decode_flush(d);
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.untimed, 2);
    assert_int_equal(st.stale, 2);
    assert_int_equal(st.inferred, 2);
    assert_int_equal(st.matched, 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.got[0].name, "forgotten op");
    assert_int_equal(s.got[0].iter, -1);
    cupti_decode_destroy(d);
    cupti_op_table_destroy(t);
}

static void test_dropped_counts_accumulate(void **state)
{
    (void)state;
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 0, 0, 0);
    buf empty = {0}, one = {0};
    add_kernel(&one, 1, 1, 10, 20, "k");
    assert_int_equal(decode(d, &empty, 5), 0);
    assert_int_equal(decode(d, &one, 3), 0);
    char err[64];
    assert_int_equal(cupti_decode_buffer(d, NULL, 8, 4, err, sizeof err), -1); /* still counted */
    cupti_decode_stats st;
    cupti_decode_get_stats(d, &st);
    assert_int_equal(st.dropped, 12);
    assert_int_equal(st.buffers, 3);
    assert_int_equal(st.bad_buffers, 1);
    assert_int_equal(st.records, 1);
    cupti_decode_destroy(d);
}

static void test_create_refuses_bad_config(void **state)
{
    (void)state;
    cupti_decode *d = (cupti_decode *)&d;
    char err[256] = "";
    cupti_decode_config cfg = {.emit = NULL};
    assert_int_equal(cupti_decode_create(&cfg, &d, err, sizeof err), -1);
    assert_null(d);
    assert_non_null(strstr(err, "sink"));
    sink s = {0};
    cfg = (cupti_decode_config){.emit = collect, .user = &s, .max_pending = (size_t)1 << 30};
    assert_int_equal(cupti_decode_create(&cfg, &d, err, sizeof err), -1);
    cupti_op_table *t = (cupti_op_table *)&t;
    assert_int_equal(cupti_op_table_create(4, 0, &t), -1);
    assert_null(t);
}

static void test_clock_sync_picks_tightest_reading(void **state)
{
    (void)state;
    cupti_clock_read r[] = {
        {.cupti_ns = 2000000, .host_before_ns = 500, .host_after_ns = 700},   /* bracket 200 */
        {.cupti_ns = 3000000, .host_before_ns = 1000, .host_after_ns = 1020}, /* bracket 20: best */
        {.cupti_ns = 4000000, .host_before_ns = 2000, .host_after_ns = 1990}, /* backwards: ignored */
        {.cupti_ns = 0, .host_before_ns = 3000, .host_after_ns = 3001},       /* no CUPTI time: ignored */
        {.cupti_ns = 5000000, .host_before_ns = 4000, .host_after_ns = 4050}, /* bracket 50 */
    };
    cupti_clock c;
    assert_int_equal(cupti_clock_sync(&c, r, 5, 400), 0);
    assert_int_equal(c.cupti_ref, 3000000);
    assert_int_equal(c.host_ref, 1010);
    assert_int_equal(c.bracket_ns, 20);
    /* span_ns = cupti - cupti_ref + host_ref - t0 */
    assert_int_equal(cupti_clock_to_run(&c, 3000000), 610);
    assert_int_equal(cupti_clock_to_run(&c, 3001000), 1610);
    assert_int_equal(cupti_clock_to_run(&c, 2999000), -390); /* before the reference */
    cupti_clock before = c;
    assert_int_equal(cupti_clock_sync(&c, r + 2, 2, 0), -1);
    assert_int_equal(cupti_clock_sync(&c, r, 0, 0), -1);
    assert_memory_equal(&c, &before, sizeof c);
    /* CUPTI's default clock is CLOCK_REALTIME: epoch-sized offsets stay exact. */
    cupti_clock_read epoch = {.cupti_ns = 1790000000123456789ull, .host_before_ns = 86400000000000,
                              .host_after_ns = 86400000000100};
    assert_int_equal(cupti_clock_sync(&c, &epoch, 1, 86300000000000), 0);
    assert_int_equal(cupti_clock_to_run(&c, 1790000000123456789ull + 7), 100000000050 + 7);
    /* Absurd inputs saturate instead of overflowing. */
    assert_int_equal(cupti_clock_to_run(&c, UINT64_MAX), INT64_MAX);
}

static void test_clock_drift_fit(void **state)
{
    (void)state;
    cupti_clock_read start = {.cupti_ns = 1000000000, .host_before_ns = 5000000000, .host_after_ns = 5000000000};
    cupti_clock c;
    assert_int_equal(cupti_clock_sync(&c, &start, 1, 4000000000), 0);
    /* 10 s of CUPTI time took 10 s + 100 us on the host: 10 ppm. */
    cupti_clock_read end[] = {
        {.cupti_ns = 11000000000, .host_before_ns = 15000100000 - 500, .host_after_ns = 15000100000 + 500},
        {.cupti_ns = 11000000000, .host_before_ns = 15000100000 - 10, .host_after_ns = 15000100000 + 10},
    };
    assert_int_equal(cupti_clock_fit(&c, end, 2), 0);
    assert_true(c.drift > 0.99e-5 && c.drift < 1.01e-5);
    assert_int_equal(cupti_clock_to_run(&c, 1000000000), 1000000000);
    assert_int_equal(cupti_clock_to_run(&c, 6000000000), 1000000000 + 5000000000 + 50000);
    assert_int_equal(cupti_clock_to_run(&c, 11000000000), 1000000000 + 10000000000 + 100000);
    assert_int_equal(cupti_clock_to_run(&c, 21000000000), 1000000000 + 20000000000 + 200000); /* extrapolated */
    /* Refused, leaving the clock as it was: a point before the reference, a stepped clock. */
    cupti_clock before = c;
    cupti_clock_read early = {.cupti_ns = 900000000, .host_before_ns = 4900000000, .host_after_ns = 4900000000};
    assert_int_equal(cupti_clock_fit(&c, &early, 1), -1);
    cupti_clock_read stepped = {.cupti_ns = 11000000000, .host_before_ns = 15100000000, .host_after_ns = 15100000000};
    assert_int_equal(cupti_clock_fit(&c, &stepped, 1), -1);
    assert_int_equal(cupti_clock_fit(&c, NULL, 0), -1);
    assert_memory_equal(&c, &before, sizeof c);
}

/* The decoder converts at emission, with the clock current then. */
static void test_decoder_applies_clock_with_drift(void **state)
{
    (void)state;
    sink s = {0};
    cupti_decode *d = make(&s, NULL, 0, 0, 0);
    cupti_clock c;
    cupti_clock_read a = {.cupti_ns = 1000000, .host_before_ns = 2000000, .host_after_ns = 2000000};
    cupti_clock_read b = {.cupti_ns = 1001000000, .host_before_ns = 1002001000, .host_after_ns = 1002001000};
    assert_int_equal(cupti_clock_sync(&c, &a, 1, 1500000), 0);
    assert_int_equal(cupti_clock_fit(&c, &b, 1), 0); /* 1 ppm */
    buf k = {0};
    add_kernel(&k, 1, 1, 501000000, 501000100, "k");
    assert_int_equal(decode(d, &k, 0), 0);
    cupti_decode_set_clock(d, &c);
    cupti_decode_flush(d);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.got[0].start_ns, 500000 + 500000000 + 500);
    assert_int_equal(s.got[0].end_ns, 500000 + 500000100 + 500);
    cupti_decode_destroy(d);
}

typedef struct {
    cupti_op_table *t;
    int rank;
    uint64_t ids[2000];
} adder;

static void *add_many(void *arg)
{
    adder *a = arg;
    for (int i = 0; i < 2000; i++) {
        span o = op(a->rank, i, STREAM_COMPUTE, SPAN_FORWARD, "x", i, -1, -1, 0);
        a->ids[i] = cupti_op_table_add(a->t, &o);
    }
    return NULL;
}

/* Ranks of one process register ops from their own threads. */
static void test_op_table_threads(void **state)
{
    (void)state;
    cupti_op_table *t;
    assert_int_equal(cupti_op_table_create(4000, 7, &t), 0);
    adder a[2] = {{.t = t, .rank = 0}, {.t = t, .rank = 1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, add_many, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    char *seen = calloc(4000, 1);
    assert_non_null(seen);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 2000; i++) {
            uint64_t id = a[r].ids[i];
            assert_true(id >= 7 && id < 4007);
            assert_int_equal(seen[id - 7], 0);
            seen[id - 7] = 1;
            span got;
            assert_int_equal(cupti_op_table_get(t, id, &got), 1);
            assert_int_equal(got.rank, r);
            assert_int_equal(got.iter, i);
        }
    free(seen);
    cupti_op_table_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cupti_walks_buffer_without_gpu),
        cmocka_unit_test(test_matched_kernel_fields_and_times),
        cmocka_unit_test(test_matched_copies_nccl_and_graph),
        cmocka_unit_test(test_out_of_order_correlation_across_buffers),
        cmocka_unit_test(test_unknown_kinds_skipped_and_counted),
        cmocka_unit_test(test_truncated_buffer_refused_without_overread),
        cmocka_unit_test(test_pending_store_bounded),
        cmocka_unit_test(test_correlation_slots_bounded),
        cmocka_unit_test(test_inferred_kinds_and_stream_mapping),
        cmocka_unit_test(test_name_truncation),
        cmocka_unit_test(test_untimed_and_stale),
        cmocka_unit_test(test_dropped_counts_accumulate),
        cmocka_unit_test(test_create_refuses_bad_config),
        cmocka_unit_test(test_clock_sync_picks_tightest_reading),
        cmocka_unit_test(test_clock_drift_fit),
        cmocka_unit_test(test_decoder_applies_clock_with_drift),
        cmocka_unit_test(test_op_table_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
