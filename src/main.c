/* main.c — ddpprof's entry point: dispatches to the subcommands and owns the one
 * piece of process-wide state, the flag a SIGINT/SIGTERM handler sets. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend.h"
#include "src/cli.h"

/* Atomic, not just volatile sig_atomic_t: the handler may run on any of the run's
 * threads while the watchdog reads the flag on another (lock-free, so handler-safe). */
static atomic_int interrupted;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may only touch lock-free atomics");

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, 1);
}

static const char *const usage =
    "usage: ddpprof <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE [-o DB] [-s section.key=value]... [--sweep section.key=a,b,...]... [--backend NAME]\n"
    "           [--verify] [--no-record]\n"
    "                     run a scenario, record it into DB (default ddpprof.sqlite), print its report\n"
    "  predict FILE [-o DB] [-s section.key=value]... [--sweep section.key=a,b,...]...\n"
    "                     the same run in virtual time (sim backend): thousands of ranks in seconds\n"
    "  whatif DB --run N [-s section.key=value]... [--sweep section.key=a,b,...]... [--scenario-out FILE]\n"
    "                     a run, recorded or imported, replayed and re-modelled with the changes\n"
    "  runs [DB] [--json] the runs DB holds: id, name, backend, status, step, overlap\n"
    "  report DB [--run ID] [--json | --html] [-o FILE] [--ranks all|LIST]\n"
    "                     overlap, exposed communication and wait time of recorded runs\n"
    "  export DB [--run ID] [--format chrome] [-o FILE] [--per-rank DIR]\n"
    "                     a run as a trace for Perfetto UI / chrome://tracing, or per rank for HTA\n"
    "  import PATH... [-o DB] [--name NAME] [--rank N]\n"
    "                     a real job's traces (PyTorch profiler JSON, Nsight Systems SQLite) as a run\n"
    "  explain [section[.key]]\n"
    "                     every scenario key: type, range, default and meaning\n"
    "  bench allreduce [--ranks N] [--sizes 1M,25M,100M] [--iters N] [--backend cpu|cuda]\n"
    "                     allreduce bandwidth of a backend, as nccl-tests prints it\n"
    "  calibrate [--backend cpu|cuda] [--ranks 2,4] [--sizes 4K,...,100M] [-o FILE]\n"
    "                     measure allreduce times, copies and per-op costs for predict\n"
    "  calibrate --from DB --run ID [--run ID ...] [-o FILE]\n"
    "                     learn the same from recorded runs\n"
    "  compare DB --run A --run B [--json]\n"
    "                     two runs side by side, per rank and per bucket, with the differences\n"
    "\n"
    "  --help, --version  on any command\n"
    "exit status: 0 success, 1 runtime failure, 2 bad usage or bad scenario\n";

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error(usage, "no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
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
    if (!strcmp(cmd, "run"))
        return cli_run(argc - 1, argv + 1, &interrupted);
    if (!strcmp(cmd, "predict"))
        return cli_predict(argc - 1, argv + 1, &interrupted);
    if (!strcmp(cmd, "runs"))
        return cli_runs(argc - 1, argv + 1);
    if (!strcmp(cmd, "whatif"))
        return cli_whatif(argc - 1, argv + 1, &interrupted);
    if (!strcmp(cmd, "report"))
        return cli_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "export"))
        return cli_export(argc - 1, argv + 1);
    if (!strcmp(cmd, "import"))
        return cli_import(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain"))
        return cli_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cli_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return cli_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cli_compare(argc - 1, argv + 1);
    return cli_usage_error(usage, "unknown command '%s'", cmd);
}
