/* cli_compare.c — `ddpprof compare DB --run A --run B [--json]`: two runs side by side
 * (reports/compare.h), read-only.
 *
 * Contract: exit 0 with the comparison; 2 for bad usage (not exactly two --run, an id
 * that is not a positive integer or names no run in DB, a missing database); 1 when
 * the database cannot be read or analysed.  What cannot be compared (ranks of one run
 * only, different bucket counts) is said under the tables, not refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/cli.h"
#include "reports/compare.h"
#include "profiler/store.h"
#include "profiler/store_read_run.h"

static const char *const usage = "usage: ddpprof compare DB --run A --run B [--json] [--ranks all|LIST]\n"
                                 "  per rank and per bucket: A, B, B-A and (B-A)/A; the job step time\n"
                                 "  --json     the same figures as JSON\n"
                                 "  --ranks all|LIST  every rank, or these (0,5,8-11); default: every rank up to 32,\n"
                                 "             above that min, median, p90, max and the slowest and fastest rank\n";

static int parse_id(const char *text, long long *id)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || errno == ERANGE || v < 1)
        return cli_usage_error(usage, "--run %s: want a positive run id", text);
    *id = v;
    return EXIT_OK;
}

static int run_exists(store *st, const char *db_path, long long id)
{
    bool exists;
    char err[512];
    if (store_run_exists(st, id, &exists, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    if (exists)
        return EXIT_OK;
    fprintf(stderr, "ddpprof: no run %lld in %s (`ddpprof report %s` lists them)\n", id, db_path, db_path);
    return EXIT_USAGE;
}

/* The command, with --ranks parsed into *sel (which the caller frees on every path). */
static int compare_command(int argc, char **argv, rank_select *sel)
{
    const char *db_path = NULL;
    long long ids[2];
    int nids = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--run")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--run needs a run id");
            if (nids == 2)
                return cli_usage_error(usage, "compare takes exactly two runs (--run A --run B)");
            int rc = parse_id(argv[++i], &ids[nids++]);
            if (rc != EXIT_OK)
                return rc;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--ranks")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--ranks needs all or a list of ranks");
            int rc = cli_parse_ranks(usage, argv[++i], sel);
            if (rc != EXIT_OK)
                return rc;
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
    if (nids != 2)
        return cli_usage_error(usage, "compare takes exactly two runs (--run A --run B)");
    if (access(db_path, R_OK) != 0) {
        int e = errno;
        fprintf(stderr, "ddpprof: %s: %s\n", db_path,
                e == ENOENT ? "no such database (run `ddpprof run` first)" : strerror(e));
        return e == ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
    }
    store *st = NULL;
    char err[512];
    if (store_open_readonly(db_path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    int rc = run_exists(st, db_path, ids[0]);
    if (rc == EXIT_OK)
        rc = run_exists(st, db_path, ids[1]);
    if (rc == EXIT_OK &&
        compare_write_ranks(st, ids[0], ids[1], json ? REPORT_JSON : REPORT_TEXT, sel, stdout, err,
                            sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        rc = EXIT_RUNTIME;
    }
    store_close(st);
    return rc;
}

int cli_compare(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    rank_select sel = {0};
    int rc = compare_command(argc, argv, &sel);
    rank_select_free(&sel);
    return rc;
}
