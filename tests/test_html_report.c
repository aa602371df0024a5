/* test_html_report.c — `ddpprof report --html` end to end, rendered by headless
 * Chromium (Debian's `chromium`; installed first through scripts/common.sh when it is
 * missing, the test skipped, saying why, only when that is impossible).
 *
 * Contract checked: on a database holding a two-point sweep of a skewed scenario and
 * the same runs under a second backend name, the page is self-contained (nothing it
 * would fetch: no src, href, url() or @import); in the DOM Chromium renders, every
 * figure element's data-value equals the --json report's figure at its data-json
 * path, and every rank and bucket figure of every run is shown; each run's timeline
 * shows the JSON's representative iteration and has spans; the sweep and backend
 * sections are there; the screenshot is not blank (many colours, mostly not
 * background) and shows the allreduce wait colour, since the ranks are skewed.
 * Without Chromium: --json with --html is refused (exit 2), and an output file that
 * cannot be written fails (exit 1) leaving nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <png.h>
#include <sqlite3.h>

#include "harness.h"

extern char **environ;

typedef struct {
    char dir[64];
    char db[128], json[128], html[128], dom[128], png[128], log[128];
} fixture;

static const char SCENARIO[] = "[run]\nname = skew sweep\nworld_size = 3\niterations = 3\nwarmup = 1\n"
                               "[model]\npreset = mlp\nlayers = 6\nhidden = 512\nbatch = 64\n"
                               "[skew]\nspeed = 1.5, 1.0, 1.0\n"
                               "[sweep]\nddp.bucket_cap_mb = 1, 4\n";

/* Runs argv with stdout to out_path (or /dev/null) and stderr to the log; exit status. */
static int run(fixture *f, const char *const *argv, const char *out_path)
{
    posix_spawn_file_actions_t fa;
    assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
                                                      O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, f->log, O_WRONLY | O_CREAT | O_APPEND, 0644), 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return 127;
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool on_path(const char *name)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    for (const char *p = path ? path : ""; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, name);
        if (access(buf, X_OK) == 0)
            return true;
        p += n + (colon ? 1 : 0);
    }
    return false;
}

/* Chromium, installed through the project's installer helpers when missing. */
static bool have_chromium(fixture *f)
{
    if (on_path("chromium"))
        return true;
    const char *scenarios = getenv("SCENARIOS");
    if (!scenarios)
        return false;
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, ". '%s/../scripts/common.sh' && find_root no-prompt && apt_install chromium",
             scenarios);
    fprintf(stderr, "test_html_report: chromium is not on PATH; installing it\n");
    run(f, (const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL);
    return on_path("chromium");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || tmpdir_make(f->dir, sizeof f->dir, "ddpprof_test_html") != 0) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/runs.sqlite", f->dir);
    snprintf(f->json, sizeof f->json, "%s/report.json", f->dir);
    snprintf(f->html, sizeof f->html, "%s/report.html", f->dir);
    snprintf(f->dom, sizeof f->dom, "%s/dom.html", f->dir);
    snprintf(f->png, sizeof f->png, "%s/shot.png", f->dir);
    snprintf(f->log, sizeof f->log, "%s/log", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (tmpdir_remove(f->dir) != 0)
        fprintf(stderr, "could not remove %s\n", f->dir);
    free(f);
    return 0;
}

/* The sweep's runs copied under another backend name, as a second backend would
 * record the same scenario: the backend table then has two columns per name. */
static void add_second_backend(fixture *f)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    const char *sql =
        "BEGIN;"
        "CREATE TEMP TABLE ids AS SELECT id AS old, id + 100 AS new FROM run;"
        "INSERT INTO run(id, name, scenario, source, backend, world_size, status, started_at, finished_at,"
        " error, model, total_params, iterations, warmup, bucket_cap_mb)"
        " SELECT new, name, scenario, source, 'sim', world_size, status, started_at, finished_at, error,"
        " model, total_params, iterations, warmup, bucket_cap_mb FROM run JOIN ids ON old = id;"
        "INSERT INTO rank(run_id, rank, speed) SELECT new, rank, speed FROM rank JOIN ids ON old = run_id;"
        "INSERT INTO bucket SELECT new, version, idx, nbytes, nparams, size_limit, params FROM bucket"
        " JOIN ids ON old = run_id;"
        "INSERT INTO span(run_id, rank, iter, stream, kind, name, layer, bucket, seq, bytes, start_ns, end_ns)"
        " SELECT new, rank, iter, stream, kind, name, layer, bucket, seq, bytes, start_ns, end_ns + 1000"
        " FROM span JOIN ids ON old = run_id;"
        "COMMIT;";
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("copying runs: %s", msg);
    sqlite3_close(db);
}

static json_t *json_at(json_t *doc, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = doc;
    for (char *save = NULL, *part = strtok_r(buf, ".", &save); part && cur;
         part = strtok_r(NULL, ".", &save))
        cur = json_is_array(cur) ? json_array_get(cur, strtoul(part, NULL, 10)) : json_object_get(cur, part);
    return cur;
}

