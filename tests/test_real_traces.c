/* test_real_traces.c — ddpprof on traces that real jobs recorded on real GPUs (and one
 * real CPU trainer): every trace in the shared traces folder imports; Holistic Trace
 * Analysis's own figures for it, as the folder's README.md gives them, come out within
 * half a point; and every DDP trace replays in `ddpprof whatif` within 5 % of its
 * measured iteration time.
 *
 * The folder is ../shared/traces beside the repository (DDPPROF_TRACES names another);
 * where it is absent the tests skip, saying so.  Which traces are DDP is not written
 * here: a run with DDP's gradient buckets is one.  The README's table is read as it is:
 * a row names a folder and file (a `{0,1}` in the name: the files are one job's ranks,
 * imported together) and, last, "rank N: overlap / idle / compute / non-compute" per
 * rank ("none" where HTA gives no overlap), or no figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MAX_RANKS_LISTED 8
/* Half a point: HTA's own rounding and its reading of ProfilerStep are what differ. */
#define HTA_TOLERANCE_PTS 0.5
#define REPLAY_TOLERANCE 0.05

typedef struct {
    char folder[128], file[160];
    bool one_job;    /* the row's files are ranks of one job, imported together */
    int nranks;      /* ranks with HTA figures in the row */
    int rank[MAX_RANKS_LISTED];
    double fig[MAX_RANKS_LISTED][4]; /* NAN: "none" */
} trace_row;

static char traces[512];

static int setup(void **state)
{
    (void)state;
    const char *env = getenv("DDPPROF_TRACES");
    if (env && *env)
        snprintf(traces, sizeof traces, "%s", env);
    else
        repo_path(traces, sizeof traces, "../shared/traces");
    return scratch_setup("ddpprof-test-real-traces-");
}

/* "rank 0: 22.45 / 2.73 / 30.11 / 67.16; rank 1: ..." (overlap may be "overlap none"). */
static void parse_figures(const char *cell, trace_row *t)
{
    for (const char *p = strstr(cell, "rank "); p && t->nranks < MAX_RANKS_LISTED; p = strstr(p + 5, "rank ")) {
        int rank, used = 0;
        if (sscanf(p, "rank %d: %n", &rank, &used) != 1 || used == 0)
            continue;
        const char *v = p + used;
        double f[4];
        int k = 0;
        if (!strncmp(v, "overlap none", 12)) {
            f[k++] = NAN;
            v += 12;
            while (*v == ' ' || *v == '/')
                v++;
        }
        for (; k < 4; k++) {
            char *end;
            f[k] = strtod(v, &end);
            if (end == v)
                break;
            v = end;
            while (*v == ' ' || *v == '/')
                v++;
        }
        if (k < 4)
            continue;
        t->rank[t->nranks] = rank;
        memcpy(t->fig[t->nranks], f, sizeof f);
        t->nranks++;
    }
}

/* The README's rows of traces, into rows (at most max); their count, or -1 when the
 * folder is absent. */
static int read_rows(trace_row *rows, int max)
{
    char path[640];
    snprintf(path, sizeof path, "%s/README.md", traces);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `", 3) != 0)
            continue;
        const char *name = line + 3, *tick = strchr(name, '`');
        if (!tick)
            continue;
        trace_row *t = &rows[n];
        memset(t, 0, sizeof *t);
        const char *slash = memchr(name, '/', (size_t)(tick - name));
        if (!slash)
            continue;
        snprintf(t->folder, sizeof t->folder, "%.*s", (int)(slash - name), name);
        snprintf(t->file, sizeof t->file, "%.*s", (int)(tick - slash - 1), slash + 1);
        t->one_job = strchr(t->file, '{') != NULL;
        const char *last = strrchr(line, '|');
        const char *cell = last;
        while (cell > line && cell[-1] != '|')
            cell--;
        char fig[1024];
        snprintf(fig, sizeof fig, "%.*s", (int)(last - cell), cell);
        parse_figures(fig, t);
        n++;
    }
    fclose(f);
    return n;
}

/* The files of a row: the folder's files whose names match the row's (a "..." in the
 * README's name stands for any text, "{0,1}" for any rank). */
