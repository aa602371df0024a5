/* calibrate_run.c — per-op costs learned from a measured run's spans (calibrate_run.h). */
#include "engine/predict/calibrate_run.h"

#include "engine/predict/calibrate_exit.h"
#include "engine/predict/calibrate_launch.h"
#include "engine/predict/calibrate_memory.h"
#include "engine/predict/calibrate_share.h"
#include "engine/predict/calibrate_table.h"
#include "engine/predict/calibrate_wakeup.h"
#include "engine/predict/calibrate_weight.h"
#include "engine/predict/median.h"

#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int by_place(const void *pa, const void *pb)
{
    const run_span *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}


/* Whether compute spans a and b follow each other on one rank's stream in one iteration,
 * both of `kind`. */
static bool consecutive(const run_span *a, const run_span *b, span_kind kind)
{
    return a->run == b->run && a->rank == b->rank && a->iter == b->iter && a->stream == STREAM_COMPUTE &&
           b->stream == STREAM_COMPUTE && a->kind == kind && b->kind == kind && b->start_ns >= a->end_ns;
}

/* Whether b follows a copy or step a on one rank's compute stream in one iteration, queued
 * behind it: every such pair but the last copy in and the first copy out, between which
 * the stream waits for the last allreduce. */
static bool behind_busy(const run_span *a, const run_span *b)
{
    bool busy = a->kind == SPAN_COPY_IN || a->kind == SPAN_COPY_OUT || a->kind == SPAN_OPTIMIZER;
    return busy && a->run == b->run && a->rank == b->rank && a->iter == b->iter && a->stream == STREAM_COMPUTE &&
           b->stream == STREAM_COMPUTE && b->start_ns >= a->end_ns &&
           !(a->kind == SPAN_COPY_IN && b->kind == SPAN_COPY_OUT);
}

/* Needs the spans in by_place order: a rank's compute spans by start.  The hand-off after
 * a forward (which sleeps) from the gaps between forwards, the median; after a copy or
 * step its worker ran on its core from the gaps behind those, the mean, with the times
 * the worker was held off its core or its host had not enqueued the next op yet. */
static int fit_overhead(const run_span *s, size_t n, calib_run_costs *out)
{
    double *gaps = malloc((n ? n : 1) * sizeof *gaps);
    if (!gaps)
        return -1;
    double busy_sum = 0;
    for (size_t i = 1; i < n; i++) {
        const run_span *a = &s[i - 1], *b = &s[i];
        if (consecutive(a, b, SPAN_FORWARD))
            gaps[out->ngaps++] = (double)(b->start_ns - a->end_ns);
        if (behind_busy(a, b)) {
            busy_sum += (double)(b->start_ns - a->end_ns);
            out->nbusy_gaps++;
        }
    }
    if (out->nbusy_gaps > 0)
        out->op_overhead_busy_us = busy_sum / (double)out->nbusy_gaps / 1e3;
    int rc = 0;
    if (out->ngaps > 0) {
        out->op_overhead_us = median_sort(gaps, out->ngaps) / 1e3; /* sorts gaps */
        rc = calib_fit_gap_stalls(gaps, out->ngaps, out);
    }
    free(gaps);
    return rc;
}

/* A span of a rank's comm stream while its collective moved data. */
typedef struct {
    int64_t run;
    int rank;
    int64_t from_ns, to_ns;
} busy_interval;

static int by_rank_time(const void *pa, const void *pb)
{
    const busy_interval *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->from_ns > b->from_ns) - (a->from_ns < b->from_ns);
}

/* Every collective of every rank from the last arrival to that rank's end, by (run, rank,
 * time); `c` holds the comm spans with a seq in by_collective order.  The count in *nb. */
static busy_interval *busy_intervals(const run_span *c, size_t nc, size_t *nb)
{
    busy_interval *b = malloc((nc ? nc : 1) * sizeof *b);
    if (!b)
        return NULL;
    *nb = 0;
    for (size_t i = 0; i < nc;) {
        size_t j = i;
        int64_t last = c[i].start_ns;
        for (; j < nc && c[j].run == c[i].run && c[j].seq == c[i].seq; j++)
            last = c[j].start_ns > last ? c[j].start_ns : last;
        for (size_t k = i; k < j; k++)
            if (c[k].end_ns > last)
                b[(*nb)++] = (busy_interval){c[k].run, c[k].rank, last, c[k].end_ns};
        i = j;
    }
    qsort(b, *nb, sizeof *b, by_rank_time);
    return b;
}

