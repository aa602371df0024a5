/* test_store_read.c — unit tests of the store's read API (profiler/store_read_*.h,
 * store_equivalence.h) and of store_set_page_cache_kib.
 *
 * Contract checked: a small store written with the store's own writes reads back the
 * same: run ids and headers (an absent run is said, not an error), the runs from an id
 * on with their overrides, ranks and their speed factors, the latest bucket assignment
 * with sizes taken from the allreduces where the table has none, span groups by rank,
 * iteration and bucket with their filters, a rank's overlap spans in order, the bucket
 * allreduces of the collective view, and equivalence rows with NULL as NAN.  A
 * callback's nonzero return stops an iteration and comes back.  Each test gets its own
 * temporary database file.
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
#include "profiler/store_equivalence.h"
#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_spans.h"
#include "tmp_store.h"
#include "two_rank_store.h"

/* Each test gets a fresh store (tmp_store.h). */
typedef store_fixture fixture;

static void test_runs(void **state)
{
    fixture *f = *state;
    store_run_ids ids;
    store_run_header h;
    bool found = true, exists = true;
    assert_int_equal(store_read_run_ids(f->st, &ids, f->err, sizeof f->err), 0);
    assert_true(ids.count == 0 && ids.min_id == 0 && ids.max_id == 0);
    assert_int_equal(store_read_last_run(f->st, &h, &found, f->err, sizeof f->err), 0);
    assert_false(found);
    store_run_header_free(&h);

    int64_t a = two_rank_run(f, "first", 25), b = two_rank_run(f, "second", 40);
    assert_int_equal(store_read_run_ids(f->st, &ids, f->err, sizeof f->err), 0);
    assert_true(ids.count == 2 && ids.min_id == a && ids.max_id == b);
    assert_int_equal(store_run_exists(f->st, b, &exists, f->err, sizeof f->err), 0);
    assert_true(exists);
    assert_int_equal(store_run_exists(f->st, b + 7, &exists, f->err, sizeof f->err), 0);
    assert_false(exists);

    assert_int_equal(store_read_run(f->st, a, &h, &found, f->err, sizeof f->err), 0);
    assert_true(found);
    assert_int_equal(h.id, a);
    assert_string_equal(h.name, "first");
    assert_string_equal(h.backend, "sim");
    assert_string_equal(h.scenario, "[run]\nworld_size = 2\n");
    assert_int_equal(h.world_size, 2);
    assert_int_equal(h.warmup, 1);
    assert_true(fabs(h.bucket_cap_mb - 25) < 1e-9);
    store_run_header_free(&h);
    assert_null(h.name);

    assert_int_equal(store_read_last_run(f->st, &h, &found, f->err, sizeof f->err), 0);
    assert_true(found);
    assert_int_equal(h.id, b);
    assert_string_equal(h.name, "second");
    store_run_header_free(&h);

    assert_int_equal(store_read_run(f->st, b + 7, &h, &found, f->err, sizeof f->err), 0);
    assert_false(found);
    assert_null(h.name);
    store_run_header_free(&h);
}

typedef struct {
    int64_t ids[4];
    char overrides[4][64];
    int n, stop_after;
} run_list;

static int take_run(int64_t id, const char *overrides, void *ctx)
{
    run_list *l = ctx;
    l->ids[l->n] = id;
    snprintf(l->overrides[l->n], sizeof l->overrides[0], "%s", overrides ? overrides : "(none)");
    l->n++;
    return l->n == l->stop_after ? 42 : 0;
}