static int row_files(const trace_row *t, char files[][640], int max)
{
    char dir[640];
    snprintf(dir, sizeof dir, "%s/%s", traces, t->folder);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char prefix[160];
    snprintf(prefix, sizeof prefix, "%s", t->file);
    char *cut = strpbrk(prefix, "{.*");
    if (strstr(prefix, "..."))
        cut = strstr(prefix, "...");
    else if (!strchr(prefix, '{') && !strchr(prefix, '*'))
        cut = NULL;
    if (cut)
        *cut = '\0';
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.')
            continue;
        if (cut ? strncmp(e->d_name, prefix, strlen(prefix)) != 0 : strcmp(e->d_name, prefix) != 0)
            continue;
        snprintf(files[n++], 640, "%.380s/%.250s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

/* The job's step (the slowest rank per iteration, mean over measured iterations). */
static double job_step_ms(const char *db, int64_t run)
{
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT AVG(s) FROM (SELECT MAX(step_ns) / 1e6 AS s FROM iteration_stat WHERE run_id = %lld"
             " AND warmup = 0 GROUP BY iter)",
             (long long)run);
    return db_double(db, sql);
}

static void check_hta(const char *db, const trace_row *t)
{
    for (int i = 0; i < t->nranks; i++) {
        static const char *const col[4] = {"comm_overlap_pct", "idle_pct", "compute_pct", "non_compute_pct"};
        for (int k = 0; k < 4; k++) {
            char sql[400];
            snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM hta_stat WHERE rank = %d", t->rank[i]);
            if (db_int(db, sql) != 1)
                fail_msg("%s: rank %d: no HTA figures, where HTA gives them", t->folder, t->rank[i]);
            /* As the report computes them: parts of HTA's whole µs, rounded to 2 decimals. */
            static const char *const expr[4] = {
                "100.0 * comm_overlap_us / NULLIF(comm_us, 0)", "100.0 * idle_us / kernel_us",
                "100.0 * compute_us / kernel_us", "100.0 * non_compute_us / kernel_us"};
            snprintf(sql, sizeof sql, "SELECT COALESCE(%s, -1) FROM hta_stat WHERE rank = %d", expr[k], t->rank[i]);
            double ours = db_double(db, sql);
            double theirs = t->fig[i][k];
            if (isnan(theirs)) {
                if (ours >= 0)
                    fail_msg("%s: rank %d: %s %.2f where HTA gives none", t->folder, t->rank[i], col[k], ours);
                continue;
            }
            if (fabs(ours - theirs) > HTA_TOLERANCE_PTS)
                fail_msg("%s: rank %d: %s %.2f, HTA %.2f", t->folder, t->rank[i], col[k], ours, theirs);
        }
    }
}

/* whatif without a change replays a DDP run within REPLAY_TOLERANCE of its step. */
static void check_replay(const char *db, const trace_row *t, double *err_out)
{
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", NULL), 0);
    if (r.status != 0)
        fail_msg("%s: whatif refuses a DDP trace: %s", t->folder, r.err);
    int64_t replay = db_int(db, "SELECT MAX(id) FROM run");
    double measured = job_step_ms(db, 1), replayed = job_step_ms(db, replay);
    *err_out = (replayed - measured) / measured;
    print_message("%-28s replay %9.3f ms, measured %9.3f ms: %+.1f %%\n", t->folder, replayed, measured,
                  100 * *err_out);
}

static void test_every_trace(void **state)
{
    (void)state;
    trace_row rows[32];
    int n = read_rows(rows, 32);
    if (n < 0) {
        print_message("skipped: no real traces at %s (set DDPPROF_TRACES to their folder)\n", traces);
        skip();
    }
    assert_true(n > 0);
    int imported = 0, hta = 0, replayed = 0;
    for (int i = 0; i < n; i++) {
        const trace_row *t = &rows[i];
        char files[8][640];
        int nf = row_files(t, files, 8);
        if (nf == 0)
            fail_msg("%s/%s: the README names it, the folder does not hold it", t->folder, t->file);
        /* One job's ranks together; otherwise each file is a job of its own. */
        for (int f = 0; f < (t->one_job ? 1 : nf); f++) {
            char db[640], rel[200];
            snprintf(rel, sizeof rel, "%s-%d.sqlite", t->folder, f);
            scratch_path(db, sizeof db, rel);
            const char *argv[16] = {getenv("DDPPROF"), "import", "-o", db};
            int a = 4;
            for (int k = t->one_job ? 0 : f; k < (t->one_job ? nf : f + 1); k++)
                argv[a++] = files[k];
            argv[a] = NULL;
            cmd_result r;
            assert_int_equal(run_cmd(&r, argv), 0);
            if (r.status != 0)
                fail_msg("import %s: exit %d: %s", files[f], r.status, r.err);
            imported++;
            assert_int_equal(ddpprof_cmd(&r, "report", db, NULL), 0);
            if (r.status != 0)
                fail_msg("report of %s: %s", files[f], r.err);
            /* The step is the job's period: one 'step' span per rank-iteration. */
            assert_int_equal(db_int(db, "SELECT COUNT(*) FROM iteration_stat WHERE run_id = 1"),
                             db_int(db, "SELECT COUNT(*) FROM span WHERE run_id = 1 AND kind = 'step'"));
            if (t->nranks > 0) {
                check_hta(db, t);
                hta++;
            } else if (strstr(t->folder, "gloo")) {
                assert_int_equal(db_int(db, "SELECT COUNT(*) FROM hta_stat"), 0); /* "HTA finds no device ops" */
            }
            if (db_int(db, "SELECT COUNT(*) FROM bucket WHERE run_id = 1") > 0) {
                double err;
                check_replay(db, t, &err);
                /* A trace whose events were sampled loses some of a rank's bucket copies:
                 * no speed of its ranks reproduces their readiness, so it gets a wider
                 * margin, said here rather than hidden. */
                double tol = strstr(t->folder, "sampled") ? 3 * REPLAY_TOLERANCE : REPLAY_TOLERANCE;
                if (fabs(err) > tol)
                    fail_msg("%s: the replay is %+.1f %% off the measured step", t->folder, 100 * err);
                replayed++;
                /* The A100 job's all_to_all in the forward: measured, and scaling with the world. */
                if (strstr(t->folder, "a100")) {
                    char ini[640];
                    scratch_path(ini, sizeof ini, "a100-derived.ini");
                    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "--scenario-out", ini, NULL), 0);
                    assert_int_equal(r.status, 0);
                    assert_non_null(strstr(r.out, "other collectives:"));
                    char text[1 << 15];
                    slurp_into(ini, text, sizeof text);
                    assert_non_null(strstr(text, "comm_ranks = 16"));
                }
            }
        }
    }
    print_message("%d traces imported, %d checked against HTA's figures, %d DDP runs replayed\n", imported, hta,
                  replayed);
    assert_true(hta >= 4 && replayed >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_trace, setup, scratch_group_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
