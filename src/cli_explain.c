/* cli_explain.c — `ddpprof explain [section[.key]]`: the scenario key reference. */
#include <stdio.h>

#include "src/cli.h"
#include "engine/scenario/scenario.h"

static const cli_option explain_option_table[] = {
    {CLI_OPT_END},
};

const cli_command cli_explain_command = {
    .name = "explain",
    .forms = {{"[section[.key]]", "every scenario key: type, range, default and meaning"}},
    .description = "  prints each scenario key's type, range, default and meaning\n",
    .options = explain_option_table,
};

int cli_explain(int argc, char **argv)
{
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_explain_command, argc, argv, NULL, &parsed);
    const char *key = cli_operand(&parsed, 0);
    if (rc == EXIT_OK && parsed.operands.n > 1)
        rc = cli_usage_error(&cli_explain_command, "explain takes at most one key");
    cli_options_free(&cli_explain_command, NULL, &parsed);
    if (rc != EXIT_OK)
        return cli_parse_exit(rc);
    if (scenario_explain(stdout, key) != 0) {
        fprintf(stderr, "ddpprof: no scenario section or key named '%s' (see: ddpprof explain)\n", key);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}
