/* gen_long_run.c — writes one long synthetic run into a results database through
 * the store (profiler/store.h), the way a GPU run's writer would: RANKS x ITERS
 * iterations of a model with LAYERS layers, each rank-iteration about
 * 3 * LAYERS + LAYERS / 16 * 2 + 2 spans (forward and backward kernels, a copy into
 * the bucket per layer, an allreduce and an optimizer kernel per bucket of 16
 * layers, a host wait), ranks skewed so the collectives have stragglers.  Prints
 * spans written per second (the store's write path alone, batches of 8192 spans in
 * one transaction each, then the run's end) and bytes per span of the file.
 *
 *   gen_long_run DB [ranks] [iterations] [layers]      (default 8 1000 400)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "profiler/store.h"

#define BATCH 8192
#define LAYERS_PER_BUCKET 16

/* CPU seconds of this process (user + system): a figure a loaded machine disturbs
 * less than wall time. */
static double cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct {
    store *st;
    int64_t run_id;
    span *batch;
    size_t n;
    int64_t total;
    char err[512];
} writer;

static int flush(writer *w)
{
    if (w->n && store_write_spans(w->st, w->run_id, w->batch, w->n, w->err, sizeof w->err) != 0)
        return -1;
    w->total += (int64_t)w->n;
    w->n = 0;
    return 0;
}

static int add(writer *w, int rank, int iter, span_stream stream, span_kind kind, const char *name,
               int layer, int bucket, int64_t seq, int64_t bytes, int64_t start, int64_t end)
{
    span *s = &w->batch[w->n++];
    *s = (span){.rank = rank, .iter = iter, .stream = (uint8_t)stream, .kind = (uint8_t)kind,
                .layer = layer, .bucket = bucket, .seq = seq, .bytes = bytes, .start_ns = start,
                .end_ns = end};
    snprintf(s->name, sizeof s->name, "%s", name);
    return w->n == BATCH ? flush(w) : 0;
}

/* One rank's iteration; `t` is where its step starts, returns where it ends.  The
 * allreduce of bucket b starts at this rank's arrival and ends when the last rank
 * (the slowest: ready times scale with 1/speed) has arrived and the transfer is done. */
