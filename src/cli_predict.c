/* cli_predict.c — `ddpprof predict FILE`: `run` on the sim backend, the scenario's
 * answer in virtual time (the options are run's, but --backend and --verify: the sim
 * computes no gradients). */
#include <stdio.h>
#include <stdlib.h>

#include "src/cli.h"

/* Parsed only to check them and to answer --help: cli_run parses them again. */
typedef struct {
    const char *db_path, *spans_ranks, *ranks;
    cli_strings overrides, sweeps;
    bool json, quiet;
} predict_args;

/* run's options that predict has not: said, not just unknown. */
static int refuse_run_option(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)value;
    (void)args;
    return cli_usage_error(cmd, "--%s is not an option of predict (it always runs the sim backend)",
                           opt->long_name);
}

static const cli_option predict_option_table[] = {
    {CLI_STRING('o', NULL, predict_args, db_path, "DB",
                "results database (default ddpprof.sqlite; created if missing)")},
    {CLI_STRING_LIST('s', NULL, predict_args, overrides, "section.key=value",
                     "override a scenario key, e.g. -s run.world_size=4096 (repeatable)")},
    {CLI_STRING_LIST(0, "sweep", predict_args, sweeps, "section.key=a,b,...",
                     "sweep a key from the command line (repeatable), e.g.\n"
                     "--sweep ddp.bucket_cap_mb=5,25,100")},
    {CLI_FLAG(0, "json", predict_args, json, "print the report as JSON")},
    {CLI_FLAG('q', "quiet", predict_args, quiet, "no report")},
    {CLI_STRING(0, "spans-ranks", predict_args, spans_ranks, "LIST",
                "above 64 ranks, the ranks whose spans are stored beside the chosen\n"
                "ones (slowest, fastest, median, quantiles, rank 0): 0,17,4095; all =\n"
                "every rank; every rank's statistics are kept (-s record.spans_ranks=LIST)")},
    {CLI_STRING(0, "ranks", predict_args, ranks, "all|LIST",
                "the report's per-rank tables show every rank, or these (0,5,8-11); default:\n"
                "every rank up to 32, above that min, median, p90, max, slowest and fastest")},
    {CLI_CALLBACK(0, "backend", "NAME", refuse_run_option, ""), .flags = CLI_OPT_HIDDEN},
    {CLI_CALLBACK(0, "verify", NULL, refuse_run_option, ""), .flags = CLI_OPT_HIDDEN},
    {CLI_CALLBACK(0, "no-record", NULL, refuse_run_option, ""), .flags = CLI_OPT_HIDDEN},
    {CLI_OPT_END},
};

const cli_command cli_predict_command = {
    .name = "predict",
    .forms = {{"FILE", "the same run in virtual time (sim backend): thousands of ranks in seconds"}},
    .description = "  predicts the run of a scenario with the sim backend: every rank in virtual time,\n"
                   "  ops timed by the device model, collectives by the network model ([network]);\n"
                   "  writes the same tables as `run` (run.backend = 'sim') and prints the same report\n",
    .options = predict_option_table,
};

int cli_predict(int argc, char **argv, const atomic_int *interrupted)
{
    predict_args checked = {0};
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_predict_command, argc, argv, &checked, &parsed);
    cli_options_free(&cli_predict_command, &checked, &parsed);
    if (rc != EXIT_OK)
        return cli_parse_exit(rc);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return EXIT_RUNTIME;
    args[0] = "run";
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    args[argc] = "--backend";
    args[argc + 1] = "sim";
    rc = cli_run(argc + 2, args, interrupted);
    free(args);
    return rc;
}
