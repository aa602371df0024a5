/* cli_calibrate.c — `ddpprof calibrate`: measures allreduce (and the reducer's copies)
 * on a backend, fits the ring alpha-beta model, prints every measurement against the
 * model, and writes the fitted values as a scenario fragment to include.
 *
 * Contract: exit 0 with FILE written; 2 for bad usage or measurements that cannot be
 * fitted (one size, one world size: the message says what to add); 1 when a measurement
 * or the write fails.  Nothing is written unless the fit succeeded.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/backend.h"
#include "reports/calib_report.h"
#include "engine/predict/calibrate.h"
#include "src/cli.h"

#define DEFAULT_SIZES "4K,64K,256K,1M,4M,16M,64M,100M"

/* The forms: measuring a backend, or learning from recorded runs (--from). */
enum { FORM_PROBE = 1u << 0, FORM_FROM = 1u << 1 };

typedef struct {
    const char *backend, *out;
    const char *ranks, *sizes, *copy_sizes; /* the lists, parsed into plan once given */
    calib_plan plan;
    const char *from; /* --from DB: learn from recorded runs instead of measuring */
    int64_t *runs;
    int nruns;
    double host_cores; /* --host-cores; -1: this machine's for cpu runs */
    double cache_mb;   /* --cache-mb; -1: this machine's for cpu runs */
} options;

