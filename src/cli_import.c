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

static const char *const usage =
    "usage: ddpprof import PATH... [-o DB] [--name NAME] [--rank N] [--max-events N] [--max-size SIZE]\n"
    "  PATH          a trace: PyTorch profiler JSON (.json, .json.gz; Kineto's or the older list\n"
    "                form) or an Nsight Systems SQLite export (nsys export --type sqlite); or a\n"
    "                directory of them, one file per rank of one job\n"
    "  -o DB         the results database (default ddpprof.sqlite)\n"
    "  --name NAME   the run's name (default: the first PATH's)\n"
    "  --rank N      the rank of a single trace that does not say it (distributedInfo.rank)\n"
    "                and whose file name does not end in it (rank3.json)\n"
    "  --max-events N  refuse traces of more events than N in all (default 30000000)\n"
    "  --max-size SIZE refuse a trace of more text than SIZE, decompressed (default 8G)\n";

int cli_import(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    const char *db_path = "ddpprof.sqlite";
    import_options o = {.rank = -1};
    const char **paths = calloc((size_t)argc, sizeof *paths);
    if (!paths) {
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    int n = 0, status = EXIT_OK;
    for (int i = 1; i < argc && status == EXIT_OK; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "-o") || !strcmp(a, "--name") || !strcmp(a, "--rank") || !strcmp(a, "--max-events") ||
            !strcmp(a, "--max-size")) {
            if (!has_value) {
                status = cli_usage_error(usage, "%s needs a value", a);
                break;
            }
            const char *v = argv[++i];
            char *end;
            errno = 0;
            if (!strcmp(a, "-o")) {
                db_path = v;
            } else if (!strcmp(a, "--name")) {
                o.name = v;
            } else if (!strcmp(a, "--rank")) {
                long r = strtol(v, &end, 10);
                if (v[0] < '0' || v[0] > '9' || *end || errno || r > 1000000)
                    status = cli_usage_error(usage, "--rank %s: want a rank number (0, 1, ...)", v);
                else
                    o.rank = (int)r;
            } else if (!strcmp(a, "--max-events")) {
                unsigned long long m = strtoull(v, &end, 10);
                if (v[0] < '0' || v[0] > '9' || *end || errno || m == 0)
                    status = cli_usage_error(usage, "--max-events %s: want a positive number", v);
                else
                    o.max_events = (size_t)m;
            } else if (cli_parse_size(v, &o.max_file_bytes) < 0) {
                status = cli_usage_error(usage, "--max-size %s: want a size (512M, 8G)", v);
            }
        } else if (a[0] == '-' && a[1]) {
            status = cli_usage_error(usage, "unknown option '%s'", a);
        } else {
            paths[n++] = a;
        }
    }
    if (status == EXIT_OK && n == 0)
        status = cli_usage_error(usage, "no trace given");
    if (status != EXIT_OK) {
        free(paths);
        return status;
    }
    o.paths = paths;
    o.npaths = n;
    store *st = NULL;
    char err[1024];
    if (store_open(db_path, &st, err, sizeof err) < 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        free(paths);
        return EXIT_RUNTIME;
    }
    import_summary sum;
    import_status rc = import_traces(st, &o, &sum, err, sizeof err);
    store_close(st);
    free(paths);
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