/* Time of [from, to) inside the rank's busy intervals (b sorted by_rank_time). */
static double busy_overlap(const busy_interval *b, size_t nb, int64_t run, int rank, int64_t from, int64_t to)
{
    size_t lo = 0, hi = nb; /* first interval of (run, rank) that ends after `from` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const busy_interval *m = &b[mid];
        bool before = m->run < run || (m->run == run && (m->rank < rank || (m->rank == rank && m->to_ns <= from)));
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    double t = 0;
    for (size_t i = lo; i < nb && b[i].run == run && b[i].rank == rank && b[i].from_ns < to; i++) {
        int64_t a = b[i].from_ns > from ? b[i].from_ns : from, z = b[i].to_ns < to ? b[i].to_ns : to;
        if (z > a)
            t += (double)(z - a);
    }
    return t;
}

/* a (the share of time inside collectives lost: s = a / (1 - a)) and w (ns per late
 * wake-up) from the normal equations, neither below 0: where one would be, the other is
 * fitted alone. */
static void fit_two(double s11, double s12, double s22, double b1, double b2, calib_run_costs *out)
{
    double det = s11 * s22 - s12 * s12;
    double a = s11 > 0 ? b1 / s11 : 0, w = 0; /* the time inside alone */
    if (det > 0) {
        a = (b1 * s22 - b2 * s12) / det;
        w = (s11 * b2 - s12 * b1) / det;
        if (a < 0) {
            a = 0;
            w = b2 / s22;
        } else if (w < 0) {
            a = b1 / s11;
            w = 0;
        }
    }
    a = a < 0 ? 0 : a > 0.99 ? 0.99 : a;
    out->comm_slowdown = a / (1 - a);
    out->comm_wakeup_us = w > 0 ? w / 1e3 : 0;
}

/* After fit_wakeup and fit_memory: the model of an op without contention is theirs.
 * `b`: every rank's collectives, busy_intervals(). */
static void fit_contention(const run_span *s, size_t n, const busy_interval *b, size_t nb, const bool *inside,
                           calib_run_costs *out)
{
    /* Least squares of excess = a x inside + w x [deadline inside], over the ops with any
     * time inside: the normal equations' sums. */
    double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
    double wake_ns = (out->op_wakeup_us + out->op_stall_fraction * out->op_stall_us) * 1e3; /* the mean */
    for (size_t i = 0; i < n; i++) {
        const run_span *o = &s[i];
        if (!inside[i] || o->model_ns <= 0 || (o->kind != SPAN_FORWARD && o->kind != SPAN_BACKWARD))
            continue;
        double ov = busy_overlap(b, nb, o->run, o->rank, o->start_ns, o->end_ns);
        /* A backward whose gradient write outlasts its FLOPs never sleeps, so never wakes
         * late. */
        bool sleeps = calib_slept(o, out);
        double model = sleeps ? o->model_ns + wake_ns : calib_write_ns(o, out);
        double excess = (double)(o->end_ns - o->start_ns) - model;
        int64_t deadline = o->start_ns + (int64_t)model;
        double late = sleeps && busy_overlap(b, nb, o->run, o->rank, deadline - 1, deadline) > 0 ? 1.0 : 0.0;
        s11 += ov * ov;
        s12 += ov * late;
        s22 += late;
        b1 += ov * excess;
        b2 += late * excess;
        out->ncontended++;
    }
    fit_two(s11, s12, s22, b1, b2, out);
}

static int by_collective(const void *pa, const void *pb)
{
    const run_span *a = pa, *b = pb;
    if (a->run != b->run)
        return a->run < b->run ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The comm spans with a seq, by collective (*nc of them); NULL when out of memory. */
static run_span *collectives(const run_span *s, size_t n, size_t *nc)
{
    run_span *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return NULL;
    *nc = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].stream == STREAM_COMM && s[i].seq >= 0)
            c[(*nc)++] = s[i];
    qsort(c, *nc, sizeof *c, by_collective);
    return c;
}

/* Whether each compute span has time inside its rank's collectives (from the last
 * arrival to the rank's end); NULL when out of memory. */
static bool *inside_collectives(const run_span *s, size_t n, const busy_interval *b, size_t nb)
{
    bool *inside = calloc(n ? n : 1, sizeof *inside);
    for (size_t i = 0; inside && i < n; i++)
        inside[i] = s[i].stream == STREAM_COMPUTE && busy_overlap(b, nb, s[i].run, s[i].rank, s[i].start_ns, s[i].end_ns) > 0;
    return inside;
}

