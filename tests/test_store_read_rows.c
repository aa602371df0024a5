/* test_store_read_rows.c — unit tests of the read API the reports use
 * (profiler/store_read_run_row.h, store_read_stats.h, store_read_span_rows.h,
 * store_read_import.h, and what store_read_run.h, store_read_layout.h and
 * store_read_spans.h give them).
 *
 * Contract checked: a small store written with the store's own writes reads back the
 * same: a run's whole row (a column an older schema lacks reads as NULL), the list of
 * run ids, the complete points of sweeps, a read transaction begun only where none is
 * open, spans whole with each filter's narrowing and NULL columns said, the ranks with
 * spans, the bucket assignments, a rank's iterations, a kind's mean span, the
 * collectives' arrivals in order, a run's statistics alike whether stored or computed
 * through the views, and an import's source files and HTA figures.  A callback's
 * nonzero return stops an iteration and comes back.  Each test gets its own temporary
 * database file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "profiler/store.h"
#include "profiler/store_read_import.h"
#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_run_row.h"
#include "profiler/store_read_span_rows.h"
#include "profiler/store_read_spans.h"
#include "profiler/store_read_stats.h"
#include "tmp_store.h"
#include "two_rank_store.h"

/* Each test gets a fresh store (tmp_store.h). */
typedef store_fixture fixture;

static void finish(fixture *f, int64_t run)
{
    if (store_finish_run(f->st, run, NULL, f->err, sizeof f->err) != 0)
        fail_msg("store_finish_run: %s", f->err);
}

/* Two ranks, iterations 0 to 2: forward (layer 0, named), backward, a copy into each of
 * two buckets, the buckets' allreduces, and a host wait on rank 1 in iteration 1. */
static int64_t write_iterations(fixture *f)
{
    int64_t run = two_rank_run(f, "spans", 25);
    span s[64];
    int64_t seq;
    int n = two_rank_iterations(s, &seq);
    for (int i = 0; i < n; i++)
        if (s[i].kind == SPAN_FORWARD) { /* the forwards are layer 0's, named */
            s[i].layer = 0;
            snprintf(s[i].name, sizeof s[i].name, "fc1");
        }
    s[n++] = mk(1, 1, STREAM_HOST, SPAN_WAIT, -1, -1, -1, 1500, 1600);
    assert_int_equal(store_write_spans(f->st, run, s, (size_t)n, f->err, sizeof f->err), 0);
    return run;
}

