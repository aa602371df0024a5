/* harness.c — the tests' shared scaffolding (the contract is in harness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"

extern char **environ;

/* --- scratch directories ---------------------------------------------------------------- */

static char scratch[256];

int tmpdir_make(char *dir, size_t n, const char *prefix)
{
    int len = snprintf(dir, n, "/tmp/%sXXXXXX", prefix);
    if (len < 0 || (size_t)len >= n) {
        fprintf(stderr, "tmpdir_make: /tmp/%sXXXXXX does not fit in %zu bytes\n", prefix, n);
        if (n)
            dir[0] = '\0';
        return -1;
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "tmpdir_make: mkdtemp(%s): %s\n", dir, strerror(errno));
        dir[0] = '\0';
        return -1;
    }
    return 0;
}

static int remove_failures;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        fprintf(stderr, "tmpdir_remove: cannot remove %s: %s\n", path, strerror(errno));
        remove_failures++;
    }
    return 0;
}

int tmpdir_remove(const char *dir)
{
    struct stat sb;
    if (!dir || !dir[0] || (lstat(dir, &sb) != 0 && errno == ENOENT))
        return 0;
    remove_failures = 0;
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        fprintf(stderr, "tmpdir_remove: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    return remove_failures ? -1 : 0;
}

int scratch_setup(const char *prefix) { return tmpdir_make(scratch, sizeof scratch, prefix); }

int scratch_teardown(void)
{
    int rc = tmpdir_remove(scratch);
    scratch[0] = '\0';
    return rc;
}

const char *scratch_dir(void) { return scratch; }

int scratch_group_setup(void **state)
{
    (void)state;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "ddpprof-test-%.60s-", program_invocation_short_name);
    return scratch_setup(prefix);
}

int scratch_group_teardown(void **state)
{
    (void)state;
    return scratch_teardown();
}

void scratch_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", scratch, name);
}

void repo_path(char *out, size_t n, const char *rel)
{
    const char *sc = getenv("SCENARIOS");
    snprintf(out, n, "%s/../%s", sc ? sc : "scenarios", rel);
}

/* --- files ------------------------------------------------------------------------------ */

