/* cli_common.c — help and usage-error helpers shared by the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_wants_help(int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 1;
        }
    }
    return 0;
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ddpprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    fputs(usage, stderr);
    return EXIT_USAGE;
}
