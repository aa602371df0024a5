/* test_cli.c — the ddpprof command line as a user runs it: exit statuses, `file:line`
 * errors that leave the database untouched, overrides, sweeps, reports (text and
 * JSON), explain, bench, and a failed run recorded as such.  Uses the binary named
 * by $DDPPROF and the scenarios in $SCENARIOS (set by `make test`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "harness.h"

static const char *small_ini = "[run]\nname = small\nworld_size = 2\niterations = 2\nwarmup = 1\n"
                               "[model]\npreset = mlp\nlayers = 3\nhidden = 128\nbatch = 4\n"
                               "[ddp]\nbucket_cap_mb = 0.1\nfirst_bucket_mb = 0.05\n";

static void test_version_and_help(void **state)
{
    (void)state;
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"--version", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "ddpprof "));
    const char *cmds[] = {"run", "report", "explain", "bench"};
    for (int i = 0; i < 4; i++) {
        ddpprof_run(&r, (const char *[]){cmds[i], "--help", NULL});
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "usage: ddpprof"));
    }
    ddpprof_run(&r, (const char *[]){"frobnicate", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unknown command"));
}

/* --version names the backends built in; `--backend cuda` where no GPU can be used
 * fails at once (exit 1) with the reason and writes nothing; auto falls back to cpu
 * and says what it passed over. */
static void test_backends(void **state)
{
    (void)state;
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"--version", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "backends built in: cpu"));
    bool cuda_built = strstr(r.out, "cuda") != NULL;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "backend.sqlite");
    snprintf(scen, sizeof scen, "%s/baseline.ini", getenv("SCENARIOS"));
    ddpprof_run(&r, (const char *[]){"run", scen, "-o", db, "-q", "--backend", "cuda", "-s", "run.iterations=1", "-s",
                                  "model.preset=mlp", NULL});
    if (!cuda_built) {
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "not built into this ddpprof"));
    } else if (r.status == 1) {
        assert_non_null(strstr(r.err, "backend cuda: "));
        print_message("--backend cuda here: %s", r.err);
    } else if (r.status == 0) {
        print_message("--backend cuda ran here (a GPU is present)\n");
        unlink(db);
    } else {
        fail_msg("--backend cuda exited %d: %s", r.status, r.err);
    }
    assert_int_equal(access(db, F_OK), -1);
    ddpprof_run(&r, (const char *[]){"run", scen, "-o", db, "--backend", "auto", "-s", "run.iterations=1", "-s",
                                  "model.preset=mlp", NULL});
    assert_int_equal(r.status, 0);
    if (strstr(r.out, "backend     cuda")) {
        print_message("backend auto chose cuda (a GPU is present)\n");
    } else {
        assert_non_null(strstr(r.out, "backend     cpu"));
        if (cuda_built)
            assert_non_null(strstr(r.err, "backend auto: cpu (passed over cuda: "));
    }
    unlink(db);
    char side[320];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
}

static void test_bad_scenario_changes_nothing(void **state)
{
    (void)state;
    char ini[300], db[300];
    scratch_path(ini, sizeof ini, "bad.ini");
    scratch_path(db, sizeof db, "untouched.sqlite");
    unlink(db);
    write_file(ini, "[run]\nworld_size = 4\n\n[ddp]\nbucket_cap = 25\n");
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, NULL});
    assert_int_equal(r.status, 2);
    char want[400];
    snprintf(want, sizeof want, "%s:5:", ini);
    if (!strstr(r.err, want))
        fail_msg("stderr lacks '%s': %s", want, r.err);
    assert_non_null(strstr(r.err, "bucket_cap"));
    struct stat sb;
    assert_int_not_equal(stat(db, &sb), 0); /* no database was created */

    /* An existing database keeps exactly its runs. */
    write_file(ini, small_ini);
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-q", NULL});
    assert_int_equal(r.status, 0);
    int64_t before = db_int(db, "select count(*) from run");
    write_file(ini, "[run]\nworld_size = 0\n");
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, ":2:"));
    assert_non_null(strstr(r.err, "out of range"));
    write_file(ini, "[run]\nworld_size = 2\n[sweep]\nddp.bucket_cap_mb = 1, lots\n");
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, ":4:"));
    write_file(ini, small_ini);
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-s", "ddp.bucket_cap_mb=huge", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "-s ddp.bucket_cap_mb=huge"));
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "--backend", "tpu", NULL});
    assert_int_equal(r.status, 2);
    assert_int_equal(db_int(db, "select count(*) from run"), before);
}

