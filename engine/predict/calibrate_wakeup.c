/* calibrate_wakeup.c — forwards' wake-ups and stalls, backwards' stalls, stalls of the
 * hand-off between ops, and the host's wake after a step (calibrate_wakeup.h). */
#include "engine/predict/calibrate_wakeup.h"

#include "engine/predict/median.h"
#include "engine/cost/timing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Above what the excesses `ex` (k of them) are stalls: INFINITY when fewer than
 * MIN_STALLS lie beyond the median by STALL_MADS median absolute deviations.  Sorts ex;
 * `dev` is scratch of k. */
static double stall_threshold(double *ex, double *dev, size_t k)
{
    if (k == 0)
        return INFINITY;
    double med = median_sort(ex, k);
    for (size_t i = 0; i < k; i++)
        dev[i] = fabs(ex[i] - med);
    double mad = median_sort(dev, k);
    size_t body = k;
    while (body > 0 && ex[body - 1] > med + STALL_MADS * mad)
        body--;
    return mad > 0 && k - body >= MIN_STALLS ? med + STALL_MADS * mad : INFINITY;
}

double calib_write_ns(const run_span *o, const calib_run_costs *out)
{
    const calib_bandwidths *m = &out->memory;
    double gbps = m->ngrad_write ? m->grad_write_gbps : m->copy_in_gbps;
    return o->kind == SPAN_BACKWARD && gbps > 0 ? (double)o->bytes / gbps : 0;
}

bool calib_slept(const run_span *o, const calib_run_costs *out)
{
    return calib_write_ns(o, out) + TIMING_SLEEP_MIN_NS <= o->model_ns;
}

/* The excesses `ex` (k of them, ns) on either side of `threshold`: the body's sum, sum of
 * squares and count, the stalls' sum and count. */
typedef struct {
    double sum, sum2, stall_sum;
    size_t nbody, nstall;
} stall_split;

static stall_split split_at(const double *ex, size_t k, double threshold)
{
    stall_split p = {0};
    for (size_t i = 0; i < k; i++) {
        if (ex[i] > threshold) {
            p.stall_sum += ex[i];
            p.nstall++;
        } else {
            p.sum += ex[i];
            p.sum2 += ex[i] * ex[i];
            p.nbody++;
        }
    }
    return p;
}

/* The excesses `ex` (k of them, ns; sorted here) split into a body and stalls beyond
 * stall_threshold, in us: the body's mean and standard deviation, the stalls' share and
 * their mean beyond the body's.  Left as they are when the body is empty or its mean is
 * not above 0. */
static void split_stalls(double *ex, double *dev, size_t k, double *mean_us, double *sd_us, double *stall_fraction,
                         double *stall_us)
{
    stall_split p = split_at(ex, k, stall_threshold(ex, dev, k));
    if (p.nbody == 0 || p.sum <= 0)
        return;
    double mean = p.sum / (double)p.nbody, var = p.sum2 / (double)p.nbody - mean * mean;
    *mean_us = mean / 1e3;
    *sd_us = var > 0 ? sqrt(var) / 1e3 : 0;
    if (p.nstall > 0) {
        *stall_fraction = (double)p.nstall / (double)k;
        *stall_us = (p.stall_sum / (double)p.nstall - mean) / 1e3;
    }
}

int calib_stalls(double *ex, size_t k, double *fraction, double *stall_us)
{
    *fraction = *stall_us = 0;
    double *dev = malloc((k ? k : 1) * sizeof *dev);
    if (!dev)
        return -1;
    stall_split p = split_at(ex, k, stall_threshold(ex, dev, k));
    free(dev);
    if (p.nstall == 0 || p.nbody == 0)
        return 0;
    double beyond = p.stall_sum / (double)p.nstall - p.sum / (double)p.nbody;
    if (beyond > 0) {
        *fraction = (double)p.nstall / (double)k;
        *stall_us = beyond / 1e3;
    }
    return 0;
}

int calib_fit_wakeup(const run_span *s, size_t n, calib_run_costs *out)
{
    double *ex = malloc((n ? n : 1) * sizeof *ex), *dev = malloc((n ? n : 1) * sizeof *dev);
    if (!ex || !dev) {
        free(ex);
        free(dev);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i].stream == STREAM_COMPUTE && s[i].kind == SPAN_FORWARD && s[i].model_ns >= TIMING_SLEEP_MIN_NS)
            ex[out->nforward++] = (double)(s[i].end_ns - s[i].start_ns) - s[i].model_ns;
    split_stalls(ex, dev, out->nforward, &out->op_wakeup_us, &out->op_wakeup_sd_us, &out->op_stall_fraction,
                 &out->op_stall_us);
    free(ex);
    free(dev);
    return 0;
}

