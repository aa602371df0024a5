/* test_store.c — unit tests of the results database (profiler/store*.c) and its views.
 *
 * Contract checked: the schema and pragmas store_open sets up; the run lifecycle
 * (running -> complete | failed, a failed run keeps its spans, the writer recorded);
 * refusal of a newer schema; batch atomicity of store_write_spans; param.bucket
 * following the latest assignment; and the views' figures against DESIGN.md's worked example, against
 * hand-computed unions, and against a brute-force union on random spans.  Each test
 * gets its own temporary database file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "profiler/store.h"
#include "tmp_store.h"

#define US 1000 /* the worked example is in µs; the database holds ns */

/* Each test gets a fresh store (tmp_store.h). */
typedef store_fixture fixture;

static int64_t begin_run(fixture *f, int world, int iterations, int warmup)
{
    double speed[8] = {1, 1.5, 1, 1, 1, 1, 1, 1};
    store_run_info info = {.name = "test run",
                           .source = "scenarios/test.ini",
                           .scenario_ini = "[run]\nname = test run\n",
                           .backend = "sim",
                           .model = "mlp",
                           .world_size = world,
                           .iterations = iterations,
                           .warmup = warmup,
                           .total_params = 1000,
                           .bucket_cap_mb = 25,
                           .rank_speed = speed};
    int64_t id = -1;
    assert_int_equal(store_begin_run(f->st, &info, &id, f->err, sizeof f->err), 0);
    assert_true(id > 0);
    return id;
}

/* DESIGN.md's worked example: 2 ranks, one iteration, one bucket. */
static void write_worked_example(fixture *f, int64_t run, int iter, int64_t seq)
{
    span s[] = {
        mk(0, iter, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0 * US, 10 * US),
        mk(0, iter, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 10 * US, 20 * US),
        mk(0, iter, STREAM_COMM, SPAN_ALLREDUCE, 0, seq, 1000000, 12 * US, 30 * US),
        mk(0, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, 30 * US, 32 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0 * US, 14 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 14 * US, 28 * US),
        mk(1, iter, STREAM_COMM, SPAN_ALLREDUCE, 0, seq, 1000000, 25 * US, 30 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, 30 * US, 32 * US),
    };
    assert_int_equal(store_write_spans(f->st, run, s, sizeof s / sizeof s[0], f->err, sizeof f->err), 0);
}

static sqlite3_stmt *query(fixture *f, const char *sql)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(store_db(f->st), sql, -1, &s, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(store_db(f->st)));
    assert_int_equal(rc, SQLITE_OK);
    return s;
}

static int64_t scalar(fixture *f, const char *sql)
{
    sqlite3_stmt *s = query(f, sql);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

typedef struct {
    int64_t step, compute, comm, overlap, exposed, wait;
    int warmup;
} stats;

static stats iteration_stats(fixture *f, int64_t run, int rank, int iter)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT step_ns, compute_ns, comm_ns, overlap_ns, exposed_comm_ns, wait_ns, warmup"
             " FROM iteration_stats WHERE run_id = %" PRId64 " AND rank = %d AND iter = %d",
             run, rank, iter);
    sqlite3_stmt *s = query(f, sql);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    stats v = {sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
               sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5),
               sqlite3_column_int(s, 6)};
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    return v;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_pragmas_and_schema(void **state)
{
    fixture *f = *state;
    sqlite3_stmt *s = query(f, "PRAGMA journal_mode");
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    assert_int_equal(scalar(f, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'"),
                     STORE_SCHEMA_VERSION);
    /* 'ddpp': the file says whose it is. */
    assert_int_equal(scalar(f, "PRAGMA application_id"), 0x64647070);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name IN"
                               " ('collective', 'collective_arrival', 'iteration_stats', 'ddp_logging')"),
                     4);
    /* Spans: a view over span_data, clustered on (run_id, rank, iter, start_ns, dup), and
     * the collectives' index. */
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = 'span'"), 1);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'span_data'"
                               " AND sql LIKE '%WITHOUT ROWID%'"),
                     1);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'span_run_seq'"
                               " AND tbl_name = 'span_data'"),
                     1);
    /* Reopening an existing file of the current version works and changes nothing. */
    store *again = NULL;
    assert_int_equal(store_open(f->path, &again, f->err, sizeof f->err), 0);
    store_close(again);
    assert_int_equal(store_open_readonly(f->path, &again, f->err, sizeof f->err), 0);
    store_close(again);
}

