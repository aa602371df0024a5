/* test_report.c — unit tests of the report (reports/analysis.c, report_text.c,
 * report_json.c) on databases written through the store.
 *
 * Contract checked: the worked example of DESIGN.md read back from the JSON report;
 * step statistics over measured iterations only (and over all, flagged, when none
 * was measured); per-bucket ready / launch delay / skew / transfer / busbw; failed
 * runs reported with their spans and error; errors for unknown runs and an empty
 * database, with nothing written; the text report carrying the same figures; a run
 * left 'running' reported as running, abandoned or with its writer unknown according
 * to its writer; `ddpprof report --run ID` refusing every id that is not a run in DB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "src/cli.h"
#include "reports/report.h"
#include "profiler/store.h"
#include "tmp_store.h"

#define US 1000 /* test times are in µs; the database holds ns */

/* Each test gets a fresh store (tmp_store.h). */
typedef store_fixture fixture;

static int64_t begin_run(fixture *f, const char *name, int world, int iterations, int warmup)
{
    double speed[4] = {1.0, 1.5, 1.0, 1.0};
    store_run_info info = {.name = name,
                           .source = "scenarios/worked.ini",
                           .scenario_ini = "[run]\n",
                           .backend = "sim",
                           .model = "mlp",
                           .world_size = world,
                           .iterations = iterations,
                           .warmup = warmup,
                           .total_params = 250000,
                           .bucket_cap_mb = 25,
                           .rank_speed = speed};
    int64_t id = -1;
    assert_int_equal(store_begin_run(f->st, &info, &id, f->err, sizeof f->err), 0);
    return id;
}

static void write_spans(fixture *f, int64_t run, const span *s, size_t n)
{
    assert_int_equal(store_write_spans(f->st, run, s, n, f->err, sizeof f->err), 0);
}

/* DESIGN.md's worked example at time offset t0 (µs). */
static void write_worked_example(fixture *f, int64_t run, int iter, int64_t seq, int64_t t0)
{
    t0 *= US;
    span s[] = {
        mk(0, iter, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t0 + 0 * US, t0 + 10 * US),
        mk(0, iter, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t0 + 10 * US, t0 + 20 * US),
        mk(0, iter, STREAM_COMM, SPAN_ALLREDUCE, 0, seq, 1000000, t0 + 12 * US, t0 + 30 * US),
        mk(0, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, t0 + 30 * US, t0 + 32 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t0 + 0 * US, t0 + 14 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t0 + 14 * US, t0 + 28 * US),
        mk(1, iter, STREAM_COMM, SPAN_ALLREDUCE, 0, seq, 1000000, t0 + 25 * US, t0 + 30 * US),
        mk(1, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, t0 + 30 * US, t0 + 32 * US),
    };
    write_spans(f, run, s, sizeof s / sizeof s[0]);
}

static void write_one_bucket(fixture *f, int64_t run)
{
    const int params[] = {1, 0};
    store_bucket b = {.nbytes = 1000000, .size_limit = 26214400, .nparams = 2, .params = params};
    assert_int_equal(store_write_buckets(f->st, run, 0, &b, 1, f->err, sizeof f->err), 0);
}

/* Runs report_write into memory; returns the text (caller frees) and its status.
 * The stream's buffer lives in the fixture, not on this frame: GCC's
 * -Wdangling-pointer otherwise misreads open_memstream's out-parameter at -O3. */
static char *report(fixture *f, int64_t run_id, report_format fmt, int *rc)
{
    f->buf = NULL;
    f->len = 0;
    FILE *out = open_memstream(&f->buf, &f->len);
    assert_non_null(out);
    *rc = report_write(f->st, run_id, fmt, out, f->err, sizeof f->err);
    assert_int_equal(fclose(out), 0);
    return f->buf;
}

