/* cli_report.c — `ddpprof report DB [--run ID] [--json]`: reads a results database
 * (read-only, without needing write access anywhere; a newer schema or a non-ddpprof
 * file is refused) and prints the report of one run or of every run.
 *
 * Contract: exit 0 with the report; 2 for bad usage: a missing database, a --run that
 * is not a positive integer in range, or one naming no run in DB (the message gives
 * the ids DB holds; an id is never clamped to the nearest run); 1 for a database that
 * cannot be read or analysed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "report.h"
#include "store.h"

static const char *const usage = "usage: ddpprof report DB [--run ID] [--json]\n"
                                 "  --run ID   one run (default: every run in DB)\n"
                                 "  --json     the same figures as JSON\n";

/* Digits only: strtoll alone would take leading blanks, a sign, and clamp overflow. */
static int parse_run_id(const char *text, long long *id)
{
    if (text[0] < '0' || text[0] > '9')
        return cli_usage_error(usage, "--run %s: want a positive run id", text);
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE)
        return cli_usage_error(usage, "--run %s: run id out of range", text);
    if (*end || v < 1)
        return cli_usage_error(usage, "--run %s: want a positive run id", text);
    *id = v;
    return EXIT_OK;
}

/* EXIT_OK when run `id` exists; otherwise says which ids DB holds. */
static int check_run_exists(sqlite3 *db, const char *db_path, long long id)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT EXISTS (SELECT 1 FROM run WHERE id = ?1), MIN(id), MAX(id),"
                           " COUNT(*) FROM run",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, id) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        fprintf(stderr, "ddpprof: %s: listing runs: %s\n", db_path, sqlite3_errmsg(db));
        sqlite3_finalize(s);
        return EXIT_RUNTIME;
    }
    int exists = sqlite3_column_int(s, 0);
    long long lo = sqlite3_column_int64(s, 1), hi = sqlite3_column_int64(s, 2);
    long long count = sqlite3_column_int64(s, 3);
    sqlite3_finalize(s);
    if (exists)
        return EXIT_OK;
    if (count == 0)
        fprintf(stderr, "ddpprof: no run %lld in %s (it holds no runs)\n", id, db_path);
    else if (count == hi - lo + 1)
        fprintf(stderr, "ddpprof: no run %lld in %s (runs %lld..%lld)\n", id, db_path, lo, hi);
    else
        fprintf(stderr, "ddpprof: no run %lld in %s (%lld runs between %lld and %lld)\n", id,
                db_path, count, lo, hi);
    return EXIT_USAGE;
}

int cli_report(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    const char *db_path = NULL;
    long long run_id = -1;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--run")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--run needs a run id");
            int rc = parse_run_id(argv[++i], &run_id);
            if (rc != EXIT_OK)
                return rc;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(usage, "unknown option '%s'", argv[i]);
        } else if (!db_path) {
            db_path = argv[i];
        } else {
            return cli_usage_error(usage, "one database at a time");
        }
    }
    if (!db_path)
        return cli_usage_error(usage, "no database given");
    if (access(db_path, R_OK) != 0) {
        if (errno == ENOENT) {
            fprintf(stderr, "ddpprof: %s: no such database (run `ddpprof run` first)\n", db_path);
            return EXIT_USAGE;
        }
        fprintf(stderr, "ddpprof: %s: cannot read: %s\n", db_path, strerror(errno));
        return EXIT_RUNTIME;
    }
    store *st = NULL;
    char err[512];
    if (store_open_readonly(db_path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    if (run_id != -1) {
        int rc = check_run_exists(store_db(st), db_path, run_id);
        if (rc != EXIT_OK) {
            store_close(st);
            return rc;
        }
    }
    int rc = report_write(store_db(st), run_id, json ? REPORT_JSON : REPORT_TEXT, stdout, err, sizeof err);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}
