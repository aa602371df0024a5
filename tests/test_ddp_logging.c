/* test_ddp_logging.c — views ddp_logging and ddp_logging_avg hold PyTorch DDP logger's
 * definitions: where each interval starts and ends (comm start at bucket 0's launch,
 * static_graph's first iteration as delay_all_reduce() times it), synchronised
 * iterations only, and the sampled running integer averages, which a duration without
 * value leaves unchanged.  tests/test_parity_timeline.c checks the same definitions
 * against PyTorch's own logger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <string.h>

#include "tmp_store.h"

static span named(span s, const char *name)
{
    snprintf(s.name, sizeof s.name, "%s", name);
    return s;
}

static int64_t begin_run(store *st, int iterations)
{
    char err[256];
    double speed[1] = {1};
    store_run_info info = {.name = "logger", .backend = "cpu", .model = "mlp", .world_size = 1,
                           .iterations = iterations, .total_params = 10, .bucket_cap_mb = 25, .rank_speed = speed};
    int64_t run = -1;
    assert_int_equal(store_begin_run(st, &info, &run, err, sizeof err), 0);
    return run;
}

static int64_t write_run(store *st)
{
    char err[256];
    int64_t run = begin_run(st, 5);
    const span_stream C = STREAM_COMPUTE, M = STREAM_COMM;
    span s[] = {
        /* iteration 0: construction (not timed), buffers broadcast, forward, backward,
         * the copy into the bucket (its end: the bucket's launch), its allreduce, started
         * a little later by the comm stream, the copy out, the step */
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 0, 8, 0, 5), "verify params: broadcast sizes and strides int64"),
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 1, 40, 5, 10), "sync module states float32"),
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 2, 16, 10, 12), "broadcast buffers float32"),
        mk(0, 0, C, SPAN_FORWARD, -1, -1, 0, 12, 20),
        mk(0, 0, C, SPAN_BACKWARD, -1, -1, 0, 20, 30),
        mk(0, 0, C, SPAN_COPY_IN, 0, -1, 40, 30, 31),
        mk(0, 0, M, SPAN_ALLREDUCE, 0, 3, 40, 32, 40),
        mk(0, 0, C, SPAN_COPY_OUT, 0, -1, 40, 41, 43),
        mk(0, 0, C, SPAN_OPTIMIZER, -1, -1, 0, 43, 44),
        /* iteration 1: no_sync, not timed by the logger */
        mk(0, 1, C, SPAN_FORWARD, -1, -1, 0, 50, 58),
        mk(0, 1, C, SPAN_BACKWARD, -1, -1, 0, 58, 70),
        /* iteration 2: two buckets overlapping backward; bucket 0 launched at 96, its
         * allreduce started at 97 */
        mk(0, 2, C, SPAN_FORWARD, -1, -1, 0, 80, 90),
        mk(0, 2, C, SPAN_BACKWARD, -1, -1, 0, 90, 100),
        mk(0, 2, C, SPAN_COPY_IN, 0, -1, 20, 95, 96),
        mk(0, 2, M, SPAN_ALLREDUCE, 0, 4, 20, 97, 110),
        mk(0, 2, C, SPAN_COPY_IN, 1, -1, 20, 100, 101),
        mk(0, 2, M, SPAN_ALLREDUCE, 1, 5, 20, 110, 112),
        mk(0, 2, C, SPAN_COPY_OUT, 0, -1, 40, 112, 114),
        /* iteration 3: gradients are views and a hook divides (nothing copied), the
         * allreduce starts after the backward: the overlap has no value */
        mk(0, 3, C, SPAN_FORWARD, -1, -1, 0, 120, 126),
        mk(0, 3, C, SPAN_BACKWARD, -1, -1, 0, 126, 140),
        mk(0, 3, M, SPAN_ALLREDUCE, 0, 6, 40, 142, 150),
        /* iteration 4: the last synchronised one, never logged */
        mk(0, 4, C, SPAN_FORWARD, -1, -1, 0, 160, 166),
        mk(0, 4, C, SPAN_BACKWARD, -1, -1, 0, 166, 170),
        mk(0, 4, C, SPAN_COPY_IN, 0, -1, 40, 170, 171),
        mk(0, 4, M, SPAN_ALLREDUCE, 0, 7, 40, 171, 175),
        mk(0, 4, C, SPAN_COPY_OUT, 0, -1, 40, 175, 176),
    };
    assert_int_equal(store_write_spans(st, run, s, sizeof s / sizeof s[0], err, sizeof err), 0);
    return run;
}

