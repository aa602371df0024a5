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

static const char *const usage =
    "usage: ddpprof calibrate [--backend cpu|cuda] [--ranks 2,4] [--sizes 4K,64K,...,100M]\n"
    "                         [--copy-sizes 1M,4M,16M|none] [--iters N] [--warmup N] [--repeats N]\n"
    "                         [-o FILE]\n"
    "       ddpprof calibrate --from DB --run ID [--run ID ...] [--host-cores N] [--cache-mb N]\n"
    "                         [-o FILE]\n"
    "  measures in-place SUM allreduce at every (ranks, size), fits\n"
    "  t(S, n) = 2(n-1)*alpha + 2(n-1)/n * S / B, prints each measurement with the model and\n"
    "  the residual, and writes [network] latency_us, bandwidth_gbps (and [device] mem_bw_gbps\n"
    "  from the bucket copies, op_overhead_us, op_wakeup_us from the streams' per-op cost) to FILE (default calibration.ini), for `include = FILE`\n"
    "  each point: the median of --repeats timings (default 3), each the mean of --iters\n"
    "  sizes in bytes with optional K/M/G suffix (binary: 1M = 1048576)\n"
    "  --from: learns the same terms from recorded runs instead (each op's cost with the whole\n"
    "  run beside it: wake-ups, hand-offs, copies, and each bucket allreduce from the last\n"
    "  arrival), for predictions of other scenarios on the machine that ran them\n"
    "  --host-cores: the cores the runs' ranks shared (default: this machine's for cpu runs,\n"
    "  else 0); copies and optimizer steps are learned per core and written as host_cores\n"
    "  --cache-mb: the last-level cache in MiB of the host the runs ran on (default: this\n"
    "  machine's for cpu runs, else 0); runs whose ranks' memory fits in it teach the copies'\n"
    "  and steps' bandwidths in cache, written as cache_mb and cache_*_gbps\n";

#define DEFAULT_SIZES "4K,64K,256K,1M,4M,16M,64M,100M"

typedef struct {
    const char *backend, *out;
    calib_plan plan;
    const char *from; /* --from DB: learn from recorded runs instead of measuring */
    int64_t *runs; /* one place per argument: no count of --run can outgrow it */
    int nruns;
    double host_cores; /* --host-cores; -1: this machine's for cpu runs */
    double cache_mb;   /* --cache-mb; -1: this machine's for cpu runs */
    bool probe_option; /* an option of the measuring mode was given */
    bool from_option;  /* one of --from's own (--run, --host-cores, --cache-mb) */
} options;

static int parse_run(const char *text, options *o)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*end || end == text || v < 1)
        return cli_usage_error(usage, "--run %s: want a run id (a positive integer)", text);
    o->runs[o->nruns++] = v;
    return EXIT_OK;
}

/* --host-cores and --cache-mb: a number from 0 to 1e6. */
static int parse_amount(const char *option, const char *text, const char *want, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (*end || end == text || !(v >= 0 && v <= 1e6))
        return cli_usage_error(usage, "%s %s: want %s", option, text, want);
    *out = v;
    return EXIT_OK;
}

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
            rc = cli_usage_error(usage, "%s: at most %d sizes", opt, CALIB_MAX_POINTS);
            break;
        }
        if (cli_parse_size(tok, &out[*n]) != 0) {
            rc = cli_usage_error(usage, "%s: '%s' is not a size (e.g. 64K, 25M, 1G; at least 4 bytes)", opt, tok);
            break;
        }
        (*n)++;
    }
    free(copy);
    if (rc == EXIT_OK && *n == 0)
        rc = cli_usage_error(usage, "%s: no sizes given", opt);
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
            rc = cli_usage_error(usage, "--ranks: '%s' is not a world size in [2, 64]", tok);
            break;
        }
        if (*n == CALIB_MAX_POINTS) {
            rc = cli_usage_error(usage, "--ranks: at most %d world sizes", CALIB_MAX_POINTS);
            break;
        }
        out[(*n)++] = (int)v;
    }
    free(copy);
    if (rc == EXIT_OK && *n == 0)
        rc = cli_usage_error(usage, "--ranks: no world size given");
    return rc;
}

