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

typedef struct {
    const char *db_path, *out_path, *per_rank_dir;
    long long run_id;
} export_args;

static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    return cli_parse_run_id(cmd, value, &((export_args *)args)->run_id);
}

static int take_format(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    (void)args;
    if (strcmp(value, "chrome") != 0)
        return cli_usage_error(cmd, "--format %s: the one format is chrome", value);
    return EXIT_OK;
}

static const cli_option export_option_table[] = {
    {CLI_CALLBACK(0, "run", "ID", take_run, "the run to export (default: the last run in DB)")},
    {CLI_CALLBACK(0, "format", "chrome", take_format, "Chrome trace-event JSON (Perfetto UI, chrome://tracing)")},
    {CLI_STRING('o', NULL, export_args, out_path, "FILE", "one file, a process per rank and a thread per stream")},
    {CLI_STRING(0, "per-rank", export_args, per_rank_dir, "DIR",
                "DIR/rank<R>.json per rank, PyTorch profiler (Kineto) layout,\n"
                "for Holistic Trace Analysis")},
    {CLI_OPT_END},
};

const cli_command cli_export_command = {
    .name = "export",
    .forms = {{"DB", "a run as a trace for Perfetto UI / chrome://tracing, or per rank for HTA"}},
    .options = export_option_table,
};

static int parse_args(int argc, char **argv, export_args *a)
{
    memset(a, 0, sizeof *a);
    a->run_id = -1;
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_export_command, argc, argv, a, &parsed);
    if (rc == EXIT_OK)
        rc = cli_database_operand(&cli_export_command, &parsed, &a->db_path);
    cli_options_free(&cli_export_command, a, &parsed);
    if (rc == EXIT_OK && !a->out_path && !a->per_rank_dir)
        rc = cli_usage_error(&cli_export_command, "nothing to write: give -o FILE and/or --per-rank DIR");
    return rc;
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
    export_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != EXIT_OK)
        return cli_parse_exit(rc);
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
