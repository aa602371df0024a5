/* calibrate_launch.c — an idle comm stream's late start, from measured spans
 * (calibrate_launch.h). */
#include "engine/predict/calibrate_launch.h"

#include "engine/predict/calibrate_share.h"
#include "engine/cost/timing.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* When a bucket's gradients were all in, on one rank in one iteration. */
typedef struct {
    int64_t run;
    int rank, iter, bucket;
    int64_t ready_ns;
} bucket_ready;

static int by_key(const void *pa, const void *pb)
{
    const bucket_ready *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->iter != b->iter)
        return a->iter < b->iter ? -1 : 1;
    return (a->bucket > b->bucket) - (a->bucket < b->bucket);
}

/* The end of each bucket's last copy in, per run, rank and iteration, sorted by_key. */
static bucket_ready *ready_times(const run_span *s, size_t n, size_t *nready)
{
    bucket_ready *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].stream == STREAM_COMPUTE && s[i].kind == SPAN_COPY_IN && s[i].bucket >= 0)
            r[k++] = (bucket_ready){s[i].run, s[i].rank, s[i].iter, s[i].bucket, s[i].end_ns};
    qsort(r, k, sizeof *r, by_key);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && by_key(&r[m - 1], &r[i]) == 0) {
            if (r[i].ready_ns > r[m - 1].ready_ns)
                r[m - 1].ready_ns = r[i].ready_ns;
        } else {
            r[m++] = r[i];
        }
    }
    *nready = m;
    return r;
}

/* A copy, step or write-bound backward of a run, on its host's cores. */
typedef struct {
    int64_t run, start_ns, end_ns;
    int rank;
} host_op;

static int by_run_start(const void *pa, const void *pb)
{
    const host_op *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The ops on the host's cores, sorted by_run_start, and the longest of them. */
typedef struct {
    host_op *ops;
    size_t n;
    int64_t longest_ns;
} host_ops;

static int host_ops_collect(const run_span *s, size_t n, host_ops *out)
{
    *out = (host_ops){malloc((n ? n : 1) * sizeof *out->ops), 0, 0};
    if (!out->ops)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!calib_host_shared(&s[i]))
            continue;
        out->ops[out->n++] = (host_op){s[i].run, s[i].start_ns, s[i].end_ns, s[i].rank};
        if (s[i].end_ns - s[i].start_ns > out->longest_ns)
            out->longest_ns = s[i].end_ns - s[i].start_ns;
    }
    qsort(out->ops, out->n, sizeof *out->ops, by_run_start);
    return 0;
}