static void test_worked_example_views(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 2, 1, 0);
    write_worked_example(f, run, 0, 0);

    stats r0 = iteration_stats(f, run, 0, 0), r1 = iteration_stats(f, run, 1, 0);
    assert_int_equal(r0.wait, 13 * US);
    assert_int_equal(r1.wait, 0);
    assert_int_equal(r0.compute, 22 * US);
    assert_int_equal(r1.compute, 30 * US);
    assert_int_equal(r0.comm, 18 * US);
    assert_int_equal(r1.comm, 5 * US);
    assert_int_equal(r0.overlap, 8 * US);
    assert_int_equal(r1.overlap, 3 * US);
    assert_int_equal(r0.exposed, 10 * US);
    assert_int_equal(r1.exposed, 2 * US);
    assert_int_equal(r0.step, 32 * US);
    assert_int_equal(r1.step, 32 * US);
    assert_int_equal(r0.warmup, 0);
    /* overlap fraction |M∩C|/|M|: 44.4% and 60% */
    assert_int_equal(r0.overlap * 1000 / r0.comm, 444);
    assert_int_equal(r1.overlap * 1000 / r1.comm, 600);

    sqlite3_stmt *s = query(f, "SELECT seq, iter, bucket, bytes, first_arrival_ns, last_arrival_ns,"
                               " end_ns, nranks, transfer_ns FROM collective");
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 0);
    assert_int_equal(sqlite3_column_int64(s, 1), 0);
    assert_int_equal(sqlite3_column_int64(s, 2), 0);
    assert_int_equal(sqlite3_column_int64(s, 3), 1000000);
    assert_int_equal(sqlite3_column_int64(s, 4), 12 * US);
    assert_int_equal(sqlite3_column_int64(s, 5), 25 * US);
    assert_int_equal(sqlite3_column_int64(s, 6), 30 * US);
    assert_int_equal(sqlite3_column_int64(s, 7), 2);
    assert_int_equal(sqlite3_column_int64(s, 8), 5 * US); /* transfer */
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);

    s = query(f, "SELECT rank, arrival_ns, wait_ns, end_ns FROM collective_arrival ORDER BY rank");
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 0);
    assert_int_equal(sqlite3_column_int64(s, 1), 12 * US);
    assert_int_equal(sqlite3_column_int64(s, 2), 13 * US);
    assert_int_equal(sqlite3_column_int64(s, 3), 30 * US);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 1);
    assert_int_equal(sqlite3_column_int64(s, 1), 25 * US);
    assert_int_equal(sqlite3_column_int64(s, 2), 0);
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
}

static void test_unions_nested_overlapping_disjoint(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 2, 1, 0);
    /* Written out of order on purpose: the views sort.
     * compute: [0,100] with [10,20] nested, [90,150] overlapping, [200,250] disjoint,
     *          [250,260] touching, a duplicate [200,250]: union [0,150] + [200,260] = 210.
     * allreduce: [140,210], [205,300] overlapping each other: union [140,300] = 160.
     * M ∩ C = [140,150] + [200,260] = 70; exposed = 90.
     * A host span must count in neither set. */
    span s[] = {
        mk(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 200, 250),
        mk(0, 0, STREAM_COMM, SPAN_ALLREDUCE, 1, 1, 64, 205, 300),
        mk(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 100),
        mk(0, 0, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 64, 10, 20),
        mk(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 90, 150),
        mk(0, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, 0, 64, 140, 210),
        mk(0, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, 250, 260),
        mk(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 200, 250),
        mk(0, 0, STREAM_HOST, SPAN_WAIT, -1, -1, 0, 150, 400),
        /* rank 1: only disjoint compute, no communication */
        mk(1, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 10),
        mk(1, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, 20, 25),
    };
    assert_int_equal(store_write_spans(f->st, run, s, sizeof s / sizeof s[0], f->err, sizeof f->err), 0);
    stats r0 = iteration_stats(f, run, 0, 0);
    assert_int_equal(r0.compute, 210);
    assert_int_equal(r0.comm, 160);
    assert_int_equal(r0.overlap, 70);
    assert_int_equal(r0.exposed, 90);
    assert_int_equal(r0.step, 260); /* first forward start to last optimizer end */
    stats r1 = iteration_stats(f, run, 1, 0);
    assert_int_equal(r1.compute, 15);
    assert_int_equal(r1.comm, 0);
    assert_int_equal(r1.overlap, 0);
    assert_int_equal(r1.exposed, 0);
    assert_int_equal(r1.step, 25);
}