static void test_run_row(void **state)
{
    fixture *f = *state;
    int64_t first = two_rank_run(f, "first", 25), run = two_rank_run(f, "second", 25);
    assert_int_equal(store_set_run_provenance(f->st, run, "{\"ddp.bucket_cap_mb\": \"35\"}", first, 1, f->err,
                                              sizeof f->err),
                     0);
    int64_t zero = 123;
    assert_int_equal(store_set_run_source(f->st, run, "nccl", &zero, "a note", f->err, sizeof f->err), 0);
    store_run_row row;
    bool found = false;
    assert_int_equal(store_read_run_row(f->st, run, &row, &found, f->err, sizeof f->err), 0);
    assert_true(found);
    assert_int_equal(row.id, run);
    assert_string_equal(row.name, "second");
    assert_string_equal(row.status, "running");
    assert_null(row.error);
    assert_string_equal(row.backend, "sim");
    assert_string_equal(row.model, "mlp");
    assert_string_equal(row.source, "test.ini");
    assert_string_equal(row.scenario, "[run]\nworld_size = 2\n");
    assert_non_null(row.started_at);
    assert_null(row.finished_at);
    assert_null(row.placement);
    assert_string_equal(row.clock_sync, "nccl");
    assert_string_equal(row.notes, "a note");
    assert_string_equal(row.overrides, "{\"ddp.bucket_cap_mb\": \"35\"}");
    assert_int_equal(row.world_size, 2);
    assert_int_equal(row.iterations, 3);
    assert_int_equal(row.warmup, 1);
    assert_int_equal(row.total_params, 1000);
    assert_true(fabs(row.bucket_cap_mb - 25) < 1e-12);
    assert_int_equal(row.verified, 1);
    assert_int_equal(row.sweep, first);
    store_run_row_free(&row);
    assert_null(row.name);

    /* Unset provenance reads as not recorded. */
    assert_int_equal(store_read_run_row(f->st, first, &row, &found, f->err, sizeof f->err), 0);
    assert_true(found);
    assert_null(row.overrides);
    assert_int_equal(row.verified, -1);
    assert_int_equal(row.sweep, -1);
    store_run_row_free(&row);

    /* A file before schema 7: the columns it lacks read as NULL. */
    assert_int_equal(sqlite3_exec(store_db(f->st),
                                  "ALTER TABLE run DROP COLUMN overrides; ALTER TABLE run DROP COLUMN verified;"
                                  " ALTER TABLE run DROP COLUMN sweep;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(store_read_run_row(f->st, run, &row, &found, f->err, sizeof f->err), 0);
    assert_true(found);
    assert_string_equal(row.name, "second");
    assert_null(row.overrides);
    assert_int_equal(row.verified, -1);
    assert_int_equal(row.sweep, -1);
    store_run_row_free(&row);

    assert_int_equal(store_read_run_row(f->st, run + 9, &row, &found, f->err, sizeof f->err), 0);
    assert_false(found);
    assert_null(row.name);
    store_run_row_free(&row);
}

typedef struct {
    int64_t sweep[8], run[8];
    int n, stop_after;
} points;

static int take_point(int64_t sweep, int64_t run_id, void *ctx)
{
    points *p = ctx;
    p->sweep[p->n] = sweep;
    p->run[p->n++] = run_id;
    return p->n == p->stop_after ? 42 : 0;
}

static void test_run_lists(void **state)
{
    fixture *f = *state;
    int64_t *ids = (int64_t *)f; /* not NULL, to see it cleared */
    size_t n = 9;
    assert_int_equal(store_read_run_id_list(f->st, &ids, &n, f->err, sizeof f->err), 0);
    assert_null(ids);
    assert_int_equal(n, 0);

    /* Sweep a: three points, one of them failed; sweep d: one point only. */
    int64_t a = two_rank_run(f, "a", 25), b = two_rank_run(f, "b", 25), c = two_rank_run(f, "c", 25), d = two_rank_run(f, "d", 25);
    for (int64_t id = a; id <= d; id++)
        assert_int_equal(store_set_run_provenance(f->st, id, NULL, id == d ? d : a, -1, f->err, sizeof f->err), 0);
    finish(f, a);
    finish(f, c);
    finish(f, d);
    assert_int_equal(store_finish_run(f->st, b, "broke", f->err, sizeof f->err), 0);

    assert_int_equal(store_read_run_id_list(f->st, &ids, &n, f->err, sizeof f->err), 0);
    assert_int_equal(n, 4);
    assert_true(ids[0] == a && ids[1] == b && ids[2] == c && ids[3] == d);
    free(ids);

    points p = {.stop_after = -1};
    assert_int_equal(store_each_sweep_point(f->st, take_point, &p, f->err, sizeof f->err), 0);
    assert_int_equal(p.n, 2);
    assert_true(p.sweep[0] == a && p.run[0] == a && p.sweep[1] == a && p.run[1] == c);
    points stop = {.stop_after = 1};
    assert_int_equal(store_each_sweep_point(f->st, take_point, &stop, f->err, sizeof f->err), 42);
    assert_int_equal(stop.n, 1);

    /* A read transaction is begun only where none is open. */
    bool began = false, nested = true;
    assert_int_equal(store_begin_read_unless_open(f->st, &began, f->err, sizeof f->err), 0);
    assert_true(began);
    assert_int_equal(store_begin_read_unless_open(f->st, &nested, f->err, sizeof f->err), 0);
    assert_false(nested);
    assert_int_equal(store_end_read(f->st, f->err, sizeof f->err), 0);
    assert_true(sqlite3_get_autocommit(store_db(f->st)));
}

typedef struct {
    store_span_row v[64];
    char name[64][32];
    int n, stop_after;
} span_rows;

static int take_span(const store_span_row *s, void *ctx)
{
    span_rows *l = ctx;
    l->v[l->n] = *s;
    snprintf(l->name[l->n], sizeof l->name[0], "%s", s->name ? s->name : "(none)");
    l->v[l->n].stream = l->v[l->n].kind = l->v[l->n].name = NULL; /* borrowed for the call only */
    l->n++;
    return l->n == l->stop_after ? 7 : 0;
}

static void test_span_rows(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    span_rows *l = calloc(1, sizeof *l);
    assert_non_null(l);
    l->stop_after = -1;
    assert_int_equal(store_each_span(f->st, run, &STORE_SPAN_FILTER_ALL, take_span, l, f->err, sizeof f->err), 0);
    assert_int_equal(l->n, 37);

    /* Rank 1's iteration 1, in the table's order (by start). */
    store_span_filter one = {.rank = 1, .iter = 1, .iter_from = -1};
    l->n = 0;
    assert_int_equal(store_each_span(f->st, run, &one, take_span, l, f->err, sizeof f->err), 0);
    assert_int_equal(l->n, 7);
    const store_span_row *fwd = &l->v[0];
    assert_true(fwd->rank == 1 && fwd->iter == 1 && fwd->start_ns == 1010 && fwd->end_ns == 1110);
    assert_string_equal(l->name[0], "fc1");
    assert_true(fwd->has_layer && fwd->layer == 0);
    assert_false(fwd->has_bucket || fwd->has_seq);
    assert_true(fwd->has_bytes && fwd->bytes == 0); /* 0 is a value, only a negative one is none */
    const store_span_row *ar = &l->v[3];
    assert_int_equal(ar->start_ns, 1010 + 160);
    assert_true(ar->has_bucket && ar->bucket == 0 && ar->has_seq && ar->seq == 3 && ar->bytes == 64);
    const store_span_row *wait = &l->v[6];
    assert_int_equal(wait->start_ns, 1500);
    assert_false(wait->has_bytes || wait->has_layer);
    assert_int_equal(wait->bytes, 0);

    /* Measured iterations on the device streams: the host's wait is left out. */
    store_span_filter measured = {.rank = -1, .iter = -1, .iter_from = 1, .device_streams = true};
    l->n = 0;
    assert_int_equal(store_each_span(f->st, run, &measured, take_span, l, f->err, sizeof f->err), 0);
    assert_int_equal(l->n, 24);

    l->n = 0;
    l->stop_after = 2;
    assert_int_equal(store_each_span(f->st, run, &STORE_SPAN_FILTER_ALL, take_span, l, f->err, sizeof f->err), 7);
    assert_int_equal(l->n, 2);
    free(l);
}

typedef struct {
    int version[4], nbuckets[4], n;
    store_bucket_row b[8];
    int nb;
} bucket_lists;

static int take_version(int version, int nbuckets, void *ctx)
{
    bucket_lists *l = ctx;
    l->version[l->n] = version;
    l->nbuckets[l->n++] = nbuckets;
    return 0;
}

static int take_bucket(const store_bucket_row *b, void *ctx)
{
    bucket_lists *l = ctx;
    l->b[b->idx] = *b;
    l->nb++;
    return 0;
}

static void test_ranks_and_buckets(void **state)
{
    fixture *f = *state;
    int64_t run = two_rank_run(f, "layout", 25);
    int *ranks = NULL;
    size_t n = 9;
    /* The rank table's two ranks, and rank 3 by its spans alone. */
    span s = mk(3, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 10);
    assert_int_equal(store_write_spans(f->st, run, &s, 1, f->err, sizeof f->err), 0);
    assert_int_equal(store_read_span_ranks(f->st, run, &ranks, &n, f->err, sizeof f->err), 0);
    assert_int_equal(n, 3);
    assert_true(ranks[0] == 0 && ranks[1] == 1 && ranks[2] == 3);
    free(ranks);

    int p0[] = {0, 1}, p1[] = {2}, q0[] = {0}, q1[] = {1}, q2[] = {2};
    store_bucket v0[] = {{800, 1000, 2, p0}, {400, 1000, 1, p1}};
    store_bucket v1[] = {{400, 1000, 1, q0}, {0, 1000, 1, q1}, {400, 1000, 1, q2}};
    assert_int_equal(store_write_buckets(f->st, run, 0, v0, 2, f->err, sizeof f->err), 0);
    assert_int_equal(store_write_buckets(f->st, run, 1, v1, 3, f->err, sizeof f->err), 0);
    bucket_lists l = {0};
    assert_int_equal(store_each_bucket_version(f->st, run, take_version, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 2);
    assert_true(l.version[0] == 0 && l.nbuckets[0] == 2 && l.version[1] == 1 && l.nbuckets[1] == 3);
    assert_int_equal(store_each_bucket(f->st, run, 0, take_bucket, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.nb, 2);
    assert_true(l.b[0].nbytes == 800 && l.b[0].nparams == 2 && l.b[1].nbytes == 400 && l.b[1].nparams == 1);
    l.nb = 0;
    assert_int_equal(store_each_bucket(f->st, run, 5, take_bucket, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.nb, 0);
}

typedef struct {
    store_span_group g[8];
    store_collective_arrival a[32];
    int ng, na;
} span_lists;

static int take_group(const store_span_group *g, void *ctx)
{
    span_lists *l = ctx;
    l->g[l->ng++] = *g;
    return 0;
}

static int take_arrival(const store_collective_arrival *a, void *ctx)
{
    span_lists *l = ctx;
    l->a[l->na++] = *a;
    return 0;
}

static void test_iterations_and_arrivals(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    span_lists l = {0};
    assert_int_equal(store_each_rank_iteration(f->st, run, 1, take_group, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.ng, 3);
    for (int it = 0; it < 3; it++) {
        assert_true(l.g[it].rank == 1 && l.g[it].iter == it && l.g[it].bucket == -1);
        assert_int_equal(l.g[it].first_start_ns, 1000 * it + 10);
        assert_int_equal(l.g[it].last_end_ns, it == 1 ? 1600 : 1000 * it + 500);
    }

    int count = -1;
    double mean = 0;
    assert_int_equal(store_read_span_kind_mean(f->st, run, "wait", &count, &mean, f->err, sizeof f->err), 0);
    assert_int_equal(count, 1);
    assert_true(fabs(mean - 100) < 1e-9);
    assert_int_equal(store_read_span_kind_mean(f->st, run, "profiler_step", &count, &mean, f->err, sizeof f->err),
                     0);
    assert_int_equal(count, 0);
    assert_true(isnan(mean));

    /* Per collective, the last arrival first: rank 1 arrives 10 ns after rank 0. */
    assert_int_equal(store_each_collective_arrival(f->st, run, take_arrival, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.na, 12);
    for (int i = 0; i < l.na; i += 2) {
        assert_int_equal(l.a[i].seq, 1 + i / 2);
        assert_int_equal(l.a[i + 1].seq, l.a[i].seq);
        assert_true(l.a[i].rank == 1 && l.a[i + 1].rank == 0);
        assert_int_equal(l.a[i].arrival_ns - l.a[i + 1].arrival_ns, 10);
    }
}

/* A run's statistics of each kind, read one way. */
typedef struct {
    store_iteration_stat its[8];
    store_bucket_collectives coll[4];
    store_bucket_ready ready[16];
    int nits, ncoll, nready;
} stats;

static int take_its(const store_iteration_stat *w, void *ctx)
{
    stats *s = ctx;
    s->its[s->nits++] = *w;
    return 0;
}

static int take_coll(const store_bucket_collectives *c, void *ctx)
{
    stats *s = ctx;
    s->coll[c->bucket] = *c;
    s->ncoll++;
    return 0;
}

static int take_ready(const store_bucket_ready *b, void *ctx)
{
    stats *s = ctx;
    s->ready[s->nready++] = *b;
    return 0;
}

static void read_stats(fixture *f, int64_t run, store_stats_from from, stats *s)
{
    memset(s, 0, sizeof *s);
    assert_int_equal(store_each_iteration_stat(f->st, run, from, take_its, s, f->err, sizeof f->err), 0);
    assert_int_equal(store_each_bucket_collectives(f->st, run, from, 1, take_coll, s, f->err, sizeof f->err), 0);
    assert_int_equal(store_each_bucket_ready(f->st, run, from, take_ready, s, f->err, sizeof f->err), 0);
}

static int cmp_ready(const void *a, const void *b)
{
    const store_bucket_ready *x = a, *y = b;
    int64_t kx = ((int64_t)x->bucket * 16 + x->rank) * 16 + x->iter, ky = ((int64_t)y->bucket * 16 + y->rank) * 16 + y->iter;
    return (kx > ky) - (kx < ky);
}

static void test_stats_stored_and_viewed(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    bool yes = true;
    assert_int_equal(store_run_has_stored_stats(f->st, run, &yes, f->err, sizeof f->err), 0);
    assert_false(yes); /* still recording */
    finish(f, run);
    assert_int_equal(store_run_has_stored_stats(f->st, run, &yes, f->err, sizeof f->err), 0);
    assert_true(yes);

    stats *stored = calloc(1, sizeof *stored), *viewed = calloc(1, sizeof *viewed);
    assert_true(stored && viewed);
    read_stats(f, run, STORE_STATS_STORED, stored);
    read_stats(f, run, STORE_STATS_VIEWS, viewed);

    /* Ordered by rank then iteration, the same either way. */
    assert_int_equal(stored->nits, 6);
    assert_int_equal(viewed->nits, 6);
    for (int i = 0; i < 6; i++) {
        const store_iteration_stat *a = &stored->its[i], *b = &viewed->its[i];
        assert_true(a->rank == i / 3 && a->iter == i % 3 && a->warmup == (a->iter < 1));
        assert_true(a->rank == b->rank && a->iter == b->iter && a->warmup == b->warmup);
        assert_true(a->step_ns == b->step_ns && a->compute_ns == b->compute_ns && a->comm_ns == b->comm_ns &&
                    a->overlap_ns == b->overlap_ns && a->exposed_comm_ns == b->exposed_comm_ns &&
                    a->wait_ns == b->wait_ns && a->step_start_ns == b->step_start_ns);
        assert_int_equal(a->step_start_ns, 1000 * a->iter + 10 * a->rank);
    }
    /* Iterations 1 and 2: each bucket's two collectives; rank 1 arrives 10 ns late. */
    assert_int_equal(stored->ncoll, 2);
    assert_int_equal(viewed->ncoll, 2);
    for (int b = 0; b < 2; b++) {
        const store_bucket_collectives *a = &stored->coll[b], *v = &viewed->coll[b];
        assert_int_equal(a->collectives, 2);
        assert_int_equal(v->collectives, 2);
        assert_true(fabs(a->arrival_skew_ns - 10) < 1e-9 && fabs(v->arrival_skew_ns - 10) < 1e-9);
        assert_true(fabs(a->transfer_ns - v->transfer_ns) < 1e-9 && fabs(a->bytes - v->bytes) < 1e-9);
        assert_true(fabs(a->bytes - (b ? 128 : 64)) < 1e-9);
        assert_true(fabs(a->busbw_gbps - v->busbw_gbps) < 1e-12);
    }
    /* Every (bucket, rank, iteration) with a copy in, grouped by bucket. */
    assert_int_equal(stored->nready, 12);
    assert_int_equal(viewed->nready, 12);
    for (int i = 1; i < 12; i++)
        assert_true(stored->ready[i - 1].bucket <= stored->ready[i].bucket &&
                    viewed->ready[i - 1].bucket <= viewed->ready[i].bucket);
    qsort(stored->ready, 12, sizeof *stored->ready, cmp_ready);
    qsort(viewed->ready, 12, sizeof *viewed->ready, cmp_ready);
    for (int i = 0; i < 12; i++) {
        const store_bucket_ready *a = &stored->ready[i], *v = &viewed->ready[i];
        int64_t t = 1000 * a->iter + 10 * a->rank;
        assert_true(a->bucket == v->bucket && a->rank == v->rank && a->iter == v->iter);
        assert_int_equal(a->ready_ns, t + (a->bucket ? 310 : 160));
        assert_int_equal(v->ready_ns, a->ready_ns);
        assert_true(a->arrived && v->arrived);
        assert_int_equal(a->arrival_ns, t + (a->bucket ? 310 : 160));
        assert_int_equal(v->arrival_ns, a->arrival_ns);
    }
    free(stored);
    free(viewed);
}

typedef struct {
    char path[2][32], rank_from[2][32];
    int rank[2], n;
    store_hta_stat hta[2];
    char steps[2][32];
    int nh;
} import_rows;

static int take_source(const store_source_file *s, void *ctx)
{
    import_rows *l = ctx;
    snprintf(l->path[l->n], sizeof l->path[0], "%s", s->path);
    snprintf(l->rank_from[l->n], sizeof l->rank_from[0], "%s", s->rank_from ? s->rank_from : "(none)");
    l->rank[l->n++] = s->rank;
    return 0;
}

static int take_hta(const store_hta_stat *h, void *ctx)
{
    import_rows *l = ctx;
    l->hta[l->nh] = *h;
    snprintf(l->steps[l->nh], sizeof l->steps[0], "%s", h->steps);
    l->hta[l->nh++].steps = NULL;
    return 0;
}

static void test_import_tables(void **state)
{
    fixture *f = *state;
    int64_t run = two_rank_run(f, "imported", 25), other = two_rank_run(f, "recorded", 25);
    static const char sha[] = "0123456789012345678901234567890123456789012345678901234567890123";
    store_source_file files[] = {{0, "rank0.json", 10, sha, "kineto-json", 0, "distributedInfo"},
                                 {1, "all.sqlite", 20, sha, "nsys-sqlite", -1, NULL}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(store_write_source_file(f->st, run, &files[i], f->err, sizeof f->err), 0);
    store_hta_stat h[] = {{1, "ProfilerStep#2", 100, 10, 60, 30, 40, 20},
                          {0, "ProfilerStep#2", 90, 9, 50, 31, 30, 15}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(store_write_hta_stat(f->st, run, &h[i], f->err, sizeof f->err), 0);

    import_rows l = {0};
    assert_int_equal(store_each_source_file(f->st, run, take_source, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.path[0], "rank0.json");
    assert_string_equal(l.rank_from[0], "distributedInfo");
    assert_int_equal(l.rank[0], 0);
    assert_string_equal(l.path[1], "all.sqlite");
    assert_int_equal(l.rank[1], -1);
    assert_int_equal(store_each_hta_stat(f->st, run, take_hta, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.nh, 2);
    assert_true(l.hta[0].rank == 0 && l.hta[0].kernel_us == 90 && l.hta[0].comm_overlap_us == 15);
    assert_true(l.hta[1].rank == 1 && l.hta[1].idle_us == 10 && l.hta[1].non_compute_us == 30);
    assert_string_equal(l.steps[0], "ProfilerStep#2");

    /* A recorded run has none. */
    l = (import_rows){0};
    assert_int_equal(store_each_source_file(f->st, other, take_source, &l, f->err, sizeof f->err), 0);
    assert_int_equal(store_each_hta_stat(f->st, other, take_hta, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n + l.nh, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_row, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_run_lists, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_span_rows, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_ranks_and_buckets, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_iterations_and_arrivals, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_stats_stored_and_viewed, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_import_tables, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
