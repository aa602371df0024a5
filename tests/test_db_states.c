/* test_db_states.c — the results database in every state it can be found in.
 *
 * Contract checked (store.h, recorder.h): a database is read without write access
 * (read-only file in a read-only directory, checked as an unprivileged user even when
 * the tests run as root) and without leaving a -wal or -shm where there was none; a
 * database whose writer was killed is read with what its -wal holds; files that are
 * not ddpprof databases (another program's SQLite file, text, a newer schema) are
 * refused by store_open with every byte and the directory unchanged; a schema-1 file
 * is read as it is and upgraded by store_open; a run's end waits out another
 * process's write lock; the writer of a run is judged alive, gone or unknown; a full
 * database stops the span writer at once, says so, never blocks producers, and the
 * run can still be marked failed.  Each test works in its own temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "profiler/recorder.h"
#include "reports/report.h"
#include "profiler/store.h"
#include "harness.h"
#include "tmp_store.h"

/* The exit status a child uses to say "this check cannot run here" (cmocka skip). */
#define CHILD_SKIP 77
#define NOBODY 65534

typedef struct {
    char dir[64];
    char path[128];
    char err[512];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    if (tmpdir_make(f->dir, sizeof f->dir, "ddpprof_test_db_") != 0) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/runs.sqlite", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    chmod(f->dir, 0700);
    tmpdir_remove(f->dir);
    free(f);
    return 0;
}

/* ---- helpers ----------------------------------------------------------------------- */

static bool side_exists(const char *path, const char *suffix)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

static void assert_no_side_files(const char *path)
{
    const char *sides[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 3; i++)
        if (side_exists(path, sides[i]))
            fail_msg("%s%s exists", path, sides[i]);
}

static int count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int64_t begin_run(store *st, const char *name, char *err, size_t errlen)
{
    store_run_info info = {.name = name, .backend = "cpu", .model = "mlp", .world_size = 2,
                           .iterations = 2, .warmup = 0, .total_params = 10};
    int64_t id = -1;
    if (store_begin_run(st, &info, &id, err, errlen) != 0)
        fail_msg("store_begin_run: %s", err);
    return id;
}

static void write_spans(store *st, int64_t run, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        span s = mk(i % 2, i / 2, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, i * 100, i * 100 + 50);
        if (store_write_spans(st, run, &s, 1, err, errlen) != 0)
            fail_msg("store_write_spans: %s", err);
    }
}

/* A database with one complete run of `nspans` spans, closed (so no -wal remains). */
static void make_db(fixture *f, int nspans)
{
    store *st = NULL;
    if (store_open(f->path, &st, f->err, sizeof f->err) != 0)
        fail_msg("store_open: %s", f->err);
    int64_t run = begin_run(st, "done", f->err, sizeof f->err);
    write_spans(st, run, nspans, f->err, sizeof f->err);
    assert_int_equal(store_finish_run(st, run, NULL, f->err, sizeof f->err), 0);
    store_close(st);
    assert_no_side_files(f->path);
}

/* A writer killed mid-run: a child records a run and spans and exits without closing,
 * so the run stays 'running' and its pages stay in the -wal.  Returns the child's pid,
 * reaped. */
static pid_t make_killed_writer(fixture *f, int nspans)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        store *st = NULL;
        char err[512];
        if (store_open(f->path, &st, err, sizeof err) != 0)
            _exit(10);
        store_run_info info = {.name = "killed", .backend = "cpu", .world_size = 2};
        int64_t run;
        if (store_begin_run(st, &info, &run, err, sizeof err) != 0)
            _exit(11);
        for (int i = 0; i < nspans; i++) {
            span s = mk(0, i, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, i * 100, i * 100 + 50);
            if (store_write_spans(st, run, &s, 1, err, sizeof err) != 0)
                _exit(12);
        }
        _exit(0); /* as kill -9 would: no close, no checkpoint */
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    return child;
}