static json_t *report_json_doc(fixture *f, int64_t run_id)
{
    int rc;
    char *text = report(f, run_id, REPORT_JSON, &rc);
    if (rc != 0)
        fail_msg("report_write: %s", f->err);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        fail_msg("report is not JSON: %s\n%s", je.text, text);
    free(text);
    return doc;
}

static json_t *run_of(json_t *doc, size_t i)
{
    json_t *runs = json_object_get(doc, "runs");
    assert_true(json_is_array(runs));
    json_t *r = json_array_get(runs, i);
    assert_non_null(r);
    return r;
}

static json_t *item(json_t *run, const char *list, size_t i)
{
    json_t *a = json_object_get(run, list);
    assert_true(json_is_array(a));
    json_t *x = json_array_get(a, i);
    assert_non_null(x);
    return x;
}

static void near_(json_t *obj, const char *key, double want, double tol, int line)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        fail_msg("line %d: %s is not a number", line, key);
    double got = json_number_value(v);
    if (fabs(got - want) > tol)
        fail_msg("line %d: %s = %.9g, want %.9g", line, key, got, want);
}
#define near(obj, key, want) near_(obj, key, want, 1e-9, __LINE__)
#define near_tol(obj, key, want, tol) near_(obj, key, want, tol, __LINE__)

static json_int_t int_of(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer", key);
    return json_integer_value(v);
}

static const char *str_of(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        fail_msg("%s is not a string", key);
    return json_string_value(v);
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_worked_example_json(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "worked example", 2, 1, 0);
    write_one_bucket(f, run);
    write_worked_example(f, run, 0, 0, 0);
    assert_int_equal(store_finish_run(f->st, run, NULL, f->err, sizeof f->err), 0);

    json_t *doc = report_json_doc(f, run);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
    json_t *r = run_of(doc, 0);
    assert_int_equal(int_of(r, "id"), run);
    assert_string_equal(str_of(r, "name"), "worked example");
    assert_string_equal(str_of(r, "status"), "complete");
    assert_true(json_is_null(json_object_get(r, "error")));
    assert_string_equal(str_of(r, "backend"), "sim");
    assert_int_equal(int_of(r, "world_size"), 2);
    assert_string_equal(str_of(r, "model"), "mlp");
    assert_int_equal(int_of(r, "total_params"), 250000);
    assert_int_equal(int_of(r, "iterations_measured"), 1);
    assert_int_equal(int_of(r, "iterations_warmup"), 0);
    assert_true(json_is_false(json_object_get(r, "all_iterations")));
    assert_int_equal(int_of(r, "buckets_initial"), 1);
    assert_int_equal(int_of(r, "buckets_rebuilt"), 0);
    near(r, "step_ms_mean", 0.032);
    near(r, "step_ms_min", 0.032);
    near(r, "step_ms_max", 0.032);

    /* rank 0: C 22, M 18, overlap 8 (44.4%), exposed 10, wait 13, step 32 */
    json_t *k0 = item(r, "ranks", 0), *k1 = item(r, "ranks", 1);
    assert_int_equal(int_of(k0, "rank"), 0);
    near(k0, "speed", 1.0);
    near(k0, "compute_ms", 0.022);
    near(k0, "comm_ms", 0.018);
    near_tol(k0, "overlap_pct", 44.444444, 1e-5);
    near(k0, "exposed_comm_ms", 0.010);
    near(k0, "wait_ms", 0.013);
    near(k0, "step_ms", 0.032);
    /* rank 1: C 30, M 5, overlap 3 (60%), exposed 2, wait 0, step 32 */
    assert_int_equal(int_of(k1, "rank"), 1);
    near(k1, "speed", 1.5);
    near(k1, "compute_ms", 0.030);
    near(k1, "comm_ms", 0.005);
    near(k1, "overlap_pct", 60.0);
    near(k1, "exposed_comm_ms", 0.002);
    near(k1, "wait_ms", 0.0);
    near(k1, "step_ms", 0.032);

    /* Attribution: rank 0's exposed 10 is all exposed wait (wait 13 >= 10);
     * rank 1's exposed 2 is all transfer. Nothing else in either step. */
    json_t *a0 = json_object_get(k0, "attribution"), *a1 = json_object_get(k1, "attribution");
    near(a0, "compute_ms", 0.022);
    near(a0, "exposed_transfer_ms", 0.0);
    near(a0, "exposed_wait_ms", 0.010);
    near(a0, "other_ms", 0.0);
    near(a1, "compute_ms", 0.030);
    near(a1, "exposed_transfer_ms", 0.002);
    near(a1, "exposed_wait_ms", 0.0);
    near(a1, "other_ms", 0.0);

    /* The bucket: last arrival 25, first 12, end 30: skew 13, transfer 5;
     * busbw = 1e6 B * 2(2-1)/2 / 5 µs = 200 GB/s.  No copy_in spans: ready undefined. */
    json_t *b = item(r, "buckets", 0);
    assert_int_equal(int_of(b, "idx"), 0);
    assert_int_equal(int_of(b, "bytes"), 1000000);
    assert_int_equal(int_of(b, "nparams"), 2);
    assert_int_equal(int_of(b, "collectives"), 1);
    near(b, "arrival_skew_ms", 0.013);
    near(b, "transfer_ms", 0.005);
    near_tol(b, "busbw_gbps", 200.0, 1e-6);
    assert_true(json_is_null(json_object_get(b, "ready_ms")));
    assert_true(json_is_null(json_object_get(b, "launch_delay_ms")));
    json_decref(doc);
}