/* The rows of ddp_logging for `run`, NULL as -1. */
static void expect_rows(sqlite3 *db, int64_t run, const int64_t (*want)[5], int nrows)
{
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT iter, COALESCE(forward_compute_time, -1),"
                                        " COALESCE(backward_compute_time, -1), COALESCE(backward_comm_time, -1),"
                                        " COALESCE(backward_compute_comm_overlap_time, -1) FROM ddp_logging"
                                        " WHERE run_id = ? ORDER BY iter",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    for (int r = 0; r < nrows; r++) {
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        for (int c = 0; c < 5; c++)
            assert_int_equal(sqlite3_column_int64(q, c), want[r][c]);
    }
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
}

static void test_logger_definitions(void **state)
{
    (void)state;
    char path[128], err[256];
    store *st = NULL;
    assert_int_equal(open_tmp_store(path, sizeof path, "ddpprof_logging_", &st, err, sizeof err), 0);
    int64_t run = write_run(st);
    sqlite3 *db = store_db(st);
    /* forward: from the buffers' broadcast (construction left out) to the end of
     * forward; backward compute: to the last copy into a bucket; comm: from bucket 0's
     * launch (the end of its copy in, else its allreduce's start) to the end of the copy
     * out; overlap: compute end - comm start, no value (-1 here) where negative.  The
     * no_sync iteration has no row. */
    const int64_t want[4][5] = {{0, 10, 11, 12, 0}, {2, 10, 11, 18, 5}, {3, 6, 14, 8, -1}, {4, 6, 5, 5, 0}};
    expect_rows(db, run, want, 4);

    /* Logged: synchronised iterations 0, 2 and 3 (the last one never is); running
     * integer means, so the overlap's (0 + 5) / 2 truncates to 2, and iteration 3's
     * overlap, without value, leaves it at 2 (averaging a 0 in would give 1). */
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT iterations_logged, last_logged_iter, avg_forward_compute_time,"
                                        " avg_backward_compute_time, avg_backward_comm_time,"
                                        " avg_backward_compute_comm_overlap_time FROM ddp_logging_avg WHERE run_id = ?",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const int64_t avg[6] = {3, 3, 8, 12, 12, 2};
    for (int c = 0; c < 6; c++)
        assert_int_equal(sqlite3_column_int64(q, c), avg[c]);
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    store_close(st);
    remove_db(path);
}

/* static_graph's first synchronised iteration: delay_all_reduce() takes compute end and
 * comm start together at the backward's end, before the copies into the buckets, after
 * which the used-parameter bitmap (sent first) and the buckets go. */
static void test_static_graph_first_iteration(void **state)
{
    (void)state;
    char path[128], err[256];
    store *st = NULL;
    assert_int_equal(open_tmp_store(path, sizeof path, "ddpprof_logging_", &st, err, sizeof err), 0);
    int64_t run = begin_run(st, 2);
    const span_stream C = STREAM_COMPUTE, M = STREAM_COMM;
    span s[] = {
        mk(0, 0, C, SPAN_FORWARD, -1, -1, 0, 10, 20),
        mk(0, 0, C, SPAN_BACKWARD, -1, -1, 0, 20, 30),
        named(mk(0, 0, M, SPAN_ALLREDUCE, -1, 0, 24, 30, 31), "local_used_map int32"),
        mk(0, 0, C, SPAN_COPY_IN, 0, -1, 40, 30, 33),
        mk(0, 0, M, SPAN_ALLREDUCE, 0, 1, 40, 33, 40),
        mk(0, 0, C, SPAN_COPY_OUT, 0, -1, 40, 40, 42),
        /* the next iteration reduces as the backward goes */
        mk(0, 1, C, SPAN_FORWARD, -1, -1, 0, 50, 60),
        mk(0, 1, C, SPAN_BACKWARD, -1, -1, 0, 60, 70),
        mk(0, 1, C, SPAN_COPY_IN, 0, -1, 40, 64, 65),
        mk(0, 1, M, SPAN_ALLREDUCE, 0, 2, 40, 65, 72),
        mk(0, 1, C, SPAN_COPY_OUT, 0, -1, 40, 72, 73),
    };
    assert_int_equal(store_write_spans(st, run, s, sizeof s / sizeof s[0], err, sizeof err), 0);
    /* iteration 0: compute 20..30 (the copies left out), comm 30..42, overlap 0 */
    const int64_t want[2][5] = {{0, 10, 10, 12, 0}, {1, 10, 10, 8, 5}};
    expect_rows(store_db(st), run, want, 2);
    store_close(st);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_logger_definitions),
                                       cmocka_unit_test(test_static_graph_first_iteration)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