static int64_t scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static pid_t reaped_pid(void)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    return child;
}

/* Runs check(f) in a child that cannot write the database's directory: as root the
 * child becomes nobody (permissions do not bind root); otherwise it is already so.
 * Returns the child's exit status; CHILD_SKIP becomes a cmocka skip. */
static int as_unprivileged(fixture *f, int (*check)(fixture *))
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 ||
                               setuid(NOBODY) != 0 || geteuid() == 0))
            _exit(CHILD_SKIP);
        if (access(f->dir, W_OK) == 0) /* the permissions do not bite here */
            _exit(CHILD_SKIP);
        _exit(check(f));
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == CHILD_SKIP) {
        fprintf(stderr, "cannot run a check without write access here (no setuid to nobody,"
                        " or the directory stays writable); skipped\n");
        skip();
    }
    return WEXITSTATUS(status);
}

static void make_readonly(fixture *f)
{
    const char *files[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s%s", f->path, files[i]);
        if (access(p, F_OK) == 0)
            assert_int_equal(chmod(p, 0444), 0);
    }
    assert_int_equal(chmod(f->dir, 0555), 0);
}

/* ---- reading without write access ------------------------------------------------- */

/* 0: opened read-only, the report of every run written, and no side file appeared. */
static int check_report_readonly(fixture *f)
{
    store *st = NULL;
    char err[512];
    if (store_open_readonly(f->path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "store_open_readonly: %s\n", err);
        return 20;
    }
    FILE *out = fopen("/dev/null", "w");
    int rc = out ? report_write(st, -1, REPORT_JSON, out, err, sizeof err) : -1;
    if (out)
        fclose(out);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "report_write: %s\n", err);
        return 21;
    }
    return 0;
}

static void test_report_leaves_no_side_files(void **state)
{
    fixture *f = *state;
    make_db(f, 6);
    size_t n0, n1;
    char *before = slurp_file(f->path, &n0);
    assert_int_equal(check_report_readonly(f), 0);
    assert_no_side_files(f->path);
    char *after = slurp_file(f->path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    assert_int_equal(count_dir_entries(f->dir), 1);
}

static void test_report_in_readonly_directory(void **state)
{
    fixture *f = *state;
    make_db(f, 6);
    make_readonly(f);
    assert_int_equal(as_unprivileged(f, check_report_readonly), 0);
    assert_no_side_files(f->path);
}

/* 0: the killed writer's run and its spans, which live only in the -wal, are seen. */
static int check_killed_writer_seen(fixture *f)
{
    store *st = NULL;
    char err[512];
    if (store_open_readonly(f->path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "store_open_readonly: %s\n", err);
        return 30;
    }
    sqlite3 *db = store_db(st);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT COUNT(*), (SELECT COUNT(*) FROM span) FROM run"
                                    " WHERE name = 'killed' AND status = 'running'",
                                -1, &s, NULL);
    int ok = rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1 &&
             sqlite3_column_int(s, 1) == 7;
    sqlite3_finalize(s);
    store_close(st);
    return ok ? 0 : 31;
}

static void test_killed_writer_wal_is_read(void **state)
{
    fixture *f = *state;
    pid_t writer = make_killed_writer(f, 7);
    assert_true(side_exists(f->path, "-wal"));
    assert_int_equal(check_killed_writer_seen(f), 0);

    /* The run is reported abandoned, never as running or good. */
    store *st = NULL;
    assert_int_equal(store_open_readonly(f->path, &st, f->err, sizeof f->err), 0);
    store_liveness state_of = STORE_WRITER_ALIVE;
    char detail[256];
    assert_int_equal(store_run_liveness(st, 1, &state_of, detail, sizeof detail, f->err,
                                        sizeof f->err),
                     0);
    assert_int_equal(state_of, STORE_WRITER_GONE);
    char want[32];
    snprintf(want, sizeof want, "pid %lld", (long long)writer);
    assert_non_null(strstr(detail, want));
    char *json = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&json, &len);
    assert_non_null(out);
    assert_int_equal(report_write(st, 1, REPORT_JSON, out, f->err, sizeof f->err), 0);
    assert_int_equal(fclose(out), 0);
    assert_non_null(strstr(json, "\"status\": \"abandoned\""));
    free(json);
    store_close(st);

    /* The next writer recovers the -wal and can go on using the file. */
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(store_db(st), "SELECT COUNT(*) FROM span"), 7);
    store_close(st);
}

