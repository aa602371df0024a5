/* cli_explain.c — `ddpprof explain [section[.key]]`: the scenario key reference. */
#include <stdio.h>

#include "src/cli.h"
#include "engine/scenario/scenario.h"

static const char *const usage = "usage: ddpprof explain [section[.key]]\n"
                                 "  prints each scenario key's type, range, default and meaning\n";

int cli_explain(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    if (argc > 2)
        return cli_usage_error(usage, "explain takes at most one key");
    const char *key = argc == 2 ? argv[1] : NULL;
    if (scenario_explain(stdout, key) != 0) {
        fprintf(stderr, "ddpprof: no scenario section or key named '%s' (see: ddpprof explain)\n", key);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}