/* A gradient write at least this long is bound by its write: of a large model's layers
 * (a small one's are below it), or of a small model's in cache, where any layer's write
 * outlasts its FLOPs. */
#define WRITE_MIN_BYTES ((int64_t)1 << 20)
#define CACHED_WRITE_MIN_BYTES ((int64_t)64 << 10)

/* The fits, in the order their models need: bandwidths, then wake-ups (a backward's
 * model is its write or its FLOPs), then what builds on both. */
static int fit_all(const run_span *s, size_t n, const run_span *c, size_t nc, const busy_interval *b, size_t nb,
                   const bool *inside, const host_load *load, calib_run_costs *out)
{
    if (calib_fit_memory(s, n, inside, load, WRITE_MIN_BYTES, &out->memory) != 0 || calib_fit_wakeup(s, n, out) != 0 ||
        calib_fit_backward_stalls(s, n, inside, out) != 0 || fit_overhead(s, n, out) != 0 ||
        calib_fit_host_wake(s, n, out) != 0 ||
        calib_fit_comm_launch(s, n, out) != 0 || calib_fit_allreduce(c, nc, load, out) != 0)
        return -1;
    fit_contention(s, n, b, nb, inside, out);
    calib_fit_comm_exit(s, n, c, nc, out);
    calib_fit_compute_wake(s, n, c, nc, out);
    return 0;
}

/* The launches of runs in cache, learned as out of it (beyond out's op_overhead_us, on
 * out's cores), into out's cache_comm_launch_* terms. */
static int fit_cache_launch(const run_span *s, size_t n, calib_run_costs *out)
{
    calib_run_costs in_cache = {.op_overhead_us = out->op_overhead_us, .host_cores = out->host_cores};
    if (calib_fit_comm_launch(s, n, &in_cache) != 0)
        return -1;
    if (in_cache.nlaunch == 0)
        return 0;
    out->ncache_launch = in_cache.nlaunch;
    out->ncache_launch_goes_on = in_cache.nlaunch_goes_on;
    out->cache_comm_launch_us = in_cache.comm_launch_us;
    out->cache_comm_launch_sd_us = in_cache.comm_launch_sd_us;
    out->cache_comm_launch_per_op_us = in_cache.comm_launch_per_op_us;
    out->cache_comm_launch_behind_us = in_cache.comm_launch_behind_us;
    return 0;
}

/* The forwards' wake-ups and stalls of runs in cache, their hosts' after a step and their
 * comm streams' launches, learned as out of it (beyond out's op_overhead_us), into out's
 * cache_* terms. */
static int fit_cache_wakeup(const run_span *s, size_t n, calib_run_costs *out)
{
    calib_run_costs in_cache = {.op_overhead_us = out->op_overhead_us};
    if (calib_fit_wakeup(s, n, &in_cache) != 0 || calib_fit_host_wake(s, n, &in_cache) != 0 ||
        fit_cache_launch(s, n, out) != 0)
        return -1;
    if (in_cache.nhost_wake > 0 && in_cache.host_wake_us > 0) {
        out->ncache_host_wake = in_cache.nhost_wake;
        out->cache_host_wake_us = in_cache.host_wake_us;
        out->cache_host_wake_sd_us = in_cache.host_wake_sd_us;
        out->cache_host_wake_stall_fraction = in_cache.host_wake_stall_fraction;
        out->cache_host_wake_stall_us = in_cache.host_wake_stall_us;
    }
    if (in_cache.nforward == 0 || in_cache.op_wakeup_us <= 0)
        return 0;
    out->ncache_forward = in_cache.nforward;
    out->cache_op_wakeup_us = in_cache.op_wakeup_us;
    out->cache_op_wakeup_sd_us = in_cache.op_wakeup_sd_us;
    out->cache_op_stall_fraction = in_cache.op_stall_fraction;
    out->cache_op_stall_us = in_cache.op_stall_us;
    return 0;
}

/* Every term from spans in by_place order, with the sleeping backwards' writes counted
 * on the cores at write_gbps (0: not counted), the sums' weight too where fit_weight
 * (else out's is kept): see fit_spans. */
