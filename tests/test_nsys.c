/* test_nsys.c — end-to-end test of ddpprof's NVTX ranges as NVIDIA Nsight Systems sees them.
 *
 * Runs `ddpprof run scenarios/nvtx_small.ini` under `nsys profile -t nvtx`, turns the
 * trace into SQLite with `nsys export`, and checks what a person opening the report
 * would rely on: the "ddpprof" domain exists; for each of the two ranks there are the
 * forward phase range, per-layer backward ranges, the first bucket's allreduce and the
 * optimizer step; every range in the domain closes after it opens; and rank 0 has as
 * many "bucket N allreduce" ranges as ddpprof's own database has allreduce spans.
 *
 * Needs: DDPPROF (path of ./ddpprof) and SCENARIOS (the scenarios folder), as `make test`
 * sets them, and nsys. When nsys is not on PATH, scripts/install-nsys.sh (beside
 * SCENARIOS) is run first; the test is skipped only when nsys still cannot be had.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"

extern char **environ;

#define WORLD 2 /* scenarios/nvtx_small.ini's run.world_size */

/* Generous: apt may have to download some hundred MB; nsys itself takes seconds. */
#define INSTALL_TIMEOUT_S 900
#define NSYS_TIMEOUT_S 300

/* Event type ids of nsys's SQLite schema, used only when an export lacks the enum table. */
#define NVTX_DOMAIN_CREATE_FALLBACK 75
#define NVTX_PUSHPOP_RANGE_FALLBACK 59

typedef struct {
    char dir[PATH_MAX];
    char log[PATH_MAX];
} fixture;

static int path_join(char *out, size_t n, const char *a, const char *b)
{
    int k = snprintf(out, n, "%s/%s", a, b);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_exec(const char *path) { return is_file(path) && access(path, X_OK) == 0; }

/* Resolves a command through PATH ourselves so that spawning takes an absolute path. */
static int find_in_path(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        char dir[PATH_MAX];
        if (len == 0)
            snprintf(dir, sizeof dir, ".");
        else if (len < sizeof dir) {
            memcpy(dir, path, len);
            dir[len] = '\0';
        } else
            dir[0] = '\0';
        if (dir[0] && path_join(out, n, dir, name) == 0 && is_exec(out))
            return 0;
        if (!colon)
            break;
        path = colon + 1;
    }
    return -1;
}

/* Shows the end of a child's log, which is where nsys and apt say what went wrong. */
static void print_log_tail(const char *log)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    char buf[4096];
    long size = 0;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > (long)sizeof buf - 1)
        fseek(f, size - (long)(sizeof buf - 1), SEEK_SET);
    else
        rewind(f);
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    fclose(f);
    fprintf(stderr, "---- last output of the command (%s) ----\n%s\n---- end ----\n", log, buf);
}

/* Runs argv (argv[0] an absolute path) with stdin from /dev/null and stdout+stderr
 * appended to log. The child gets a process group of its own so that a timeout kills
 * nsys together with the program it launched, not nsys alone. Returns the exit
 * status, or -1 (with why filled in) when it could not start, died or timed out. */
static int run_logged(char *const argv[], const char *log, int timeout_s, char *why, size_t whylen)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0) {
        snprintf(why, whylen, "posix_spawn_file_actions_init: %s", strerror(rc));
        return -1;
    }
    rc = posix_spawnattr_init(&at);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        snprintf(why, whylen, "posix_spawnattr_init: %s", strerror(rc));
        return -1;
    }
    if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
        (rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644)) != 0 ||
        (rc = posix_spawn_file_actions_adddup2(&fa, 1, 2)) != 0 ||
        (rc = posix_spawnattr_setpgroup(&at, 0)) != 0 ||
        (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP)) != 0) {
        snprintf(why, whylen, "setting up the spawn of %s: %s", argv[0], strerror(rc));
        posix_spawnattr_destroy(&at);
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    pid_t pid;
    rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(why, whylen, "cannot start %s: %s", argv[0], strerror(rc));
        return -1;
    }

    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            snprintf(why, whylen, "waitpid(%s): %s", argv[0], strerror(errno));
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= timeout_s) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            snprintf(why, whylen, "%s did not finish within %d s (killed)", argv[0], timeout_s);
            return -1;
        }
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (WIFEXITED(st)) {
        if (WEXITSTATUS(st) != 0)
            snprintf(why, whylen, "%s exited with status %d", argv[0], WEXITSTATUS(st));
        return WEXITSTATUS(st);
    }
    snprintf(why, whylen, "%s was killed by signal %d", argv[0], WIFSIGNALED(st) ? WTERMSIG(st) : -1);
    return -1;
}

