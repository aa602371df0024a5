/* test_stats.c — the statistics stored when a run ends (profiler/store_stats.c,
 * schema 4) against the views they replace for reports.
 *
 * Contract checked: after store_finish_run, iteration_stat holds exactly the rows
 * of the iteration_stats view and collective_stat those of the collective view
 * (every column), on spans built to hit the edge cases (nested and overlapping
 * compute spans, a collective recorded as two spans on one rank, a rank-iteration
 * without a forward or an optimizer span, a copy_in whose bucket never reduces,
 * NULL bucket and bytes, a failed run); the JSON report read from the stored
 * statistics is byte for byte the one computed through the views; a run still
 * running has none and is reported through the views; the collectives' kind,
 * warm-up, bucket version and nccl-tests bandwidths on known figures; a schema-3 file
 * is upgraded by store_open with the statistics of its ended runs computed and DDP's
 * parameter-count allreduce re-kinded an all_gather, and reports the same figures
 * before and after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "reports/report.h"
#include "profiler/store.h"
#include "tmp_store.h"

/* Each test gets a fresh store (tmp_store.h). */
typedef store_fixture fixture;

static int64_t scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* A span named `name`. */
static span named(span s, const char *name)
{
    snprintf(s.name, sizeof s.name, "%s", name);
    return s;
}

/* Three ranks, four iterations (one warm-up), skewed arrivals, and the edge cases.
 * Seqs 3 it + 1 and 3 it + 2 are the buckets' allreduces; seq 0 is DDP's all_gather
 * of the parameter counts, seq 3 the rebuild's broadcast, after which the buckets are
 * the rebuilt ones (bucket_version 1). */
static int64_t write_run(fixture *f, const char *name, bool fail)
{
    double speeds[3] = {1.0, 1.0, 0.5};
    store_run_info info = {.name = name, .source = "t.ini", .scenario_ini = "", .backend = "cpu", .model = "mlp",
                           .world_size = 3, .iterations = 3, .warmup = 1, .total_params = 4,
                           .bucket_cap_mb = 25, .rank_speed = speeds};
    int64_t id;
    assert_int_equal(store_begin_run(f->st, &info, &id, f->err, sizeof f->err), 0);
    int p0[] = {0, 1}, p1[] = {2, 3};
    store_bucket b[2] = {{.nbytes = 800, .size_limit = 1000, .nparams = 2, .params = p0},
                         {.nbytes = 600, .size_limit = 1000, .nparams = 2, .params = p1}};
    assert_int_equal(store_write_buckets(f->st, id, 0, b, 2, f->err, sizeof f->err), 0);
    span sp[256];
    size_t n = 0;
    for (int it = 0; it < 4; it++)
        for (int r = 0; r < 3; r++) {
            int64_t t = it * 100000 + r * 1000;
            if (!(it == 2 && r == 1)) /* no forward span: the step starts at the first span */
                sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t, t + 5000);
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t + 5000, t + 15000);
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t + 6000, t + 9000); /* nested */
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 800, t + 9000, t + 9500);
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 800, t + 9400, t + 9800); /* overlaps */
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 1, -1, 600, t + 14000, t + 15000);
            sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 5, -1, 8, t + 14000, t + 14100); /* never reduced */
            if (it == 0)
                sp[n++] = named(mk(r, it, STREAM_COMM, SPAN_ALL_GATHER, -1, 0, 8, t - 900, t - 100),
                                DDP_PARAM_COUNT_SPAN_NAME);
            if (it == 1)
                sp[n++] = named(mk(r, it, STREAM_COMM, SPAN_BROADCAST, -1, 3, 16, t - 900, t - 100),
                                DDP_REBUILD_SPAN_NAME);
            int64_t a0 = t + 10000 + (r == 2 ? 4000 : 0), end0 = it * 100000 + 2000 + 20000;
            if (r == 1 && it == 1) { /* one collective as two spans on one rank */
                sp[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, 0, it * 3 + 1, 800, a0, a0 + 3000);
                sp[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, 0, it * 3 + 1, 800, a0 + 3000, end0);
            } else {
                sp[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, 0, it * 3 + 1, 800, a0, end0);
            }
            span s = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, r == 0 ? -1 : 1, it * 3 + 2, r == 0 ? -1 : 600,
                        end0 + r * 700, end0 + 9000);
            sp[n++] = s;
            if (!(it == 3 && r == 2)) /* no optimizer: the step ends at the last span */
                sp[n++] = mk(r, it, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, end0 + 9000, end0 + 9500);
            sp[n++] = mk(r, it, STREAM_HOST, SPAN_WAIT, -1, -1, 0, t + 15000, end0 + 9600);
        }
    assert_true(n <= sizeof sp / sizeof *sp);
    assert_int_equal(store_write_spans(f->st, id, sp, n, f->err, sizeof f->err), 0);
    assert_int_equal(store_finish_run(f->st, id, fail ? "rank 2 died" : NULL, f->err, sizeof f->err), 0);
    return id;
}

