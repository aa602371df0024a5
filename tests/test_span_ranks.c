/* test_span_ranks.c — spans for chosen ranks, statistics for every rank
 * (profiler/span_select.h, profiler/stats_live.h): which ranks are chosen, what a bad
 * list says, the live statistics worked out by hand on DESIGN.md's example, and a
 * prediction of 96 ranks run twice, once keeping every span (the statistics computed
 * from the stored spans, as before) and once keeping the chosen ranks' only (the
 * statistics computed as the spans were recorded): every rank's step, overlap and waits,
 * every collective, and the chosen ranks' spans must be the same in both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "engine/scenario/scenario.h"
#include "engine/workload/model_zoo.h"
#include "profiler/span_select.h"
#include "profiler/stats_live.h"
#include "profiler/store.h"
#include "sim_by_hand.h" /* run_sim */
#include "tmp_store.h"

/* ------------------------------------------------------------------ choice */

static void test_default_choice(void **state)
{
    (void)state;
    enum { W = 101 };
    double speed[W];
    /* Speeds rise with the rank but for three: rank 50 the slowest, rank 7 the fastest,
     * rank 60 ties rank 61's speed (the lower rank comes first in the order). */
    for (int r = 0; r < W; r++)
        speed[r] = 1.0 + r * 0.001;
    speed[50] = 0.5;
    speed[7] = 2.0;
    speed[60] = speed[61];
    bool keep[W];
    char err[200];
    int n = span_select_choose("auto", W, speed, keep, err, sizeof err);
    /* Order: 50, 0..6, 8..49, 51..59, 60 (tie: before 61), 61, ..., 100, 7.  Positions
     * 0 (slowest), 10 (10 %), 25, 50 (median), 75, 90, 100 (fastest). */
    int order[W], k = 0;
    order[k++] = 50;
    for (int r = 0; r < W; r++)
        if (r != 50 && r != 7)
            order[k++] = r;
    order[k++] = 7;
    assert_int_equal(k, W);
    bool want[W] = {false};
    const int positions[] = {0, 10, 25, 50, 75, 90, 100};
    for (size_t i = 0; i < sizeof positions / sizeof positions[0]; i++)
        want[order[positions[i]]] = true;
    want[0] = true;
    int nwant = 0;
    for (int r = 0; r < W; r++) {
        assert_int_equal(keep[r], want[r]);
        nwant += want[r];
    }
    assert_int_equal(n, nwant);
    assert_true(keep[50] && keep[7] && keep[0]);
    /* Named ranks come beside them. */
    n = span_select_choose("3,99", W, speed, keep, err, sizeof err);
    assert_int_equal(n, nwant + 2);
    assert_true(keep[3] && keep[99] && keep[50]);
}

static void test_all_and_small_worlds_keep_every_rank(void **state)
{
    (void)state;
    bool keep[200];
    char err[200];
    assert_int_equal(span_select_choose("all", 200, NULL, keep, err, sizeof err), 200);
    assert_true(span_select_keeps_all("all", 200));
    assert_int_equal(span_select_choose("auto", SPAN_SELECT_ALL_UP_TO, NULL, keep, err, sizeof err),
                     SPAN_SELECT_ALL_UP_TO);
    assert_true(span_select_keeps_all("auto", SPAN_SELECT_ALL_UP_TO));
    assert_false(span_select_keeps_all("auto", SPAN_SELECT_ALL_UP_TO + 1));
    /* Equal speeds: the order is the ranks', so the chosen are rank positions. */
    int n = span_select_choose("", 200, NULL, keep, err, sizeof err);
    assert_true(n >= 6 && n <= 8);
    assert_true(keep[0] && keep[199] && keep[100]);
}

