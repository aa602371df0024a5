/* cli_commands.h — the list of ddpprof's commands, each its option table and the
 * function that runs it, from which main dispatches and the top-level usage comes.
 *
 * Contract: cli_command_find() returns the entry named, or NULL; exactly one of an
 * entry's run and run_interruptible is set.  The top-level usage lists every command's
 * forms with their summaries (cli_options_summary), in this list's order.
 *
 * Ownership: the list is static: cli_command_find()'s entry lives as long as the
 * process and is never freed.  cli_commands_usage() appends to the caller's strbuf. */
#ifndef DDPPROF_CLI_COMMANDS_H
#define DDPPROF_CLI_COMMANDS_H

#include <stdatomic.h>

#include "common/strbuf.h"
#include "src/cli_options.h"

typedef struct {
    const cli_command *spec;
    int (*run)(int argc, char **argv);
    /* A command that stops when a SIGINT or SIGTERM sets *interrupted. */
    int (*run_interruptible)(int argc, char **argv, const atomic_int *interrupted);
} cli_entry;

const cli_entry *cli_command_find(const char *name);
/* `ddpprof --help`: every command, with a line on what it does. */
void cli_commands_usage(strbuf *out);
/* Prints "ddpprof: <message>" and the top-level usage to stderr; returns EXIT_USAGE. */
int cli_commands_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
