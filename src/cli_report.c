/* cli_report.c — `ddpprof report DB [--run ID] [--json]`: reads a results database
 * (read-only; a newer schema or a non-ddpprof file is refused) and prints the report of one run or of every run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
            char *end;
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--run needs a run id");
            run_id = strtoll(argv[++i], &end, 10);
            if (*end || run_id < 1)
                return cli_usage_error(usage, "--run %s: want a positive run id", argv[i]);
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
        fprintf(stderr, "ddpprof: %s: no such database (run `ddpprof run` first)\n", db_path);
        return EXIT_USAGE;
    }
    store *st = NULL;
    char err[512];
    if (store_open_readonly(db_path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    int rc = report_write(store_db(st), run_id, json ? REPORT_JSON : REPORT_TEXT, stdout, err, sizeof err);
    store_close(st);
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}