static void test_unknown_run_and_empty_db(void **state)
{
    fixture *f = *state;
    int rc;
    char *text = report(f, -1, REPORT_TEXT, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(f->err, "no runs in DB");
    assert_string_equal(text, "");
    free(text);

    begin_run(f, "only", 2, 1, 0);
    text = report(f, 42, REPORT_JSON, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(f->err, "no run with id 42");
    assert_string_equal(text, "");
    free(text);
}

static void test_text_report_contains_figures(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "worked example", 2, 1, 0);
    write_one_bucket(f, run);
    write_worked_example(f, run, 0, 0, 0);
    assert_int_equal(store_finish_run(f->st, run, NULL, f->err, sizeof f->err), 0);
    int rc;
    char *text = report(f, run, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    const char *want[] = {
        "run 1: worked example", "status      complete", "world size 2", "250000 params",
        "1 measured, 0 warm-up", "1 initial, 0 rebuilt", "mean 0.032 ms", "overlap %",
        "44.4", "60.0", "0.022", "0.030", "0.018", "0.005", "0.010", "0.013", "0.002",
        "exposed wait ms", "busbw GB/s", "200.00", "1000000",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i]))
            fail_msg("text report lacks \"%s\":\n%s", want[i], text);

    /* Rank rows line up under the header: every line of the table is as wide. */
    const char *head = strstr(text, "  rank  speed");
    assert_non_null(head);
    size_t w = strcspn(head, "\n");
    const char *row1 = head + w + 1;
    assert_int_equal(strcspn(row1, "\n"), w);
    const char *row2 = row1 + w + 1;
    assert_int_equal(strcspn(row2, "\n"), w);
    free(text);

    /* The HTML page's per-rank table (15 figures a rank) scrolls inside its box rather
     * than widening the page past a 1280 px screen. */
    text = report(f, run, REPORT_HTML, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, ".tablebox{max-width:100%;overflow-x:auto}"));
    assert_non_null(strstr(text, "<div class=\"tablebox\"><table class=\"ranks\">"));
    assert_non_null(strstr(text, "<div class=\"tablebox\"><table class=\"buckets\">"));
    assert_non_null(strstr(text, "comm_<wbr>overlap_<wbr>pct"));
    free(text);
}

