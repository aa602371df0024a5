/* test_compare.c — `ddpprof compare` (reports/compare_match.c, compare.c,
 * compare_json.c, src/cli_compare.c) on runs written span by span through the store,
 * so that every figure is known by hand.
 *
 * Run A is DESIGN.md's worked example (2 ranks, one bucket, times in µs): rank 0 step
 * 32, C 22, M 18, overlap 8/18, exposed 10, wait 13; rank 1 step 32, C 30, M 5, overlap
 * 3/5, exposed 2, wait 0; bucket 0: skew 13, transfer 5.  Run B has both ranks like
 * rank 0 but arriving together and done sooner: forward [0,10], backward [10,20],
 * allreduce [12,24], optimizer [24,26]: step 26, C 22, M 12, overlap 8/12, exposed 4,
 * wait 0; skew 0, transfer 12.  Run C has 3 ranks and 2 buckets.
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
#include <unistd.h>

#include <jansson.h>

#include "src/cli.h"
#include "reports/compare.h"
#include "profiler/store.h"
#include "tmp_store.h"

#define US 1000
#define MS(us) ((us) / 1000.0)

typedef struct {
    store_fixture s; /* the store, its errors and compare_write's output (tmp_store.h) */
    int64_t a, b, c;
} fixture;

static int64_t begin(fixture *f, const char *name, int world)
{
    double speed[3] = {1, 1, 1};
    store_run_info info = {.name = name, .source = "t.ini", .scenario_ini = "[run]\n", .backend = "cpu",
                           .model = "mlp", .world_size = world, .iterations = 1, .warmup = 0,
                           .total_params = 1000, .bucket_cap_mb = 25, .rank_speed = speed};
    int64_t id = -1;
    assert_int_equal(store_begin_run(f->s.st, &info, &id, f->s.err, sizeof f->s.err), 0);
    return id;
}

static void buckets(fixture *f, int64_t run, int n)
{
    const int params[] = {0, 1};
    store_bucket b[2] = {{.nbytes = 1000000, .size_limit = 26214400, .nparams = 1, .params = params},
                         {.nbytes = 500000, .size_limit = 26214400, .nparams = 1, .params = params + 1}};
    assert_int_equal(store_write_buckets(f->s.st, run, 0, b, (size_t)n, f->s.err, sizeof f->s.err), 0);
}

/* One rank's iteration: forward [0,fw], backward [fw,bw], allreduce [ar0,ar1] of bucket 0, optimizer after. */
static void rank_iter(fixture *f, int64_t run, int rank, int64_t fw, int64_t bw, int64_t ar0, int64_t ar1,
                      int64_t op0, int64_t op1)
{
    span s[] = {
        mk(rank, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, fw * US),
        mk(rank, 0, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, fw * US, bw * US),
        mk(rank, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, 0, 1000000, ar0 * US, ar1 * US),
        mk(rank, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, op0 * US, op1 * US),
    };
    assert_int_equal(store_write_spans(f->s.st, run, s, 4, f->s.err, sizeof f->s.err), 0);
}

static int setup(void **state)
{
    if (store_fixture_open(state, sizeof(fixture)) != 0)
        return -1;
    fixture *f = *state;
    f->a = begin(f, "worked", 2);
    buckets(f, f->a, 1);
    rank_iter(f, f->a, 0, 10, 20, 12, 30, 30, 32);
    rank_iter(f, f->a, 1, 14, 28, 25, 30, 30, 32);
    assert_int_equal(store_finish_run(f->s.st, f->a, NULL, f->s.err, sizeof f->s.err), 0);
    f->b = begin(f, "even", 2);
    buckets(f, f->b, 1);
    rank_iter(f, f->b, 0, 10, 20, 12, 24, 24, 26);
    rank_iter(f, f->b, 1, 10, 20, 12, 24, 24, 26);
    assert_int_equal(store_finish_run(f->s.st, f->b, NULL, f->s.err, sizeof f->s.err), 0);
    f->c = begin(f, "three", 3);
    buckets(f, f->c, 2);
    for (int r = 0; r < 3; r++)
        rank_iter(f, f->c, r, 10, 20, 12, 24, 24, 26);
    assert_int_equal(store_finish_run(f->s.st, f->c, NULL, f->s.err, sizeof f->s.err), 0);
    return 0;
}

