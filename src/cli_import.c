/* cli_import.c — `ddpprof import PATH... [-o DB] [--name NAME] [--rank N]`: traces of a
 * real job (PyTorch profiler JSON, Nsight Systems SQLite exports; a directory stands for
 * the trace files in it) into one run of DB (profiler/import/import.h).
 *
 * Contract: exit 0 with one line naming the run; 2 for bad usage or bad input (not a
 * trace, truncated, ranks that do not make one job, nothing to analyse, too large: the
 * message says which file and where), with DB unchanged; 1 when DB cannot be opened or
 * written (it is then unchanged too: the run is written in one transaction).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/cli.h"
#include "profiler/import/import.h"
#include "profiler/store.h"

typedef struct {
    const char *db_path;
    import_options o;
} import_args;

static int take_max_events(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    char *end;
    errno = 0;
    unsigned long long m = strtoull(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end || errno || m == 0)
        return cli_usage_error(cmd, "--max-events %s: want a positive number", value);
    ((import_args *)args)->o.max_events = (size_t)m;
    return EXIT_OK;
}

static int take_max_size(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    if (cli_parse_size(value, &((import_args *)args)->o.max_file_bytes) < 0)
        return cli_usage_error(cmd, "--max-size %s: want a size (512M, 8G)", value);
    return EXIT_OK;
}

static const cli_option import_option_table[] = {
    {CLI_STRING('o', NULL, import_args, db_path, "DB", "the results database (default ddpprof.sqlite)")},
    {CLI_STRING(0, "name", import_args, o.name, "NAME", "the run's name (default: the first PATH's)")},
    {CLI_INT(0, "rank", import_args, o.rank, "N", 0, 1000000,
             "the rank of a single trace that does not say it (distributedInfo.rank)\n"
             "and whose file name does not end in it (rank3.json)")},
    {CLI_CALLBACK(0, "max-events", "N", take_max_events,
                  "refuse traces of more events than N in all (default 30000000)")},
    {CLI_CALLBACK(0, "max-size", "SIZE", take_max_size,
                  "refuse a trace of more text than SIZE, decompressed (default 8G)")},
    {CLI_OPT_END},
};

const cli_command cli_import_command = {
    .name = "import",
    .forms = {{"PATH...", "a real job's traces (PyTorch profiler JSON, Nsight Systems SQLite) as a run"}},
    .description = "  PATH: a trace: PyTorch profiler JSON (.json, .json.gz; Kineto's or the older list\n"
                   "  form) or an Nsight Systems SQLite export (nsys export --type sqlite); or a\n"
                   "  directory of them, one file per rank of one job\n",
    .options = import_option_table,
};

int cli_import(int argc, char **argv)
{
    import_args a = {.db_path = "ddpprof.sqlite", .o = {.rank = -1}};
    cli_parsed parsed;
    int status = cli_options_parse(&cli_import_command, argc, argv, &a, &parsed);
    if (status == EXIT_OK && parsed.operands.n == 0)
        status = cli_usage_error(&cli_import_command, "no trace given");
    if (status != EXIT_OK) {
        cli_options_free(&cli_import_command, &a, &parsed);
        return cli_parse_exit(status);
    }
    const char *db_path = a.db_path;
    import_options o = a.o;
    o.paths = parsed.operands.items; /* freed with the operands, below */
    o.npaths = parsed.operands.n;
    store *st = NULL;
    char err[1024];
    if (store_open(db_path, &st, err, sizeof err) < 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        cli_options_free(&cli_import_command, &a, &parsed);
        return EXIT_RUNTIME;
    }
    import_summary sum;
    import_status rc = import_traces(st, &o, &sum, err, sizeof err);
    store_close(st);
    cli_options_free(&cli_import_command, &a, &parsed);
    if (rc != IMPORT_OK) {
        fprintf(stderr, "ddpprof: %s\n", err);
        return rc == IMPORT_BAD_INPUT ? EXIT_USAGE : EXIT_RUNTIME;
    }
    char held[64];
    if (sum.nranks < sum.world_size)
        snprintf(held, sizeof held, "%d rank%s of %d", sum.nranks, sum.nranks == 1 ? "" : "s", sum.world_size);
    else
        snprintf(held, sizeof held, "%d rank%s", sum.world_size, sum.world_size == 1 ? "" : "s");
    printf("run %" PRId64 ": imported %s, %d iteration%s, %zu spans (%s) into %s\n"
           "clocks: %s\n"
           "see it: ddpprof report %s --run %" PRId64 "\n",
           sum.run_id, held, sum.iterations, sum.iterations == 1 ? "" : "s", sum.spans, sum.backend, db_path,
           sum.clock_sync, db_path, sum.run_id);
    return EXIT_OK;
}
