/* cli_runs.c — `ddpprof runs [DB] [--json]`: the runs a database holds, one line each
 * (reports/run_list.h), to choose the --run of the other commands.
 *
 * Contract: DB defaults to ddpprof.sqlite, as run's and import's -o does.  Exit 0 with the list (a database without runs: the header alone, or an empty list);
 * 2 for bad usage or a missing database; 1 for a database that cannot be read.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "profiler/store.h"
#include "reports/run_list.h"
#include "src/cli.h"

typedef struct {
    bool json;
} runs_args;

static const cli_option runs_option_table[] = {
    {CLI_FLAG(0, "json", runs_args, json, "the same as JSON")},
    {CLI_OPT_END},
};

const cli_command cli_runs_command = {
    .name = "runs",
    .forms = {{"[DB]", "the runs DB holds: id, name, backend, status, step, overlap"}},
    .description = "  every run in DB (default ddpprof.sqlite): id, name, backend, status, world size, start,\n"
                   "  mean step (ms, slowest rank) and DDP's overlap (%, mean over ranks)\n",
    .options = runs_option_table,
};

int cli_runs(int argc, char **argv)
{
    runs_args a = {0};
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_runs_command, argc, argv, &a, &parsed);
    const char *db_path = cli_operand(&parsed, 0);
    if (rc == EXIT_OK && parsed.operands.n > 1)
        rc = cli_usage_error(&cli_runs_command, "one database at a time");
    cli_options_free(&cli_runs_command, &a, &parsed);
    if (rc != EXIT_OK)
        return cli_parse_exit(rc);
    if (!db_path)
        db_path = "ddpprof.sqlite"; /* where run, predict and import write by default */
    store *st = NULL;
    int orc = cli_open_db_readonly(db_path, &st);
    if (orc != EXIT_OK)
        return orc;
    char err[512];
    rc = run_list_write(st, a.json, stdout, err, sizeof err);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}