static void test_run_report_json(void **state)
{
    (void)state;
    char ini[300], db[300];
    scratch_path(ini, sizeof ini, "small.ini");
    scratch_path(db, sizeof db, "runs.sqlite");
    unlink(db);
    write_file(ini, small_ini);
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-s", "run.world_size=3", "-s", "skew.speed=2,1,1", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "per rank"));
    assert_non_null(strstr(r.out, "per bucket"));
    assert_int_equal(db_int(db, "select world_size from run where id = 1"), 3);
    assert_int_equal(db_int(db, "select count(distinct rank) from span where run_id = 1"), 3);

    ddpprof_run(&r, (const char *[]){"report", db, "--run", "1", "--json", NULL});
    assert_int_equal(r.status, 0);
    json_error_t jerr;
    json_t *root = json_loads(r.out, 0, &jerr);
    if (!root)
        fail_msg("report --json is not JSON: %s", jerr.text);
    json_t *run = json_array_get(json_object_get(root, "runs"), 0);
    assert_non_null(run);
    assert_string_equal(json_string_value(json_object_get(run, "status")), "complete");
    json_t *ranks = json_object_get(run, "ranks");
    assert_int_equal(json_array_size(ranks), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *rk = json_array_get(ranks, i);
        assert_true(json_number_value(json_object_get(rk, "compute_ms")) > 0);
        assert_non_null(json_object_get(rk, "overlap_pct"));
        assert_non_null(json_object_get(rk, "wait_ms"));
    }
    assert_true(json_array_size(json_object_get(run, "buckets")) >= 2);
    json_decref(root);

    /* A well-formed id that is not in the database is a usage error, never clamped. */
    ddpprof_run(&r, (const char *[]){"report", db, "--run", "99", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "99"));
    ddpprof_run(&r, (const char *[]){"report", "/nonexistent/x.sqlite", NULL});
    assert_int_equal(r.status, 2);
}

static void test_sweep_runs_each_point(void **state)
{
    (void)state;
    char ini[300], db[300];
    scratch_path(ini, sizeof ini, "sweep.ini");
    scratch_path(db, sizeof db, "sweep.sqlite");
    unlink(db);
    char text[1024];
    snprintf(text, sizeof text, "%s[sweep]\nddp.bucket_cap_mb = 0.05, 0.5\nrun.world_size = 2, 3\n", small_ini);
    write_file(ini, text);
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-q", NULL});
    assert_int_equal(r.status, 0);
    assert_int_equal(db_int(db, "select count(*) from run where status = 'complete'"), 4);
    assert_int_equal(db_int(db, "select count(distinct bucket_cap_mb) from run"), 2);
    assert_int_equal(db_int(db, "select count(*) from run where name like '%bucket_cap_mb 0.05%'"), 2);
    /* Each point records its values and its sweep; `report` prints the summary that -q
     * left out. */
    assert_int_equal(db_int(db, "select count(*) from run where sweep = 1"), 4);
    assert_int_equal(db_int(db, "select count(*) from run where overrides ="
                                    " '{\"ddp.bucket_cap_mb\":\"0.5\",\"run.world_size\":\"3\"}'"),
                     1);
    ddpprof_run(&r, (const char *[]){"report", db, NULL});
    assert_int_equal(r.status, 0);
    const char *summary = strstr(r.out, "sweep from run 1:");
    assert_non_null(summary);
    for (int id = 1; id <= 4; id++) {
        char line[32];
        snprintf(line, sizeof line, "\n    %d  small [", id);
        assert_non_null(strstr(summary, line));
    }
    assert_non_null(strstr(r.out, "  overrides   ddp.bucket_cap_mb=0.05, run.world_size=2\n"));
    assert_non_null(strstr(r.out, "  sweep       a point of the sweep from run 1\n"));
}

/* What was run: the -s settings and --verify's verdict, printed, recorded and reported;
 * and the HTML's runs of one scenario on two backends show the keys in which their
 * configurations differ. */