static void test_killed_writer_in_readonly_directory(void **state)
{
    fixture *f = *state;
    make_killed_writer(f, 7);
    assert_true(side_exists(f->path, "-shm"));
    make_readonly(f);
    /* SQLite reads the -wal through a -shm it may not write. */
    assert_int_equal(as_unprivileged(f, check_killed_writer_seen), 0);
}

/* 0: refused, with a message that names the -wal and what to do. */
static int check_wal_without_shm_refused(fixture *f)
{
    store *st = NULL;
    char err[512] = "";
    if (store_open_readonly(f->path, &st, err, sizeof err) == 0) {
        store_close(st);
        return 40;
    }
    fprintf(stderr, "(expected) %s\n", err);
    return strstr(err, "-wal holds changes") && strstr(err, "copy") ? 0 : 41;
}

static void test_wal_without_shm_in_readonly_directory(void **state)
{
    fixture *f = *state;
    make_killed_writer(f, 7);
    char shm[256];
    snprintf(shm, sizeof shm, "%s-shm", f->path);
    assert_int_equal(unlink(shm), 0);
    make_readonly(f);
    /* Reading the file alone would silently lose the run: refused instead. */
    assert_int_equal(as_unprivileged(f, check_wal_without_shm_refused), 0);
    assert_false(side_exists(f->path, "-shm"));
}

/* ---- refusing what is not ours ---------------------------------------------------- */

/* store_open and store_open_readonly refuse the file with `want` in the message and
 * leave it, and its directory, exactly as they were. */
static void assert_refused_untouched(fixture *f, const char *want)
{
    size_t n0, n1;
    char *before = slurp_file(f->path, &n0);
    int entries = count_dir_entries(f->dir);
    store *st = NULL;
    f->err[0] = '\0';
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), -1);
    assert_null(st);
    if (!strstr(f->err, want))
        fail_msg("store_open: '%s' lacks '%s'", f->err, want);
    f->err[0] = '\0';
    assert_int_equal(store_open_readonly(f->path, &st, f->err, sizeof f->err), -1);
    if (!strstr(f->err, want))
        fail_msg("store_open_readonly: '%s' lacks '%s'", f->err, want);
    char *after = slurp_file(f->path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    assert_int_equal(count_dir_entries(f->dir), entries);
}

static void make_foreign_sqlite(fixture *f, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    assert_no_side_files(f->path);
}

static void test_refuses_foreign_sqlite_untouched(void **state)
{
    fixture *f = *state;
    make_foreign_sqlite(f, "CREATE TABLE foo(x); INSERT INTO foo VALUES (1), (2);");
    assert_refused_untouched(f, "not a ddpprof database (it holds table 'foo'");
}

static void test_refuses_foreign_wal_sqlite_untouched(void **state)
{
    fixture *f = *state;
    make_foreign_sqlite(f, "PRAGMA journal_mode = WAL; CREATE TABLE foo(x);"
                           " INSERT INTO foo VALUES (1);");
    assert_refused_untouched(f, "not a ddpprof database");
}

/* Another program killed with committed pages still in its -wal: a read-write
 * connection would checkpoint them into the file on close; none may be opened. */