static void test_bad_lists(void **state)
{
    (void)state;
    char err[200];
    assert_int_equal(span_select_check("0,17,99", 100, err, sizeof err), 0);
    assert_int_equal(span_select_check("100", 100, err, sizeof err), -1);
    assert_non_null(strstr(err, "rank 100 is not a rank of run.world_size 100"));
    assert_int_equal(span_select_check("1,,2", 100, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not a rank"));
    assert_int_equal(span_select_check("x", 100, err, sizeof err), -1);
    assert_non_null(strstr(err, "'x' is not a rank"));
    assert_int_equal(span_select_check("-1", 100, err, sizeof err), -1);
    assert_int_equal(span_select_check("2,", 100, err, sizeof err), -1);
    /* A scenario says it at load, naming the key. */
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char serr[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "run.world_size=100", serr, sizeof serr), 0);
    assert_int_equal(scenario_override(sc, "record.spans_ranks=5,100", serr, sizeof serr), 0);
    assert_int_not_equal(scenario_validate(sc, serr, sizeof serr), 0);
    assert_non_null(strstr(serr, "spans_ranks"));
    scenario_free(sc);
    free(sc);
}

/* ------------------------------------------------------------------ live statistics */

static span live_span(int rank, int iter, span_stream stream, span_kind kind, int64_t seq, int64_t start, int64_t end)
{
    span s = {.rank = rank, .iter = iter, .stream = (uint8_t)stream, .kind = (uint8_t)kind, .layer = -1,
              .bucket = seq >= 0 ? 0 : -1, .seq = seq, .bytes = seq >= 0 ? 1000 : -1, .start_ns = start,
              .end_ns = end};
    snprintf(s.name, sizeof s.name, "%s", span_kind_name(kind));
    return s;
}

/* DESIGN.md's worked example (µs as ns): rank 0 C = 22, M = 18, overlap 8, exposed 10,
 * wait 13; rank 1 C = 30, M = 5, overlap 3, exposed 2, wait 0; the allreduce's last
 * arrival 25, end 30; both steps 32.  Rank 1's spans come before rank 0's last ones. */
static void test_live_by_hand(void **state)
{
    (void)state;
    stats_live *l = stats_live_create(2);
    assert_non_null(l);
    const span spans[] = {
        live_span(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, 0, 10),   live_span(1, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, 0, 14),
        live_span(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, 10, 20), live_span(0, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, 12, 30),
        live_span(1, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, 14, 28), live_span(1, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, 25, 30),
        live_span(1, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, 30, 32), live_span(0, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, 30, 32),
    };
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++)
        assert_int_equal(stats_live_add(l, &spans[i]), 0);
    assert_int_equal(stats_live_finish(l), 0);
    assert_true(stats_live_exact(l));
    size_t n;
    const stats_live_iteration *it = stats_live_iterations(l, &n);
    assert_int_equal(n, 2);
    const int64_t want[2][6] = {{22, 18, 8, 10, 13, 32}, {30, 5, 3, 2, 0, 32}};
    for (int r = 0; r < 2; r++) {
        assert_int_equal(it[r].rank, r);
        assert_int_equal(it[r].c, want[r][0]);
        assert_int_equal(it[r].m, want[r][1]);
        assert_int_equal(it[r].c + it[r].m - it[r].u, want[r][2]);
        assert_int_equal(it[r].u - it[r].c, want[r][3]);
        assert_int_equal(it[r].wait, want[r][4]);
        assert_int_equal(it[r].step_end - it[r].step_start, want[r][5]);
    }
    const stats_live_collective *c = stats_live_collectives(l, &n);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].first_arrival, 12);
    assert_int_equal(c[0].last_arrival, 25);
    assert_int_equal(c[0].end, 30);
    assert_int_equal(c[0].nranks, 2);
    stats_live_free(l);
}

/* What the live cannot take is said, not computed wrong. */
static void test_live_refuses_what_it_cannot_fold(void **state)
{
    (void)state;
    stats_live *l = stats_live_create(2);
    assert_non_null(l);
    span s = live_span(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, 0, 10);
    assert_int_equal(stats_live_add(l, &s), 0);
    for (int it = 1; it <= SPAN_LIVE_WINDOW; it++) {
        s = live_span(0, it, STREAM_COMPUTE, SPAN_FORWARD, -1, 100 * it, 100 * it + 10);
        assert_int_equal(stats_live_add(l, &s), 0);
    }
    s = live_span(0, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, 20, 30); /* iteration 0 closed by now */
    assert_int_equal(stats_live_add(l, &s), 0);
    assert_int_equal(stats_live_finish(l), 0);
    assert_false(stats_live_exact(l));
    assert_non_null(strstr(stats_live_why_not(l), "iteration 0"));
    stats_live_free(l);

    l = stats_live_create(2);
    assert_non_null(l);
    s = live_span(1, 0, STREAM_COMM, SPAN_ALLREDUCE, 4, 10, 20);
    assert_int_equal(stats_live_add(l, &s), 0);
    assert_int_equal(stats_live_add(l, &s), 0); /* a second span of rank 1 at collective 4 */
    assert_int_equal(stats_live_finish(l), 0);
    assert_false(stats_live_exact(l));
    assert_non_null(strstr(stats_live_why_not(l), "two spans of collective 4"));
    stats_live_free(l);
}