static void test_what_was_run(void **state)
{
    (void)state;
    char ini[300], db[300], html[300];
    scratch_path(ini, sizeof ini, "what.ini");
    scratch_path(db, sizeof db, "what.sqlite");
    scratch_path(html, sizeof html, "what.html");
    unlink(db);
    write_file(ini, small_ini);
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-q", "--verify", "-s", "run.iterations=3", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "verify: every synchronised step checked"));
    assert_int_equal(db_int(db, "select count(*) from run where id = 1 and verified = 1 and sweep is null"
                                    " and overrides = '{\"run.iterations\":\"3\"}'"),
                     1);
    ddpprof_run(&r, (const char *[]){"report", db, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "  overrides   run.iterations=3\n"));
    assert_non_null(strstr(r.out, "  verified    yes"));
    assert_null(strstr(r.out, "sweep from run"));
    ddpprof_run(&r, (const char *[]){"report", db, "--json", NULL});
    assert_int_equal(r.status, 0);
    json_error_t je;
    json_t *j = json_loads(r.out, 0, &je);
    assert_non_null(j);
    json_t *run = json_array_get(json_object_get(j, "runs"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(run, "overrides"), "run.iterations")), "3");
    assert_true(json_is_true(json_object_get(run, "verified")));
    assert_true(json_is_null(json_object_get(run, "sweep")));
    json_decref(j);

    /* The same scenario predicted at another bucket size: not silently paired. */
    ddpprof_run(&r, (const char *[]){"predict", ini, "-o", db, "-q", "-s", "ddp.bucket_cap_mb=0.5", NULL});
    assert_int_equal(r.status, 0);
    assert_int_equal(db_int(db, "select count(*) from run where id = 2 and verified is null"), 1);
    ddpprof_run(&r, (const char *[]){"report", db, "--html", "-o", html, NULL});
    assert_int_equal(r.status, 0);
    char page[1 << 16];
    FILE *f = fopen(html, "r");
    assert_non_null(f);
    size_t n = fread(page, 1, sizeof page - 1, f);
    page[n] = '\0';
    fclose(f);
    const char *section = strstr(page, " on each backend</h2>");
    assert_non_null(section);
    assert_non_null(strstr(section, "<tr class=\"differs\"><td>differs: ddp.bucket_cap_mb</td><td>0.1</td><td>0.5</td></tr>"));
    assert_non_null(strstr(section, "<tr class=\"differs\"><td>differs: run.iterations</td><td>3</td><td>2</td></tr>"));
    assert_null(strstr(section, "differs: run.backend"));
}

static void test_failed_run_is_recorded(void **state)
{
    (void)state;
    char ini[300], db[300];
    scratch_path(ini, sizeof ini, "fail.ini");
    scratch_path(db, sizeof db, "fail.sqlite");
    unlink(db);
    write_file(ini, small_ini);
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-q", "-s", "fault.rank=1", "-s", "fault.iter=1", "-s",
                                 "fault.mode=exit", NULL});
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "rank 1 exited at iteration 1"));
    assert_int_equal(db_int(db, "select count(*) from run where status = 'failed' and error like '%rank 1%'"), 1);
    assert_true(db_int(db, "select count(*) from span where iter = 0") > 0);
    ddpprof_run(&r, (const char *[]){"report", db, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "failed"));
}

static void test_explain(void **state)
{
    (void)state;
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"explain", "ddp.bucket_cap_mb", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "25"));
    assert_non_null(strstr(r.out, "MiB"));
    ddpprof_run(&r, (const char *[]){"explain", NULL});
    assert_int_equal(r.status, 0);
    const char *sections[] = {"run.", "model.", "ddp.", "skew.", "network.", "device."};
    for (int i = 0; i < 6; i++)
        assert_non_null(strstr(r.out, sections[i]));
    ddpprof_run(&r, (const char *[]){"explain", "ddp.nope", NULL});
    assert_int_equal(r.status, 2);
}

/* predict: the sim backend through the command line, past the cpu backend's rank
 * limit, every rank's statistics in the database and the chosen ranks' spans (more than
 * 64 ranks), which the report names; --verify has nothing to check there (usage error,
 * nothing written). */