/* How many ops of run `run`'s ranks but `rank` were running at t. */
static int others_running_at(const host_ops *h, int64_t run, int rank, int64_t t)
{
    size_t lo = 0, hi = h->n; /* the first op after (run, t) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const host_op *o = &h->ops[mid];
        if (o->run < run || (o->run == run && o->start_ns <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    int running = 0;
    for (size_t i = lo; i-- > 0;) {
        const host_op *o = &h->ops[i];
        if (o->run != run || o->start_ns < t - h->longest_ns)
            break;
        running += o->rank != rank && o->end_ns > t;
    }
    return running;
}

static int by_run_rank_start(const void *pa, const void *pb)
{
    const host_op *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/* The same ops sorted by_run_rank_start: each rank's own, in order. */
static int own_ops_sort(const host_ops *all, host_ops *out)
{
    *out = (host_ops){malloc((all->n ? all->n : 1) * sizeof *out->ops), all->n, all->longest_ns};
    if (!out->ops)
        return -1;
    memcpy(out->ops, all->ops, all->n * sizeof *out->ops);
    qsort(out->ops, out->n, sizeof *out->ops, by_run_rank_start);
    return 0;
}

/* The end of the run of ops on the host's cores that rank `rank` of run `run` went
 * straight on to after `ready` (its next such op starting within TIMING_GOES_ON_NS, and
 * each after it within that of the one before); -1 when it did not go on. */
static int64_t own_run_end(const host_ops *own, int64_t run, int rank, int64_t ready)
{
    size_t lo = 0, hi = own->n; /* the first op of (run, rank) starting at or after ready */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const host_op *o = &own->ops[mid];
        if (o->run < run || (o->run == run && (o->rank < rank || (o->rank == rank && o->start_ns < ready))))
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t end = ready;
    for (size_t i = lo; i < own->n; i++) {
        const host_op *o = &own->ops[i];
        if (o->run != run || o->rank != rank || o->start_ns > end + TIMING_GOES_ON_NS)
            break;
        end = o->end_ns > end ? o->end_ns : end;
    }
    return end > ready ? end : -1;
}

/* Sums for the least-squares line delay = a + b x (x: the others' ops running). */
typedef struct {
    double n, x, y, xx, xy, yy;
} line_sums;

static void line_add(line_sums *l, double x, double y)
{
    l->n += 1;
    l->x += x;
    l->y += y;
    l->xx += x * x;
    l->xy += x * y;
    l->yy += y * y;
}

/* The line's intercept and slope (the slope not below 0: none, the mean alone) and the
 * residuals' standard deviation. */
static void line_fit(const line_sums *l, double *a, double *b, double *sd)
{
    double sxx = l->xx - l->x * l->x / l->n, sxy = l->xy - l->x * l->y / l->n, syy = l->yy - l->y * l->y / l->n;
    *b = sxx > 0 && sxy > 0 ? sxy / sxx : 0;
    *a = (l->y - *b * l->x) / l->n;
    double rss = syy - *b * sxy; /* the least-squares line's, or the mean's when b = 0 */
    *sd = rss > 0 ? sqrt(rss / l->n) : 0;
}

int calib_fit_comm_launch(const run_span *s, size_t n, calib_run_costs *out)
{
    size_t nready;
    bucket_ready *ready = ready_times(s, n, &nready);
    host_ops busy = {0}, own = {0};
    if (!ready || host_ops_collect(s, n, &busy) != 0 || own_ops_sort(&busy, &own) != 0) {
        free(ready);
        free(busy.ops);
        return -1;
    }
    line_sums line = {0};
    size_t beside_ops = 0, goes_on = 0, behind = 0;
    double held_ns = 0; /* the holds seen: the run for those behind it, the delay for the others */
    for (size_t i = 0; i < n; i++) {
        const run_span *a = &s[i];
        if (a->stream != STREAM_COMM || a->kind != SPAN_ALLREDUCE || a->bucket < 0)
            continue;
        bucket_ready key = {a->run, a->rank, a->iter, a->bucket, 0};
        const bucket_ready *r = bsearch(&key, ready, nready, sizeof *ready, by_key);
        if (!r || a->start_ns < r->ready_ns)
            continue;
        const run_span *prev = i > 0 ? &s[i - 1] : NULL;
        bool same_stream = prev && prev->run == a->run && prev->stream == STREAM_COMM && prev->rank == a->rank;
        if (same_stream && prev->end_ns > r->ready_ns)
            continue; /* still busy when the bucket was ready: queued, not woken */
        int64_t run_end = out->host_cores > 0 ? own_run_end(&own, a->run, a->rank, r->ready_ns) : -1;
        if (run_end >= 0) {
            goes_on++;
            if (a->start_ns >= run_end) {
                behind++;
                held_ns += (double)(run_end - r->ready_ns);
                continue; /* held by its compute's run, not a draw of the line */
            }
            held_ns += (double)(a->start_ns - r->ready_ns);
        }
        bool crowded = out->host_cores > 0 && a->world > out->host_cores;
        int running = crowded ? others_running_at(&busy, a->run, a->rank, r->ready_ns) : 0;
        beside_ops += running > 0;
        line_add(&line, running, (double)(a->start_ns - r->ready_ns));
    }
    free(ready);
    free(busy.ops);
    free(own.ops);
    out->nlaunch = (size_t)line.n + behind;
    out->nlaunch_beside_ops = beside_ops;
    out->nlaunch_goes_on = goes_on;
    out->nlaunch_behind = behind;
    /* An exponential hold, censored where the run ended first: its likelihood's maximum is
     * the holds seen over the holds that ended (with none, as if the next one would). */
    size_t ended = goes_on - behind;
    out->comm_launch_behind_us = goes_on ? held_ns / (double)(ended ? ended : 1) / 1e3 : 0;
    if (line.n == 0)
        return 0;
    double at_idle, per_op, sd;
    line_fit(&line, &at_idle, &per_op, &sd);
    double beyond = at_idle / 1e3 - out->op_overhead_us;
    out->comm_launch_us = beyond > 0 ? beyond : 0;
    out->comm_launch_sd_us = sd / 1e3;
    out->comm_launch_per_op_us = per_op / 1e3;
    return 0;
}