/* ------------------------------------------------------------------ a prediction */

#define WORLD 96

static scenario *skewed_world(const char *spans_ranks)
{
    const char *const keys[] = {"run.world_size=96", "run.backend=sim", "run.iterations=4", "run.warmup=1",
                                "model.preset=custom", "model.params=200000,300000,100000,400000",
                                "model.batch=1", "device.preset=h100", "network.preset=ib-ndr400",
                                "network.gpus_per_node=8", "ddp.bucket_cap_mb=1", "ddp.first_bucket_mb=1",
                                "skew.speed_sigma=0.05", "skew.jitter=0.02", "record.detail=phase", NULL};
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char err[SCENARIO_ERR], kv[SCENARIO_STR + 32];
    for (int i = 0; keys[i]; i++)
        if (scenario_override(sc, keys[i], err, sizeof err) != 0)
            fail_msg("%s", err);
    snprintf(kv, sizeof kv, "record.spans_ranks=%s", spans_ranks);
    if (scenario_override(sc, kv, err, sizeof err) != 0 || scenario_validate(sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    return sc;
}

static int64_t scalar(sqlite3 *db, const char *sql, int64_t a, int64_t b)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_bind_int64(s, 1, a);
    sqlite3_bind_int64(s, 2, b);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* Rows of `cols` FROM `table` of run ?1 not among run ?2's (restricted by `where`). */
static int64_t rows_not_in(sqlite3 *db, const char *table, const char *cols, const char *where, int64_t a, int64_t b)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM (SELECT %s FROM %s WHERE run_id = ?1 %s EXCEPT SELECT %s FROM %s"
                              " WHERE run_id = ?2 %s)",
             cols, table, where, cols, table, where);
    return scalar(db, sql, a, b);
}

static void test_chosen_ranks_match_every_span_kept(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "spanranks", &st, err, sizeof err), 0);
    scenario *every = skewed_world("all"), *chosen = skewed_world("5,42");
    int64_t all_run = run_sim(st, every), some_run = run_sim(st, chosen);
    sqlite3 *db = store_db(st);

    /* Which ranks kept spans: the chosen ones, each said in rank.spans. */
    double speed[WORLD];
    for (int r = 0; r < WORLD; r++)
        speed[r] = scenario_rank_speed(chosen, r);
    bool keep[WORLD];
    int nkeep = span_select_choose("5,42", WORLD, speed, keep, err, sizeof err);
    assert_true(nkeep >= 8 && nkeep < WORLD);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM rank WHERE run_id = ?1 AND spans = 1", some_run, 0), nkeep);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM rank WHERE run_id = ?1 AND spans = 1", all_run, 0), WORLD);
    for (int r = 0; r < WORLD; r++) {
        assert_int_equal(scalar(db, "SELECT spans FROM rank WHERE run_id = ?1 AND rank = ?2", some_run, r), keep[r]);
        int64_t nspans = scalar(db, "SELECT COUNT(*) FROM span_data WHERE run_id = ?1 AND rank = ?2", some_run, r);
        if (keep[r])
            assert_true(nspans > 0);
        else
            assert_int_equal(nspans, 0);
    }

    /* Every rank's iteration figures, from the live statistics, are those computed from
     * every stored span (the unchanged path); every collective's too. */
    const char *its = "rank, iter, warmup, step_ns, compute_ns, comm_ns, overlap_ns, exposed_comm_ns, wait_ns,"
                      " step_start_ns, step_end_ns";
    int64_t nits = scalar(db, "SELECT COUNT(*) FROM iteration_stat WHERE run_id = ?1", all_run, 0);
    assert_int_equal(nits, WORLD * 5);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM iteration_stat WHERE run_id = ?1", some_run, 0), nits);
    assert_true(scalar(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE run_id = ?1", all_run, 0) > 0);
    assert_int_equal(rows_not_in(db, "iteration_stat", its, "", all_run, some_run), 0);
    assert_int_equal(rows_not_in(db, "iteration_stat", its, "", some_run, all_run), 0);
    const char *colls = "seq, iter, bucket, bytes, first_arrival_ns, last_arrival_ns, end_ns, nranks,"
                        " arrival_skew_ns, transfer_ns, kind, warmup, bucket_version, algbw_gbps, busbw_gbps";
    int64_t ncolls = scalar(db, "SELECT COUNT(*) FROM collective_stat WHERE run_id = ?1", all_run, 0);
    assert_true(ncolls > 4 * 4);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM collective_stat WHERE run_id = ?1", some_run, 0), ncolls);
    assert_int_equal(scalar(db, "SELECT MIN(nranks) FROM collective_stat WHERE run_id = ?1", some_run, 0), WORLD);
    assert_int_equal(rows_not_in(db, "collective_stat", colls, "", all_run, some_run), 0);
    assert_int_equal(rows_not_in(db, "collective_stat", colls, "", some_run, all_run), 0);

    /* The chosen ranks' spans are the same spans. */
    const char *cols = "rank, iter, start_ns, dup, stream, kind, name_id, layer, bucket, seq, bytes, dur_ns";
    const char *chosen_only = "AND rank IN (SELECT rank FROM rank WHERE run_id = ?2 AND spans = 1)";
    const char *chosen_only_b = "AND rank IN (SELECT rank FROM rank WHERE run_id = ?1 AND spans = 1)";
    int64_t nspans = scalar(db, "SELECT COUNT(*) FROM span_data WHERE run_id = ?1", some_run, 0);
    assert_true(nspans > nkeep * 5 * 4);
    assert_int_equal(rows_not_in(db, "span_data", cols, chosen_only, all_run, some_run), 0);
    assert_int_equal(rows_not_in(db, "span_data", cols, chosen_only_b, some_run, all_run), 0);
    scenario_free(every);
    free(every);
    scenario_free(chosen);
    free(chosen);
    store_close(st);
    remove_db(path);
}

/* A live that is not exact leaves the figures to the stored spans (here every rank's,
 * so they are still the right ones), saying so on stderr. */
static void test_inexact_live_falls_back_to_spans(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "spanlive", &st, err, sizeof err), 0);
    scenario *every = skewed_world("all");
    int64_t run = run_sim(st, every);
    sqlite3 *db = store_db(st);
    int64_t waits = scalar(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE run_id = ?1", run, 0);
    assert_true(waits > 0);
    stats_live *l = stats_live_create(WORLD);
    assert_non_null(l);
    span s = live_span(3, 0, STREAM_COMM, SPAN_ALLREDUCE, 1, 0, 5);
    assert_int_equal(stats_live_add(l, &s), 0);
    assert_int_equal(stats_live_add(l, &s), 0);
    assert_int_equal(stats_live_finish(l), 0);
    assert_false(stats_live_exact(l));
    store_set_live_stats(st, run, l);
    assert_int_equal(store_run_stats(st, run, err, sizeof err), 0);
    store_set_live_stats(st, run, NULL);
    assert_int_equal(scalar(db, "SELECT SUM(wait_ns) FROM iteration_stat WHERE run_id = ?1", run, 0), waits);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM iteration_stat WHERE run_id = ?1", run, 0), WORLD * 5);
    stats_live_free(l);
    scenario_free(every);
    free(every);
    store_close(st);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_choice),
        cmocka_unit_test(test_all_and_small_worlds_keep_every_rank),
        cmocka_unit_test(test_bad_lists),
        cmocka_unit_test(test_live_by_hand),
        cmocka_unit_test(test_live_refuses_what_it_cannot_fold),
        cmocka_unit_test(test_chosen_ranks_match_every_span_kept),
        cmocka_unit_test(test_inexact_live_falls_back_to_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
