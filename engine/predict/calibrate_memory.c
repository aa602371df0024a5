/* calibrate_memory.c — bandwidths of the memory-bound ops learned from measured runs
 * (calibrate_memory.h). */
#include "engine/predict/calibrate_memory.h"

#include "engine/predict/calibrate_share.h"
#include "engine/predict/median.h"

#include <stdlib.h>

/* Each span's time: with the cores shared, the core time it received (calibrate_share.h). */
static void shared_time(const run_span *s, size_t n, const host_load *load, double *time)
{
    for (size_t i = 0; i < n; i++)
        time[i] = calib_host_shared(&s[i]) ? host_load_core_time(load, s[i].run, s[i].start_ns, s[i].end_ns)
                                           : (double)(s[i].end_ns - s[i].start_ns);
}

/* Bytes moved over time by the compute-stream spans of `kind`, each moving `factor` x
 * its bytes (0: none). */
static double bandwidth_of(const run_span *s, const double *time, size_t n, span_kind kind, double factor,
                           size_t *count)
{
    double moved = 0, ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].kind != kind || s[i].stream != STREAM_COMPUTE || s[i].bytes <= 0)
            continue;
        moved += factor * (double)s[i].bytes;
        ns += time[i];
        (*count)++;
    }
    return ns > 0 ? moved / ns : 0;
}

/* The gradient writes' bandwidth: the median of bytes written over core time, over the
 * backwards bound by their write with no time inside their rank's collectives (where the
 * sums take the cores and the memory the write wants: comm_slowdown models that).  The
 * median, for a write's own speed: on cores shared with other ranks one write in a few is
 * held off the core for milliseconds (a 2 MB write took 64 us to 2 ms in the calibration
 * runs), which the wake-up stalls model.  The core time is the share of the host's cores
 * the write received, as for the copies: the sim shares the cores out to both. */
static int fit_grad_write(const run_span *s, const double *time, size_t n, const bool *inside, int64_t min_bytes,
                          calib_bandwidths *out)
{
    double *rate = malloc((n ? n : 1) * sizeof *rate);
    if (!rate)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (calib_write_bound(&s[i], min_bytes) && !inside[i])
            rate[k++] = s[i].write_bytes / time[i];
    out->ngrad_write = k;
    out->grad_write_gbps = k ? median_sort(rate, k) : 0;
    free(rate);
    return 0;
}

size_t calib_bandwidths_spans(const calib_bandwidths *b)
{
    return b->ncopy_in + b->ncopy_out + b->noptimizer + b->ngrad_write;
}

int calib_fit_memory(const run_span *s, size_t n, const bool *inside, const host_load *load, int64_t min_write_bytes,
                     calib_bandwidths *out)
{
    *out = (calib_bandwidths){0};
    double *time = calloc(n ? n : 1, sizeof *time);
    if (!time)
        return -1;
    shared_time(s, n, load, time);
    out->copy_in_gbps = bandwidth_of(s, time, n, SPAN_COPY_IN, 2.0, &out->ncopy_in);
    out->copy_out_gbps = bandwidth_of(s, time, n, SPAN_COPY_OUT, 2.0, &out->ncopy_out);
    out->optimizer_gbps = bandwidth_of(s, time, n, SPAN_OPTIMIZER, 3.0, &out->noptimizer);
    int rc = fit_grad_write(s, time, n, inside, min_write_bytes, out);
    free(time);
    return rc;
}