/* Above 32 ranks each per-rank table is summarised (issue 40): min, median, p90, max
 * over the ranks with spans, then the slowest and fastest rank by name; --ranks all
 * and a list show rows.  Formatted from figures held in memory. */
static void test_rank_summary_above_32(void **state)
{
    fixture *f = *state;
    enum { N = 40 };
    analysis_rank ranks[N];
    for (int i = 0; i < N; i++)
        ranks[i] = (analysis_rank){.rank = i, .speed = 1, .iterations = 4, .step_ms = 300, .compute_ms = 100 + i,
                                   .comm_ms = 50, .overlap_pct = 60, .exposed_comm_ms = 20, .wait_ms = 10,
                                   .attr_compute_ms = 100 + i, .attr_other_ms = 0, .idle_pct = NAN,
                                   .comm_overlap_pct = NAN, .compute_pct = NAN, .non_compute_pct = NAN};
    /* A rank without spans (an imported trace's absent rank) is left out of the statistics. */
    ranks[N - 1] = (analysis_rank){.rank = N - 1, .speed = NAN, .step_ms = NAN, .compute_ms = NAN, .comm_ms = NAN,
                                   .overlap_pct = NAN, .exposed_comm_ms = NAN, .wait_ms = NAN, .idle_pct = NAN,
                                   .comm_overlap_pct = NAN, .compute_pct = NAN, .non_compute_pct = NAN};
    analysis_run r = {.id = 1, .world_size = N, .nranks = N, .ranks = ranks, .steps = 4, .step_ms_mean = 300,
                      .step_ms_min = 300, .step_ms_max = 300, .straggler_rank = -1, .verified = -1, .sweep = -1};
    f->buf = NULL;
    f->len = 0;
    FILE *out = open_memstream(&f->buf, &f->len);
    assert_non_null(out);
    assert_int_equal(report_text(out, &r, 1, NULL, f->err, sizeof f->err), 0);
    assert_int_equal(fclose(out), 0);
    const char *want[] = {"(40 ranks, 1 without spans left out: min, median, p90, max;", "--ranks all for each)",
                          "\n         min   1.00      4  300.000     100.000", "\n      median   1.00      4  300.000     119.000",
                          "\n         p90   1.00      4  300.000     135.000", "\n         max   1.00      4  300.000     138.000",
                          "\n  slowest 38 ", "\n   fastest 0 "};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(f->buf, want[i]))
            fail_msg("summary lacks \"%s\":\n%s", want[i], f->buf);
    assert_null(strstr(f->buf, "\n     7 "));
    free(f->buf);

    /* A list: those rows only; all: every row. */
    rank_select sel;
    char err[256];
    assert_int_equal(rank_select_parse("7,30-31", &sel, err, sizeof err), 0);
    f->buf = NULL;
    out = open_memstream(&f->buf, &f->len);
    assert_int_equal(report_text(out, &r, 1, &sel, f->err, sizeof f->err), 0);
    assert_int_equal(fclose(out), 0);
    assert_non_null(strstr(f->buf, "\n     7 "));
    assert_non_null(strstr(f->buf, "\n    31 "));
    assert_null(strstr(f->buf, "\n     8 "));
    assert_null(strstr(f->buf, "median"));
    free(f->buf);
    rank_select_free(&sel);
    assert_int_equal(rank_select_parse("all", &sel, err, sizeof err), 0);
    f->buf = NULL;
    out = open_memstream(&f->buf, &f->len);
    assert_int_equal(report_text(out, &r, 1, &sel, f->err, sizeof f->err), 0);
    assert_int_equal(fclose(out), 0);
    assert_non_null(strstr(f->buf, "\n    39 "));
    free(f->buf);
    f->buf = NULL;
    assert_int_equal(rank_select_parse("3-1", &sel, err, sizeof err), -1);
    assert_int_equal(rank_select_parse("x", &sel, err, sizeof err), -1);
}