static int fit_spans_at(const run_span *s, size_t n, bool in_cache, double write_gbps, bool fit_weight,
                        calib_run_costs *out)
{
    size_t nc = 0, nb = 0;
    run_span *c = collectives(s, n, &nc);
    busy_interval *b = c ? busy_intervals(c, nc, &nb) : NULL;
    bool *inside = b ? inside_collectives(s, n, b, nb) : NULL;
    /* The sums' weight is learned from the runs out of cache and kept for the others. */
    bool weigh = inside && !in_cache && out->host_cores > 0 && fit_weight;
    host_load *load = NULL;
    if (inside && (!weigh || calib_fit_comm_weight(s, n, c, nc, write_gbps, out) == 0))
        load = host_load_build(s, n, c, nc, out->host_cores, out->comm_core_weight, write_gbps);
    int rc = -1;
    if (load)
        rc = in_cache ? (calib_fit_memory(s, n, inside, load, CACHED_WRITE_MIN_BYTES, &out->cache) != 0 ||
                         calib_fit_cache_allreduce(c, nc, load, out) != 0 || fit_cache_wakeup(s, n, out) != 0)
                      : fit_all(s, n, c, nc, b, nb, inside, load, out);
    host_load_free(load);
    free(inside);
    free(b);
    free(c);
    return rc;
}

/* Every term from spans in by_place order: the bandwidths, collectives' factor and
 * wake-ups of runs in cache into out's cache terms, everything from the others into out.
 *
 * On shared cores, twice.  A backward that sleeps to its deadline wrote its gradients on
 * a core first, as the sim has it, but how fast is learned only from the write-bound
 * backwards: so the first pass learns that bandwidth (and the sums' weight) without those
 * writes, and the second learns every other term again with them on the cores.  The
 * weight is kept from the first: no span shows when a sleeping write ends, and with
 * their estimated ends on the cores the collectives' times alone spread more at every
 * weight and hardly less at one than at another (check 001342: 379-385 against 338-360
 * over the grid), so the weight is learned where the load is seen.  -1 when out of
 * memory. */
static int fit_spans(const run_span *s, size_t n, bool in_cache, calib_run_costs *out)
{
    calib_run_costs before = *out;
    if (fit_spans_at(s, n, in_cache, 0.0, true, out) != 0)
        return -1;
    double write_gbps = in_cache ? out->cache.grad_write_gbps : out->memory.grad_write_gbps;
    if (out->host_cores <= 0 || write_gbps <= 0)
        return 0;
    double weight = out->comm_core_weight;
    size_t nweighted = out->nweighted;
    *out = before;
    out->comm_core_weight = weight;
    out->nweighted = nweighted;
    return fit_spans_at(s, n, in_cache, write_gbps, false, out);
}

/* The runs whose memory fits in the cache apart from the others, each set in by_place
 * order; when both are there they are fitted apart, else all spans as one. */
static int fit_split_by_cache(const run_span *s, size_t n, calib_run_costs *out)
{
    double cache_bytes = out->cache_mb * 1048576.0;
    size_t cached = 0;
    for (size_t i = 0; i < n; i++)
        cached += out->cache_mb > 0 && s[i].host_bytes <= cache_bytes;
    if (cached == 0 || cached == n)
        return fit_spans(s, n, false, out);
    run_span *part = malloc(n * sizeof *part);
    if (!part)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].host_bytes > cache_bytes)
            part[k++] = s[i];
    for (size_t i = 0; i < n; i++)
        if (s[i].host_bytes <= cache_bytes)
            part[k++] = s[i];
    int rc = fit_spans(part, n - cached, false, out);
    if (rc == 0)
        rc = fit_spans(part + (n - cached), cached, true, out);
    free(part);
    return rc;
}

int calib_run_fit(run_span *s, size_t n, double host_cores, double cache_mb, calib_run_costs *out, char *err,
                  size_t errlen)
{
    *out = (calib_run_costs){.host_cores = host_cores > 0 ? host_cores : 0,
                             .cache_mb = cache_mb > 0 ? cache_mb : 0,
                             .comm_core_weight = 1.0};
    qsort(s, n, sizeof *s, by_place);
    if (fit_split_by_cache(s, n, out) != 0) {
        snprintf(err, errlen, "out of memory learning from %zu spans", n);
        return -1;
    }
    if (out->nforward == 0 && out->ngaps == 0 && calib_bandwidths_spans(&out->memory) == 0 && out->nar == 0) {
        snprintf(err, errlen,
                 "nothing to learn from these %zu spans: no forward, copy, optimizer or bucket allreduce span", n);
        return -1;
    }
    return 0;
}