static void run_ok(char *const argv[], const char *log, int timeout_s)
{
    char why[PATH_MAX + 128] = "";
    if (run_logged(argv, log, timeout_s, why, sizeof why) != 0) {
        print_log_tail(log);
        fail_msg("%s", why);
    }
}

/* Older nsys releases (Debian's among them) ship the importer but cannot find it
 * themselves, leaving a .qdstrm; the places a package or NVIDIA's installer put it. */
static int find_importer(const char *nsys, char *out, size_t n)
{
    char real[PATH_MAX];
    if (realpath(nsys, real)) {
        char *slash = strrchr(real, '/'); /* .../bin/nsys -> .../host-linux-x64 */
        if (slash) {
            *slash = '\0';
            if (snprintf(out, n, "%s/../host-linux-x64/QdstrmImporter", real) < (int)n && is_exec(out))
                return 0;
        }
    }
    static const char *const patterns[] = {
        "/usr/lib/nsight-systems*/host-linux-x64/QdstrmImporter",
        "/usr/lib/x86_64-linux-gnu/nsight-systems*/host-linux-x64/QdstrmImporter",
        "/opt/nvidia/nsight-systems*/host-linux-x64/QdstrmImporter",
        "/opt/nvidia/nsight-systems*/*/host-linux-x64/QdstrmImporter",
        "/usr/local/cuda*/nsight-systems*/host-linux-x64/QdstrmImporter",
    };
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        glob_t g;
        if (glob(patterns[i], 0, NULL, &g) != 0)
            continue;
        /* glob sorts: the last match is the newest versioned install. */
        for (size_t k = g.gl_pathc; k-- > 0;)
            if (is_exec(g.gl_pathv[k]) && snprintf(out, n, "%s", g.gl_pathv[k]) < (int)n) {
                globfree(&g);
                return 0;
            }
        globfree(&g);
    }
    return -1;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/ddpprof_test_nsys_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        fprintf(stderr, "mkdtemp(%s): %s\n", f->dir, strerror(errno));
        free(f);
        return -1;
    }
    if (path_join(f->log, sizeof f->log, f->dir, "commands.log") != 0) {
        rmdir(f->dir);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* Runs even when an assertion failed, so no trace (tens of MB with sampling) is left behind. */
static int teardown(void **state)
{
    fixture *f = *state;
    if (tmpdir_remove(f->dir) != 0)
        fprintf(stderr, "test_nsys: cannot clean up %s\n", f->dir);
    free(f);
    return 0;
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1, &q, NULL);
    assert_int_equal(rc, SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC), SQLITE_OK);
    rc = sqlite3_step(q);
    assert_true(rc == SQLITE_ROW || rc == SQLITE_DONE);
    sqlite3_finalize(q);
    return rc == SQLITE_ROW;
}

/* Type ids are looked up by name because nsys has renumbered its enums across releases. */
static int event_type(sqlite3 *db, const char *name, int fallback)
{
    if (!has_table(db, "ENUM_NSYS_EVENT_TYPE"))
        return fallback;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name=?1", -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC), SQLITE_OK);
    int rc = sqlite3_step(q);
    int id = rc == SQLITE_ROW ? sqlite3_column_int(q, 0) : fallback;
    assert_true(rc == SQLITE_ROW || rc == SQLITE_DONE);
    sqlite3_finalize(q);
    return id;
}

/* First column of the first row of sql, whose parameters ?1, ?2 (ints) and ?3 (text)
 * are bound to a, b and text as far as the statement uses them. */
static int64_t query_int(sqlite3 *db, const char *sql, int a, int b, const char *text)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    if (rc != SQLITE_OK)
        fail_msg("prepare \"%s\": %s", sql, sqlite3_errmsg(db));
    int params = sqlite3_bind_parameter_count(q);
    if (params >= 1)
        assert_int_equal(sqlite3_bind_int(q, 1, a), SQLITE_OK);
    if (params >= 2)
        assert_int_equal(sqlite3_bind_int(q, 2, b), SQLITE_OK);
    if (params >= 3)
        assert_int_equal(sqlite3_bind_text(q, 3, text, -1, SQLITE_TRANSIENT), SQLITE_OK);
    rc = sqlite3_step(q);
    if (rc != SQLITE_ROW)
        fail_msg("step \"%s\": %s", sql, sqlite3_errmsg(db));
    int64_t v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