static int take_run(const cli_command *cmd, const cli_option *opt, const char *value, void *args)
{
    (void)opt;
    options *o = args;
    long long id;
    int rc = cli_parse_run_id(cmd, value, &id);
    if (rc != EXIT_OK)
        return rc;
    int64_t *grown = realloc(o->runs, ((size_t)o->nruns + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    o->runs = grown;
    o->runs[o->nruns++] = id;
    return EXIT_OK;
}

static const cli_option calibrate_option_table[] = {
    {CLI_STRING(0, "backend", options, backend, "cpu|cuda", "the backend to measure (default cpu)"),
     .forms = FORM_PROBE},
    {CLI_STRING(0, "ranks", options, ranks, "2,4", "the world sizes, each in [2, 64] (default 2,4)"),
     .forms = FORM_PROBE},
    {CLI_STRING(0, "sizes", options, sizes, "4K,...,100M",
                "the allreduce sizes (default " DEFAULT_SIZES ")"), .forms = FORM_PROBE},
    {CLI_STRING(0, "copy-sizes", options, copy_sizes, "1M,4M,16M|none",
                "the bucket copies' sizes, or none (default 1M,4M,16M)"), .forms = FORM_PROBE},
    {CLI_INT(0, "iters", options, plan.iters, "N", 1, 100000, "timings a point's timing is the mean of (default 10)"),
     .forms = FORM_PROBE},
    {CLI_INT(0, "warmup", options, plan.warmup, "N", 0, 100000, "untimed runs before them (default 2)"),
     .forms = FORM_PROBE},
    {CLI_INT(0, "repeats", options, plan.repeats, "N", 1, CALIB_MAX_REPEATS,
             "timings a point is the median of (default 3)"), .forms = FORM_PROBE},
    {CLI_STRING(0, "from", options, from, "DB", "learn from the recorded runs of DB instead of measuring"),
     .flags = CLI_OPT_OPERAND, .forms = FORM_FROM},
    {CLI_CALLBACK(0, "run", "ID", take_run, "a run of DB to learn from (repeatable)"),
     .flags = CLI_OPT_OPERAND, .forms = FORM_FROM},
    {CLI_DOUBLE(0, "host-cores", options, host_cores, "N", 0, 1e6,
                "the cores the runs' ranks shared (default: this machine's for cpu runs,\n"
                "else 0); copies and optimizer steps are learned per core and written\n"
                "as host_cores"),
     .forms = FORM_FROM},
    {CLI_DOUBLE(0, "cache-mb", options, cache_mb, "N", 0, 1e6,
                "the last-level cache in MiB of the host the runs ran on (default: this\n"
                "machine's for cpu runs, else 0); runs whose ranks' memory fits in it\n"
                "teach the copies' and steps' bandwidths in cache, written as cache_mb\n"
                "and cache_*_gbps"),
     .forms = FORM_FROM},
    {CLI_STRING('o', NULL, options, out, "FILE", "the fragment to write (default calibration.ini)")},
    {CLI_OPT_END},
};

const cli_command cli_calibrate_command = {
    .name = "calibrate",
    .forms = {{"", "measure allreduce times, copies and per-op costs for predict"},
              {"--from DB --run ID [--run ID ...]", "learn the same from recorded runs"}},
    .description =
        "  measures in-place SUM allreduce at every (ranks, size), fits\n"
        "  t(S, n) = 2(n-1)*alpha + 2(n-1)/n * S / B, prints each measurement with the model and\n"
        "  the residual, and writes [network] latency_us, bandwidth_gbps (and [device] mem_bw_gbps\n"
        "  from the bucket copies, op_overhead_us, op_wakeup_us from the streams' per-op cost) to FILE\n"
        "  (default calibration.ini), for `include = FILE`\n"
        "  each point: the median of --repeats timings (default 3), each the mean of --iters\n"
        "  sizes in bytes with optional K/M/G suffix (binary: 1M = 1048576)\n"
        "  --from: learns the same terms from recorded runs instead (each op's cost with the whole\n"
        "  run beside it: wake-ups, hand-offs, copies, and each bucket allreduce from the last\n"
        "  arrival), for predictions of other scenarios on the machine that ran them\n",
    .options = calibrate_option_table,
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int parse_sizes(const char *opt, const char *list, int64_t *out, size_t *n)
{
    char *copy = strdup(list);
    if (!copy)
        return EXIT_RUNTIME;
    *n = 0;
    int rc = EXIT_OK;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == CALIB_MAX_POINTS) {
            rc = cli_usage_error(&cli_calibrate_command, "%s: at most %d sizes", opt, CALIB_MAX_POINTS);
            break;
        }
        if (cli_parse_size(tok, &out[*n]) != 0) {
            rc = cli_usage_error(&cli_calibrate_command,
                                 "%s: '%s' is not a size (e.g. 64K, 25M, 1G; at least 4 bytes)", opt, tok);
            break;
        }
        (*n)++;
    }
    free(copy);
    if (rc == EXIT_OK && *n == 0)
        rc = cli_usage_error(&cli_calibrate_command, "%s: no sizes given", opt);
    if (rc == EXIT_OK)
        qsort(out, *n, sizeof *out, cmp_i64);
    return rc;
}

static int parse_ranks(const char *list, int *out, size_t *n)
{
    char *copy = strdup(list);
    if (!copy)
        return EXIT_RUNTIME;
    *n = 0;
    int rc = EXIT_OK;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (*end || v < 2 || v > 64) {
            rc = cli_usage_error(&cli_calibrate_command, "--ranks: '%s' is not a world size in [2, 64]", tok);
            break;
        }
        if (*n == CALIB_MAX_POINTS) {
            rc = cli_usage_error(&cli_calibrate_command, "--ranks: at most %d world sizes", CALIB_MAX_POINTS);
            break;
        }
        out[(*n)++] = (int)v;
    }
    free(copy);
    if (rc == EXIT_OK && *n == 0)
        rc = cli_usage_error(&cli_calibrate_command, "--ranks: no world size given");
    return rc;
}

