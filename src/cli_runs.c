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

static const char *const usage = "usage: ddpprof runs [DB] [--json]\n"
                                 "  every run in DB (default ddpprof.sqlite): id, name, backend, status, world size, start,\n"
                                 "  mean step (ms, slowest rank) and DDP's overlap (%, mean over ranks)\n"
                                 "  --json     the same as JSON\n";

int cli_runs(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    const char *db_path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(usage, "unknown option '%s'", argv[i]);
        else if (!db_path)
            db_path = argv[i];
        else
            return cli_usage_error(usage, "one database at a time");
    }
    if (!db_path)
        db_path = "ddpprof.sqlite"; /* where run, predict and import write by default */
    store *st = NULL;
    int orc = cli_open_db_readonly(db_path, &st);
    if (orc != EXIT_OK)
        return orc;
    char err[512];
    int rc = run_list_write(st, json, stdout, err, sizeof err);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}
