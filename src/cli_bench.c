/* cli_bench.c — `ddpprof bench allreduce`: a backend's allreduce bandwidth (cpu unless
 * --backend says otherwise),
 * printed as nccl-tests does (algbw = bytes / time, busbw = algbw · 2(n−1)/n, GB = 1e9). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "src/cli.h"
#include "engine/launch/memory_budget.h"

static const char *const usage =
    "usage: ddpprof bench allreduce [--ranks N] [--sizes 1M,25M,100M] [--iters N] [--warmup N]\n"
    "                               [--backend cpu|cuda]\n"
    "  sizes in bytes with optional K/M/G suffix (binary: 1M = 1048576)\n";

static int parse_size(const char *s, int64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return -1;
    double mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024.0 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (int64_t)(v * mult);
    return *out >= 4 ? 0 : -1;
}

static int run_size(const backend_ops *be, int ranks, int64_t bytes, int iters, int warmup)
{
    int64_t count = bytes / 4;
    double t_us;
    char err[512];
    if (be->bench_allreduce(ranks, count * 4, iters, warmup, &t_us, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s\n", err);
        return EXIT_RUNTIME;
    }
    double algbw = (double)(count * 4) / (t_us * 1e-6) / 1e9;
    double busbw = algbw * (ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0);
    printf("%12lld  %12lld  %6s  %5s  %10.1f  %7.2f  %7.2f\n", (long long)(count * 4), (long long)count, "float", "sum",
           t_us, algbw, busbw);
    fflush(stdout);
    return EXIT_OK;
}

int cli_bench(int argc, char **argv)
{
    if (cli_wants_help(argc, argv, usage))
        return EXIT_OK;
    if (argc < 2 || strcmp(argv[1], "allreduce") != 0)
        return cli_usage_error(usage, "bench: the one benchmark is 'allreduce'");
    int ranks = 4, iters = 20, warmup = 3;
    const char *sizes = "1M,25M,100M";
    const char *backend = "cpu";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc)
            return cli_usage_error(usage, "%s needs a value", a);
        char *end;
        if (!strcmp(a, "--ranks")) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 64)
                return cli_usage_error(usage, "--ranks %s: want an integer in [1, 64]", argv[i]);
            ranks = (int)v;
        } else if (!strcmp(a, "--iters") || !strcmp(a, "--warmup")) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < (a[2] == 'i' ? 1 : 0) || v > 100000)
                return cli_usage_error(usage, "%s %s: want an integer in [%d, 100000]", a, argv[i], a[2] == 'i');
            *(a[2] == 'i' ? &iters : &warmup) = (int)v;
        } else if (!strcmp(a, "--sizes")) {
            sizes = argv[++i];
        } else if (!strcmp(a, "--backend")) {
            backend = argv[++i];
        } else {
            return cli_usage_error(usage, "unknown option '%s'", a);
        }
    }
    char *list = strdup(sizes);
    if (!list)
        return EXIT_RUNTIME;
    int64_t sz[64];
    int nsz = 0;
    for (char *save, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (nsz == 64 || parse_size(tok, &sz[nsz]) != 0) {
            int rc = cli_usage_error(usage, "--sizes: '%s' is not a size (e.g. 4K, 25M, 1G; at least 4 bytes)", tok);
            free(list);
            return rc;
        }
        nsz++;
    }
    free(list);
    for (int i = 0; i < nsz; i++) {
        char what[96], detail[96], err[512];
        snprintf(what, sizeof what, "bench allreduce of %lld bytes", (long long)sz[i]);
        snprintf(detail, sizeof detail, "%d ranks x one buffer each", ranks);
        if (memory_check(memory_bench_estimate(ranks, sz[i]), what, detail, err, sizeof err) != 0) {
            fprintf(stderr, "ddpprof: %s\n", err);
            return EXIT_USAGE;
        }
    }
    const backend_ops *be = backend_find(backend);
    char why[512];
    if (!be)
        return cli_usage_error(usage, "--backend %s: not built into this ddpprof", backend);
    if (!be->available(why, sizeof why)) {
        fprintf(stderr, "ddpprof: backend %s: %s\n", be->name, why);
        return EXIT_RUNTIME;
    }
    printf("# ddpprof bench allreduce: %s backend, %d ranks (%s), %d iterations after %d warm-up\n", be->name, ranks,
           be->one_rank_per_process ? "one GPU each, one process" : "threads", iters, warmup);
    printf("# %10s  %12s  %6s  %5s  %10s  %7s  %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw");
    printf("# %10s  %12s  %6s  %5s  %10s  %7s  %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)");
    for (int i = 0; i < nsz; i++) {
        int rc = run_size(be, ranks, sz[i], iters, warmup);
        if (rc != EXIT_OK)
            return rc;
    }
    return EXIT_OK;
}
