/* calibrate_exit.c — late exits from waited-for collectives on a crowded host, from
 * measured spans (calibrate_exit.h). */
#include "calibrate_exit.h"

#include <math.h>
#include <stdbool.h>

/* Whether rank `rank` of run `run` has no compute span meeting [from, to): `s` in
 * calib_run_fit's order, where a stream's spans follow one another, so their ends rise
 * with their starts and the first one ending after `from` is the only candidate. */
static bool compute_idle(const run_span *s, size_t n, int64_t run, int rank, int64_t from, int64_t to)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const run_span *m = &s[mid];
        bool before = m->run != run        ? m->run < run
                      : m->stream != STREAM_COMPUTE ? m->stream < STREAM_COMPUTE
                      : m->rank != rank    ? m->rank < rank
                                           : m->end_ns <= from;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n)
        return true;
    const run_span *f = &s[lo];
    return f->run != run || f->stream != STREAM_COMPUTE || f->rank != rank || f->start_ns >= to;
}

void calib_fit_comm_exit(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out)
{
    double sum = 0, sum2 = 0;
    size_t looked = 0, late = 0;
    for (size_t i = 0; i < nc;) {
        size_t j = i, first = i;
        int64_t last_arrival = c[i].start_ns;
        while (j < nc && c[j].run == c[i].run && c[j].seq == c[i].seq) {
            last_arrival = c[j].start_ns > last_arrival ? c[j].start_ns : last_arrival;
            if (c[j].end_ns < c[first].end_ns)
                first = j;
            j++;
        }
        bool crowded = out->host_cores > 0 && c[i].world > out->host_cores;
        bool bucket_allreduce = c[i].kind == SPAN_ALLREDUCE && c[i].bucket >= 0 && c[i].bytes > 0;
        int64_t first_end = c[first].end_ns;
        for (size_t k = i; crowded && bucket_allreduce && (int)(j - i) == c[i].world && k < j; k++) {
            if (k == first || !compute_idle(s, n, c[k].run, c[k].rank, last_arrival, first_end))
                continue;
            looked++;
            double lag = (double)(c[k].end_ns - first_end);
            if (lag > CALIB_EXIT_LATE_NS) {
                late++;
                sum += lag;
                sum2 += lag * lag;
            }
        }
        i = j;
    }
    out->nexit = looked;
    if (looked == 0 || late == 0)
        return;
    double mean = sum / (double)late, var = sum2 / (double)late - mean * mean;
    out->comm_exit_late_fraction = (double)late / (double)looked;
    out->comm_exit_late_us = mean / 1e3;
    out->comm_exit_late_sd_us = var > 0 ? sqrt(var) / 1e3 : 0;
}
