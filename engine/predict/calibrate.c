/* calibrate.c — runs the measurements of a calibration plan through a backend's
 * benchmarks (calibrate.h). */
#include "engine/predict/calibrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/memory_budget.h"

static int max_ranks(const calib_plan *p)
{
    int m = 0;
    for (size_t i = 0; i < p->nranks; i++)
        if (p->ranks[i] > m)
            m = p->ranks[i];
    return m;
}

/* Every point's buffers against the memory available now, before anything runs. */
static int check_memory(const calib_plan *p, char *err, size_t errlen)
{
    char what[96], detail[96];
    for (size_t r = 0; r < p->nranks; r++)
        for (size_t s = 0; s < p->nsizes; s++) {
            snprintf(what, sizeof what, "calibrate allreduce of %lld bytes", (long long)p->sizes[s]);
            snprintf(detail, sizeof detail, "%d ranks x one buffer each", p->ranks[r]);
            if (memory_check(memory_bench_estimate(p->ranks[r], p->sizes[s]), what, detail, err, errlen) != 0)
                return -1;
        }
    int copiers = max_ranks(p);
    for (size_t s = 0; s < p->ncopy; s++) {
        snprintf(what, sizeof what, "calibrate copy of %lld bytes", (long long)p->copy_sizes[s]);
        snprintf(detail, sizeof detail, "%d copiers x a source and a destination region of 32 MiB or more", copiers);
        int64_t region = p->copy_sizes[s] > ((int64_t)32 << 20) ? p->copy_sizes[s] : ((int64_t)32 << 20);
        if (memory_check(2.0 * memory_bench_estimate(copiers, region), what, detail, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `reps` timings (each the mean over the plan's iterations): on a
 * machine shared with other work, one disturbed repetition does not move it. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int measure_allreduce(const calib_plan *p, calib_data *d, FILE *progress, char *err, size_t errlen)
{
    for (size_t r = 0; r < p->nranks; r++)
        for (size_t s = 0; s < p->nsizes; s++) {
            double t[CALIB_MAX_REPEATS];
            for (int k = 0; k < p->repeats; k++)
                if (p->be->bench_allreduce(p->ranks[r], p->sizes[s], p->iters, p->warmup, &t[k], err, errlen) != 0)
                    return -1;
            double us = median(t, p->repeats);
            d->ar[d->nar++] = (ring_sample){.bytes = p->sizes[s], .ranks = p->ranks[r], .us = us};
            if (progress) {
                fprintf(progress, "  allreduce %2d ranks %12lld bytes: %12.1f us\n", p->ranks[r],
                        (long long)p->sizes[s], us);
                fflush(progress);
            }
        }
    return 0;
}

static int measure_copies(const calib_plan *p, calib_data *d, FILE *progress, char *err, size_t errlen)
{
    int copiers = max_ranks(p);
    for (int k = 0; k < 2; k++)
        for (size_t s = 0; s < p->ncopy; s++) {
            /* copy-in divides by the world size on the way into the bucket */
            float scale = k == CALIB_COPY_IN ? 1.0f / (float)copiers : 1.0f;
            double t[CALIB_MAX_REPEATS];
            for (int r = 0; r < p->repeats; r++)
                if (p->be->bench_copy(copiers, p->copy_sizes[s], scale, p->iters, p->warmup, &t[r], err, errlen) != 0)
                    return -1;
            double us = median(t, p->repeats);
            d->cp[d->ncp++] = (calib_copy){.kind = (calib_copy_kind)k, .copiers = copiers,
                                           .bytes = p->copy_sizes[s], .us = us};
            if (progress) {
                fprintf(progress, "  %s %2d copiers %12lld bytes: %12.1f us\n", k == CALIB_COPY_IN ? "copy-in " : "copy-out",
                        copiers, (long long)p->copy_sizes[s], us);
                fflush(progress);
            }
        }
    return 0;
}

static int measure_dispatch(const calib_plan *p, calib_data *d, FILE *progress, char *err, size_t errlen)
{
    int ranks = max_ranks(p);
    const int64_t model_ns[2] = {0, CALIB_DISPATCH_MODEL_NS};
    double *out[2] = {&d->dispatch_us, &d->timed_dispatch_us};
    for (int k = 0; k < 2; k++) {
        double t[CALIB_MAX_REPEATS];
        for (int r = 0; r < p->repeats; r++)
            if (p->be->bench_dispatch(ranks, model_ns[k], CALIB_DISPATCH_OPS, CALIB_DISPATCH_WARMUP, &t[r], err,
                                      errlen) != 0)
                return -1;
        *out[k] = median(t, p->repeats);
        if (progress) {
            fprintf(progress, "  dispatch %2d ranks, ops of %lld us: %12.1f us per op beyond the model\n", ranks,
                    (long long)(model_ns[k] / 1000), *out[k]);
            fflush(progress);
        }
    }
    d->dispatchers = ranks;
    d->dispatch_measured = true;
    return 0;
}

int calib_measure(const calib_plan *p, calib_data *d, FILE *progress, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (p->nranks == 0 || p->nsizes == 0 || p->nranks > CALIB_MAX_POINTS || p->nsizes > CALIB_MAX_POINTS ||
        p->ncopy > CALIB_MAX_POINTS || p->iters < 1 || p->repeats < 1 || p->repeats > CALIB_MAX_REPEATS) {
        snprintf(err, errlen, "calibrate: want 1..%d world sizes and sizes, at least one iteration and 1..%d "
                 "repeats", CALIB_MAX_POINTS, CALIB_MAX_REPEATS);
        return -1;
    }
    if (check_memory(p, err, errlen) != 0)
        return -1;
    if (measure_allreduce(p, d, progress, err, errlen) != 0)
        return -1;
    if (p->be->bench_dispatch && measure_dispatch(p, d, progress, err, errlen) != 0)
        return -1;
    if (p->ncopy == 0) {
        snprintf(d->copies_skipped, sizeof d->copies_skipped, "no copy sizes asked for");
        return 0;
    }
    if (p->be->bench_copy == NULL) {
        snprintf(d->copies_skipped, sizeof d->copies_skipped, "the %s backend cannot time its copies",
                 p->be->name);
        return 0;
    }
    if (measure_copies(p, d, progress, err, errlen) != 0)
        return -1;
    d->copies_measured = true;
    return 0;
}