/* Rows of `a` not in `b` plus rows of `b` not in `a`. */
static int64_t differing_rows(sqlite3 *db, const char *a, const char *b)
{
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT (SELECT COUNT(*) FROM (%s EXCEPT %s)) + (SELECT COUNT(*) FROM (%s EXCEPT %s))",
             a, b, b, a);
    return scalar(db, sql);
}

static void assert_stats_equal_views(sqlite3 *db)
{
    assert_true(scalar(db, "SELECT COUNT(*) FROM iteration_stat") > 0);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM iteration_stat"), scalar(db, "SELECT COUNT(*) FROM iteration_stats"));
    assert_int_equal(differing_rows(db,
                                    "SELECT run_id, rank, iter, warmup, step_ns, compute_ns, comm_ns, overlap_ns,"
                                    " exposed_comm_ns, wait_ns, step_start_ns, step_end_ns FROM iteration_stat",
                                    "SELECT run_id, rank, iter, warmup, step_ns, compute_ns, comm_ns, overlap_ns,"
                                    " exposed_comm_ns, wait_ns, step_start_ns, step_end_ns FROM iteration_stats"),
                     0);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM collective_stat"), scalar(db, "SELECT COUNT(*) FROM collective"));
    assert_int_equal(differing_rows(db,
                                    "SELECT run_id, seq, iter, bucket, bytes, first_arrival_ns, last_arrival_ns,"
                                    " end_ns, nranks, arrival_skew_ns, transfer_ns, kind, warmup, bucket_version,"
                                    " algbw_gbps, busbw_gbps FROM collective_stat",
                                    "SELECT run_id, seq, iter, bucket, bytes, first_arrival_ns, last_arrival_ns,"
                                    " end_ns, nranks, arrival_skew_ns, transfer_ns, kind, warmup, bucket_version,"
                                    " algbw_gbps, busbw_gbps FROM collective"),
                     0);
    /* The waits are not all zero, so the comparison above means something. */
    assert_true(scalar(db, "SELECT SUM(wait_ns) FROM iteration_stat") > 0);
    /* Both tables say the same of every collective's kind, warm-up, bucket version and
     * bandwidths (nccl-tests' definitions).  Iteration 1's bucket 0: 800 bytes, the last
     * arrival 116000 (rank 2), the end 122000: transfer 6000 ns, algbw 800/6000 GB/s,
     * busbw algbw * 2(3-1)/3; it is of the rebuilt assignment (after seq 3). */
    const char *tables[] = {"collective", "collective_stat"};
    for (int i = 0; i < 2; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT COUNT(*) FROM %s WHERE run_id = 1 AND iter = 1 AND bucket = 0 AND kind = 'allreduce'"
                 " AND warmup = 0 AND bucket_version = 1 AND transfer_ns = 6000"
                 " AND abs(algbw_gbps - 800.0 / 6000) < 1e-12 AND abs(busbw_gbps - 800.0 / 6000 * 4 / 3) < 1e-12",
                 tables[i]);
        assert_int_equal(scalar(db, sql), 1);
        snprintf(sql, sizeof sql,
                 "SELECT COUNT(*) FROM %s WHERE run_id = 1 AND iter = 0 AND bucket IS NOT NULL"
                 " AND warmup = 1 AND bucket_version = 0",
                 tables[i]);
        assert_int_equal(scalar(db, sql), 2);
        /* The all_gather: algbw * (n-1)/n; the broadcast: busbw = algbw; neither has a
         * bucket version. */
        snprintf(sql, sizeof sql,
                 "SELECT COUNT(*) FROM %s WHERE run_id = 1 AND bucket_version IS NULL AND ("
                 " (seq = 0 AND kind = 'all_gather' AND abs(busbw_gbps - algbw_gbps * 2 / 3) < 1e-12) OR"
                 " (seq = 3 AND kind = 'broadcast' AND busbw_gbps = algbw_gbps))",
                 tables[i]);
        assert_int_equal(scalar(db, sql), 2);
    }
}

static char *json_report(store *st, int64_t run_id, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    if (report_write(st, run_id, REPORT_JSON, out, err, errlen) != 0)
        fail_msg("report: %s", err);
    assert_int_equal(fclose(out), 0);
    return buf;
}

/* The report without HTA's figures, which a file older than schema 5 does not hold. */
static char *without_hta(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    assert_non_null(j);
    size_t i, k;
    json_t *run, *rank;
    json_array_foreach(json_object_get(j, "runs"), i, run)
    {
        json_object_del(run, "hta_steps");
        json_array_foreach(json_object_get(run, "ranks"), k, rank)
        {
            json_object_del(rank, "comm_overlap_pct");
            json_object_del(rank, "idle_pct");
            json_object_del(rank, "compute_pct");
            json_object_del(rank, "non_compute_pct");
        }
    }
    char *out = json_dumps(j, JSON_SORT_KEYS);
    json_decref(j);
    assert_non_null(out);
    return out;
}

