/* test_ddp_logging.c — views ddp_logging and ddp_logging_avg hold PyTorch DDP logger's
 * definitions: where each interval starts and ends, synchronised iterations only, and
 * the sampled running integer averages. */
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

static int64_t write_run(store *st)
{
    char err[256];
    double speed[1] = {1};
    store_run_info info = {.name = "logger", .backend = "cpu", .model = "mlp", .world_size = 1, .iterations = 4,
                           .total_params = 10, .bucket_cap_mb = 25, .rank_speed = speed};
    int64_t run = -1;
    assert_int_equal(store_begin_run(st, &info, &run, err, sizeof err), 0);
    const span_stream C = STREAM_COMPUTE, M = STREAM_COMM;
    span s[] = {
        /* iteration 0: construction (not timed), buffers broadcast, forward, backward,
         * the copy into the bucket, its allreduce, the copy out, the step */
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 0, 8, 0, 5), "verify params: broadcast sizes and strides int64"),
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 1, 40, 5, 10), "sync module states float32"),
        named(mk(0, 0, M, SPAN_BROADCAST, -1, 2, 16, 10, 12), "broadcast buffers float32"),
        mk(0, 0, C, SPAN_FORWARD, -1, -1, 0, 12, 20),
        mk(0, 0, C, SPAN_BACKWARD, -1, -1, 0, 20, 30),
        mk(0, 0, C, SPAN_COPY_IN, 0, -1, 40, 30, 31),
        mk(0, 0, M, SPAN_ALLREDUCE, 0, 3, 40, 31, 40),
        mk(0, 0, C, SPAN_COPY_OUT, 0, -1, 40, 41, 43),
        mk(0, 0, C, SPAN_OPTIMIZER, -1, -1, 0, 43, 44),
        /* iteration 1: no_sync, not timed by the logger */
        mk(0, 1, C, SPAN_FORWARD, -1, -1, 0, 50, 58),
        mk(0, 1, C, SPAN_BACKWARD, -1, -1, 0, 58, 70),
        /* iteration 2: two buckets overlapping backward */
        mk(0, 2, C, SPAN_FORWARD, -1, -1, 0, 80, 90),
        mk(0, 2, C, SPAN_BACKWARD, -1, -1, 0, 90, 100),
        mk(0, 2, C, SPAN_COPY_IN, 1, -1, 20, 95, 96),
        mk(0, 2, M, SPAN_ALLREDUCE, 1, 4, 20, 96, 110),
        mk(0, 2, C, SPAN_COPY_IN, 0, -1, 20, 100, 101),
        mk(0, 2, M, SPAN_ALLREDUCE, 0, 5, 20, 101, 112),
        mk(0, 2, C, SPAN_COPY_OUT, 0, -1, 40, 112, 114),
        /* iteration 3: the last synchronised one, never logged */
        mk(0, 3, C, SPAN_FORWARD, -1, -1, 0, 120, 126),
        mk(0, 3, C, SPAN_BACKWARD, -1, -1, 0, 126, 140),
        mk(0, 3, C, SPAN_COPY_IN, 0, -1, 40, 140, 141),
        mk(0, 3, M, SPAN_ALLREDUCE, 0, 6, 40, 141, 150),
        mk(0, 3, C, SPAN_COPY_OUT, 0, -1, 40, 150, 151),
    };
    assert_int_equal(store_write_spans(st, run, s, sizeof s / sizeof s[0], err, sizeof err), 0);
    return run;
}

static void test_logger_definitions(void **state)
{
    (void)state;
    char path[128], err[256];
    store *st = NULL;
    assert_int_equal(open_tmp_store(path, sizeof path, "ddpprof_logging_", &st, err, sizeof err), 0);
    int64_t run = write_run(st);
    sqlite3 *db = store_db(st);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT iter, forward_compute_time, backward_compute_time, backward_comm_time,"
                                        " backward_compute_comm_overlap_time FROM ddp_logging WHERE run_id = ?"
                                        " ORDER BY iter",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    /* forward: from the buffers' broadcast (construction left out) to the end of
     * forward; backward compute: to the last copy into a bucket; comm: from the first
     * bucket's launch to the end of the copy out; overlap: compute end - comm start. */
    const int64_t want[3][5] = {{0, 10, 11, 12, 0}, {2, 10, 11, 18, 5}, {3, 6, 15, 10, 0}};
    for (int r = 0; r < 3; r++) {
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        for (int c = 0; c < 5; c++)
            assert_int_equal(sqlite3_column_int64(q, c), want[r][c]);
    }
    assert_int_equal(sqlite3_step(q), SQLITE_DONE); /* the no_sync iteration has no row */
    sqlite3_finalize(q);

    /* Logged: synchronised iterations 0 and 2 (the last one never is); running integer
     * means, so the overlap's (0 + 5) / 2 truncates to 2. */
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT iterations_logged, last_logged_iter, avg_forward_compute_time,"
                                        " avg_backward_compute_time, avg_backward_comm_time,"
                                        " avg_backward_compute_comm_overlap_time FROM ddp_logging_avg WHERE run_id = ?",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const int64_t avg[6] = {2, 2, 10, 11, 15, 2};
    for (int c = 0; c < 6; c++)
        assert_int_equal(sqlite3_column_int64(q, c), avg[c]);
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    store_close(st);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_logger_definitions)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
