/* cpu_bench_copy.c — the reducer's copy_in (scale = 1/world) and copy_out (scale = 1)
 * timed through cpu_work_run(), so that calibration measures the code a run executes,
 * with every copier on its own thread as ranks are.  Each copy reads and writes memory
 * the copier has not touched since the one before it (a window moving through a region
 * larger than the caches): in a run a bucket's copy meets memory that the backward, the
 * allreduce and the other ranks have pushed out of the caches, and a benchmark that
 * copied one small buffer over and over would time the caches instead. */
#include "engine/cpu/cpu_bench_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cpu/cpu_bench_threads.h"
#include "engine/cpu/cpu_collectives.h"
#include "engine/cpu/cpu_work.h"

/* Elements of each copier's source and destination region: 32 MiB, or the copy's size
 * if larger. */
#define COLD_REGION_ELEMS ((int64_t)8 << 20)

typedef struct {
    cpu_start_line *start;
    int64_t count, region; /* elements per copy; of each region */
    float scale;
    int iters, warmup;
    float *src, *dst;
    int64_t t_start, t_end;
    int rc;
    char err[256];
} copier;

static void *copier_main(void *arg)
{
    copier *c = arg;
    dev_op op = {.kind = SPAN_COPY_IN, .work = WORK_SCALE_COPY, .bytes = c->count * FP32_BYTES};
    op.u.copy.n = c->count;
    op.u.copy.scale = c->scale;
    cpu_scratch scratch = {0};
    if (cpu_start_line_wait(c->start) != 0) {
        c->rc = -1;
        return NULL;
    }
    for (int i = 0; i < c->warmup + c->iters && c->rc == 0; i++) {
        if (i == c->warmup)
            c->t_start = cpu_clock_ns();
        int64_t windows = c->region / c->count, at = (i % windows) * c->count;
        op.u.copy.dst = c->dst + at;
        op.u.copy.src = c->src + at;
        c->rc = cpu_work_run(&op, 0, &scratch, NULL, c->err, sizeof c->err);
    }
    c->t_end = cpu_clock_ns();
    cpu_scratch_free(&scratch);
    return NULL;
}

static int alloc_copier(copier *c, int64_t count)
{
    c->region = count > COLD_REGION_ELEMS ? count : COLD_REGION_ELEMS;
    c->src = malloc((size_t)c->region * sizeof(float));
    c->dst = malloc((size_t)c->region * sizeof(float));
    if (!c->src || !c->dst)
        return -1;
    for (int64_t i = 0; i < c->region; i++) {
        c->src[i] = (float)(i % 13) * 0.25f; /* no NaN or denormal to slow the multiply */
        c->dst[i] = 1.0f; /* not 0: malloc + zeroing may become calloc, leaving the pages unmapped */
    }
    return 0;
}

int cpu_bench_copy(int ranks, int64_t bytes, float scale, int iters, int warmup, double *us_per_copy, char *err,
                   size_t errlen)
{
    int64_t count = bytes / FP32_BYTES;
    if (ranks < 1 || count < 1 || iters < 1 || warmup < 0) {
        snprintf(err, errlen, "bench copy: want ranks >= 1, bytes >= 4, iters >= 1");
        return -1;
    }
    copier *cs = calloc((size_t)ranks, sizeof *cs);
    cpu_start_line start = CPU_START_LINE_INIT;
    int rc = 0;
    if (!cs) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto done;
    }
    for (int r = 0; r < ranks; r++) {
        cs[r] = (copier){.start = &start, .count = count, .scale = scale, .iters = iters, .warmup = warmup};
        if (alloc_copier(&cs[r], count) != 0) {
            snprintf(err, errlen, "out of memory for %lld-byte copy buffers", (long long)bytes);
            rc = -1;
            goto done;
        }
    }
    rc = cpu_bench_run_threads(ranks, copier_main, cs, sizeof *cs, &start, "copy", err, errlen);
    if (rc == 0) {
        double t_sum = 0;
        for (int r = 0; r < ranks; r++) {
            if (cs[r].rc != 0) {
                snprintf(err, errlen, "copier %d: %s", r, cs[r].err[0] ? cs[r].err : "failed");
                rc = -1;
                goto done;
            }
            t_sum += (double)(cs[r].t_end - cs[r].t_start) / iters;
        }
        *us_per_copy = t_sum / ranks / 1e3;
    }
done:
    if (cs)
        for (int r = 0; r < ranks; r++) {
            free(cs[r].src);
            free(cs[r].dst);
        }
    free(cs);
    return rc;
}
