/* calibrate_exit.c — late exits from waited-for collectives on a crowded host, from
 * measured spans (calibrate_exit.h). */
#include "engine/predict/calibrate_exit.h"

#include <math.h>
#include <stdbool.h>

/* The first compute span of rank `rank` of run `run` that ends after `t`, or NULL: `s` in
 * calib_run_fit's order, where a stream's spans follow one another, so their ends rise
 * with their starts. */
static const run_span *compute_ending_after(const run_span *s, size_t n, int64_t run, int rank, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const run_span *m = &s[mid];
        bool before = m->run != run        ? m->run < run
                      : m->stream != STREAM_COMPUTE ? m->stream < STREAM_COMPUTE
                      : m->rank != rank    ? m->rank < rank
                                           : m->end_ns <= t;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || s[lo].run != run || s[lo].stream != STREAM_COMPUTE || s[lo].rank != rank)
        return NULL;
    return &s[lo];
}

/* Whether rank `rank` of run `run` has no compute span meeting [from, to). */
static bool compute_idle(const run_span *s, size_t n, int64_t run, int rank, int64_t from, int64_t to)
{
    const run_span *f = compute_ending_after(s, n, run, rank, from);
    return !f || f->start_ns >= to;
}

/* Late draws: how many were looked at, and the sums of those beyond CALIB_EXIT_LATE_NS. */
typedef struct {
    size_t looked, late;
    double sum, sum2;
} late_tally;

static void tally(late_tally *t, double lag)
{
    t->looked++;
    if (lag > CALIB_EXIT_LATE_NS) {
        t->late++;
        t->sum += lag;
        t->sum2 += lag * lag;
    }
}

/* The late share, mean and standard deviation in us (all 0 when none was late). */
static void tally_result(const late_tally *t, double *fraction, double *mean_us, double *sd_us)
{
    *fraction = *mean_us = *sd_us = 0;
    if (t->looked == 0 || t->late == 0)
        return;
    double mean = t->sum / (double)t->late, var = t->sum2 / (double)t->late - mean * mean;
    *fraction = (double)t->late / (double)t->looked;
    *mean_us = mean / 1e3;
    *sd_us = var > 0 ? sqrt(var) / 1e3 : 0;
}

/* The end of the group of comm spans of one collective starting at c[i]. */
static size_t group_end(const run_span *c, size_t nc, size_t i)
{
    size_t j = i;
    while (j < nc && c[j].run == c[i].run && c[j].seq == c[i].seq)
        j++;
    return j;
}

static bool is_bucket_allreduce(const run_span *c)
{
    return c->kind == SPAN_ALLREDUCE && c->bucket >= 0 && c->bytes > 0;
}

static bool crowded(const run_span *c, const calib_run_costs *out)
{
    return out->host_cores > 0 && c->world > out->host_cores;
}

void calib_fit_comm_exit(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out)
{
    late_tally t = {0};
    for (size_t i = 0, j; i < nc; i = j) {
        j = group_end(c, nc, i);
        size_t first = i;
        int64_t last_arrival = c[i].start_ns;
        for (size_t k = i; k < j; k++) {
            last_arrival = c[k].start_ns > last_arrival ? c[k].start_ns : last_arrival;
            if (c[k].end_ns < c[first].end_ns)
                first = k;
        }
        if (!crowded(&c[i], out) || !is_bucket_allreduce(&c[i]) || (int)(j - i) != c[i].world)
            continue;
        for (size_t k = i; k < j; k++)
            if (k != first && compute_idle(s, n, c[k].run, c[k].rank, last_arrival, c[first].end_ns))
                tally(&t, (double)(c[k].end_ns - c[first].end_ns));
    }
    out->nexit = t.looked;
    tally_result(&t, &out->comm_exit_late_fraction, &out->comm_exit_late_us, &out->comm_exit_late_sd_us);
}

/* Whether the bucket allreduce group at c[i] (ending at j) is its iteration's last: no
 * bucket allreduce of the same run and iteration follows. */
static bool last_of_iteration(const run_span *c, size_t nc, size_t i, size_t j)
{
    for (; j < nc && c[j].run == c[i].run && c[j].iter == c[i].iter; j = group_end(c, nc, j))
        if (is_bucket_allreduce(&c[j]))
            return false;
    return true;
}

void calib_fit_compute_wake(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out)
{
    late_tally t = {0};
    for (size_t i = 0, j; i < nc; i = j) {
        j = group_end(c, nc, i);
        if (!crowded(&c[i], out) || !is_bucket_allreduce(&c[i]) || !last_of_iteration(c, nc, i, j))
            continue;
        for (size_t k = i; k < j; k++) {
            const run_span *next = compute_ending_after(s, n, c[k].run, c[k].rank, c[k].end_ns);
            if (next && next->start_ns >= c[k].end_ns)
                tally(&t, (double)(next->start_ns - c[k].end_ns));
        }
    }
    out->nwake = t.looked;
    tally_result(&t, &out->compute_wake_late_fraction, &out->compute_wake_late_us, &out->compute_wake_late_sd_us);
}