static void test_runs_from(void **state)
{
    fixture *f = *state;
    int64_t a = two_rank_run(f, "a", 25), b = two_rank_run(f, "b", 25), c = two_rank_run(f, "c", 25);
    assert_int_equal(store_set_run_provenance(f->st, c, "{\"ddp.bucket_cap_mb\": \"35\"}", -1, -1, f->err,
                                              sizeof f->err),
                     0);
    run_list l = {.stop_after = -1};
    assert_int_equal(store_each_run_from(f->st, b, take_run, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 2);
    assert_true(l.ids[0] == b && l.ids[1] == c);
    assert_string_equal(l.overrides[0], "(none)");
    assert_string_equal(l.overrides[1], "{\"ddp.bucket_cap_mb\": \"35\"}");
    /* A callback's nonzero return stops the listing and is returned. */
    run_list stop = {.stop_after = 1};
    assert_int_equal(store_each_run_from(f->st, a, take_run, &stop, f->err, sizeof f->err), 42);
    assert_int_equal(stop.n, 1);
    assert_true(stop.ids[0] == a);
}

static int take_rank(const store_rank_row *r, void *ctx)
{
    store_rank_row *rows = ctx;
    rows[r->rank] = *r;
    return 0;
}

static void test_ranks_and_buckets(void **state)
{
    fixture *f = *state;
    int64_t run = two_rank_run(f, "layout", 25);
    store_rank_row rows[2] = {{-1, 0, 9}, {-1, 0, 9}};
    assert_int_equal(store_each_rank(f->st, run, take_rank, rows, f->err, sizeof f->err), 0);
    assert_int_equal(rows[0].rank, 0);
    assert_int_equal(rows[1].rank, 1);
    assert_true(fabs(rows[1].speed - 1.5) < 1e-12);
    assert_int_equal(rows[0].spans, 1); /* every rank's spans kept */

    int version = 7, nb = 7;
    assert_int_equal(store_read_latest_buckets(f->st, run, &version, &nb, f->err, sizeof f->err), 0);
    assert_int_equal(version, -1);
    assert_int_equal(nb, 0);

    int p0[] = {0, 1}, p1[] = {2}, q0[] = {0}, q1[] = {1}, q2[] = {2};
    store_bucket v0[] = {{800, 1000, 2, p0}, {400, 1000, 1, p1}};
    /* The rebuilt assignment's second bucket records no size: the allreduces' is read. */
    store_bucket v1[] = {{400, 1000, 1, q0}, {0, 1000, 1, q1}, {400, 1000, 1, q2}};
    assert_int_equal(store_write_buckets(f->st, run, 0, v0, 2, f->err, sizeof f->err), 0);
    assert_int_equal(store_write_buckets(f->st, run, 1, v1, 3, f->err, sizeof f->err), 0);
    span s[] = {mk(0, 1, STREAM_COMM, SPAN_ALLREDUCE, 1, 5, 300, 100, 200),
                mk(1, 1, STREAM_COMM, SPAN_ALLREDUCE, 1, 5, 360, 120, 200)};
    assert_int_equal(store_write_spans(f->st, run, s, 2, f->err, sizeof f->err), 0);
    assert_int_equal(store_read_latest_buckets(f->st, run, &version, &nb, f->err, sizeof f->err), 0);
    assert_int_equal(version, 1);
    assert_int_equal(nb, 3);
    int64_t bytes[3] = {-5, -5, -5};
    /* n smaller than the assignment: the buckets past it are left alone. */
    assert_int_equal(store_read_latest_bucket_bytes(f->st, run, bytes, 2, f->err, sizeof f->err), 0);
    assert_int_equal(bytes[0], 400);
    assert_int_equal(bytes[1], 360);
    assert_int_equal(bytes[2], -5);
}

/* Two ranks, iterations 0 to 2: forward, backward, one copy into each of two buckets,
 * the buckets' allreduces, and an all_to_all on rank 0 in iteration 2. */
static int64_t write_iterations(fixture *f)
{
    int64_t run = two_rank_run(f, "spans", 25);
    span s[64];
    int64_t seq;
    int n = two_rank_iterations(s, &seq);
    s[n++] = mk(0, 2, STREAM_COMM, SPAN_ALL_TO_ALL, -1, seq, 32, 2020, 2060);
    assert_int_equal(store_write_spans(f->st, run, s, (size_t)n, f->err, sizeof f->err), 0);
    return run;
}

typedef struct {
    store_span_group g[32];
    int n;
} groups;

static int take_group(const store_span_group *g, void *ctx)
{
    groups *l = ctx;
    l->g[l->n++] = *g;
    return 0;
}

static const store_span_group *find_group(const groups *l, int rank, int iter, int bucket)
{
    for (int i = 0; i < l->n; i++)
        if (l->g[i].rank == rank && l->g[i].iter == iter && l->g[i].bucket == bucket)
            return &l->g[i];
    return NULL;
}

static void test_span_groups(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    bool any = false, yes = true;
    int first = -9, last = -9;
    assert_int_equal(store_read_span_iterations(f->st, run, &any, &first, &last, f->err, sizeof f->err), 0);
    assert_true(any && first == 0 && last == 2);
    assert_int_equal(store_run_has_device_spans(f->st, run, &yes, f->err, sizeof f->err), 0);
    assert_false(yes);
    assert_int_equal(store_run_has_span_kind(f->st, run, "step", &yes, f->err, sizeof f->err), 0);
    assert_false(yes);
    assert_int_equal(store_run_has_span_kind(f->st, run, "all_to_all", &yes, f->err, sizeof f->err), 0);
    assert_true(yes);

    /* Backward and copies of iterations 1 and 2, per (rank, iteration). */
    static const char *const bwd[] = {"backward", "copy_in"};
    store_span_groups q = {.kinds = bwd, .nkinds = 2, .iter_from = 1};
    groups l = {0};
    assert_int_equal(store_each_span_group(f->st, run, &q, take_group, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 4);
    const store_span_group *g = find_group(&l, 1, 2, -1);
    assert_non_null(g);
    assert_int_equal(g->first_start_ns, 2010 + 100);
    assert_int_equal(g->last_end_ns, 2010 + 310);
    assert_null(find_group(&l, 0, 0, -1));

    /* Copies per bucket: a bucket's ready point. */
    static const char *const copy_in[] = {"copy_in"};
    q = (store_span_groups){.kinds = copy_in, .nkinds = 1, .iter_from = 0, .of_bucket = true, .per_bucket = true};
    l.n = 0;
    assert_int_equal(store_each_span_group(f->st, run, &q, take_group, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 12);
    g = find_group(&l, 0, 1, 1);
    assert_non_null(g);
    assert_int_equal(g->last_end_ns, 1000 + 310);

    /* Only device spans: a recorded run has none. */
    q.device_only = true;
    l.n = 0;
    assert_int_equal(store_each_span_group(f->st, run, &q, take_group, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 0);
    q.nkinds = 0;
    assert_int_equal(store_each_span_group(f->st, run, &q, take_group, &l, f->err, sizeof f->err), -1);
}

typedef struct {
    store_overlap_span v[32];
    int n;
} overlap_list;

static int take_overlap(const store_overlap_span *v, void *ctx)
{
    overlap_list *l = ctx;
    l->v[l->n++] = *v;
    return 0;
}

typedef struct {
    store_bucket_allreduce c[16];
    int n;
} allreduces;

static int take_allreduce(const store_bucket_allreduce *c, void *ctx)
{
    allreduces *l = ctx;
    l->c[l->n++] = *c;
    return 0;
}

static void test_overlap_and_collectives(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    /* Rank 0 from iteration 2: its compute (forward, backward, two copies) and the
     * all_to_all, not the bucket allreduces, ordered by start. */
    overlap_list l = {0};
    assert_int_equal(store_each_overlap_span(f->st, run, 0, 2, false, take_overlap, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 5);
    for (int i = 1; i < l.n; i++)
        assert_true(l.v[i - 1].start_ns <= l.v[i].start_ns);
    int comm = 0;
    for (int i = 0; i < l.n; i++) {
        assert_int_equal(l.v[i].iter, 2);
        comm += l.v[i].comm;
        if (l.v[i].comm)
            assert_true(l.v[i].start_ns == 2020 && l.v[i].end_ns == 2060);
    }
    assert_int_equal(comm, 1);

    /* Bucket allreduces from iteration 1: by iteration then bucket; the last arrival is
     * the later rank's start. */
    allreduces a = {0};
    assert_int_equal(store_each_bucket_allreduce(f->st, run, 1, take_allreduce, &a, f->err, sizeof f->err), 0);
    assert_int_equal(a.n, 4);
    assert_true(a.c[0].iter == 1 && a.c[0].bucket == 0 && a.c[1].iter == 1 && a.c[1].bucket == 1);
    assert_true(a.c[2].iter == 2 && a.c[2].bucket == 0);
    assert_int_equal(a.c[1].bytes, 128);
    assert_int_equal(a.c[0].last_arrival_ns, 1000 + 10 + 160);
    assert_int_equal(a.c[0].end_ns, 1400);
}

typedef struct {
    store_equivalence_row r[4];
    char verdict[4][64];
    int n;
} equivalence_rows;

static int take_equivalence(const store_equivalence_row *row, void *ctx)
{
    equivalence_rows *l = ctx;
    l->r[l->n] = *row;
    snprintf(l->verdict[l->n], sizeof l->verdict[0], "%s", row->verdict);
    l->r[l->n].verdict = l->r[l->n].variant = l->r[l->n].loss_reduction = NULL; /* borrowed */
    l->n++;
    return 0;
}

static void test_equivalence_rows(void **state)
{
    fixture *f = *state;
    int64_t a = two_rank_run(f, "reference", 25), b = two_rank_run(f, "ddp", 25), c = two_rank_run(f, "other", 25);
    equivalence_rows l = {0};
    /* No table: no rows, no error. */
    assert_int_equal(store_each_equivalence(f->st, -1, take_equivalence, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(store_ensure_equivalence_table(f->st, f->err, sizeof f->err), 0);
    store_equivalence_row ref = {.group_id = a, .run_id = a, .variant = "reference", .world_size = 1,
                                 .loss_reduction = "mean", .loss_scale = 1, .lr = 0.01, .steps = 6,
                                 .max_abs_diff = 0, .rel_to_update = NAN, .update_ratio = 1, .replica_max_diff = 0,
                                 .step_ms = 1.5, .overlap_pct = NAN, .collectives_per_step = 3,
                                 .verdict = "reference"};
    store_equivalence_row ddp = ref;
    ddp.run_id = b;
    ddp.variant = "ddp";
    ddp.world_size = 4;
    ddp.nodes = 2;
    ddp.gpus_per_node = 2;
    ddp.rel_to_update = 1e-5;
    ddp.verdict = "same weights";
    store_equivalence_row lone = ref;
    lone.group_id = lone.run_id = c;
    assert_int_equal(store_write_equivalence(f->st, &ddp, f->err, sizeof f->err), 0);
    assert_int_equal(store_write_equivalence(f->st, &ref, f->err, sizeof f->err), 0);
    assert_int_equal(store_write_equivalence(f->st, &lone, f->err, sizeof f->err), 0);
    /* The group of run b, in run order. */
    assert_int_equal(store_each_equivalence(f->st, b, take_equivalence, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.r[0].run_id, a);
    assert_int_equal(l.r[0].nodes, 0);
    assert_true(isnan(l.r[0].rel_to_update) && isnan(l.r[0].overlap_pct));
    assert_true(fabs(l.r[0].step_ms - 1.5) < 1e-12);
    assert_string_equal(l.verdict[0], "reference");
    assert_int_equal(l.r[1].run_id, b);
    assert_true(l.r[1].nodes == 2 && l.r[1].gpus_per_node == 2);
    assert_true(fabs(l.r[1].rel_to_update - 1e-5) < 1e-18);
    assert_string_equal(l.verdict[1], "same weights");
    l.n = 0;
    assert_int_equal(store_each_equivalence(f->st, -1, take_equivalence, &l, f->err, sizeof f->err), 0);
    assert_int_equal(l.n, 3);
}

static void test_equivalence_timing(void **state)
{
    fixture *f = *state;
    int64_t run = write_iterations(f);
    store_equivalence_timing t;
    assert_int_equal(store_read_equivalence_timing(f->st, run, &t, f->err, sizeof f->err), 0);
    /* Two bucket allreduces in each of the two measured iterations (warmup = 1). */
    assert_true(fabs(t.collectives_per_step - 2.0) < 1e-12);
    assert_true(t.step_ms > 0);
    assert_false(isnan(t.overlap_pct));
}

static void test_page_cache(void **state)
{
    fixture *f = *state;
    assert_int_equal(store_set_page_cache_kib(f->st, 1234, f->err, sizeof f->err), 0);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(store_db(f->st), "PRAGMA cache_size", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(s, 0), -1234);
    sqlite3_finalize(s);
}

static void test_read_transaction(void **state)
{
    fixture *f = *state;
    assert_int_equal(store_end_read(f->st, f->err, sizeof f->err), 0); /* none open: nothing to do */
    assert_int_equal(store_begin_read(f->st, f->err, sizeof f->err), 0);
    assert_false(sqlite3_get_autocommit(store_db(f->st)));
    assert_int_equal(store_end_read(f->st, f->err, sizeof f->err), 0);
    assert_true(sqlite3_get_autocommit(store_db(f->st)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_runs, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_runs_from, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_ranks_and_buckets, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_span_groups, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_overlap_and_collectives, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_equivalence_rows, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_equivalence_timing, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_page_cache, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_read_transaction, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