static void test_failed_run_reports_spans_and_error(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "broken", 2, 3, 0);
    write_worked_example(f, run, 0, 0, 0);
    /* Iteration 1 cut short: rank 1 never reached its allreduce. */
    span s[] = {
        mk(0, 1, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 100 * US, 110 * US),
        mk(1, 1, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 100 * US, 114 * US),
    };
    write_spans(f, run, s, 2);
    assert_int_equal(store_finish_run(f->st, run, "rank 1: collective 1 timed out", f->err, sizeof f->err), 0);

    json_t *doc = report_json_doc(f, run);
    json_t *r = run_of(doc, 0);
    assert_string_equal(str_of(r, "status"), "failed");
    assert_string_equal(str_of(r, "error"), "rank 1: collective 1 timed out");
    assert_int_equal(int_of(r, "iterations_measured"), 2);
    near(item(r, "ranks", 0), "wait_ms", 0.013 / 2); /* 13 µs over 2 iterations */
    near(item(r, "ranks", 1), "compute_ms", (0.030 + 0.014) / 2);
    json_decref(doc);

    int rc;
    char *text = report(f, run, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "status      failed"));
    assert_non_null(strstr(text, "error       rank 1: collective 1 timed out"));
    free(text);

    /* A run that never finished says so. */
    int64_t open_run = begin_run(f, "interrupted", 2, 1, 0);
    text = report(f, open_run, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "running (not finished"));
    free(text);
}

static void test_step_stats_over_measured_iterations(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "steps", 2, 2, 1);
    /* iteration 0 (warm-up): slowest rank 100 µs; 1: 30 µs; 2: 50 µs. */
    const int64_t step[3][2] = {{100, 60}, {20, 30}, {50, 10}};
    for (int it = 0; it < 3; it++) {
        int64_t t0 = it * 1000 * US;
        for (int r = 0; r < 2; r++) {
            span s[] = {
                mk(r, it, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t0, t0 + 5 * US),
                mk(r, it, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, t0 + step[it][r] * US - US,
                   t0 + step[it][r] * US),
            };
            write_spans(f, run, s, 2);
        }
    }
    json_t *doc = report_json_doc(f, run);
    json_t *r = run_of(doc, 0);
    assert_int_equal(int_of(r, "iterations_measured"), 2);
    assert_int_equal(int_of(r, "iterations_warmup"), 1);
    assert_int_equal(int_of(r, "steps"), 2);
    near(r, "step_ms_mean", 0.040);
    near(r, "step_ms_min", 0.030);
    near(r, "step_ms_max", 0.050);
    near(item(r, "ranks", 0), "step_ms", (0.020 + 0.050) / 2);
    assert_int_equal(int_of(item(r, "ranks", 0), "iterations"), 2);
    /* No communication: overlap undefined, not 0. */
    assert_true(json_is_null(json_object_get(item(r, "ranks", 0), "overlap_pct")));
    json_decref(doc);
}

static void test_no_measured_iterations_uses_all(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "died in warm-up", 2, 10, 5);
    write_worked_example(f, run, 0, 0, 0);
    write_worked_example(f, run, 1, 1, 100);
    assert_int_equal(store_finish_run(f->st, run, "killed", f->err, sizeof f->err), 0);
    json_t *doc = report_json_doc(f, run);
    json_t *r = run_of(doc, 0);
    assert_int_equal(int_of(r, "iterations_measured"), 0);
    assert_int_equal(int_of(r, "iterations_warmup"), 2);
    assert_true(json_is_true(json_object_get(r, "all_iterations")));
    assert_int_equal(int_of(r, "steps"), 2);
    near(r, "step_ms_mean", 0.032);
    near(item(r, "ranks", 0), "wait_ms", 0.013);
    assert_int_equal(int_of(item(r, "buckets", 0), "collectives"), 2);
    json_decref(doc);
    int rc;
    char *text = report(f, run, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "no measured iteration recorded"));
    free(text);
}