static void test_refuses_foreign_wal_content_untouched(void **state)
{
    fixture *f = *state;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        sqlite3 *db = NULL;
        if (sqlite3_open(f->path, &db) != SQLITE_OK ||
            sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                             " CREATE TABLE foo(x); INSERT INTO foo VALUES (1);",
                         NULL, NULL, NULL) != SQLITE_OK)
            _exit(1);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char wal[256];
    snprintf(wal, sizeof wal, "%s-wal", f->path);
    size_t n0, n1;
    char *before = slurp_file(wal, &n0);
    assert_true(n0 > 0);
    assert_refused_untouched(f, "not a ddpprof database (it holds table 'foo'");
    char *after = slurp_file(wal, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
}

/* A table called meta is not enough to be ours. */
static void test_refuses_other_meta_table_untouched(void **state)
{
    fixture *f = *state;
    make_foreign_sqlite(f, "CREATE TABLE meta(key TEXT, value TEXT);"
                           " INSERT INTO meta VALUES ('schema_version', '1');");
    assert_refused_untouched(f, "not a ddpprof database");
    remove_db(f->path);
    make_foreign_sqlite(f, "PRAGMA application_id = 42;");
    assert_refused_untouched(f, "application_id");
}

static void test_refuses_text_file_untouched(void **state)
{
    fixture *f = *state;
    write_file(f->path, "rank,iter,ms\n0,0,12.5\n1,0,13.0\n");
    assert_refused_untouched(f, "not an SQLite database");
}

static void test_refuses_newer_schema_untouched(void **state)
{
    fixture *f = *state;
    make_db(f, 2);
    make_foreign_sqlite(f, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    assert_refused_untouched(f, "schema version 99 is newer");
}

static void test_creates_absent_and_empty_files(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(store_db(st), "SELECT value FROM meta WHERE key = 'schema_version'"),
                     STORE_SCHEMA_VERSION);
    store_close(st);
    remove_db(f->path);
    write_file(f->path, "");
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(store_db(st), "PRAGMA application_id"), 0x64647070);
    store_close(st);
    /* Paths with URI syntax in them mean themselves. */
    char odd[256];
    snprintf(odd, sizeof odd, "%s/a%%20b?mode=ro#x.sqlite", f->dir);
    assert_int_equal(store_open(odd, &st, f->err, sizeof f->err), 0);
    begin_run(st, "odd", f->err, sizeof f->err);
    store_close(st);
    assert_int_equal(access(odd, F_OK), 0);
    assert_int_equal(store_open_readonly(odd, &st, f->err, sizeof f->err), 0);
    assert_int_equal(scalar(store_db(st), "SELECT COUNT(*) FROM run"), 1);
    store_close(st);
    /* A directory is not a database. */
    assert_int_equal(store_open(f->dir, &st, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "not a regular file"));
}

/* ---- schema 1 ------------------------------------------------------------------------ */

/* Turns a fresh file into what ddpprof with schema 1 wrote: no writer columns, no
 * application id. */
static void downgrade_to_v1(fixture *f)
{
    make_foreign_sqlite(f, STORE_DOWNGRADE_V5_TO_V4
                           "ALTER TABLE rank DROP COLUMN clock_offset_ns;"
                           "ALTER TABLE rank DROP COLUMN clock_uncertainty_ns;"
                           "ALTER TABLE run DROP COLUMN ranks;"
                           "ALTER TABLE run DROP COLUMN writer_pid;"
                           "ALTER TABLE run DROP COLUMN writer_host;"
                           "ALTER TABLE run DROP COLUMN writer_start;"
                           "ALTER TABLE run DROP COLUMN writer_boot;"
                           "ALTER TABLE run DROP COLUMN writer_pidns;"
                           "PRAGMA application_id = 0;"
                           "UPDATE meta SET value = '1' WHERE key = 'schema_version';");
}

