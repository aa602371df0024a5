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

typedef struct {
    long long ids[2];
    int nids;
    bool json;
    rank_select ranks;
} compare_args;

static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    compare_args *a = args;
    if (a->nids == 2)
        return cli_usage_error(cmd, "compare takes exactly two runs (--run A --run B)");
    return cli_parse_run_id(cmd, value, &a->ids[a->nids++]);
}

static int take_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_ranks(cmd, value, &((compare_args *)args)->ranks);
}

static const cli_option compare_option_table[] = {
    {CLI_CALLBACK(0, "run", "ID", take_run, "run A, then run B"), .flags = CLI_OPT_OPERAND},
    {CLI_FLAG(0, "json", compare_args, json, "the same figures as JSON")},
    {CLI_CALLBACK(0, "ranks", "all|LIST", take_ranks,
                  "every rank, or these (0,5,8-11); default: every rank up to 32,\n"
                  "above that min, median, p90, max and the slowest and fastest rank")},
    {CLI_OPT_END},
};

const cli_command cli_compare_command = {
    .name = "compare",
    .forms = {{"DB --run A --run B", "two runs side by side, per rank and per bucket, with the differences"}},
    .description = "  per rank and per bucket: A, B, B-A and (B-A)/A; the job step time\n",
    .options = compare_option_table,
};

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

/* The command once its arguments are parsed into *a. */
static int compare_command(const char *db_path, const compare_args *a)
{
    const long long *ids = a->ids;
    const bool json = a->json;
    const rank_select *sel = &a->ranks;
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
    compare_args a = {0};
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_compare_command, argc, argv, &a, &parsed);
    const char *db_path = NULL;
    if (rc == EXIT_OK)
        rc = cli_database_operand(&cli_compare_command, &parsed, &db_path);
    if (rc == EXIT_OK && a.nids != 2)
        rc = cli_usage_error(&cli_compare_command, "compare takes exactly two runs (--run A --run B)");
    if (rc == EXIT_OK)
        rc = compare_command(db_path, &a);
    cli_options_free(&cli_compare_command, &a, &parsed);
    rank_select_free(&a.ranks);
    return cli_parse_exit(rc);
}