/* One iteration of a 2-bucket step at t0 (µs).  `late` shifts every bucket event of
 * the warm-up iteration so that counting it would change every figure. */
static void write_bucket_iteration(fixture *f, int64_t run, int iter, int64_t t0, int64_t late)
{
    for (int r = 0; r < 2; r++) {
        int64_t a0 = r == 0 ? 18 : 20; /* rank 1 arrives at bucket 0 two µs later */
        int64_t u = US, b = t0 * US, l = late * US;
        span s[] = {
            mk(r, iter, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, b, b + 10 * u),
            mk(r, iter, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, b + 10 * u, b + 30 * u),
            mk(r, iter, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 2000000, b + 12 * u, b + 14 * u + l),
            mk(r, iter, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 2000000, b + 15 * u, b + 16 * u + l),
            mk(r, iter, STREAM_COMM, SPAN_ALLREDUCE, 0, iter * 2, 4000000, b + a0 * u + l,
               b + 25 * u + l),
            mk(r, iter, STREAM_COMPUTE, SPAN_COPY_IN, 1, -1, 2000000, b + 26 * u, b + 28 * u + l),
            mk(r, iter, STREAM_COMM, SPAN_ALLREDUCE, 1, iter * 2 + 1, 2000000, b + 30 * u + l,
               b + 40 * u + l),
            mk(r, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, b + 40 * u + l, b + 42 * u + l),
        };
        write_spans(f, run, s, sizeof s / sizeof s[0]);
    }
}

static void test_bucket_ready_launch_delay_busbw(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "buckets", 2, 1, 1);
    const int p0[] = {3, 2, 1, 0}, q0[] = {3}, q1[] = {2, 1, 0};
    store_bucket v0 = {.nbytes = 6000000, .size_limit = 26214400, .nparams = 4, .params = p0};
    store_bucket v1[] = {{.nbytes = 4000000, .size_limit = 1048576, .nparams = 1, .params = q0},
                         {.nbytes = 2000000, .size_limit = 26214400, .nparams = 3, .params = q1}};
    assert_int_equal(store_write_buckets(f->st, run, 0, &v0, 1, f->err, sizeof f->err), 0);
    assert_int_equal(store_write_buckets(f->st, run, 1, v1, 2, f->err, sizeof f->err), 0);
    write_bucket_iteration(f, run, 0, 0, 7);
    write_bucket_iteration(f, run, 1, 1000, 0);
    assert_int_equal(store_finish_run(f->st, run, NULL, f->err, sizeof f->err), 0);

    json_t *doc = report_json_doc(f, run);
    json_t *r = run_of(doc, 0);
    assert_int_equal(int_of(r, "buckets_initial"), 1);
    assert_int_equal(int_of(r, "buckets_rebuilt"), 2);
    assert_int_equal(int_of(r, "bucket_version"), 1);
    assert_int_equal(json_array_size(json_object_get(r, "buckets")), 2);

    /* bucket 0: ready 16 on both ranks; arrivals 18 and 20 -> delay (2 + 4) / 2 = 3;
     * skew 2; transfer 25 - 20 = 5; busbw = 4e6 B / 5 µs = 800 GB/s. */
    json_t *b0 = item(r, "buckets", 0);
    assert_int_equal(int_of(b0, "idx"), 0);
    assert_int_equal(int_of(b0, "bytes"), 4000000);
    assert_int_equal(int_of(b0, "nparams"), 1);
    assert_int_equal(int_of(b0, "collectives"), 1);
    assert_int_equal(int_of(b0, "ready_samples"), 2);
    near(b0, "ready_ms", 0.016);
    near(b0, "launch_delay_ms", 0.003);
    near(b0, "arrival_skew_ms", 0.002);
    near(b0, "transfer_ms", 0.005);
    near_tol(b0, "busbw_gbps", 800.0, 1e-6);
    /* bucket 1: ready 28, arrival 30 -> delay 2, skew 0, transfer 10, 2e6 B -> 200 GB/s. */
    json_t *b1 = item(r, "buckets", 1);
    assert_int_equal(int_of(b1, "idx"), 1);
    assert_int_equal(int_of(b1, "nparams"), 3);
    near(b1, "ready_ms", 0.028);
    near(b1, "launch_delay_ms", 0.002);
    near(b1, "arrival_skew_ms", 0.0);
    near(b1, "transfer_ms", 0.010);
    near_tol(b1, "busbw_gbps", 200.0, 1e-6);
    json_decref(doc);
}

