/* cli_export.c — `ddpprof export DB [--run ID] [--format chrome] [-o FILE]
 * [--per-rank DIR]`: a recorded run as trace-event JSON for Perfetto UI /
 * chrome://tracing (-o), and/or one PyTorch-profiler-style file per rank for Holistic
 * Trace Analysis (--per-rank DIR, files DIR/rank<R>.json; DIR is created).
 *
 * Contract: the database is opened read-only; without --run the run with the largest
 * id is exported.  Exit 0 when every file is written; 2 for bad usage (no database,
 * no output, an unknown format, a --run naming no run); 1 when the database cannot be
 * read or a file cannot be written (a partly written file is removed).  Formats:
 * reports/trace_export.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/cli.h"
#include "profiler/store.h"
#include "profiler/store_read_run.h"
#include "reports/trace_export.h"

static const char *const usage =
    "usage: ddpprof export DB [--run ID] [--format chrome] [-o FILE] [--per-rank DIR]\n"
    "  --run ID        the run to export (default: the last run in DB)\n"
    "  --format chrome Chrome trace-event JSON (Perfetto UI, chrome://tracing)\n"
    "  -o FILE         one file, a process per rank and a thread per stream\n"
    "  --per-rank DIR  DIR/rank<R>.json per rank, PyTorch profiler (Kineto) layout,\n"
    "                  for Holistic Trace Analysis\n";

typedef struct {
    const char *db_path, *out_path, *per_rank_dir;
    long long run_id;
} export_args;

static int parse_args(int argc, char **argv, export_args *a)
{
    memset(a, 0, sizeof *a);
    a->run_id = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(arg, "--run")) {
            if (!has_value)
                return cli_usage_error(usage, "--run needs a run id");
            int rc = cli_parse_run_id(usage, argv[++i], &a->run_id);
            if (rc != EXIT_OK)
                return rc;
        } else if (!strcmp(arg, "--format")) {
            if (!has_value)
                return cli_usage_error(usage, "--format needs a format (chrome)");
            if (strcmp(argv[++i], "chrome") != 0)
                return cli_usage_error(usage, "--format %s: the one format is chrome", argv[i]);
        } else if (!strcmp(arg, "-o")) {
            if (!has_value)
                return cli_usage_error(usage, "-o needs a file name");
            a->out_path = argv[++i];
        } else if (!strcmp(arg, "--per-rank")) {
            if (!has_value)
                return cli_usage_error(usage, "--per-rank needs a directory");
            a->per_rank_dir = argv[++i];
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error(usage, "unknown option '%s'", arg);
        } else if (!a->db_path) {
            a->db_path = arg;
        } else {
            return cli_usage_error(usage, "one database at a time");
        }
    }
    if (!a->db_path)
        return cli_usage_error(usage, "no database given");
    if (!a->out_path && !a->per_rank_dir)
        return cli_usage_error(usage, "nothing to write: give -o FILE and/or --per-rank DIR");
    return EXIT_OK;
}

/* The last run of db, said on stderr: a default a user did not choose is never silent. */
static int last_run(store *st, const char *db_path, long long *id)
{
    store_run_header h;
    bool found;
    char err[512];
    if (store_read_last_run(st, &h, &found, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    if (!found) {
        store_run_header_free(&h);
        fprintf(stderr, "ddpprof: %s holds no runs\n", db_path);
        return EXIT_USAGE;
    }
    *id = h.id;
    fprintf(stderr, "ddpprof: exporting run %lld (%s, %s), the last in %s; --run ID takes another (ddpprof runs %s)\n",
            *id, h.name, h.backend ? h.backend : "no backend", db_path, db_path);
    store_run_header_free(&h);
    return EXIT_OK;
}

typedef int (*trace_writer)(store *st, long long run_id, int rank, FILE *out, char *err,
                            size_t errlen);

static int write_chrome(store *st, long long run_id, int rank, FILE *out, char *err,
                        size_t errlen)
{
    (void)rank;
    return trace_export_chrome(st, run_id, out, err, errlen);
}

static int write_kineto(store *st, long long run_id, int rank, FILE *out, char *err,
                        size_t errlen)
{
    return trace_export_kineto(st, run_id, rank, out, err, errlen);
}

/* Writes one file; a file that could not be finished is removed. */
static int write_file(store *st, long long run_id, int rank, const char *path,
                      trace_writer writer)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "ddpprof: %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    /* Millions of small writes: a large buffer keeps them out of the kernel. */
    if (setvbuf(out, NULL, _IOFBF, 1 << 20) != 0) {
        fprintf(stderr, "ddpprof: %s: cannot set a buffer\n", path);
        fclose(out);
        unlink(path);
        return EXIT_RUNTIME;
    }
    char err[512];
    int rc = writer(st, run_id, rank, out, err, sizeof err);
    if (fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "%s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", path, err);
        unlink(path);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static int write_per_rank(store *st, long long run_id, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ddpprof: %s: %s\n", dir, strerror(errno));
        return EXIT_RUNTIME;
    }
    int *ranks;
    size_t n;
    char err[512];
    if (trace_run_ranks(st, run_id, &ranks, &n, err, sizeof err) < 0) {
        fprintf(stderr, "ddpprof: %s\n", err);
        return EXIT_RUNTIME;
    }
    int rc = EXIT_OK;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/rank%d.json", dir, ranks[i]) >= (int)sizeof path) {
            fprintf(stderr, "ddpprof: %s: directory name too long\n", dir);
            rc = EXIT_USAGE;
            break;
        }
        rc = write_file(st, run_id, ranks[i], path, write_kineto);
    }
    free(ranks);
    return rc;
}

int cli_export(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    export_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    store *st = NULL;
    rc = cli_open_db_readonly(a.db_path, &st);
    if (rc != EXIT_OK)
        return rc;
    rc = a.run_id == -1 ? last_run(st, a.db_path, &a.run_id) : cli_check_run_exists(st, a.db_path, a.run_id);
    /* One read transaction: every file shows the same state of the database. */
    char err[512];
    bool reading = rc == EXIT_OK && store_begin_read(st, err, sizeof err) == 0;
    if (rc == EXIT_OK && !reading) {
        fprintf(stderr, "ddpprof: %s: %s\n", a.db_path, err);
        rc = EXIT_RUNTIME;
    }
    if (rc == EXIT_OK && a.out_path)
        rc = write_file(st, a.run_id, -1, a.out_path, write_chrome);
    if (rc == EXIT_OK && a.per_rank_dir)
        rc = write_per_rank(st, a.run_id, a.per_rank_dir);
    if (reading && store_end_read(st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", a.db_path, err);
        rc = rc == EXIT_OK ? EXIT_RUNTIME : rc;
    }
    store_close(st);
    return rc;
}