static void test_schema1_read_then_upgraded(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    int64_t run = begin_run(st, "old", f->err, sizeof f->err);
    write_spans(st, run, 4, f->err, sizeof f->err);
    store_close(st);
    downgrade_to_v1(f);

    /* Read as it is, untouched, its open run's writer unknown. */
    size_t n0, n1;
    char *before = slurp_file(f->path, &n0);
    assert_int_equal(store_open_readonly(f->path, &st, f->err, sizeof f->err), 0);
    store_liveness state_of = STORE_WRITER_ALIVE;
    char detail[256];
    assert_int_equal(store_run_liveness(st, run, &state_of, detail, sizeof detail,
                                        f->err, sizeof f->err),
                     0);
    assert_int_equal(state_of, STORE_WRITER_UNKNOWN);
    assert_non_null(strstr(detail, "writer unknown"));
    assert_int_equal(store_run_liveness(st, run + 1, &state_of, detail, sizeof detail,
                                        f->err, sizeof f->err),
                     -1);
    store_close(st);
    char *after = slurp_file(f->path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    assert_no_side_files(f->path);

    /* store_open upgrades in place, keeping the old run. */
    if (store_open(f->path, &st, f->err, sizeof f->err) != 0)
        fail_msg("store_open: %s", f->err);
    sqlite3 *db = store_db(st);
    assert_int_equal(scalar(db, "SELECT value FROM meta WHERE key = 'schema_version'"), STORE_SCHEMA_VERSION);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM pragma_table_info('rank') WHERE name = 'clock_offset_ns'"), 1);
    assert_int_equal(scalar(db, "PRAGMA application_id"), 0x64647070);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM run WHERE name = 'old'"
                                " AND writer_pid IS NULL AND status = 'running'"),
                     1);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM span"), 4);
    int64_t fresh = begin_run(st, "new", f->err, sizeof f->err);
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT writer_pid = %lld AND writer_host IS NOT NULL AND writer_start > 0"
             " FROM run WHERE id = %" PRId64,
             (long long)getpid(), fresh);
    assert_int_equal(scalar(db, sql), 1);
    store_close(st);
}

/* ---- a locked database ---------------------------------------------------------------- */

typedef struct {
    sqlite3 *db;
    int rc;
} locker;

static void *release_after_1s(void *arg)
{
    locker *l = arg;
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    l->rc = sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_finish_waits_for_lock(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    int64_t run = begin_run(st, "locked", f->err, sizeof f->err);

    /* Another process's connection holds the write lock for about a second. */
    locker l = {0};
    assert_int_equal(sqlite3_open(f->path, &l.db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(l.db, "BEGIN EXCLUSIVE; INSERT INTO meta VALUES ('lock', 'x')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, release_after_1s, &l), 0);
    double t0 = now_s();
    int rc = store_finish_run(st, run, NULL, f->err, sizeof f->err);
    double waited = now_s() - t0;
    assert_int_equal(pthread_join(t, NULL), 0);
    if (rc != 0)
        fail_msg("store_finish_run: %s", f->err);
    assert_int_equal(l.rc, SQLITE_OK);
    assert_true(waited > 0.5);
    assert_int_equal(sqlite3_close(l.db), SQLITE_OK);
    assert_int_equal(scalar(store_db(st), "SELECT COUNT(*) FROM run WHERE status = 'complete'"),
                     1);
    store_close(st);
}

/* ---- who writes a run ------------------------------------------------------------------ */

static void test_writer_liveness(void **state)
{
    (void)state;
    char detail[256];
    store_writer me;
    store_writer_self(&me);
    assert_int_equal(me.pid, getpid());
    assert_true(me.host[0] != '\0');
    assert_true(me.start_ticks > 0);
    assert_int_equal(store_writer_liveness(&me, detail, sizeof detail), STORE_WRITER_ALIVE);
    assert_non_null(strstr(detail, "still running"));

    store_writer w = me;
    w.pid = reaped_pid();
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail), STORE_WRITER_GONE);
    assert_non_null(strstr(detail, "exited"));

    /* An exited child not yet reaped is a zombie: gone too. */
    fflush(NULL);
    pid_t zombie = fork();
    assert_true(zombie >= 0);
    if (zombie == 0)
        _exit(0);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    w.pid = zombie;
    w.start_ticks = -1;
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail), STORE_WRITER_GONE);
    assert_int_equal(waitpid(zombie, NULL, 0), zombie);

    /* This pid, but started at another time: the pid was reused. */
    w = me;
    w.start_ticks = me.start_ticks + 1;
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail), STORE_WRITER_GONE);
    assert_non_null(strstr(detail, "another process"));

    w = me;
    snprintf(w.boot_id, sizeof w.boot_id, "00000000-0000-0000-0000-000000000000");
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail),
                     me.boot_id[0] ? STORE_WRITER_GONE : STORE_WRITER_ALIVE);

    w = me;
    snprintf(w.host, sizeof w.host, "elsewhere.invalid");
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail), STORE_WRITER_UNKNOWN);
    assert_non_null(strstr(detail, "elsewhere.invalid"));

    w = me;
    snprintf(w.pidns, sizeof w.pidns, "pid:[1]");
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail),
                     me.pidns[0] ? STORE_WRITER_UNKNOWN : STORE_WRITER_ALIVE);

    w = me;
    w.pid = 0;
    assert_int_equal(store_writer_liveness(&w, detail, sizeof detail), STORE_WRITER_UNKNOWN);
}