static int64_t rank_iteration(writer *w, int rank, int iter, int layers, double speed, int64_t t,
                              int64_t step_origin, const char (*names)[32], int ok[1])
{
    int nb = (layers + LAYERS_PER_BUCKET - 1) / LAYERS_PER_BUCKET;
    int64_t fwd = (int64_t)(40000 / speed), bwd = 2 * fwd, copy = 3000, ar = 250000;
    for (int l = 0; l < layers && ok[0]; l++, t += fwd)
        ok[0] = add(w, rank, iter, STREAM_COMPUTE, SPAN_FORWARD, names[l], l, -1, -1, 0, t, t + fwd) == 0;
    int64_t comm_free = 0;
    for (int b = 0; b < nb && ok[0]; b++) {
        for (int k = 0; k < LAYERS_PER_BUCKET; k++) {
            int l = layers - 1 - (b * LAYERS_PER_BUCKET + k);
            if (l < 0)
                break;
            ok[0] = add(w, rank, iter, STREAM_COMPUTE, SPAN_BACKWARD, names[l], l, -1, -1, 0, t, t + bwd) == 0 &&
                    add(w, rank, iter, STREAM_COMPUTE, SPAN_COPY_IN, names[l], l, b, -1, 4096, t + bwd,
                        t + bwd + copy) == 0;
            t += bwd + copy;
        }
        /* Every rank's ready time for bucket b, from the slowest rank's pace. */
        int64_t slow_ready = step_origin + (int64_t)((t - step_origin) * speed / 0.8);
        int64_t arrive = t > comm_free ? t : comm_free;
        int64_t last = slow_ready > arrive ? slow_ready : arrive;
        comm_free = last + ar;
        ok[0] = ok[0] && add(w, rank, iter, STREAM_COMM, SPAN_ALLREDUCE, "allreduce", -1, b,
                             (int64_t)iter * nb + b, 25 << 20, arrive, comm_free) == 0;
    }
    int64_t end_bwd = t > comm_free ? t : comm_free;
    for (int b = 0; b < nb && ok[0]; b++, end_bwd += 20000)
        ok[0] = add(w, rank, iter, STREAM_COMPUTE, SPAN_OPTIMIZER, "sgd step", -1, b, -1, 0, end_bwd,
                    end_bwd + 20000) == 0;
    ok[0] = ok[0] && add(w, rank, iter, STREAM_HOST, SPAN_WAIT, "end of step", -1, -1, -1, 0, t, end_bwd) == 0;
    return end_bwd;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gen_long_run DB [ranks] [iterations] [layers]\n");
        return 2;
    }
    int ranks = argc > 2 ? atoi(argv[2]) : 8, iters = argc > 3 ? atoi(argv[3]) : 1000;
    int layers = argc > 4 ? atoi(argv[4]) : 400;
    if (ranks < 1 || ranks > 1024 || iters < 1 || layers < 1 || layers > 100000) {
        fprintf(stderr, "gen_long_run: bad sizes\n");
        return 2;
    }
    writer w = {0};
    w.batch = malloc(BATCH * sizeof *w.batch);
    double *speed = malloc(ranks * sizeof *speed);
    char (*names)[32] = malloc((size_t)layers * sizeof *names);
    if (!w.batch || !speed || !names)
        return 1;
    for (int l = 0; l < layers; l++)
        snprintf(names[l], sizeof names[l], "block%d.conv%d", l / 3, l % 3);
    for (int r = 0; r < ranks; r++)
        speed[r] = r < ranks / 2 ? 1.0 : 0.8;
    if (store_open(argv[1], &w.st, w.err, sizeof w.err) != 0) {
        fprintf(stderr, "gen_long_run: %s\n", w.err);
        return 1;
    }
    store_run_info info = {.name = "long run", .source = "bench/gen_long_run.c", .scenario_ini = "",
                           .backend = "synthetic", .model = "synthetic", .world_size = ranks,
                           .iterations = iters - 1, .warmup = 1, .total_params = layers,
                           .bucket_cap_mb = 25, .rank_speed = speed};
    if (store_begin_run(w.st, &info, &w.run_id, w.err, sizeof w.err) != 0) {
        fprintf(stderr, "gen_long_run: %s\n", w.err);
        return 1;
    }
    double t0 = now_s(), c0 = cpu_s();
    int64_t step_origin = 0;
    int ok[1] = {1};
    for (int it = 0; it < iters && ok[0]; it++) {
        int64_t step_end = 0;
        for (int r = 0; r < ranks && ok[0]; r++) {
            int64_t end = rank_iteration(&w, r, it, layers, speed[r], step_origin, step_origin,
                                         (const char (*)[32])names, ok);
            if (end > step_end)
                step_end = end;
        }
        step_origin = step_end + 100000;
    }
    if (!ok[0] || flush(&w) != 0) {
        fprintf(stderr, "gen_long_run: %s\n", w.err);
        return 1;
    }
    double t1 = now_s(), c1 = cpu_s();
    if (store_finish_run(w.st, w.run_id, NULL, w.err, sizeof w.err) != 0) {
        fprintf(stderr, "gen_long_run: %s\n", w.err);
        return 1;
    }
    double t2 = now_s(), c2 = cpu_s();
    store_close(w.st);
    struct stat sb;
    int64_t bytes = stat(argv[1], &sb) == 0 ? (int64_t)sb.st_size : 0;
    printf("spans written: %" PRId64 " (%d ranks x %d iterations x %.0f per step)\n", w.total, ranks, iters,
           (double)w.total / ranks / iters);
    printf("write: %.2f s, %.0f spans/s; end of run (statistics): %.2f s; overall %.0f spans/s\n", t1 - t0,
           w.total / (t1 - t0), t2 - t1, w.total / (t2 - t0));
    printf("cpu: write %.2f s (%.0f spans per cpu-second), end of run %.2f s\n", c1 - c0,
           w.total / (c1 - c0 > 0 ? c1 - c0 : 1e-9), c2 - c1);
    printf("database: %" PRId64 " bytes, %.1f bytes per span\n", bytes, (double)bytes / (double)w.total);
    free(w.batch);
    free(speed);
    free(names);
    return 0;
}