/* Union length of [s,e) intervals on a small integer grid, counted cell by cell. */
static int64_t brute_union(int64_t (*iv)[2], int n, int64_t (*other)[2], int m, bool inter)
{
    int64_t total = 0;
    for (int64_t t = 0; t < 1000; t++) {
        bool a = false, b = false;
        for (int i = 0; i < n; i++)
            a = a || (iv[i][0] <= t && t < iv[i][1]);
        for (int i = 0; i < m; i++)
            b = b || (other[i][0] <= t && t < other[i][1]);
        total += inter ? (a && b) : a;
    }
    return total;
}

static void test_unions_random_against_brute_force(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 1, 20, 0);
    srand(12345);
    int64_t c[20][12][2], m[20][6][2];
    int nc[20], nm[20];
    for (int it = 0; it < 20; it++) {
        span s[18];
        int n = 0;
        nc[it] = 1 + rand() % 12;
        nm[it] = rand() % 6;
        for (int i = 0; i < nc[it]; i++) {
            int64_t a = rand() % 900, len = rand() % 100;
            c[it][i][0] = a;
            c[it][i][1] = a + len;
            s[n++] = mk(0, it, STREAM_COMPUTE, i == 0 ? SPAN_FORWARD : SPAN_BACKWARD, -1, -1, 0, a,
                        a + len);
        }
        for (int i = 0; i < nm[it]; i++) {
            int64_t a = rand() % 900, len = rand() % 100;
            m[it][i][0] = a;
            m[it][i][1] = a + len;
            s[n++] = mk(0, it, STREAM_COMM, SPAN_ALLREDUCE, i, it * 10 + i, 8, a, a + len);
        }
        assert_int_equal(store_write_spans(f->st, run, s, (size_t)n, f->err, sizeof f->err), 0);
    }
    for (int it = 0; it < 20; it++) {
        stats v = iteration_stats(f, run, 0, it);
        int64_t C = brute_union(c[it], nc[it], NULL, 0, false);
        int64_t M = brute_union(m[it], nm[it], NULL, 0, false);
        int64_t O = brute_union(c[it], nc[it], m[it], nm[it], true);
        assert_int_equal(v.compute, C);
        assert_int_equal(v.comm, M);
        assert_int_equal(v.overlap, O);
        assert_int_equal(v.exposed, M - O);
    }
}

static void test_warmup_flag(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 2, 3, 2);
    for (int it = 0; it < 5; it++)
        write_worked_example(f, run, it, it);
    for (int it = 0; it < 5; it++) {
        assert_int_equal(iteration_stats(f, run, 0, it).warmup, it < 2);
        assert_int_equal(iteration_stats(f, run, 1, it).warmup, it < 2);
    }
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM iteration_stats WHERE run_id = %" PRId64 " AND warmup", run);
    assert_int_equal(scalar(f, sql), 4);
}