/* Every data-json/data-value pair of the DOM against the JSON; returns how many, and
 * collects the paths seen. */
static size_t check_figures(const char *dom, json_t *doc, json_t *seen)
{
    regex_t re;
    assert_int_equal(regcomp(&re, "data-json=\"([^\"]+)\" data-value=\"([^\"]+)\"", REG_EXTENDED), 0);
    size_t n = 0;
    regmatch_t m[3];
    for (const char *p = dom; regexec(&re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
        char path[128], value[64];
        snprintf(path, sizeof path, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        snprintf(value, sizeof value, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        json_t *want = json_at(doc, path);
        if (!want)
            fail_msg("figure %s is not in the JSON report", path);
        if (json_is_null(want)) {
            if (strcmp(value, "null"))
                fail_msg("figure %s: page %s, JSON null", path, value);
        } else {
            double w = json_number_value(want), got = strtod(value, NULL);
            if (!json_is_number(want) || fabs(got - w) > 1e-9 * fmax(1.0, fabs(w)))
                fail_msg("figure %s: page %s, JSON %.17g", path, value, w);
        }
        json_object_set_new(seen, path, json_true());
        n++;
    }
    regfree(&re);
    return n;
}

static void check_coverage(json_t *doc, json_t *seen)
{
    static const char *const rank_keys[] = {"step_ms", "compute_ms", "comm_ms", "overlap_pct",
                                            "exposed_comm_ms", "wait_ms", "attribution.compute_ms",
                                            "attribution.exposed_transfer_ms",
                                            "attribution.exposed_wait_ms", "attribution.other_ms"};
    static const char *const bucket_keys[] = {"ready_ms", "launch_delay_ms", "arrival_skew_ms",
                                              "transfer_ms", "busbw_gbps", "bytes"};
    json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i);
        char path[128];
        snprintf(path, sizeof path, "runs.%zu.step_ms_mean", i);
        if (!json_object_get(seen, path))
            fail_msg("%s not shown", path);
        for (size_t k = 0; k < json_array_size(json_object_get(r, "ranks")); k++)
            for (size_t j = 0; j < sizeof rank_keys / sizeof *rank_keys; j++) {
                snprintf(path, sizeof path, "runs.%zu.ranks.%zu.%s", i, k, rank_keys[j]);
                if (!json_object_get(seen, path))
                    fail_msg("%s not shown", path);
            }
        assert_true(json_array_size(json_object_get(r, "buckets")) > 0);
        for (size_t b = 0; b < json_array_size(json_object_get(r, "buckets")); b++)
            for (size_t j = 0; j < sizeof bucket_keys / sizeof *bucket_keys; j++) {
                snprintf(path, sizeof path, "runs.%zu.buckets.%zu.%s", i, b, bucket_keys[j]);
                if (!json_object_get(seen, path))
                    fail_msg("%s not shown", path);
            }
    }
}

/* Each run's timeline: the JSON's representative iteration, with spans. */
static void check_timelines(const char *dom, json_t *doc)
{
    json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i);
        char anchor[64];
        snprintf(anchor, sizeof anchor, "id=\"run-%lld\"", (long long)json_integer_value(json_object_get(r, "id")));
        const char *sec = strstr(dom, anchor);
        assert_non_null(sec);
        const char *svg = strstr(sec, "class=\"timeline\"");
        assert_non_null(svg);
        int iter = -1;
        size_t spans = 0;
        assert_int_equal(sscanf(svg, "class=\"timeline\" data-iter=\"%d\" data-spans=\"%zu\"", &iter, &spans), 2);
        assert_int_equal(iter, json_integer_value(json_object_get(r, "representative_iter")));
        assert_true(iter >= json_integer_value(json_object_get(r, "warmup_planned")));
        assert_true(spans > 0);
    }
}

static void check_screenshot(const char *png)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&img, png));
    img.format = PNG_FORMAT_RGB;
    png_bytep px = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(px);
    assert_true(png_image_finish_read(&img, NULL, px, 0, NULL));
    size_t n = (size_t)img.width * img.height, background = 0, wait_red = 0, distinct = 0;
    static unsigned char seen[1 << 15]; /* 5 bits per channel */
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < n; i++) {
        unsigned r = px[3 * i], g = px[3 * i + 1], b = px[3 * i + 2];
        if ((r == 0xff && g == 0xff && b == 0xff) || (r == 0xf4 && g == 0xf5 && b == 0xf7))
            background++;
        if (r == 0xe1 && g == 0x57 && b == 0x59)
            wait_red++;
        unsigned key = (r >> 3) << 10 | (g >> 3) << 5 | b >> 3;
        if (!seen[key]++)
            distinct++;
    }
    free(px);
    png_image_free(&img);
    fprintf(stderr, "screenshot: %ux%u, %zu colours (5-bit), %.1f%% background, %zu px of allreduce wait\n",
            img.width, img.height, distinct, 100.0 * background / n, wait_red);
    assert_true(img.width >= 1000 && img.height >= 1000);
    assert_true(distinct >= 12);
    assert_true(background < n * 95 / 100);
    assert_true(wait_red > 50);
}

