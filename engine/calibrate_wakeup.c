/* calibrate_wakeup.c — forwards' wake-ups and stalls, backwards' stalls, stalls of the
 * hand-off between ops (calibrate_wakeup.h). */
#include "calibrate_wakeup.h"

#include "median.h"
#include "timing.h"

#include <math.h>
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
    size_t k = out->nforward;
    double threshold = stall_threshold(ex, dev, k);
    double sum = 0, sum2 = 0, stall_sum = 0;
    size_t nbody = 0, nstall = 0;
    for (size_t i = 0; i < k; i++) {
        if (ex[i] > threshold) {
            stall_sum += ex[i];
            nstall++;
        } else {
            sum += ex[i];
            sum2 += ex[i] * ex[i];
            nbody++;
        }
    }
    free(ex);
    free(dev);
    if (nbody == 0 || sum <= 0)
        return 0;
    double mean = sum / (double)nbody, var = sum2 / (double)nbody - mean * mean;
    out->op_wakeup_us = mean / 1e3;
    out->op_wakeup_sd_us = var > 0 ? sqrt(var) / 1e3 : 0;
    if (nstall > 0) {
        out->op_stall_fraction = (double)nstall / (double)k;
        out->op_stall_us = (stall_sum / (double)nstall - mean) / 1e3;
    }
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