static void test_predict(void **state)
{
    (void)state;
    cmd_result r;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "predict.sqlite");
    snprintf(scen, sizeof scen, "%s/baseline.ini", getenv("SCENARIOS"));
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-s", "run.world_size=2000", "-s", "run.iterations=2",
                                  "-s", "record.detail=phase", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "backend     sim, world size 2000"));
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "select count(distinct rank), min(backend),"
                                           " (select count(distinct rank) from iteration_stat),"
                                           " (select count(*) from rank where spans = 1)"
                                           " from span join run on run.id = span.run_id", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int with_spans = sqlite3_column_int(q, 0);
    assert_in_range(with_spans, 7, 8); /* the chosen ranks: 7 by speed, and rank 0 unless among them */
    assert_string_equal((const char *)sqlite3_column_text(q, 1), "sim");
    assert_int_equal(sqlite3_column_int(q, 2), 2000); /* every rank's statistics */
    assert_int_equal(sqlite3_column_int(q, 3), with_spans);
    sqlite3_finalize(q);
    char named[64];
    snprintf(named, sizeof named, "spans       stored for %d of 2000 ranks", with_spans);
    assert_non_null(strstr(r.out, named));
    sqlite3_close(h);
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "--verify", NULL});
    assert_int_equal(r.status, 2);
    ddpprof_run(&r, (const char *[]){"run", scen, "-o", db, "--backend", "sim", "--verify", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "only models time"));
    /* A scenario of ranks as processes is predicted in this one process, as such. */
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-q", "-s", "run.ranks=processes", "-s", "run.iterations=2",
                                  NULL});
    assert_int_equal(r.status, 0);
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "select count(distinct span.rank), min(status) from span join run on "
                                           "run.id = span.run_id where run.id = (select max(id) from run)",
                                           -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 4);
    assert_string_equal((const char *)sqlite3_column_text(q, 1), "complete");
    sqlite3_finalize(q);
    sqlite3_close(h);
}

/* `runs` lists every run with its figures (text and JSON, the step of each run as report
 * --json gives it), a missing database is a usage error, and export without --run names
 * the run it took on stderr. */
static void test_runs_listed(void **state)
{
    (void)state;
    cmd_result r;
    char db[300], scen[300], trace[300];
    scratch_path(db, sizeof db, "runs.sqlite");
    scratch_path(trace, sizeof trace, "runs.json");
    snprintf(scen, sizeof scen, "%s/skewed.ini", getenv("SCENARIOS"));
    unlink(db);
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-q", "-s", "run.iterations=2", NULL});
    assert_int_equal(r.status, 0);
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-q", "-s", "run.iterations=2", "-s", "run.name=second",
                                  NULL});
    assert_int_equal(r.status, 0);
    ddpprof_run(&r, (const char *[]){"runs", db, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "step ms"));
    /* The name last and whole; every line fits a 100-column terminal. */
    assert_non_null(strstr(r.out, "  1  sim  "));
    assert_non_null(strstr(r.out, "  skewed\n"));
    assert_non_null(strstr(r.out, "  second\n"));
    for (char *save, *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        assert_true(strlen(line) <= 100);
    ddpprof_run(&r, (const char *[]){"runs", db, "--json", NULL});
    assert_int_equal(r.status, 0);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    json_t *list = json_object_get(doc, "runs");
    assert_int_equal(json_array_size(list), 2);
    json_t *second = json_array_get(list, 1);
    assert_string_equal(json_string_value(json_object_get(second, "name")), "second");
    assert_string_equal(json_string_value(json_object_get(second, "backend")), "sim");
    assert_int_equal(json_integer_value(json_object_get(second, "world_size")), 4);
    double step = json_real_value(json_object_get(second, "step_ms"));
    json_decref(doc);
    ddpprof_run(&r, (const char *[]){"report", db, "--run", "2", "--json", NULL});
    assert_int_equal(r.status, 0);
    doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    double mean = json_real_value(json_object_get(run, "step_ms_mean"));
    assert_true(step > 0 && fabs(step - mean) < 1e-6 * mean);
    json_decref(doc);
    ddpprof_run(&r, (const char *[]){"export", db, "-o", trace, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "exporting run 2 (second, sim), the last in"));
    ddpprof_run(&r, (const char *[]){"runs", "/nonexistent/none.sqlite", NULL});
    assert_int_equal(r.status, 2);
    /* A scenario where a database goes is bad usage, as a missing database is. */
    ddpprof_run(&r, (const char *[]){"report", scen, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "not an SQLite database"));
    ddpprof_run(&r, (const char *[]){"runs", scen, NULL});
    assert_int_equal(r.status, 2);
    /* A bad override is named once, whether or not the file sweeps its key. */
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-q", "-s", "ddp.bucket_cap_mb=abc", NULL});
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "-s ddp.bucket_cap_mb=abc: ddp.bucket_cap_mb: \"abc\" is not a number\n");
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