static void test_stats_equal_views(void **state)
{
    fixture *f = *state;
    write_run(f, "a", false);
    write_run(f, "b", true);
    sqlite3 *db = store_db(f->st);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM run_stats"), 2);
    assert_int_equal(scalar(db, "SELECT spans FROM run_stats WHERE run_id = 1"),
                     scalar(db, "SELECT COUNT(*) FROM span WHERE run_id = 1"));
    assert_stats_equal_views(db);
}

static void test_report_same_either_way(void **state)
{
    fixture *f = *state;
    write_run(f, "a", false);
    write_run(f, "b", true);
    sqlite3 *db = store_db(f->st);
    char *stored = json_report(f->st, -1, f->err, sizeof f->err);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM run_stats", NULL, NULL, NULL), SQLITE_OK);
    char *viewed = json_report(f->st, -1, f->err, sizeof f->err);
    assert_string_equal(stored, viewed);
    assert_non_null(strstr(stored, "\"wait_ms\"")); /* a real report, not an empty one */
    free(stored);
    free(viewed);
}

static void test_running_run_has_none(void **state)
{
    fixture *f = *state;
    double speeds[1] = {1.0};
    store_run_info info = {.name = "live", .backend = "cpu", .world_size = 1, .iterations = 1, .rank_speed = speeds};
    int64_t id;
    assert_int_equal(store_begin_run(f->st, &info, &id, f->err, sizeof f->err), 0);
    span s = mk(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 1000);
    assert_int_equal(store_write_spans(f->st, id, &s, 1, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(store_db(f->st), "SELECT COUNT(*) FROM run_stats"), 0);
    char *text = json_report(f->st, id, f->err, sizeof f->err);
    assert_non_null(strstr(text, "\"step_ms_mean\": 0.001"));
    free(text);
}

/* A schema-4 file taken back to schema 3, as an older ddpprof left it. */
static void downgrade_to_v3(sqlite3 *db)
{
    assert_int_equal(sqlite3_exec(db,
                                  "BEGIN;" STORE_DOWNGRADE_V5_TO_V4
                                  "DROP TABLE run_stats; DROP TABLE iteration_stat; DROP TABLE collective_stat;"
                                  "DROP TABLE bucket_ready_stat; DROP INDEX span_run_seq;"
                                  "CREATE INDEX span_run_seq ON span(run_id, seq);"
                                  "UPDATE meta SET value = '3' WHERE key = 'schema_version';"
                                  "COMMIT;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
}

static void test_upgrade_from_schema_3(void **state)
{
    fixture *f = *state;
    write_run(f, "a", false);
    write_run(f, "b", true);
    char *before = json_report(f->st, -1, f->err, sizeof f->err);
    downgrade_to_v3(store_db(f->st));
    store_close(f->st);
    f->st = NULL;

    /* Read as it is (views) by a report: same figures, nothing written. */
    store *ro;
    assert_int_equal(store_open_readonly(f->path, &ro, f->err, sizeof f->err), 0);
    char *old = json_report(ro, -1, f->err, sizeof f->err);
    char *old_figures = without_hta(old), *before_figures = without_hta(before);
    assert_string_equal(old_figures, before_figures);
    free(old_figures);
    free(before_figures);
    assert_int_equal(scalar(store_db(ro), "SELECT value FROM meta WHERE key = 'schema_version'"), 3);
    assert_int_equal(scalar(store_db(ro), "SELECT COUNT(*) FROM span WHERE kind = 'allreduce'"
                                          " AND name = '" DDP_PARAM_COUNT_SPAN_NAME "'"),
                     2 * 3);
    store_close(ro);

    if (store_open(f->path, &f->st, f->err, sizeof f->err) != 0)
        fail_msg("store_open: %s", f->err);
    sqlite3 *db = store_db(f->st);
    assert_int_equal(scalar(db, "SELECT value FROM meta WHERE key = 'schema_version'"), STORE_SCHEMA_VERSION);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM run_stats"), 2);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'span_run_seq'"
                                " AND sql LIKE '%WHERE seq IS NOT NULL%'"),
                     1);
    /* DDP's parameter-count collective, an allreduce in the old file, is an all_gather. */
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM span WHERE kind = 'all_gather'"
                                " AND name = '" DDP_PARAM_COUNT_SPAN_NAME "'"),
                     2 * 3);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM collective_stat WHERE kind = 'all_gather'"), 2);
    assert_stats_equal_views(db);
    char *after = json_report(f->st, -1, f->err, sizeof f->err);
    assert_string_equal(after, before);
    free(before);
    free(old);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stats_equal_views, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_report_same_either_way, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_running_run_has_none, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_schema_3, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