static int parse_args(int argc, char **argv, options *o)
{
    cli_parsed parsed;
    int rc = cli_options_parse(&cli_calibrate_command, argc, argv, o, &parsed);
    if (rc == EXIT_OK && parsed.operands.n > 0)
        rc = cli_usage_error(&cli_calibrate_command, "unknown option '%s'", cli_operand(&parsed, 0));
    unsigned used = parsed.forms_used;
    cli_options_free(&cli_calibrate_command, o, &parsed);
    if (rc != EXIT_OK)
        return rc;
    if (o->from && (used & FORM_PROBE))
        return cli_usage_error(&cli_calibrate_command,
                               "--from learns from recorded runs: the measuring options do not apply");
    if (o->from && o->nruns == 0)
        return cli_usage_error(&cli_calibrate_command,
                               "--from %s needs --run ID (which recorded runs to learn from)", o->from);
    /* Without --from, any option of its form is one of --from's own. */
    if (!o->from && (used & FORM_FROM))
        return cli_usage_error(&cli_calibrate_command,
                               "--run, --host-cores and --cache-mb need --from DB (the database that holds the runs)");
    rc = parse_ranks(o->ranks, o->plan.ranks, &o->plan.nranks);
    if (rc == EXIT_OK)
        rc = parse_sizes("--sizes", o->sizes, o->plan.sizes, &o->plan.nsizes);
    if (rc == EXIT_OK && strcmp(o->copy_sizes, "none") != 0)
        rc = parse_sizes("--copy-sizes", o->copy_sizes, o->plan.copy_sizes, &o->plan.ncopy);
    return rc;
}

static void describe_machine(const char *backend, char *buf, size_t n)
{
    char host[128] = "?";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    char when[32] = "?";
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    snprintf(buf, n, "%s backend on %s (%ld cores), %s", backend, host, sysconf(_SC_NPROCESSORS_ONLN), when);
}

int cli_calibrate(int argc, char **argv)
{
    options o = {.backend = "cpu",
                 .out = "calibration.ini",
                 .ranks = "2,4",
                 .sizes = DEFAULT_SIZES,
                 .copy_sizes = "1M,4M,16M",
                 .plan = {.iters = 10, .warmup = 2, .repeats = 3},
                 .host_cores = -1,
                 .cache_mb = -1};
    int rc = parse_args(argc, argv, &o);
    if (rc == EXIT_OK && o.from)
        rc = cli_calibrate_from(o.from, o.runs, o.nruns, o.host_cores, o.cache_mb, o.out);
    free(o.runs);
    if (rc != EXIT_OK || o.from)
        return cli_parse_exit(rc);
    o.plan.be = backend_find(o.backend);
    if (!o.plan.be) {
        char names[128];
        backend_names(names, sizeof names);
        return cli_usage_error(&cli_calibrate_command, "--backend %s: no such backend here (built in: %s)",
                               o.backend, names);
    }
    char err[512], why[256];
    if (!o.plan.be->available(why, sizeof why)) {
        fprintf(stderr, "ddpprof: backend %s: %s\n", o.backend, why);
        return EXIT_RUNTIME;
    }
    calib_data *d = malloc(sizeof *d);
    if (!d) {
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "ddpprof calibrate: measuring (%zu world sizes x %zu sizes, %zu copy sizes)\n", o.plan.nranks,
            o.plan.nsizes, o.plan.ncopy);
    if (calib_measure(&o.plan, d, stderr, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: calibrate: %s\n", err);
        free(d);
        return EXIT_RUNTIME;
    }
    calib_fit f;
    if (calib_fit_all(d, &f, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: calibrate: %s\n", err);
        free(d);
        return EXIT_USAGE;
    }
    calib_print(stdout, &o.plan, d, &f);
    char about[256];
    describe_machine(o.backend, about, sizeof about);
    char *ini = calib_ini_text(&o.plan, d, &f, about);
    rc = EXIT_OK;
    if (!ini || cli_write_text(o.out, ini) != 0)
        rc = EXIT_RUNTIME;
    else
        printf("wrote %s ([network] latency_us, bandwidth_gbps%s%s): include it with `include = %s`\n", o.out,
               f.have_copy ? "; [device] mem_bw_gbps" : "", f.have_dispatch ? ", op_overhead_us, op_wakeup_us" : "", o.out);
    free(ini);
    free(d);
    return rc;
}