static void test_every_run(void **state)
{
    fixture *f = *state;
    int64_t a = begin_run(f, "first", 2, 1, 0);
    write_worked_example(f, a, 0, 0, 0);
    int64_t b = begin_run(f, "second", 1, 1, 0);
    span s[] = {
        mk(0, 0, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, 0, 10 * US),
        mk(0, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, 0, 1000, 5 * US, 15 * US),
        mk(0, 0, STREAM_COMPUTE, SPAN_OPTIMIZER, -1, -1, 0, 15 * US, 16 * US),
    };
    write_spans(f, b, s, 3);
    json_t *doc = report_json_doc(f, -1);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 2);
    assert_int_equal(int_of(run_of(doc, 0), "id"), a);
    assert_int_equal(int_of(run_of(doc, 1), "id"), b);
    /* world size 1: bus bandwidth is 0 by the nccl-tests convention. */
    json_t *r = run_of(doc, 1);
    near(item(r, "buckets", 0), "busbw_gbps", 0.0);
    near(item(r, "ranks", 0), "overlap_pct", 50.0);
    json_decref(doc);

    int rc;
    char *text = report(f, -1, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "run 1: first"));
    assert_non_null(strstr(text, "run 2: second"));
    free(text);
}

static void set_run_column(fixture *f, int64_t run, const char *assignment)
{
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE run SET %s WHERE id = %" PRId64, assignment, run);
    assert_int_equal(sqlite3_exec(store_db(f->st), sql, NULL, NULL, NULL), SQLITE_OK);
}

static void expect_status(fixture *f, int64_t run, const char *status, const char *detail_part,
                          const char *text_part)
{
    json_t *doc = report_json_doc(f, run);
    json_t *r = run_of(doc, 0);
    assert_string_equal(str_of(r, "status"), status);
    const char *detail = str_of(r, "status_detail");
    if (!strstr(detail, detail_part))
        fail_msg("status_detail '%s' lacks '%s'", detail, detail_part);
    json_decref(doc);
    int rc;
    char *text = report(f, run, REPORT_TEXT, &rc);
    assert_int_equal(rc, 0);
    if (!strstr(text, text_part))
        fail_msg("text report lacks '%s':\n%s", text_part, text);
    free(text);
}

/* A run left 'running' is judged by its writer, and never printed as a good run. */
static void test_running_abandoned_unknown(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, "open", 2, 1, 0);
    write_worked_example(f, run, 0, 0, 0);
    char mine[64];
    snprintf(mine, sizeof mine, "pid %lld on", (long long)getpid());
    expect_status(f, run, "running", mine, "status      running (not finished; pid");
    expect_status(f, run, "running", "still running", "still running)");

    /* Its writer exited: a process that has been reaped. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    char sql[64];
    snprintf(sql, sizeof sql, "writer_pid = %lld", (long long)child);
    set_run_column(f, run, sql);
    expect_status(f, run, "abandoned", "exited without finishing",
                  "status      abandoned (pid");

    /* Written on another machine: not checkable, so not called abandoned. */
    set_run_column(f, run, "writer_host = 'elsewhere.invalid'");
    expect_status(f, run, "running", "writer unknown", "running (not finished; writer unknown");
    /* Written by a ddpprof that recorded no writer. */
    set_run_column(f, run, "writer_pid = NULL, writer_host = NULL");
    expect_status(f, run, "running", "writer unknown", "writer unknown");

    /* Ended runs carry no writer judgement. */
    assert_int_equal(store_finish_run(f->st, run, NULL, f->err, sizeof f->err), 0);
    json_t *doc = report_json_doc(f, run);
    assert_string_equal(str_of(run_of(doc, 0), "status"), "complete");
    assert_true(json_is_null(json_object_get(run_of(doc, 0), "status_detail")));
    json_decref(doc);
}

