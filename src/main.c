/* main.c — ddpprof's entry point: dispatches to the subcommands (cli_commands.h, whose
 * tables give the usage too) and owns the one piece of process-wide state, the flag a
 * SIGINT/SIGTERM handler sets. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend.h"
#include "src/cli.h"
#include "src/cli_commands.h"

/* Atomic, not just volatile sig_atomic_t: the handler may run on any of the run's
 * threads while the watchdog reads the flag on another (lock-free, so handler-safe). */
static atomic_int interrupted;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may only touch lock-free atomics");

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, 1);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_commands_usage_error("no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        strbuf usage = STRBUF_INIT;
        cli_commands_usage(&usage);
        fputs(usage.buf, stdout);
        strbuf_release(&usage);
        return EXIT_OK;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version")) {
            char names[128];
            backend_names(names, sizeof names);
            printf("ddpprof %s\nbackends built in: %s\n", DDPPROF_VERSION, names);
            return EXIT_OK;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        perror("ddpprof: sigaction");
        return EXIT_RUNTIME;
    }
    const cli_entry *entry = cli_command_find(cmd);
    if (!entry)
        return cli_commands_usage_error("unknown command '%s'", cmd);
    return entry->run ? entry->run(argc - 1, argv + 1) : entry->run_interruptible(argc - 1, argv + 1, &interrupted);
}
