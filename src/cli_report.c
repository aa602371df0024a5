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
            int rc = cli_parse_run_id(usage, argv[++i], &run_id);
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
    store *st = NULL;
    int orc = cli_open_db_readonly(db_path, &st);
    if (orc != EXIT_OK)
        return orc;
    char err[512];
    if (run_id != -1) {
        int rc = cli_check_run_exists(store_db(st), db_path, run_id);
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