static void test_html_report_in_chromium(void **state)
{
    fixture *f = *state;
    const char *ddpprof = getenv("DDPPROF");
    if (!ddpprof)
        fail_msg("DDPPROF must name ./ddpprof (make test sets it)");
    if (!have_chromium(f)) {
        fprintf(stderr, "test_html_report: SKIPPED: chromium cannot be had here\n");
        skip();
    }
    char ini[128];
    snprintf(ini, sizeof ini, "%s/sweep.ini", f->dir);
    FILE *fp = fopen(ini, "w");
    assert_non_null(fp);
    fputs(SCENARIO, fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(run(f, (const char *[]){ddpprof, "run", ini, "-o", f->db, "-q", NULL}, NULL), 0);
    add_second_backend(f);
    assert_int_equal(run(f, (const char *[]){ddpprof, "report", f->db, "--json", NULL}, f->json), 0);
    assert_int_equal(run(f, (const char *[]){ddpprof, "report", f->db, "--html", "-o", f->html, NULL}, NULL), 0);

    char *page = slurp_file(f->html, NULL);
    static const char *const fetches[] = {"src=", "href=", "url(", "@import", "<link", "<script src"};
    for (size_t i = 0; i < sizeof fetches / sizeof *fetches; i++)
        if (strstr(page, fetches[i]))
            fail_msg("the page fetches something: '%s'", fetches[i]);
    free(page);

    char url[192], profile[128], shot[160];
    snprintf(url, sizeof url, "file://%s", f->html);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", f->dir);
    snprintf(shot, sizeof shot, "--screenshot=%s", f->png);
    const char *common[] = {"timeout", "180", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                            "--hide-scrollbars", "--no-first-run", profile, "--window-size=1280,1600"};
    const char *dump[16], *snap[16];
    size_t nc = sizeof common / sizeof *common;
    memcpy(dump, common, sizeof common);
    dump[nc] = "--dump-dom";
    dump[nc + 1] = url;
    dump[nc + 2] = NULL;
    assert_int_equal(run(f, dump, f->dom), 0);
    memcpy(snap, common, sizeof common);
    snap[nc] = shot;
    snap[nc + 1] = url;
    snap[nc + 2] = NULL;
    assert_int_equal(run(f, snap, NULL), 0);

    json_error_t je;
    json_t *doc = json_load_file(f->json, 0, &je);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "runs")), 4);
    char *dom = slurp_file(f->dom, NULL);
    assert_non_null(strstr(dom, "</svg>")); /* rendered, not an error page */
    json_t *seen = json_object();
    size_t n = check_figures(dom, doc, seen);
    fprintf(stderr, "%zu figures on the page equal the JSON report's\n", n);
    check_coverage(doc, seen);
    check_timelines(dom, doc);
    assert_non_null(strstr(dom, "class=\"card sweep\""));
    assert_non_null(strstr(dom, "class=\"card backends\""));
    json_decref(seen);
    json_decref(doc);
    free(dom);
    check_screenshot(f->png);
}

static void test_html_usage(void **state)
{
    fixture *f = *state;
    const char *ddpprof = getenv("DDPPROF");
    if (!ddpprof)
        fail_msg("DDPPROF must name ./ddpprof (make test sets it)");
    char ini[128];
    snprintf(ini, sizeof ini, "%s/one.ini", f->dir);
    FILE *fp = fopen(ini, "w");
    assert_non_null(fp);
    fputs("[run]\nworld_size = 2\niterations = 1\nwarmup = 0\n[model]\npreset = mlp\nlayers = 2\n"
          "hidden = 64\nbatch = 8\n",
          fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(run(f, (const char *[]){ddpprof, "run", ini, "-o", f->db, "-q", NULL}, NULL), 0);
    assert_int_equal(run(f, (const char *[]){ddpprof, "report", f->db, "--json", "--html", NULL}, NULL), 2);
    char bad[192];
    snprintf(bad, sizeof bad, "%s/no/such/dir/r.html", f->dir);
    assert_int_equal(run(f, (const char *[]){ddpprof, "report", f->db, "--html", "-o", bad, NULL}, NULL), 1);
    assert_int_equal(access(bad, F_OK), -1);
    assert_int_equal(run(f, (const char *[]){ddpprof, "report", f->db, "--html", "-o", f->html, NULL}, NULL), 0);
    char *page = slurp_file(f->html, NULL);
    assert_non_null(strstr(page, "</html>"));
    assert_non_null(strstr(page, "class=\"timeline\""));
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_html_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_report_in_chromium, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