/* One rank's iteration: the end of its last compute op, the start of its first op. */
typedef struct {
    int64_t run;
    int rank, iter;
    int64_t last_compute_end, first_start;
    uint8_t last_kind; /* span_kind of the compute op that ends last */
} rank_iteration;

static int by_rank_iteration(const void *pa, const void *pb)
{
    const rank_iteration *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->iter > b->iter) - (a->iter < b->iter);
}

/* Every (run, rank, iteration) of the spans, in that order, each span folded into its own;
 * the count in *k, NULL when out of memory. */
static rank_iteration *rank_iterations(const run_span *s, size_t n, size_t *k)
{
    rank_iteration *it = malloc((n ? n : 1) * sizeof *it);
    if (!it)
        return NULL;
    for (size_t i = 0; i < n; i++)
        it[i] = (rank_iteration){s[i].run, s[i].rank, s[i].iter,
                                 s[i].stream == STREAM_COMPUTE ? s[i].end_ns : INT64_MIN, s[i].start_ns, s[i].kind};
    qsort(it, n, sizeof *it, by_rank_iteration);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && by_rank_iteration(&it[m - 1], &it[i]) == 0) {
            rank_iteration *g = &it[m - 1];
            if (it[i].last_compute_end > g->last_compute_end) {
                g->last_compute_end = it[i].last_compute_end;
                g->last_kind = it[i].last_kind;
            }
            g->first_start = it[i].first_start < g->first_start ? it[i].first_start : g->first_start;
        } else
            it[m++] = it[i];
    }
    *k = m;
    return it;
}

int calib_fit_host_wake(const run_span *s, size_t n, calib_run_costs *out)
{
    size_t k = 0;
    rank_iteration *it = rank_iterations(s, n, &k);
    double *ex = malloc((k ? k : 1) * sizeof *ex), *dev = malloc((k ? k : 1) * sizeof *dev);
    if (!it || !ex || !dev) {
        free(it);
        free(ex);
        free(dev);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 1; i < k; i++) {
        const rank_iteration *a = &it[i - 1], *b = &it[i];
        /* An iteration that kept its gradients ends with its last backward, and predict
         * draws no wake after it (sim_synchronize): nothing held the cores. */
        if (a->run == b->run && a->rank == b->rank && b->iter == a->iter + 1 && a->last_compute_end != INT64_MIN &&
            a->last_kind != SPAN_BACKWARD)
            ex[m++] = (double)(b->first_start - a->last_compute_end) - out->op_overhead_us * 1e3;
    }
    out->nhost_wake = m;
    split_stalls(ex, dev, m, &out->host_wake_us, &out->host_wake_sd_us, &out->host_wake_stall_fraction,
                 &out->host_wake_stall_us);
    free(it);
    free(ex);
    free(dev);
    return 0;
}

int calib_fit_backward_stalls(const run_span *s, size_t n, const bool *inside, calib_run_costs *out)
{
    double *ex = malloc((n ? n : 1) * sizeof *ex), *dev = malloc((n ? n : 1) * sizeof *dev);
    if (!ex || !dev) {
        free(ex);
        free(dev);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const run_span *o = &s[i];
        if (o->stream == STREAM_COMPUTE && o->kind == SPAN_BACKWARD && o->model_ns > 0 && !inside[i] &&
            calib_slept(o, out))
            ex[k++] = (double)(o->end_ns - o->start_ns) - o->model_ns;
    }
    out->nbackward = k;
    double threshold = stall_threshold(ex, dev, k);
    double stall_sum = 0;
    size_t nstall = 0;
    for (size_t i = 0; i < k; i++)
        if (ex[i] > threshold) {
            stall_sum += ex[i];
            nstall++;
        }
    free(ex);
    free(dev);
    if (nstall > 0) {
        double beyond = stall_sum / (double)nstall / 1e3 - out->op_wakeup_us;
        out->backward_stall_fraction = (double)nstall / (double)k;
        out->backward_stall_us = beyond > 0 ? beyond : 0;
    }
    return 0;
}

int calib_fit_gap_stalls(double *gaps, size_t k, calib_run_costs *out)
{
    double *dev = malloc((k ? k : 1) * sizeof *dev);
    if (!dev)
        return -1;
    double med = k ? median_sort(gaps, k) : 0;
    double threshold = stall_threshold(gaps, dev, k);
    free(dev);
    double beyond = 0;
    size_t nstall = 0;
    for (size_t i = 0; i < k; i++)
        if (gaps[i] > threshold) {
            beyond += gaps[i] - med;
            nstall++;
        }
    if (nstall > 0) {
        out->op_gap_stall_fraction = (double)nstall / (double)k;
        out->op_gap_stall_us = beyond / (double)nstall / 1e3;
    }
    return 0;
}