static char *compare(fixture *f, int64_t a, int64_t b, report_format fmt)
{
    f->s.buf = NULL;
    f->s.len = 0;
    FILE *out = open_memstream(&f->s.buf, &f->s.len);
    assert_non_null(out);
    int rc = compare_write(f->s.st, a, b, fmt, out, f->s.err, sizeof f->s.err);
    assert_int_equal(fclose(out), 0);
    if (rc != 0)
        fail_msg("compare_write: %s", f->s.err);
    return f->s.buf;
}

static void quad_(json_t *obj, const char *key, double a, double b, int line)
{
    json_t *q = json_object_get(obj, key);
    if (!json_is_object(q))
        fail_msg("line %d: %s is not an object", line, key);
    double want[4] = {a, b, b - a, a == 0 ? NAN : 100.0 * (b - a) / fabs(a)};
    const char *names[4] = {"a", "b", "diff", "rel_pct"};
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get(q, names[i]);
        if (isnan(want[i])) {
            if (!json_is_null(v))
                fail_msg("line %d: %s.%s should be null", line, key, names[i]);
            continue;
        }
        if (!json_is_number(v) || fabs(json_number_value(v) - want[i]) > 1e-9 * (1 + fabs(want[i])))
            fail_msg("line %d: %s.%s = %.12g, want %.12g", line, key, names[i],
                     json_is_number(v) ? json_number_value(v) : NAN, want[i]);
    }
}
#define quad(obj, key, a, b) quad_(obj, key, a, b, __LINE__)

static void test_json_differences_by_hand(void **state)
{
    fixture *f = *state;
    char *text = compare(f, f->a, f->b, REPORT_JSON);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        fail_msg("not JSON: %s\n%s", je.text, text);
    free(text);
    /* job step: 32 -> 26 µs, -18.75 % */
    quad(doc, "step_ms", MS(32), MS(26));
    json_t *rel = json_object_get(json_object_get(doc, "step_ms"), "rel_pct");
    assert_true(fabs(json_number_value(rel) - -18.75) < 1e-9);
    json_t *ranks = json_object_get(doc, "ranks");
    assert_int_equal(json_array_size(ranks), 2);
    json_t *r0 = json_array_get(ranks, 0), *r1 = json_array_get(ranks, 1);
    assert_int_equal(json_integer_value(json_object_get(r0, "rank")), 0);
    quad(r0, "step_ms", MS(32), MS(26));
    quad(r0, "compute_ms", MS(22), MS(22));
    quad(r0, "comm_ms", MS(18), MS(12));
    quad(r0, "overlap_pct", 100.0 * 8 / 18, 100.0 * 8 / 12);
    quad(r0, "exposed_comm_ms", MS(10), MS(4));
    quad(r0, "wait_ms", MS(13), MS(0));
    assert_int_equal(json_integer_value(json_object_get(r1, "rank")), 1);
    quad(r1, "step_ms", MS(32), MS(26));
    quad(r1, "compute_ms", MS(30), MS(22));
    quad(r1, "comm_ms", MS(5), MS(12));
    quad(r1, "overlap_pct", 60.0, 100.0 * 8 / 12);
    quad(r1, "exposed_comm_ms", MS(2), MS(4));
    quad(r1, "wait_ms", 0, 0); /* A is 0: relative difference null */
    json_t *buckets = json_object_get(doc, "buckets");
    assert_int_equal(json_array_size(buckets), 1);
    json_t *b0 = json_array_get(buckets, 0);
    quad(b0, "bytes", 1000000, 1000000);
    quad(b0, "arrival_skew_ms", MS(13), MS(0));
    quad(b0, "transfer_ms", MS(5), MS(12));
    /* busbw = bytes * 2(n-1)/n / transfer: 1e6 B in 5 µs and 12 µs */
    quad(b0, "busbw_gbps", 1e6 / 5e-6 / 1e9, 1e6 / 12e-6 / 1e9);
    assert_true(json_is_null(json_object_get(json_object_get(b0, "ready_ms"), "a"))); /* no copy_in spans */
    assert_int_equal(json_array_size(json_object_get(doc, "not_compared")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "a"), "id")), f->a);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "b"), "name")), "even");
    json_decref(doc);
}

