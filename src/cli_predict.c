/* cli_predict.c — `ddpprof predict FILE`: `run` on the sim backend, the scenario's
 * answer in virtual time (the options are run's, but --backend and --verify: the sim
 * computes no gradients). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/cli.h"

static const char *const usage =
    "usage: ddpprof predict FILE [-o DB] [-s section.key=value]... [--sweep section.key=a,b,...]... [--json] [-q]\n"
    "                       [--ranks all|LIST] [--spans-ranks LIST]\n"
    "  predicts the run of a scenario with the sim backend: every rank in virtual time,\n"
    "  ops timed by the device model, collectives by the network model ([network]);\n"
    "  writes the same tables as `run` (run.backend = 'sim') and prints the same report\n"
    "  -o DB            results database (default ddpprof.sqlite; created if missing)\n"
    "  -s KEY=VALUE     override a scenario key, e.g. -s run.world_size=4096 (repeatable)\n"
    "  --sweep KEY=A,B,...  sweep a key from the command line (repeatable), e.g.\n"
    "                   --sweep ddp.bucket_cap_mb=5,25,100\n"
    "  --spans-ranks LIST  above 64 ranks, the ranks whose spans are stored beside the chosen\n"
    "                   ones (slowest, fastest, median, quantiles, rank 0): 0,17,4095; all =\n"
    "                   every rank; every rank's statistics are kept (-s record.spans_ranks=LIST)\n"
    "  --json           print the report as JSON\n"
    "  --ranks all|LIST the report's per-rank tables show every rank, or these (0,5,8-11); default:\n"
    "                   every rank up to 32, above that min, median, p90, max, slowest and fastest\n"
    "  -q, --quiet      no report\n";

int cli_predict(int argc, char **argv, const atomic_int *interrupted)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "-s") || !strcmp(argv[i], "--sweep") ||
            !strcmp(argv[i], "--ranks") || !strcmp(argv[i], "--spans-ranks")) {
            i++;
            continue;
        }
        if (!strcmp(argv[i], "--backend") || !strcmp(argv[i], "--verify") || !strcmp(argv[i], "--no-record"))
            return cli_usage_error(usage, "%s is not an option of predict (it always runs the sim backend)",
                                   argv[i]);
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return EXIT_RUNTIME;
    args[0] = "run";
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    args[argc] = "--backend";
    args[argc + 1] = "sim";
    int rc = cli_run(argc + 2, args, interrupted);
    free(args);
    return rc;
}