typedef struct {
    sqlite3 *db;
    int pushpop;   /* event type of a closed push/pop range */
    int domain;    /* domainId of "ddpprof" */
    char text[160]; /* SQL expression giving a row's message, inline or registered */
} trace;

/* Push/pop ranges of the ddpprof domain whose message matches a GLOB (case-sensitive,
 * and '_' in "copy_in" is not a wildcard as it would be for LIKE). */
static int64_t count_ranges(const trace *t, const char *glob_pat)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM NVTX_EVENTS e WHERE e.eventType=?1 AND e.domainId=?2 AND %s GLOB ?3", t->text);
    return query_int(t->db, sql, t->pushpop, t->domain, glob_pat);
}

static void test_nvtx_ranges_in_nsys_trace(void **state)
{
    fixture *f = *state;
    const char *ddpprof = getenv("DDPPROF");
    const char *scenarios = getenv("SCENARIOS");
    if (!ddpprof || !*ddpprof || !scenarios || !*scenarios)
        fail_msg("DDPPROF and SCENARIOS must name ./ddpprof and the scenarios folder (make test sets them)");
    assert_true(is_exec(ddpprof));

    char nsys[PATH_MAX];
    if (find_in_path("nsys", nsys, sizeof nsys) != 0) {
        char script[PATH_MAX];
        snprintf(script, sizeof script, "%s/../scripts/install-nsys.sh", scenarios);
        if (!is_file(script)) {
            fprintf(stderr, "test_nsys: SKIPPED: nsys is not on PATH and %s is missing\n", script);
            skip();
        }
        fprintf(stderr, "test_nsys: nsys is not on PATH; running %s\n", script);
        char *argv[] = {"/bin/sh", script, NULL};
        char why[PATH_MAX + 128] = "";
        int rc = run_logged(argv, f->log, INSTALL_TIMEOUT_S, why, sizeof why);
        if (rc != 0 || find_in_path("nsys", nsys, sizeof nsys) != 0) {
            print_log_tail(f->log);
            fprintf(stderr, "test_nsys: SKIPPED: nsys cannot be had here (%s)\n",
                    rc != 0 ? why : "installer succeeded but nsys is still not on PATH");
            skip();
        }
    }

    char scenario[PATH_MAX], out_base[PATH_MAX], qdstrm[PATH_MAX], rep[PATH_MAX], exported[PATH_MAX],
        rundb[PATH_MAX];
    assert_int_equal(path_join(scenario, sizeof scenario, scenarios, "nvtx_small.ini"), 0);
    assert_true(is_file(scenario));
    assert_int_equal(path_join(out_base, sizeof out_base, f->dir, "trace"), 0);
    assert_int_equal(path_join(qdstrm, sizeof qdstrm, f->dir, "trace.qdstrm"), 0);
    assert_int_equal(path_join(rep, sizeof rep, f->dir, "trace.nsys-rep"), 0);
    assert_int_equal(path_join(exported, sizeof exported, f->dir, "trace.sqlite"), 0);
    assert_int_equal(path_join(rundb, sizeof rundb, f->dir, "r.sqlite"), 0);

    /* NVTX only: CPU sampling and context-switch tracing need perf_event access that
     * containers often deny, and would grow the trace twentyfold for nothing checked here. */
    char *profile[] = {nsys,  "profile", "-t", "nvtx", "-s", "none", "--cpuctxsw", "none", "-o", out_base,
                       "--force-overwrite", "true", (char *)ddpprof, "run", scenario, "-o", rundb, "-q", NULL};
    run_ok(profile, f->log, NSYS_TIMEOUT_S);

    if (!is_file(rep)) {
        if (!is_file(qdstrm)) {
            print_log_tail(f->log);
            fail_msg("nsys profile wrote neither %s nor %s", rep, qdstrm);
        }
        char importer[PATH_MAX];
        if (find_importer(nsys, importer, sizeof importer) != 0) {
            print_log_tail(f->log);
            fail_msg("nsys left %s and no QdstrmImporter was found to turn it into a report", qdstrm);
        }
        char *import[] = {importer, "-i", qdstrm, NULL};
        run_ok(import, f->log, NSYS_TIMEOUT_S);
        if (!is_file(rep)) {
            print_log_tail(f->log);
            fail_msg("%s -i %s did not write %s", importer, qdstrm, rep);
        }
    }

    char *export[] = {nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", exported, rep, NULL};
    run_ok(export, f->log, NSYS_TIMEOUT_S);
    assert_true(is_file(exported));

    trace t = {0};
    if (sqlite3_open_v2(exported, &t.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fail_msg("open %s: %s", exported, t.db ? sqlite3_errmsg(t.db) : "out of memory");
    /* nsys exports lazily: a table with no rows may be absent, NVTX_EVENTS included if
     * no range was recorded, which is exactly the failure this test is for. */
    if (!has_table(t.db, "NVTX_EVENTS")) {
        sqlite3_close(t.db);
        fail_msg("%s has no NVTX_EVENTS table: nsys recorded no NVTX event (was ddpprof built with NVTX?)",
                 exported);
    }
    /* A message is inline (text) or registered once and referenced (textId). */
    snprintf(t.text, sizeof t.text, "%s",
             has_table(t.db, "StringIds") ? "COALESCE(e.text, (SELECT s.value FROM StringIds s WHERE s.id=e.textId))"
                                          : "e.text");
    int domain_create = event_type(t.db, "NvtxDomainCreate", NVTX_DOMAIN_CREATE_FALLBACK);
    t.pushpop = event_type(t.db, "NvtxPushPopRange", NVTX_PUSHPOP_RANGE_FALLBACK);

    {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM NVTX_EVENTS e WHERE e.eventType=?1 AND %s=?3", t.text);
        int64_t n = query_int(t.db, sql, domain_create, 0, "ddpprof");
        if (n < 1)
            fail_msg("no NvtxDomainCreate event for the \"ddpprof\" domain in %s", exported);
        snprintf(sql, sizeof sql,
                 "SELECT e.domainId FROM NVTX_EVENTS e WHERE e.eventType=?1 AND %s=?3 LIMIT 1", t.text);
        t.domain = (int)query_int(t.db, sql, domain_create, 0, "ddpprof");
        printf("nsys: domain \"ddpprof\" created %lld time(s), id %d\n", (long long)n, t.domain);
    }

    int64_t total = query_int(t.db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType=?1 AND domainId=?2",
                              t.pushpop, t.domain, NULL);
    int64_t open_or_empty =
        query_int(t.db,
                  "SELECT count(*) FROM NVTX_EVENTS WHERE eventType=?1 AND domainId=?2 AND "
                  "(end IS NULL OR end <= start)",
                  t.pushpop, t.domain, NULL);
    printf("nsys: %lld push/pop ranges in the domain, %lld without end > start\n", (long long)total,
           (long long)open_or_empty);
    assert_true(total > 0);
    assert_int_equal(open_or_empty, 0);

    for (int r = 0; r < WORLD; r++) {
        static const char *const want[] = {"rank %d / forward", "rank %d / backward ?*", "rank %d / bucket 0 allreduce",
                                           "rank %d / optimizer sgd step"};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            char pat[96];
            snprintf(pat, sizeof pat, want[i], r);
            int64_t n = count_ranges(&t, pat);
            printf("nsys: rank %d: %-34s %lld\n", r, pat, (long long)n);
            if (n < 1)
                fail_msg("no push/pop range matching \"%s\" in the ddpprof domain", pat);
        }
    }

    int64_t nvtx_allreduce = count_ranges(&t, "rank 0 / bucket * allreduce");
    sqlite3_close(t.db);

    sqlite3 *run = NULL;
    if (sqlite3_open_v2(rundb, &run, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fail_msg("open %s: %s", rundb, run ? sqlite3_errmsg(run) : "out of memory");
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(run, "SELECT count(*) FROM span WHERE rank=0 AND kind='allreduce'", -1, &q, NULL) !=
        SQLITE_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(run));
        sqlite3_close(run);
        fail_msg("query %s: %s", rundb, msg);
    }
    int rc = sqlite3_step(q);
    int64_t db_allreduce = rc == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
    sqlite3_finalize(q);
    sqlite3_close(run);
    assert_int_equal(rc, SQLITE_ROW);
    printf("nsys: rank 0 allreduce: %lld NVTX ranges, %lld spans in ddpprof's database\n",
           (long long)nvtx_allreduce, (long long)db_allreduce);
    assert_true(db_allreduce > 0);
    assert_int_equal(nvtx_allreduce, db_allreduce);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nvtx_ranges_in_nsys_trace, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