/* Issue 40, as a user meets it: a skewed scenario at another world size, a summary of
 * each per-rank table above 32 ranks (--ranks for the rows), every straggler named,
 * whatif's sweep lines saying their point, a bad override said before anything else,
 * the cpu backend's limit at its file:line, and busbw one figure in report and SQL. */
static void test_scale_and_sweeps_as_a_user(void **state)
{
    (void)state;
    cmd_result r;
    char db[300], scen[300], w65[300];
    scratch_path(db, sizeof db, "user.sqlite");
    scratch_path(w65, sizeof w65, "w65.ini");
    snprintf(scen, sizeof scen, "%s/skewed.ini", getenv("SCENARIOS"));
    unlink(db);

    /* The file's per-rank speeds do not fit 64 ranks: the message names the ways out. */
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-s", "run.world_size=64", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "skewed.ini:18: skew.speed has 4 values but run.world_size is 64"));
    assert_non_null(strstr(r.err, "-s skew.speed_repeat=true"));
    /* Ranks 2 and 3 slow at 64 ranks: the file's list is dropped (said), both named. */
    ddpprof_run(&r, (const char *[]){"predict", scen, "-o", db, "-s", "run.world_size=64", "-s", "skew.slow_ranks=2,3",
                                  "-s", "skew.slowdown=1.5", "-s", "run.iterations=2", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "describes the skew anew"));
    assert_non_null(strstr(r.out, "stragglers  ranks 2, 3: the other ranks wait"));
    /* 64 ranks: a summary per table, the slowest (a slow rank) and fastest named. */
    assert_non_null(strstr(r.out, "(64 ranks: min, median, p90, max;"));
    assert_non_null(strstr(r.out, "     median "));
    assert_non_null(strstr(r.out, "  slowest 2 "));
    assert_non_null(strstr(r.out, "  fastest 0 "));
    assert_null(strstr(r.out, "\n    63 "));
    assert_true(count_lines(r.out) < 80);
    ddpprof_run(&r, (const char *[]){"report", db, "--run", "1", "--ranks", "all", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\n    63 "));
    assert_true(count_lines(r.out) > 3 * 64);
    ddpprof_run(&r, (const char *[]){"report", db, "--run", "1", "--ranks", "3,60-61", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\n     3 "));
    assert_non_null(strstr(r.out, "\n    61 "));
    assert_null(strstr(r.out, "\n     2 "));
    ddpprof_run(&r, (const char *[]){"report", db, "--ranks", "2-", NULL});
    assert_int_equal(r.status, 2);
    /* JSON stays complete. */
    ddpprof_run(&r, (const char *[]){"report", db, "--run", "1", "--json", NULL});
    assert_int_equal(r.status, 0);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    assert_int_equal(json_array_size(json_object_get(run, "ranks")), 64);
    json_t *stragglers = json_object_get(run, "stragglers");
    assert_int_equal(json_array_size(stragglers), 2);
    assert_int_equal(json_integer_value(json_array_get(stragglers, 1)), 3);
    /* busbw: the report's figure is the README's SQL over the collective view. */
    json_t *b0 = json_array_get(json_object_get(run, "buckets"), 0);
    double busbw = json_real_value(json_object_get(b0, "busbw_gbps"));
    char sql[300];
    snprintf(sql, sizeof sql,
             "select cast(round(avg(busbw_gbps) * 1e6) as integer) from collective where run_id = 1"
             " and bucket_version = 1 and not warmup and bucket = %lld",
             (long long)json_integer_value(json_object_get(b0, "idx")));
    assert_int_equal(db_int(db, sql), (int64_t)llround(busbw * 1e6));
    json_decref(doc);

    /* whatif: a typo'd key is all it says; each sweep line carries its point. */
    ddpprof_run(&r, (const char *[]){"whatif", db, "--run", "1", "-s", "ddp.bucket_cap=5", "-q", NULL});
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "unknown key \"bucket_cap\""));
    ddpprof_run(&r, (const char *[]){"whatif", db, "--run", "1", "--sweep", "ddp.bucket_cap_mb=5,100", "-q", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "== run 1 (source) beside run 2 (prediction): bucket_cap_mb 5\n"));
    assert_non_null(strstr(r.out, "== run 1 (source) beside run 3 (prediction): bucket_cap_mb 100\n"));
    ddpprof_run(&r, (const char *[]){"runs", db, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "  whatif of run 1 [bucket_cap_mb 100]\n"));
    for (char *save, *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        assert_true(strlen(line) <= 100);

    /* The cpu backend's limit names the line that set the world size. */
    write_file(w65, "[run]\nname = w65\n\nworld_size = 65\n");
    ddpprof_run(&r, (const char *[]){"run", w65, "-o", db, "--backend", "cpu", "-q", NULL});
    assert_int_equal(r.status, 2);
    char want[400];
    snprintf(want, sizeof want, "%s:4: run.world_size 65 is more than the cpu backend runs", w65);
    assert_non_null(strstr(r.err, want));
}

static void test_bench_allreduce(void **state)
{
    (void)state;
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"bench", "allreduce", "--ranks", "2", "--sizes", "64K,1M", "--iters", "3", NULL});
    assert_int_equal(r.status, 0);
    int lines = 0;
    for (char *save, *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        long long size, count;
        char type[16], op[16];
        double t, algbw, busbw;
        assert_int_equal(sscanf(line, "%lld %lld %15s %15s %lf %lf %lf", &size, &count, type, op, &t, &algbw, &busbw), 7);
        assert_int_equal(size, count * 4);
        assert_true(t > 0 && algbw > 0);
        /* nccl-tests' bus bandwidth factor for allreduce: 2(n-1)/n = 1 at n = 2. */
        assert_true(busbw > 0.99 * algbw && busbw < 1.01 * algbw);
        lines++;
    }
    assert_int_equal(lines, 2);
    ddpprof_run(&r, (const char *[]){"bench", "allreduce", "--sizes", "big", NULL});
    assert_int_equal(r.status, 2);
}

static void test_shipped_scenarios_load(void **state)
{
    (void)state;
    const char *dir = getenv("SCENARIOS");
    assert_non_null(dir);
    const char *names[] = {"baseline.ini", "skewed.ini", "bucket_sweep.ini", "model_sweep.ini", "no_sync.ini"};
    for (int i = 0; i < 5; i++) {
        char path[400], db[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        scratch_path(db, sizeof db, "shipped.sqlite");
        cmd_result r;
        /* One short iteration of each, smaller batch: the files parse and run. */
        ddpprof_run(&r, (const char *[]){"run", path, "-o", db, "-q", "-s", "run.iterations=1", "-s", "run.warmup=1", "-s",
                                     "model.batch=2", "-s", "run.world_size=2", "-s", "skew.speed=", NULL});
        if (r.status != 0)
            fail_msg("%s: exit %d: %s", names[i], r.status, r.err);
    }
}

/* --verify with DDP's join: a rank out of data shadows the allreduces with zeros, so the
 * average it checks counts only the ranks that still had data (once wrongly the
 * average of every rank's, which failed such a run). */
static void test_verify_with_join(void **state)
{
    (void)state;
    char ini[300], db[300];
    scratch_path(ini, sizeof ini, "join.ini");
    scratch_path(db, sizeof db, "join.sqlite");
    unlink(db);
    write_file(ini, small_ini);
    cmd_result r;
    ddpprof_run(&r, (const char *[]){"run", ini, "-o", db, "-q", "--verify", "-s", "run.world_size=2", "-s",
                                     "run.iterations=5", "-s", "ddp.join=true", "-s", "skew.rank_steps=6,4", NULL});
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.err, "verify: every synchronised step checked"));
    assert_int_equal(db_int(db, "select verified from run where id = 1"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_help),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_bad_scenario_changes_nothing),
        cmocka_unit_test(test_run_report_json),
        cmocka_unit_test(test_sweep_runs_each_point),
        cmocka_unit_test(test_what_was_run),
        cmocka_unit_test(test_verify_with_join),
        cmocka_unit_test(test_failed_run_is_recorded),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_predict),
        cmocka_unit_test(test_runs_listed),
        cmocka_unit_test(test_scale_and_sweeps_as_a_user),
        cmocka_unit_test(test_bench_allreduce),
        cmocka_unit_test(test_shipped_scenarios_load),
    };
    return cmocka_run_group_tests(tests, scratch_group_setup, scratch_group_teardown);
}