/* Runs `ddpprof report PATH --run ID`; returns its exit status and what it printed
 * on stderr (in f->buf, caller frees); stdout goes to /dev/null. */
static int cli_report_run(fixture *f, const char *id)
{
    char errpath[80];
    snprintf(errpath, sizeof errpath, "%s.stderr", f->path);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    assert_true(saved_out >= 0 && saved_err >= 0);
    FILE *null_out = fopen("/dev/null", "w"), *err_out = fopen(errpath, "w+");
    assert_non_null(null_out);
    assert_non_null(err_out);
    assert_true(dup2(fileno(null_out), STDOUT_FILENO) >= 0);
    assert_true(dup2(fileno(err_out), STDERR_FILENO) >= 0);
    char *argv[] = {"report", f->path, "--run", (char *)id, NULL};
    int rc = cli_report(4, argv);
    fflush(stdout);
    fflush(stderr);
    assert_true(dup2(saved_out, STDOUT_FILENO) >= 0);
    assert_true(dup2(saved_err, STDERR_FILENO) >= 0);
    close(saved_out);
    close(saved_err);
    fclose(null_out);
    rewind(err_out);
    f->buf = calloc(1, 1024);
    assert_non_null(f->buf);
    size_t n = fread(f->buf, 1, 1023, err_out);
    f->buf[n] = '\0';
    fclose(err_out);
    unlink(errpath);
    return rc;
}

static void test_cli_run_ids(void **state)
{
    fixture *f = *state;
    int64_t a = begin_run(f, "one", 1, 1, 0);
    int64_t b = begin_run(f, "two", 1, 1, 0);
    assert_int_equal(store_finish_run(f->st, a, NULL, f->err, sizeof f->err), 0);
    assert_int_equal(store_finish_run(f->st, b, NULL, f->err, sizeof f->err), 0);

    assert_int_equal(cli_report_run(f, "2"), EXIT_OK);
    free(f->buf);

    /* Malformed ids are usage errors, whatever strtoll would have made of them. */
    const char *bad[] = {"0", "-1", "abc", "1x", " 1", "+1", "", "1.0",
                         "99999999999999999999", "-99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = cli_report_run(f, bad[i]);
        if (rc != EXIT_USAGE || !strstr(f->buf, "--run"))
            fail_msg("--run '%s': exit %d, stderr '%s'", bad[i], rc, f->buf);
        free(f->buf);
    }
    assert_int_equal(cli_report_run(f, "99999999999999999999"), EXIT_USAGE);
    assert_non_null(strstr(f->buf, "out of range"));
    free(f->buf);

    /* A well-formed id that names no run: refused, never clamped to run 2. */
    const char *missing[] = {"3", "9223372036854775807"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        int rc = cli_report_run(f, missing[i]);
        char want[64];
        snprintf(want, sizeof want, "no run %s in ", missing[i]);
        if (rc != EXIT_USAGE || !strstr(f->buf, want) || !strstr(f->buf, "(runs 1..2)"))
            fail_msg("--run %s: exit %d, stderr '%s'", missing[i], rc, f->buf);
        free(f->buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_worked_example_json, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_run_and_empty_db, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_report_contains_figures, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rank_summary_above_32, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_failed_run_reports_spans_and_error, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_step_stats_over_measured_iterations, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_measured_iterations_uses_all, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_bucket_ready_launch_delay_busbw, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_every_run, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_running_abandoned_unknown, store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_cli_run_ids, store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
