/* cli_commands.c — the commands main dispatches to, and the top-level usage drawn
 * from their tables (contract: cli_commands.h). */
#include <stdarg.h>
#include <string.h>

#include "src/cli.h"
#include "src/cli_commands.h"

/* In the order `ddpprof --help` lists them: recording, analysing, modelling the machine. */
static const cli_entry commands[] = {
    {&cli_run_command, NULL, cli_run},
    {&cli_predict_command, NULL, cli_predict},
    {&cli_whatif_command, NULL, cli_whatif},
    {&cli_runs_command, cli_runs, NULL},
    {&cli_report_command, cli_report, NULL},
    {&cli_export_command, cli_export, NULL},
    {&cli_import_command, cli_import, NULL},
    {&cli_explain_command, cli_explain, NULL},
    {&cli_bench_command, cli_bench, NULL},
    {&cli_calibrate_command, cli_calibrate, NULL},
    {&cli_compare_command, cli_compare, NULL},
};

const cli_entry *cli_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].spec->name, name))
            return &commands[i];
    return NULL;
}

void cli_commands_usage(strbuf *out)
{
    strbuf_addstr(out, "usage: ddpprof <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        cli_options_summary(commands[i].spec, out);
    strbuf_addstr(out, "\n"
                       "  --help, --version  on any command (ddpprof <command> --help: its options)\n"
                       "exit status: 0 success, 1 runtime failure, 2 bad usage or bad scenario\n");
}

static void top_level_usage(const void *ctx, strbuf *out)
{
    (void)ctx;
    cli_commands_usage(out);
}

int cli_commands_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_usage_errorv(top_level_usage, NULL, fmt, ap);
    va_end(ap);
    return rc;
}