static void test_text_differences_by_hand(void **state)
{
    fixture *f = *state;
    char *text = compare(f, f->a, f->b, REPORT_TEXT);
    const char *want[] = {
        "job step time: A 0.032 ms, B 0.026 ms, B-A -0.006 ms (-18.8% of A)",
        "0            step_ms                 0.032        0.026       -0.006       -18.8%",
        "             comm_ms                 0.018        0.012       -0.006       -33.3%",
        "             overlap_pct            44.444       66.667      +22.222       +50.0%",
        "             wait_ms                 0.013        0.000       -0.013      -100.0%",
        "1            step_ms                 0.032        0.026       -0.006       -18.8%",
        "             compute_ms              0.030        0.022       -0.008       -26.7%",
        "             exposed_comm_ms         0.002        0.004       +0.002      +100.0%",
        "             wait_ms                 0.000        0.000       +0.000            -",
        "0            bytes                 1000000      1000000           +0        +0.0%",
        "             transfer_ms             0.005        0.012       +0.007      +140.0%",
        "             ready_ms                    -            -            -            -",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i]))
            fail_msg("missing line\n%s\nin\n%s", want[i], text);
    assert_null(strstr(text, "note:"));
    free(text);
}

static void test_what_is_not_comparable_is_said(void **state)
{
    fixture *f = *state;
    char *text = compare(f, f->a, f->c, REPORT_JSON);
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    free(text);
    assert_int_equal(json_array_size(json_object_get(doc, "ranks")), 2); /* ranks 0 and 1 */
    assert_int_equal(json_array_size(json_object_get(doc, "buckets")), 0);
    json_t *notes = json_object_get(doc, "not_compared");
    assert_int_equal(json_array_size(notes), 3);
    char want[160];
    snprintf(want, sizeof want, "world sizes differ (run %lld: 2 ranks, run %lld: 3)", (long long)f->a,
             (long long)f->c);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), want));
    snprintf(want, sizeof want, "rank 2 only in run %lld: not compared", (long long)f->c);
    assert_string_equal(json_string_value(json_array_get(notes, 1)), want);
    snprintf(want, sizeof want, "bucket counts differ (run %lld: 1, run %lld: 2)", (long long)f->a, (long long)f->c);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 2)), want));
    quad(doc, "step_ms", MS(32), MS(26));
    json_decref(doc);
    text = compare(f, f->a, f->c, REPORT_TEXT);
    assert_non_null(strstr(text, "note: bucket counts differ"));
    assert_null(strstr(text, "per bucket"));
    free(text);
}

/* Runs cli_compare with stdout and stderr sent to a file; returns its status. */
static int cli(fixture *f, int argc, char **argv)
{
    char path[96];
    snprintf(path, sizeof path, "%s.out", f->s.path);
    fflush(stdout);
    fflush(stderr);
    int so = dup(STDOUT_FILENO), se = dup(STDERR_FILENO);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    assert_true(so >= 0 && se >= 0 && dup2(fileno(o), STDOUT_FILENO) >= 0 && dup2(fileno(o), STDERR_FILENO) >= 0);
    int rc = cli_compare(argc, argv);
    fflush(stdout);
    fflush(stderr);
    assert_true(dup2(so, STDOUT_FILENO) >= 0 && dup2(se, STDERR_FILENO) >= 0);
    close(so);
    close(se);
    fclose(o);
    unlink(path);
    return rc;
}

static void test_cli_exit_codes(void **state)
{
    fixture *f = *state;
    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", (long long)f->a);
    snprintf(b, sizeof b, "%lld", (long long)f->b);
    char *ok[] = {"compare", f->s.path, "--run", a, "--run", b, NULL};
    assert_int_equal(cli(f, 6, ok), EXIT_OK);
    char *ok_json[] = {"compare", f->s.path, "--run", a, "--run", b, "--json", NULL};
    assert_int_equal(cli(f, 7, ok_json), EXIT_OK);
    char *one[] = {"compare", f->s.path, "--run", a, NULL};
    assert_int_equal(cli(f, 4, one), EXIT_USAGE);
    char *missing[] = {"compare", f->s.path, "--run", a, "--run", "999", NULL};
    assert_int_equal(cli(f, 6, missing), EXIT_USAGE);
    char *bad[] = {"compare", f->s.path, "--run", a, "--run", "x", NULL};
    assert_int_equal(cli(f, 6, bad), EXIT_USAGE);
    char *nodb[] = {"compare", "/nonexistent/db.sqlite", "--run", a, "--run", b, NULL};
    assert_int_equal(cli(f, 6, nodb), EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_differences_by_hand),
        cmocka_unit_test(test_text_differences_by_hand),
        cmocka_unit_test(test_what_is_not_comparable_is_said),
        cmocka_unit_test(test_cli_exit_codes),
    };
    return cmocka_run_group_tests(tests, setup, store_fixture_teardown);
}
