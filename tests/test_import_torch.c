/* test_import_torch.c — a real PyTorch DDP job imported: tests/import/ddp_trace.py runs
 * PyTorch (the Debian build, 1.13 without Kineto: its profiler writes the list-form
 * JSON, CPU ops only, each rank's clock from its own start) with gloo, 4 processes, an
 * MLP under DistributedDataParallel with 1 MB buckets, rank 2 sleeping inside its
 * forward; one trace per rank.  `ddpprof import` of the directory must make one run of
 * 4 ranks: ranks from the file names, six iterations (ProfilerStep#1-#6), DDP's four
 * buckets of two parameters each (a Linear layer's weight and bias, as the reducer
 * launched them), gloo's allreduces matched across ranks, the clocks aligned on them,
 * and the report naming rank 2 as the straggler the others wait for.  Skipped when
 * /usr/bin/python3 has no torch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* A real 4-rank gloo job of 6 steps whose ranks `slow` (a list) sleep `ms` a step,
 * traced into directory `name` and imported into db; r holds the import's output.
 * Skips where /usr/bin/python3 has no torch. */
static void traced_job(const char *name, const char *slow, const char *ms, char *db, size_t n, cmd_result *r)
{
    char dir[300], file[64];
    scratch_path(dir, sizeof dir, name);
    snprintf(file, sizeof file, "%.40s.sqlite", name);
    scratch_path(db, n, file);
    assert_int_equal(python_cmd(r, "ddp_trace.py", "--out", dir, "--world", "4", "--slow-rank", slow, "--slow-ms", ms,
                                "--steps", "6", NULL),
                     0);
    if (r->status == 3)
        skip(); /* no torch in /usr/bin/python3 */
    if (r->status != 0)
        fail_msg("ddp_trace.py: exit %d: %s", r->status, r->err);
    assert_int_equal(ddpprof_cmd(r, "import", dir, "-o", db, NULL), 0);
    if (r->status != 0)
        fail_msg("import: %s", r->err);
}

static void test_gloo_job_with_a_slow_rank(void **state)
{
    (void)state;
    char db[300];
    cmd_result r;
    traced_job("job", "2", "40", db, sizeof db, &r);
    assert_non_null(strstr(r.out, "imported 4 ranks, 6 iterations"));
    assert_non_null(strstr(r.out, "ends of matched collectives"));

    /* The list form, ranks from the names. */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM source_file WHERE format = 'pytorch-legacy-json'"
                                " AND rank_from = 'file name'"),
                     4);
    assert_int_equal(db_int(db, "SELECT MIN(iter) * 10 + MAX(iter) FROM span"), 16);
    /* Communication is gloo's, matched on all four ranks, 4 buckets a step. */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM collective WHERE kind = 'allreduce' AND nranks = 4"), 6 * 4);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE kind = 'allreduce' AND name = 'gloo:all_reduce'"
                                " AND bucket IS NOT NULL"),
                     4 * 6 * 4);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM bucket WHERE version = 0 AND nparams = 2"), 4);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE kind = 'forward'"
                                " AND name = 'DistributedDataParallel.forward'"),
                     4 * 6);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM span WHERE kind = 'optimizer'"), 4 * 6);
    /* Clocks: per rank an offset and its uncertainty, the method said. */
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM rank WHERE clock_uncertainty_ns IS NOT NULL"), 4);
    assert_int_equal(db_int(db, "SELECT instr(clock_sync, 'ends of matched collectives') > 0 FROM run"), 1);
    /* The slow rank arrives last at every collective: it waits least, the others wait for it. */
    assert_int_equal(db_int(db, "SELECT rank FROM iteration_stat GROUP BY rank ORDER BY SUM(wait_ns) LIMIT 1"), 2);
    assert_int_equal(ddpprof_cmd(&r, "report", db, NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "straggler   rank 2: the other ranks wait"));
    assert_non_null(strstr(r.out, "no device work in the trace"));
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--json", NULL), 0);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    assert_non_null(j);
    json_t *run = json_array_get(json_object_get(j, "runs"), 0);
    assert_int_equal(json_integer_value(json_object_get(run, "straggler_rank")), 2);
    double others = json_number_value(json_object_get(run, "straggler_others_wait_ms"));
    /* 40 ms of sleep a step, less what the others' own work hides */
    assert_true(others > 10.0);
    json_decref(j);
}

/* Two ranks of a real job slow together (each sleeps 80 ms a step in its forward): both
 * are named, in the text and in JSON's stragglers[]. */
static void test_two_slow_ranks_named(void **state)
{
    (void)state;
    char db[300];
    cmd_result r;
    traced_job("two", "2,3", "80", db, sizeof db, &r);
    assert_int_equal(ddpprof_cmd(&r, "report", db, NULL), 0);
    if (!strstr(r.out, "stragglers  ranks 2, 3: the other ranks wait")) {
        /* The per-rank table and the verdict (cmocka cuts a long message short). */
        const char *table = strstr(r.out, "  per rank");
        fail_msg("ranks 2 and 3 not named as stragglers:\n%.1500s", table ? table : r.out);
    }
    assert_int_equal(ddpprof_cmd(&r, "report", db, "--json", NULL), 0);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    assert_non_null(j);
    json_t *st = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "stragglers");
    assert_int_equal(json_array_size(st), 2);
    assert_int_equal(json_integer_value(json_array_get(st, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(st, 1)), 3);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gloo_job_with_a_slow_rank, scratch_group_setup, scratch_group_teardown),
        cmocka_unit_test_setup_teardown(test_two_slow_ranks_named, scratch_group_setup, scratch_group_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
