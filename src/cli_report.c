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

typedef struct {
    long long run_id; /* -1: every run */
    report_format format;
    const char *out_path;
    rank_select ranks;
} report_args;

static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_run_id(cmd, value, &((report_args *)args)->run_id);
}

static int take_ranks(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_ranks(cmd, value, &((report_args *)args)->ranks);
}

/* --json and --html: one format, however often it is said. */
static int take_format(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)value;
    report_args *a = args;
    report_format want = !strcmp(opt->long_name, "json") ? REPORT_JSON : REPORT_HTML;
    if (a->format != REPORT_TEXT && a->format != want)
        return cli_usage_error(cmd, "--json and --html: one format at a time");
    a->format = want;
    return EXIT_OK;
}

static const cli_option report_option_table[] = {
    {CLI_CALLBACK(0, "run", "ID", take_run, "one run (default: every run in DB)")},
    {CLI_CALLBACK(0, "json", NULL, take_format, "the same figures as JSON")},
    {CLI_CALLBACK(0, "html", NULL, take_format, "the same figures as one self-contained HTML page, drawn")},
    {CLI_STRING('o', NULL, report_args, out_path, "FILE", "write to FILE (default: standard output)")},
    {CLI_CALLBACK(0, "ranks", "all|LIST", take_ranks,
                  "the text's per-rank tables show every rank, or these (0,5,8-11);\n"
                  "default: every rank up to 32, above that min, median, p90, max and\n"
                  "the slowest and fastest rank")},
    {CLI_OPT_END},
};

const cli_command cli_report_command = {
    .name = "report",
    .forms = {{"DB", "overlap, exposed communication and wait time of recorded runs"}},
    .options = report_option_table,
};

/* The command once its arguments are parsed into *a. */
static int report_command(const char *db_path, const report_args *a)
{
    const long long run_id = a->run_id;
    const report_format fmt = a->format;
    const char *out_path = a->out_path;
    const rank_select *sel = &a->ranks;
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
    report_args a = {.run_id = -1, .format = REPORT_TEXT};
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_report_command, argc, argv, &a, &parsed);
    const char *db_path = NULL;
    if (rc == EXIT_OK)
        rc = cli_database_operand(&cli_report_command, &parsed, &db_path);
    if (rc == EXIT_OK)
        rc = report_command(db_path, &a);
    cli_options_free(&cli_report_command, &a, &parsed);
    rank_select_free(&a.ranks);
    return cli_parse_exit(rc);
}