static void test_run_rows_record_writer(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    assert_int_equal(store_open(f->path, &st, f->err, sizeof f->err), 0);
    int64_t run = begin_run(st, "live", f->err, sizeof f->err);
    sqlite3 *db = store_db(st);
    store_liveness s = STORE_WRITER_UNKNOWN;
    char detail[256];
    assert_int_equal(store_run_liveness(st, run, &s, detail, sizeof detail, f->err, sizeof f->err),
                     0);
    assert_int_equal(s, STORE_WRITER_ALIVE);

    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE run SET writer_pid = %lld WHERE id = %" PRId64,
             (long long)reaped_pid(), run);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(store_run_liveness(st, run, &s, detail, sizeof detail, f->err, sizeof f->err),
                     0);
    assert_int_equal(s, STORE_WRITER_GONE);
    assert_int_equal(store_run_liveness(st, 999, &s, detail, sizeof detail, f->err, sizeof f->err),
                     -1);
    assert_string_equal(f->err, "no run with id 999");
    store_close(st);
}

/* ---- a full database ------------------------------------------------------------------- */

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_db_states: a producer blocked after the writer failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(3);
}

/* Opens the fixture's database (into *st), begins a run "full" in it (its id into *run)
 * and leaves the file `spare` pages to grow by: VACUUM first, so that no free pages are
 * left for a long text to take, then max_page_count the pages it has plus spare.  The
 * store's database handle comes back. */
static sqlite3 *open_full(fixture *f, int64_t spare, store **st, int64_t *run)
{
    assert_int_equal(store_open(f->path, st, f->err, sizeof f->err), 0);
    *run = begin_run(*st, "full", f->err, sizeof f->err);
    sqlite3 *db = store_db(*st);
    assert_int_equal(sqlite3_exec(db, "VACUUM", NULL, NULL, NULL), SQLITE_OK);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld",
             (long long)(scalar(db, "PRAGMA page_count") + spare));
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    return db;
}