static int parse_count(const char *opt, const char *text, int lo, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || end == text || v < lo || v > 100000)
        return cli_usage_error(usage, "%s %s: want an integer in [%d, 100000]", opt, text, lo);
    *out = (int)v;
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, options *o)
{
    const char *ranks = "2,4", *sizes = DEFAULT_SIZES, *copy_sizes = "1M,4M,16M";
    o->backend = "cpu";
    o->out = "calibration.ini";
    o->plan.iters = 10;
    o->plan.warmup = 2;
    o->plan.repeats = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        static const char *const known[] = {"--backend", "--ranks",   "--sizes", "--copy-sizes", "--iters",
                                            "--warmup",  "--repeats", "-o",      "--from",       "--run", "--host-cores",
                                            "--cache-mb", NULL};
        bool is_known = false;
        for (int k = 0; known[k]; k++)
            is_known |= strcmp(a, known[k]) == 0;
        if (!is_known)
            return cli_usage_error(usage, "unknown option '%s'", a);
        if (i + 1 >= argc)
            return cli_usage_error(usage, "%s needs a value", a);
        const char *v = argv[++i];
        int rc = EXIT_OK;
        bool from_option =
            !strcmp(a, "--from") || !strcmp(a, "--run") || !strcmp(a, "--host-cores") || !strcmp(a, "--cache-mb");
        o->probe_option |= strcmp(a, "-o") != 0 && !from_option;
        o->from_option |= strcmp(a, "--from") != 0 && from_option;
        if (!strcmp(a, "--from"))
            o->from = v;
        else if (!strcmp(a, "--host-cores"))
            rc = parse_amount(a, v, "a number of cores (0 = not shared)", &o->host_cores);
        else if (!strcmp(a, "--cache-mb"))
            rc = parse_amount(a, v, "MiB of cache (0 = none modelled)", &o->cache_mb);
        else if (!strcmp(a, "--run"))
            rc = parse_run(v, o);
        else if (!strcmp(a, "--backend"))
            o->backend = v;
        else if (!strcmp(a, "--ranks"))
            ranks = v;
        else if (!strcmp(a, "--sizes"))
            sizes = v;
        else if (!strcmp(a, "--copy-sizes"))
            copy_sizes = v;
        else if (!strcmp(a, "--iters"))
            rc = parse_count(a, v, 1, &o->plan.iters);
        else if (!strcmp(a, "--warmup"))
            rc = parse_count(a, v, 0, &o->plan.warmup);
        else if (!strcmp(a, "--repeats")) {
            rc = parse_count(a, v, 1, &o->plan.repeats);
            if (rc == EXIT_OK && o->plan.repeats > CALIB_MAX_REPEATS)
                rc = cli_usage_error(usage, "--repeats %s: at most %d", v, CALIB_MAX_REPEATS);
        }
        else if (!strcmp(a, "-o"))
            o->out = v;
        else
            return cli_usage_error(usage, "unknown option '%s'", a);
        if (rc != EXIT_OK)
            return rc;
    }
    if (o->from && o->probe_option)
        return cli_usage_error(usage, "--from learns from recorded runs: the measuring options do not apply");
    if (o->from && o->nruns == 0)
        return cli_usage_error(usage, "--from %s needs --run ID (which recorded runs to learn from)", o->from);
    if (!o->from && o->from_option)
        return cli_usage_error(usage, "--run, --host-cores and --cache-mb need --from DB (the database that holds the runs)");
    int rc = parse_ranks(ranks, o->plan.ranks, &o->plan.nranks);
    if (rc == EXIT_OK)
        rc = parse_sizes("--sizes", sizes, o->plan.sizes, &o->plan.nsizes);
    if (rc == EXIT_OK && strcmp(copy_sizes, "none") != 0)
        rc = parse_sizes("--copy-sizes", copy_sizes, o->plan.copy_sizes, &o->plan.ncopy);
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
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    options o = {.host_cores = -1, .cache_mb = -1, .runs = malloc((size_t)(argc > 0 ? argc : 1) * sizeof(int64_t))};
    if (!o.runs) {
        fprintf(stderr, "ddpprof: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = parse_args(argc, argv, &o);
    if (rc == EXIT_OK && o.from)
        rc = cli_calibrate_from(o.from, o.runs, o.nruns, o.host_cores, o.cache_mb, o.out);
    free(o.runs);
    if (rc != EXIT_OK || o.from)
        return rc;
    o.plan.be = backend_find(o.backend);
    if (!o.plan.be) {
        char names[128];
        backend_names(names, sizeof names);
        return cli_usage_error(usage, "--backend %s: no such backend here (built in: %s)", o.backend, names);
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
