/* import_run.h — what the importer's tests share: a scratch directory, running a command
 * (ddpprof, or one of the trace makers under tests/import/) with its output captured,
 * and one-value queries on a results database.
 *
 * Needs DDPPROF (the binary) and SCENARIOS (the scenarios folder; the repository is its
 * parent), as `make test` sets them.  Header-only: each test binary is one file. */
#ifndef DDPPROF_IMPORT_RUN_H
#define DDPPROF_IMPORT_RUN_H

#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

extern char **environ;

typedef struct {
    int status; /* exit status; 128 + signal when killed */
    char out[1 << 16];
    char err[1 << 14];
} cmd_result;

static char imp_tmp[200];

static inline int imp_setup(const char *prefix)
{
    snprintf(imp_tmp, sizeof imp_tmp, "/tmp/%sXXXXXX", prefix);
    return mkdtemp(imp_tmp) ? 0 : -1;
}

static inline int imp_teardown(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", imp_tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void imp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%.*s", imp_tmp, (int)(n > 210 ? n - 210 : 1), name);
}

/* The repository's root: the parent of $SCENARIOS. */
static inline void repo_path(char *out, size_t n, const char *rel)
{
    const char *sc = getenv("SCENARIOS");
    snprintf(out, n, "%s/../%s", sc ? sc : "scenarios", rel);
}

static inline void imp_slurp(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs argv[0] (an absolute path) with argv, capturing stdout and stderr; -1 when it
 * could not be started. */
static inline int run_cmd(cmd_result *r, const char *const *argv)
{
    char out_path[300], err_path[300];
    imp_path(out_path, sizeof out_path, ".stdout");
    imp_path(err_path, sizeof err_path, ".stderr");
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    imp_slurp(out_path, r->out, sizeof r->out);
    imp_slurp(err_path, r->err, sizeof r->err);
    return 0;
}

/* ddpprof with the arguments (NULL-terminated). */
static inline int ddpprof_cmd(cmd_result *r, ...)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = getenv("DDPPROF");
    if (!argv[0])
        return -1;
    va_list ap;
    va_start(ap, r);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 63)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return run_cmd(r, argv);
}

/* /usr/bin/python3 tests/import/<script> with the arguments (NULL-terminated). */
static inline int python_cmd(cmd_result *r, const char *script, ...)
{
    char path[512];
    char rel[128];
    snprintf(rel, sizeof rel, "tests/import/%s", script);
    repo_path(path, sizeof path, rel);
    const char *argv[64];
    int n = 0;
    argv[n++] = "/usr/bin/python3";
    argv[n++] = path;
    va_list ap;
    va_start(ap, script);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 63)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return run_cmd(r, argv);
}

/* The first column of the first row of sql on db_path, as int64 (0 when NULL);
 * INT64_MIN when the query fails. */
static inline int64_t db_int(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    int64_t v = INT64_MIN;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
            v = sqlite3_column_int64(s, 0);
        else
            fprintf(stderr, "db_int(%s): %s\n", sql, sqlite3_errmsg(db));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return v;
}

static inline double db_double(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    double v = -1e300;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
            v = sqlite3_column_double(s, 0);
        else
            fprintf(stderr, "db_double(%s): %s\n", sql, sqlite3_errmsg(db));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return v;
}

/* The text of the first column of the first row, copied into out ("" when none). */
static inline void db_text(const char *db_path, const char *sql, char *out, size_t n)
{
    sqlite3 *db = NULL;
    out[0] = '\0';
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
            sqlite3_column_text(s, 0))
            snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

#endif