static void test_run_status_transitions(void **state)
{
    fixture *f = *state;
    int64_t ok = begin_run(f, 2, 1, 0);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT status = 'running' AND started_at LIKE '____-__-__T__:__:__%%Z'"
             " AND finished_at IS NULL AND error IS NULL FROM run WHERE id = %" PRId64, ok);
    assert_int_equal(scalar(f, sql), 1);
    /* The writer is recorded, so that a reader can tell a dead run from a live one. */
    snprintf(sql, sizeof sql,
             "SELECT writer_pid = %lld AND length(writer_host) > 0 AND writer_start > 0"
             " FROM run WHERE id = %" PRId64,
             (long long)getpid(), ok);
    assert_int_equal(scalar(f, sql), 1);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM rank WHERE run_id = %" PRId64 " AND"
             " ((rank = 0 AND speed = 1.0) OR (rank = 1 AND speed = 1.5))", ok);
    assert_int_equal(scalar(f, sql), 2);
    write_worked_example(f, ok, 0, 0);
    assert_int_equal(store_finish_run(f->st, ok, NULL, f->err, sizeof f->err), 0);
    snprintf(sql, sizeof sql,
             "SELECT status = 'complete' AND finished_at LIKE '____-__-__T__:__:__%%Z'"
             " AND finished_at >= started_at AND error IS NULL FROM run WHERE id = %" PRId64, ok);
    assert_int_equal(scalar(f, sql), 1);

    /* An ended run stays ended. */
    assert_int_equal(store_finish_run(f->st, ok, "late failure", f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "already finished"));
    assert_int_equal(store_finish_run(f->st, 999, NULL, f->err, sizeof f->err), -1);
    assert_string_equal(f->err, "no run with id 999");

    /* A failed run keeps the spans it wrote, with its error. */
    int64_t bad = begin_run(f, 2, 1, 0);
    write_worked_example(f, bad, 0, 0);
    assert_int_equal(store_finish_run(f->st, bad, "rank 1: collective timed out", f->err, sizeof f->err), 0);
    snprintf(sql, sizeof sql,
             "SELECT status = 'failed' AND error = 'rank 1: collective timed out'"
             " AND finished_at IS NOT NULL FROM run WHERE id = %" PRId64, bad);
    assert_int_equal(scalar(f, sql), 1);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM span WHERE run_id = %" PRId64, bad);
    assert_int_equal(scalar(f, sql), 8);
    assert_int_equal(iteration_stats(f, bad, 0, 0).wait, 13 * US);

    /* The status column refuses anything else. */
    assert_int_not_equal(sqlite3_exec(store_db(f->st), "UPDATE run SET status = 'done'", NULL, NULL, NULL),
                         SQLITE_OK);
}

static void test_schema_version_refusal(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 1, 1, 0);
    (void)run;
    assert_int_equal(sqlite3_exec(store_db(f->st),
                                  "UPDATE meta SET value = '99' WHERE key = 'schema_version'", NULL,
                                  NULL, NULL),
                     SQLITE_OK);
    store *st = NULL;
    char err[512] = "";
    assert_int_equal(store_open(f->path, &st, err, sizeof err), -1);
    assert_null(st);
    assert_non_null(strstr(err, "schema version 99 is newer"));
    err[0] = '\0';
    assert_int_equal(store_open_readonly(f->path, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "newer"));
    /* Refusal leaves the file as it was. */
    assert_int_equal(scalar(f, "SELECT value FROM meta WHERE key = 'schema_version'"), 99);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM run"), 1);
}