void slurp_into(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

char *slurp_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("slurp_file: cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 65536 > cap) {
            cap = cap ? 2 * cap : 1 << 20;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        got = fread(buf + n, 1, cap - n, fp);
        n += got;
    } while (got > 0);
    int bad = ferror(fp);
    fclose(fp);
    if (bad)
        fail_msg("slurp_file: cannot read %s", path);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("write_file: cannot create %s: %s", path, strerror(errno));
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

void write_file_in(const char *dir, const char *name, const char *text, char *path, size_t pathlen)
{
    int n = snprintf(path, pathlen, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= pathlen)
        fail_msg("write_file_in: %s/%s does not fit in %zu bytes", dir, name, pathlen);
    write_file(path, text);
}

/* --- commands --------------------------------------------------------------------------- */

/* An unlinked file for one stream's capture (close-on-exec: the child gets it by dup2). */
static int capture_file(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/ddpprof-test-captureXXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "run_cmd: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    unlink(path);
    return fd;
}

static void read_capture(int fd, char *buf, size_t len)
{
    size_t n = 0;
    if (lseek(fd, 0, SEEK_SET) == 0)
        while (n < len - 1) {
            ssize_t got = read(fd, buf + n, len - 1 - n);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            n += (size_t)got;
        }
    buf[n] = '\0';
}

int run_cmd(cmd_result *r, const char *const *argv)
{
    r->status = -1;
    r->signal = 0;
    r->out[0] = r->err[0] = '\0';
    int out = capture_file(), err = out >= 0 ? capture_file() : -1;
    if (out < 0 || err < 0) {
        if (out >= 0)
            close(out);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
            (rc = posix_spawn_file_actions_adddup2(&fa, out, 1)) == 0 &&
            (rc = posix_spawn_file_actions_adddup2(&fa, err, 2)) == 0) {
            pid_t pid;
            rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
            if (rc == 0) {
                int st;
                pid_t w;
                while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
                }
                if (w != pid)
                    rc = errno;
                else {
                    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
                    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + r->signal;
                }
            }
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    if (rc == 0) {
        read_capture(out, r->out, sizeof r->out);
        read_capture(err, r->err, sizeof r->err);
    } else {
        fprintf(stderr, "run_cmd: %s: %s\n", argv[0], strerror(rc));
    }
    close(out);
    close(err);
    return rc == 0 ? 0 : -1;
}

/* argv of prefix[0..nprefix) then the NULL-terminated list ap or args, malloc'd. */
static const char **make_argv(const char *const *prefix, int nprefix, const char *const *args, va_list *ap)
{
    int n = 0;
    if (args)
        while (args[n])
            n++;
    else {
        va_list count;
        va_copy(count, *ap);
        while (va_arg(count, const char *) != NULL)
            n++;
        va_end(count);
    }
    const char **argv = malloc(((size_t)nprefix + (size_t)n + 1) * sizeof *argv);
    if (!argv)
        return NULL;
    for (int i = 0; i < nprefix; i++)
        argv[i] = prefix[i];
    for (int i = 0; i < n; i++)
        argv[nprefix + i] = args ? args[i] : va_arg(*ap, const char *);
    argv[nprefix + n] = NULL;
    return argv;
}

/* run_cmd of prefix then args or ap (make_argv's). */
static int run_with(cmd_result *r, const char *const *prefix, int nprefix, const char *const *args, va_list *ap)
{
    const char **argv = make_argv(prefix, nprefix, args, ap);
    if (!argv)
        return -1;
    int rc = run_cmd(r, argv);
    free(argv);
    return rc;
}

/* $DDPPROF, or NULL with the reason on stderr. */
static const char *ddpprof_bin(const char *who)
{
    const char *bin = getenv("DDPPROF");
    if (!bin)
        fprintf(stderr, "%s: DDPPROF is not set\n", who);
    return bin;
}

int ddpprof_argv(cmd_result *r, const char *const *args)
{
    const char *bin = ddpprof_bin("ddpprof_argv");
    return bin ? run_with(r, &bin, 1, args, NULL) : -1;
}

int ddpprof_cmd(cmd_result *r, ...)
{
    const char *bin = ddpprof_bin("ddpprof_cmd");
    if (!bin)
        return -1;
    va_list ap;
    va_start(ap, r);
    int rc = run_with(r, &bin, 1, NULL, &ap);
    va_end(ap);
    return rc;
}

void ddpprof_run(cmd_result *r, const char *const *args)
{
    if (!getenv("DDPPROF"))
        fail_msg("ddpprof_run: DDPPROF is not set");
    if (ddpprof_argv(r, args) != 0)
        fail_msg("ddpprof_run: could not start %s", getenv("DDPPROF"));
    if (r->signal != 0)
        fail_msg("ddpprof_run: %s %s ... was killed by signal %d; stderr:\n%s", getenv("DDPPROF"),
                 args[0] ? args[0] : "", r->signal, r->err);
}

int python_cmd(cmd_result *r, const char *script, ...)
{
    char path[512], rel[128];
    snprintf(rel, sizeof rel, "tests/import/%s", script);
    repo_path(path, sizeof path, rel);
    const char *prefix[2] = {"/usr/bin/python3", path};
    va_list ap;
    va_start(ap, script);
    int rc = run_with(r, prefix, 2, NULL, &ap);
    va_end(ap);
    return rc;
}

/* --- databases -------------------------------------------------------------------------- */

/* The query prepared and stepped once on db_path opened read-only; fails the test when
 * the file does not open or the query does not prepare.  *row: whether a row came. */
static sqlite3_stmt *query(const char *who, const char *db_path, const char *sql, sqlite3 **db, int *row)
{
    *db = NULL;
    if (sqlite3_open_v2(db_path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        fail_msg("%s: cannot open %s: %s", who, db_path, why);
    }
    sqlite3_busy_timeout(*db, 2000);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(*db, sql, -1, &s, NULL) != SQLITE_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(*db));
        sqlite3_close(*db);
        fail_msg("%s(%s): %s: %s", who, db_path, sql, why);
    }
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        char why[512];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(*db));
        sqlite3_finalize(s);
        sqlite3_close(*db);
        fail_msg("%s(%s): %s: %s", who, db_path, sql, why);
    }
    *row = rc == SQLITE_ROW;
    return s;
}

/* The first column of the first row as an integer or a double; no row fails the test. */
static void db_scalar(const char *who, const char *db_path, const char *sql, int64_t *iv, double *dv)
{
    sqlite3 *db;
    int row;
    sqlite3_stmt *s = query(who, db_path, sql, &db, &row);
    if (row && iv)
        *iv = sqlite3_column_int64(s, 0);
    if (row && dv)
        *dv = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    if (!row)
        fail_msg("%s(%s): %s: no row", who, db_path, sql);
}

int64_t db_int(const char *db_path, const char *sql)
{
    int64_t v = 0;
    db_scalar("db_int", db_path, sql, &v, NULL);
    return v;
}

double db_double(const char *db_path, const char *sql)
{
    double v = 0;
    db_scalar("db_double", db_path, sql, NULL, &v);
    return v;
}

void db_text(const char *db_path, const char *sql, char *out, size_t n)
{
    sqlite3 *db;
    int row;
    sqlite3_stmt *s = query("db_text", db_path, sql, &db, &row);
    out[0] = '\0';
    if (row && sqlite3_column_text(s, 0))
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(db);
}