static void test_full_database_stops_recorder(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    int64_t run;
    sqlite3 *db = open_full(f, 4, &st, &run);
    char sql[64];

    recorder *rec = NULL;
    assert_int_equal(recorder_create(st, run, 2, &rec), 0);
    assert_int_equal(recorder_start(rec), 0);
    char err[512] = "";
    assert_int_equal(recorder_failed(rec, err, sizeof err), 0);

    /* A hang here is the failure this test exists for: let it end the test. */
    signal(SIGALRM, on_alarm);
    alarm(60);
    int64_t pushed = 0;
    span_ring *ring = recorder_ring(rec, 0);
    while (!recorder_failed(rec, err, sizeof err)) {
        span s = mk(0, (int)(pushed / 8), STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, pushed * 10,
                    pushed * 10 + 5);
        span_ring_push(ring, &s);
        pushed++;
        assert_true(pushed < 50 * 1000 * 1000);
    }
    assert_non_null(strstr(err, "writing spans"));
    assert_non_null(strstr(err, "full"));
    /* Three rings' worth after the failure: none of these may wait. */
    for (int i = 0; i < 3 * 8192; i++, pushed++) {
        span s = mk(1, 0, STREAM_COMM, SPAN_ALLREDUCE, 0, i, 8, i, i + 1);
        span_ring_push(recorder_ring(rec, i % 2), &s);
    }
    alarm(0);
    signal(SIGALRM, SIG_DFL);
    assert_true(recorder_dropped(rec) > 0);

    char stop_err[512] = "";
    assert_int_equal(recorder_stop(rec, stop_err, sizeof stop_err), -1);
    assert_string_equal(stop_err, err);
    /* Every span is accounted for: written, or dropped once the writer failed. */
    assert_int_equal(recorder_written(rec) + recorder_dropped(rec), pushed);
    assert_true(recorder_written(rec) < pushed);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM span WHERE run_id = %" PRId64, run);
    assert_int_equal(scalar(db, sql), recorder_written(rec));
    recorder_destroy(rec);

    /* The run can still be marked failed, with the reason. */
    if (store_finish_run(st, run, err, f->err, sizeof f->err) != 0)
        fail_msg("store_finish_run on a full database: %s", f->err);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM run WHERE status = 'failed'"
                                " AND error LIKE '%full%'"),
                     1);
    store_close(st);
}

/* A full database and an error text longer than the room left: the run still ends
 * failed, with the text shortened; and if even that cannot be written, the message
 * says the run stays 'running'. */
static void test_finish_on_full_database(void **state)
{
    fixture *f = *state;
    store *st = NULL;
    int64_t run;
    sqlite3 *db = open_full(f, 0, &st, &run);
    char sql[64];
    char long_error[6000];
    memset(long_error, 'x', sizeof long_error - 1);
    long_error[sizeof long_error - 1] = '\0';
    memcpy(long_error, "database or disk is full: ", 26);
    if (store_finish_run(st, run, long_error, f->err, sizeof f->err) != 0)
        fail_msg("store_finish_run: %s", f->err);
    assert_int_equal(scalar(db, "SELECT COUNT(*) FROM run WHERE status = 'failed'"
                                " AND error LIKE 'database or disk is full: x%[...]'"
                                " AND length(error) < 100"),
                     1);

    /* When not even that can be written, the message says what it means for the run
     * (a trigger stands in for a storage failure SQLite cannot work around). */
    int64_t second = begin_run(st, "unmarkable", f->err, sizeof f->err);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TEMP TRIGGER no_end BEFORE UPDATE OF status ON run"
                                  " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(store_finish_run(st, second, long_error, f->err, sizeof f->err), -1);
    char want[64];
    snprintf(want, sizeof want, "could not mark run %" PRId64 " failed", second);
    assert_non_null(strstr(f->err, want));
    assert_non_null(strstr(f->err, "database or disk is full"));
    assert_non_null(strstr(f->err, "stays 'running'"));
    snprintf(sql, sizeof sql, "SELECT status = 'running' FROM run WHERE id = %" PRId64, second);
    assert_int_equal(scalar(db, sql), 1);
    store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_leaves_no_side_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_in_readonly_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_writer_wal_is_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_writer_in_readonly_directory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wal_without_shm_in_readonly_directory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_sqlite_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_wal_sqlite_untouched, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_wal_content_untouched, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_other_meta_table_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_text_file_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_newer_schema_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_creates_absent_and_empty_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema1_read_then_upgraded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_waits_for_lock, setup, teardown),
        cmocka_unit_test(test_writer_liveness),
        cmocka_unit_test_setup_teardown(test_run_rows_record_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_database_stops_recorder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_on_full_database, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
