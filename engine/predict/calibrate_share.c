/* calibrate_share.c — the share of a host's cores each op of a measured run received
 * (calibrate_share.h). */
#include "engine/predict/calibrate_share.h"

#include "engine/cost/timing.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    int64_t at_ns;
    int ops, sums; /* copies or steps, and parts of sums, that start (> 0) or end (< 0) */
} load_event;

typedef struct {
    int64_t run;
    size_t first, count; /* its events */
} run_events;

struct host_load {
    double cores, sum_weight;
    load_event *ev;
    double *op_core_time;  /* per event: the integral of a copy's or step's share from its run's first event */
    double *sum_core_time; /* the same for a part of the sums */
    size_t nev;
    run_events *runs;
    size_t nruns;
};

/* A backward that lasted over four times its FLOP model wrote, not slept: one sleeping
 * to its deadline would need a wake-up of three times its model. */
#define WRITE_BOUND_MODEL_SHARE 0.25

bool calib_write_bound(const run_span *s, int64_t min_bytes)
{
    double dur = (double)(s->end_ns - s->start_ns);
    return s->stream == STREAM_COMPUTE && s->kind == SPAN_BACKWARD && s->bytes >= min_bytes && s->model_ns > 0 &&
           s->model_ns <= WRITE_BOUND_MODEL_SHARE * dur;
}

bool calib_host_shared(const run_span *s)
{
    return (s->stream == STREAM_COMPUTE && timing_on_host_cores((span_kind)s->kind)) ||
           calib_write_bound(s, CALIB_HOSTED_WRITE_MIN_BYTES);
}

size_t calib_collective_next(const run_span *c, size_t nc, size_t i, bool shared_cores, calib_collective *out)
{
    size_t j = i;
    int64_t last_start = c[i].start_ns, last_end = c[i].end_ns, first_end = c[i].end_ns;
    bool same_bytes = true;
    while (j < nc && c[j].run == c[i].run && c[j].seq == c[i].seq) {
        last_start = c[j].start_ns > last_start ? c[j].start_ns : last_start;
        last_end = c[j].end_ns > last_end ? c[j].end_ns : last_end;
        first_end = c[j].end_ns < first_end ? c[j].end_ns : first_end;
        same_bytes &= c[j].bytes == c[i].bytes;
        j++;
    }
    int64_t end = shared_cores ? first_end : last_end;
    bool bucket_allreduce = c[i].kind == SPAN_ALLREDUCE && c[i].bucket >= 0;
    *out = (calib_collective){
        .whole = bucket_allreduce && (int)(j - i) == c[i].world && same_bytes && c[i].bytes > 0 && end > last_start,
        .run = c[i].run,
        .bytes = c[i].bytes,
        .world = c[i].world,
        .last_arrival_ns = last_start,
        .end_ns = end,
    };
    return j;
}

static int by_time(const void *pa, const void *pb)
{
    const load_event *a = pa, *b = pb;
    if (a->at_ns != b->at_ns)
        return a->at_ns < b->at_ns ? -1 : 1;
    return (a->ops + a->sums) - (b->ops + b->sums);
}

/* When the gradient write that begins backward `s` ends, at `write_gbps` on a core of its
 * own, within the span; INT64_MIN when it is no such write (write_gbps 0: none counted). */
static int64_t sleeping_write_end(const run_span *s, double write_gbps)
{
    if (write_gbps <= 0 || s->stream != STREAM_COMPUTE || s->kind != SPAN_BACKWARD || s->write_bytes <= 0 ||
        calib_host_shared(s))
        return INT64_MIN;
    int64_t end = s->start_ns + llround(s->write_bytes / write_gbps); /* GB/s: bytes per ns */
    return end < s->end_ns ? end : s->end_ns;
}

/* The events of run s[first].run: its shared ops' and sleeping backwards' writes, and its
 * whole bucket allreduces' (one job per rank), those from *ci on in c (moved past them;
 * the runs come in increasing order in both).  Returns how many were written at ev. */
