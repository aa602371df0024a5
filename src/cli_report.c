/* cli_report.c — `ddpprof report DB [--run ID] [--json | --html] [-o FILE]`: reads a results database
 * (read-only, without needing write access anywhere; a newer schema or a non-ddpprof
 * file is refused) and prints the report of one run or of every run.
 *
 * Contract: exit 0 with the report; 2 for bad usage: a missing database or a file that
 * is not one (a scenario given for DB), a --run that
 * is not a positive integer in range, or one naming no run in DB (the message gives
 * the ids DB holds; an id is never clamped to the nearest run); 1 for a database that
 * cannot be read or analysed, or an output file that cannot be written (it is then
 * removed).  --html writes one self-contained page (reports/report_html.c); -o
 * writes to FILE instead of standard output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "src/cli.h"
#include "reports/sweep_summary.h"
#include "reports/report.h"
#include "profiler/store.h"

static const char *const usage = "usage: ddpprof report DB [--run ID] [--json | --html] [-o FILE] [--ranks all|LIST]\n"
                                 "  --run ID   one run (default: every run in DB)\n"
                                 "  --ranks all|LIST  the text's per-rank tables show every rank, or these (0,5,8-11);\n"
                                 "             default: every rank up to 32, above that min, median, p90, max and\n"
                                 "             the slowest and fastest rank\n"
                                 "  --json     the same figures as JSON\n"
                                 "  --html     the same figures as one self-contained HTML page, drawn\n"
                                 "  -o FILE    write to FILE (default: standard output)\n";

/* The command, with --ranks parsed into *sel (which the caller frees on every path). */
static int report_command(int argc, char **argv, rank_select *sel)
{
    const char *db_path = NULL;
    long long run_id = -1;
    report_format fmt = REPORT_TEXT;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--run")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--run needs a run id");
            int rc = cli_parse_run_id(usage, argv[++i], &run_id);
            if (rc != EXIT_OK)
                return rc;
        } else if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--html")) {
            report_format want = argv[i][2] == 'j' ? REPORT_JSON : REPORT_HTML;
            if (fmt != REPORT_TEXT && fmt != want)
                return cli_usage_error(usage, "--json and --html: one format at a time");
            fmt = want;
        } else if (!strcmp(argv[i], "--ranks")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "--ranks needs all or a list of ranks");
            int rc = cli_parse_ranks(usage, argv[++i], sel);
            if (rc != EXIT_OK)
                return rc;
        } else if (!strcmp(argv[i], "-o")) {
            if (i + 1 >= argc)
                return cli_usage_error(usage, "-o needs a file name");
            out_path = argv[++i];
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
        int rc = cli_check_run_exists(st, db_path, run_id);
        if (rc != EXIT_OK) {
            store_close(st);
            return rc;
        }
    }
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        fprintf(stderr, "ddpprof: %s: %s\n", out_path, strerror(errno));
        store_close(st);
        return EXIT_RUNTIME;
    }
    int rc = report_write_ranks(st, run_id, fmt, sel, out, err, sizeof err);
    /* The sweeps' summaries again, as `run` printed them (which -q left out). */
    if (rc == 0 && fmt == REPORT_TEXT && run_id == -1)
        rc = report_sweep_summaries(st, out, err, sizeof err);
    store_close(st);
    if (out_path && fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "writing %s: %s", out_path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        if (out_path)
            unlink(out_path);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int cli_report(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    rank_select sel = {0};
    int rc = report_command(argc, argv, &sel);
    rank_select_free(&sel);
    return rc;
}