static void test_readonly_refuses_non_ddpprof_file(void **state)
{
    fixture *f = *state;
    char path[80];
    snprintf(path, sizeof path, "%s.other", f->path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    store *st = NULL;
    assert_int_equal(store_open_readonly(path, &st, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "not a ddpprof database"));
    remove_db(path);
    assert_int_equal(store_open_readonly("/nonexistent/dir/x.sqlite", &st, f->err, sizeof f->err), -1);
}

static void test_ddp_logging(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 2, 2, 0);
    write_worked_example(f, run, 0, 0);
    /* Iteration 1 on rank 0: the allreduce starts after backward ended, so the
     * overlap clamps at 0; rank 1 has no allreduce (no_sync-like): no row, as the DDP
     * logger times synchronised iterations only. */
    span s[] = {
        mk(0, 1, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 100 * US, 104 * US),
        mk(0, 1, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 104 * US, 110 * US),
        mk(0, 1, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 110 * US, 120 * US),
        mk(0, 1, STREAM_COMM, SPAN_ALLREDUCE, 0, 1, 8, 125 * US, 131 * US),
        mk(1, 1, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 100 * US, 110 * US),
        mk(1, 1, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 110 * US, 130 * US),
    };
    assert_int_equal(store_write_spans(f->st, run, s, sizeof s / sizeof s[0], f->err, sizeof f->err), 0);
    sqlite3_stmt *q = query(f, "SELECT rank, iter, forward_compute_time, backward_compute_time,"
                               " backward_comm_time, backward_compute_comm_overlap_time"
                               " FROM ddp_logging ORDER BY iter, rank");
    const int64_t want[3][6] = {
        {0, 0, 10 * US, 10 * US, 18 * US, 8 * US},
        {1, 0, 14 * US, 14 * US, 5 * US, 3 * US},
        {0, 1, 10 * US, 10 * US, 6 * US, 0},
    };
    for (int r = 0; r < 3; r++) {
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        for (int c = 0; c < 6; c++) {
            if (want[r][c] < 0)
                assert_int_equal(sqlite3_column_type(q, c), SQLITE_NULL);
            else
                assert_int_equal(sqlite3_column_int64(q, c), want[r][c]);
        }
    }
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
}

/* Reads of one run must use the run_id indexes, never scan every run's spans. */
static void assert_no_span_scan(fixture *f, const char *select_sql)
{
    size_t n = strlen(select_sql) + 32;
    char *sql = malloc(n);
    assert_non_null(sql);
    snprintf(sql, n, "EXPLAIN QUERY PLAN %s", select_sql);
    sqlite3_stmt *s = query(f, sql);
    assert_int_equal(sqlite3_bind_int64(s, 1, 1), SQLITE_OK);
    int rc, searches = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(s, 3);
        if (strncmp(detail, "SCAN span_data", 14) == 0)
            fail_msg("full scan of span in plan of: %s", select_sql);
        searches += strncmp(detail, "SEARCH span_data", 16) == 0;
    }
    assert_int_equal(rc, SQLITE_DONE);
    assert_true(searches > 0);
    sqlite3_finalize(s);
    free(sql);
}

static void test_one_run_queries_use_indexes(void **state)
{
    fixture *f = *state;
    const char *views[] = {"collective", "collective_arrival", "iteration_stats", "ddp_logging"};
    for (size_t i = 0; i < 4; i++) {
        const char *one = store_view_select(views[i], true), *all = store_view_select(views[i], false);
        assert_non_null(one);
        assert_non_null(all);
        assert_non_null(strstr(one, "run_id = ?1"));
        assert_null(strstr(all, "?1"));
        assert_no_span_scan(f, one);
    }
    assert_null(store_view_select("nope", true));
    /* ddp_logging is a single aggregate: SQLite pushes the filter into the view itself. */
    assert_no_span_scan(f, "SELECT * FROM ddp_logging WHERE run_id = ?1");

    /* The one-run text gives the view's rows for that run. */
    int64_t a = begin_run(f, 2, 1, 0), b = begin_run(f, 2, 1, 0);
    write_worked_example(f, a, 0, 0);
    write_worked_example(f, b, 0, 0);
    const char *its = store_view_select("iteration_stats", true);
    size_t n = strlen(its) + 128;
    char *sql = malloc(n);
    assert_non_null(sql);
    snprintf(sql, n, "WITH s AS (%s) SELECT COUNT(*), SUM(wait_ns) FROM s", its);
    sqlite3_stmt *s = query(f, sql);
    assert_int_equal(sqlite3_bind_int64(s, 1, b), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 2);
    assert_int_equal(sqlite3_column_int64(s, 1), 13 * US);
    sqlite3_finalize(s);
    free(sql);
}