static size_t run_events_of(const run_span *s, size_t first, size_t end, const run_span *c, size_t nc, size_t *ci,
                            double write_gbps, load_event *ev)
{
    size_t nev = 0;
    for (size_t i = first; i < end; i++) {
        int64_t written = sleeping_write_end(&s[i], write_gbps);
        if (calib_host_shared(&s[i]) || written > s[i].start_ns) {
            ev[nev++] = (load_event){s[i].start_ns, +1, 0};
            ev[nev++] = (load_event){written > s[i].start_ns ? written : s[i].end_ns, -1, 0};
        }
    }
    int64_t run = s[first].run;
    while (*ci < nc && c[*ci].run < run)
        (*ci)++;
    while (*ci < nc && c[*ci].run == run) {
        calib_collective g;
        *ci = calib_collective_next(c, nc, *ci, true, &g);
        if (g.whole) {
            ev[nev++] = (load_event){g.last_arrival_ns, 0, +g.world};
            ev[nev++] = (load_event){g.end_ns, 0, -g.world};
        }
    }
    return nev;
}

static void integrate(host_load *l, size_t first, size_t count)
{
    int ops = 0, sums = 0;
    for (size_t i = first; i < first + count; i++) {
        if (i == first) {
            l->op_core_time[i] = l->sum_core_time[i] = 0.0;
        } else {
            timing_shares sh = timing_core_shares(l->cores, ops, sums, l->sum_weight);
            double span = (double)(l->ev[i].at_ns - l->ev[i - 1].at_ns);
            l->op_core_time[i] = l->op_core_time[i - 1] + span * sh.op;
            l->sum_core_time[i] = l->sum_core_time[i - 1] + span * sh.sum;
        }
        ops += l->ev[i].ops;
        sums += l->ev[i].sums;
    }
}

host_load *host_load_build(const run_span *s, size_t n, const run_span *c, size_t nc, double cores,
                           double sum_weight, double write_gbps)
{
    host_load *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->cores = cores;
    l->sum_weight = sum_weight;
    if (cores <= 0)
        return l;
    size_t cap = 2 * (n + nc) + 1;
    l->ev = malloc(cap * sizeof *l->ev);
    l->op_core_time = malloc(cap * sizeof *l->op_core_time);
    l->sum_core_time = malloc(cap * sizeof *l->sum_core_time);
    l->runs = malloc((n ? n : 1) * sizeof *l->runs);
    if (!l->ev || !l->op_core_time || !l->sum_core_time || !l->runs) {
        host_load_free(l);
        return NULL;
    }
    size_t ci = 0; /* the runs come in increasing order in s and c */
    for (size_t first = 0; first < n;) {
        size_t end = first;
        while (end < n && s[end].run == s[first].run)
            end++;
        run_events *r = &l->runs[l->nruns++];
        *r = (run_events){.run = s[first].run, .first = l->nev};
        r->count = run_events_of(s, first, end, c, nc, &ci, write_gbps, l->ev + l->nev);
        qsort(l->ev + r->first, r->count, sizeof *l->ev, by_time);
        integrate(l, r->first, r->count);
        l->nev += r->count;
        first = end;
    }
    return l;
}

/* The first of `count` events from `first` at or after t. */
static size_t first_at(const load_event *ev, size_t first, size_t count, int64_t t)
{
    size_t lo = first, hi = first + count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].at_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The integral `acc` from the event at from_ns to the one at to_ns of run `run`, or the
 * wall time between them when they are not both events of it. */
static double integral(const host_load *l, const double *acc, int64_t run, int64_t from_ns, int64_t to_ns)
{
    for (size_t k = 0; l->cores > 0 && k < l->nruns; k++) {
        const run_events *r = &l->runs[k];
        if (r->run != run)
            continue;
        size_t a = first_at(l->ev, r->first, r->count, from_ns), b = first_at(l->ev, r->first, r->count, to_ns);
        size_t stop = r->first + r->count;
        if (a < stop && b < stop)
            return acc[b] - acc[a];
    }
    return (double)(to_ns - from_ns);
}

double host_load_core_time(const host_load *l, int64_t run, int64_t from_ns, int64_t to_ns)
{
    return integral(l, l->op_core_time, run, from_ns, to_ns);
}

double host_load_sum_core_time(const host_load *l, int64_t run, int64_t from_ns, int64_t to_ns)
{
    return integral(l, l->sum_core_time, run, from_ns, to_ns);
}

void host_load_free(host_load *l)
{
    if (!l)
        return;
    free(l->ev);
    free(l->op_core_time);
    free(l->sum_core_time);
    free(l->runs);
    free(l);
}
