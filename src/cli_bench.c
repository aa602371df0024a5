/* cli_bench.c — `ddpprof bench allreduce`: a backend's allreduce bandwidth (cpu unless
 * --backend says otherwise),
 * printed as nccl-tests does (algbw = bytes / time, busbw = algbw · 2(n−1)/n, GB = 1e9). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "src/cli.h"
#include "engine/launch/memory_budget.h"

typedef struct {
    int ranks, iters, warmup;
    const char *sizes, *backend;
} bench_args;

static const cli_option bench_option_table[] = {
    {CLI_INT(0, "ranks", bench_args, ranks, "N", 1, 64, "the ranks taking part (default 4; on cuda one GPU each)")},
    {CLI_STRING(0, "sizes", bench_args, sizes, "1M,25M,100M",
                "message sizes in bytes with optional K/M/G suffix (binary: 1M = 1048576)")},
    {CLI_INT(0, "iters", bench_args, iters, "N", 1, 100000, "timed allreduces per size (default 20)")},
    {CLI_INT(0, "warmup", bench_args, warmup, "N", 0, 100000, "untimed allreduces before them (default 3)")},
    {CLI_STRING(0, "backend", bench_args, backend, "cpu|cuda", "the backend to time (default cpu)")},
    {CLI_OPT_END},
};

const cli_command cli_bench_command = {
    .name = "bench",
    .forms = {{"allreduce", "allreduce bandwidth of a backend, as nccl-tests prints it"}},
    .options = bench_option_table,
};

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
    bench_args a = {.ranks = 4, .iters = 20, .warmup = 3, .sizes = "1M,25M,100M", .backend = "cpu"};
    cli_parsed parsed;
    int status = cli_options_parse(&cli_bench_command, argc, argv, &a, &parsed);
    const char *benchmark = cli_operand(&parsed, 0);
    if (status == EXIT_OK && (parsed.operands.n != 1 || strcmp(benchmark, "allreduce") != 0))
        status = cli_usage_error(&cli_bench_command, "bench: the one benchmark is 'allreduce'");
    cli_options_free(&cli_bench_command, &a, &parsed);
    if (status != EXIT_OK)
        return cli_parse_exit(status);
    const int ranks = a.ranks, iters = a.iters, warmup = a.warmup;
    const char *sizes = a.sizes, *backend = a.backend;
    char *list = strdup(sizes);
    if (!list)
        return EXIT_RUNTIME;
    int64_t sz[64];
    int nsz = 0;
    for (char *save, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (nsz == 64 || cli_parse_size(tok, &sz[nsz]) != 0) {
            int rc = cli_usage_error(&cli_bench_command,
                                     "--sizes: '%s' is not a size (e.g. 4K, 25M, 1G; at least 4 bytes)", tok);
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
        return cli_usage_error(&cli_bench_command, "--backend %s: not built into this ddpprof", backend);
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