static void test_buckets_and_params(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 2, 1, 0);
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "layer%d.weight", i);
        assert_int_equal(store_write_param(f->st, run, i, name, 100 * (i + 1), "10x10", "layer", f->err,
                                           sizeof f->err),
                         0);
    }
    const int b0p[] = {3, 2}, b1p[] = {1, 0};
    store_bucket v0[] = {{.nbytes = 2800, .size_limit = 1048576, .nparams = 2, .params = b0p},
                         {.nbytes = 1200, .size_limit = 26214400, .nparams = 2, .params = b1p}};
    assert_int_equal(store_write_buckets(f->st, run, 0, v0, 2, f->err, sizeof f->err), 0);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT bucket FROM param WHERE run_id = %" PRId64 " AND idx = 3", run);
    assert_int_equal(scalar(f, sql), 0);

    const int r0[] = {3}, r1[] = {2, 1, 0};
    store_bucket v1[] = {{.nbytes = 1600, .size_limit = 1048576, .nparams = 1, .params = r0},
                         {.nbytes = 2400, .size_limit = 26214400, .nparams = 3, .params = r1}};
    assert_int_equal(store_write_buckets(f->st, run, 1, v1, 2, f->err, sizeof f->err), 0);
    snprintf(sql, sizeof sql, "SELECT bucket FROM param WHERE run_id = %" PRId64 " AND idx = 2", run);
    assert_int_equal(scalar(f, sql), 1);
    /* Rewriting the older assignment does not move param.bucket off the latest. */
    assert_int_equal(store_write_buckets(f->st, run, 0, v0, 2, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(f, sql), 1);

    sqlite3_stmt *s = query(f, "SELECT version, idx, nbytes, nparams, size_limit, params FROM bucket"
                               " ORDER BY version, idx");
    const char *want_params[] = {"3,2", "1,0", "3", "2,1,0"};
    const int64_t want_bytes[] = {2800, 1200, 1600, 2400};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(s, 0), i / 2);
        assert_int_equal(sqlite3_column_int(s, 1), i % 2);
        assert_int_equal(sqlite3_column_int64(s, 2), want_bytes[i]);
        assert_string_equal((const char *)sqlite3_column_text(s, 5), want_params[i]);
    }
    assert_int_equal(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    snprintf(sql, sizeof sql, "SELECT bytes FROM param WHERE run_id = %" PRId64 " AND idx = 1", run);
    assert_int_equal(scalar(f, sql), 800); /* 200 fp32 elements */
}

static void test_span_batch_is_atomic_and_nulls(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, 1, 1, 0);
    span s[] = {
        mk(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 10),
        mk(0, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, 30, 20), /* ends before it starts */
    };
    assert_int_equal(store_write_spans(f->st, run, s, 2, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "CHECK constraint failed"));
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM span"), 0);

    /* Spans of an unknown run are refused (foreign key). */
    assert_int_equal(store_write_spans(f->st, 4242, s, 1, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "FOREIGN KEY"));

    /* -1 layer/bucket/seq are NULL; a name of exactly SPAN_NAME bytes is not overrun. */
    memset(s[0].name, 'x', SPAN_NAME);
    s[0].layer = 3;
    assert_int_equal(store_write_spans(f->st, run, s, 1, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM span WHERE layer = 3 AND bucket IS NULL"
                               " AND seq IS NULL AND stream = 'compute' AND kind = 'forward'"),
                     1);
    assert_int_equal(scalar(f, "SELECT length(name) FROM span"), SPAN_NAME);
    /* The handle stays usable after a failed batch. */
    s[1].end_ns = 40;
    assert_int_equal(store_write_spans(f->st, run, &s[1], 1, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(f, "SELECT COUNT(*) FROM span"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pragmas_and_schema, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_worked_example_views, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unions_nested_overlapping_disjoint, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unions_random_against_brute_force, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_warmup_flag, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_run_status_transitions, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_schema_version_refusal, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_readonly_refuses_non_ddpprof_file, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_ddp_logging, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_one_run_queries_use_indexes, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_buckets_and_params, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_span_batch_is_atomic_and_nulls, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
