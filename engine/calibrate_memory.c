/* calibrate_memory.c — bandwidths of the memory-bound ops learned from measured runs
 * (calibrate_memory.h). */
#include "calibrate_memory.h"

#include "median.h"

#include <stdlib.h>

/* Backwards this long beyond four times their FLOP model, and of the caller's bytes, are
 * bound by their gradient write: one that sleeps to its deadline would need a wake-up of
 * three times its model, and a write long enough to outlast a wake-up. */
#define WRITE_BOUND_MODEL_SHARE 0.25

static bool write_bound(const run_span *s, int64_t min_bytes)
{
    double dur = (double)(s->end_ns - s->start_ns);
    return s->stream == STREAM_COMPUTE && s->kind == SPAN_BACKWARD && s->bytes >= min_bytes &&
           s->model_ns > 0 && s->model_ns <= WRITE_BOUND_MODEL_SHARE * dur;
}

static bool host_shared(const run_span *s)
{
    return s->stream == STREAM_COMPUTE &&
           (s->kind == SPAN_COPY_IN || s->kind == SPAN_COPY_OUT || s->kind == SPAN_OPTIMIZER);
}

typedef struct {
    int64_t at_ns;
    int delta; /* +1 a shared op starts, -1 one ends */
} load_event;

static int by_time(const void *pa, const void *pb)
{
    const load_event *a = pa, *b = pb;
    if (a->at_ns != b->at_ns)
        return a->at_ns < b->at_ns ? -1 : 1;
    return a->delta - b->delta;
}

/* The core time one run's span [from, to] received with k(t) shared ops running on
 * `cores`, each on at most one core: the integral of min(1, cores / k(t)).  `ev` holds
 * the run's events by time and `core_time[i]` that integral from ev[0] to ev[i]. */
static double core_time_between(const load_event *ev, const double *core_time, size_t nev, int64_t from, int64_t to)
{
    size_t lo = 0, hi = nev;
    while (lo < hi) { /* the first event at `from` */
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].at_ns < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t a = lo;
    hi = nev;
    while (lo < hi) { /* the first event at `to` */
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].at_ns < to)
            lo = mid + 1;
        else
            hi = mid;
    }
    return a < nev && lo < nev ? core_time[lo] - core_time[a] : (double)(to - from);
}

/* Each span's time, or with host_cores > 0 the core time it received among the shared
 * ops of its run (the spans are in by_place order: a run's are together).  -1 when out
 * of memory. */
static int shared_time(const run_span *s, size_t n, double host_cores, double *time)
{
    for (size_t i = 0; i < n; i++)
        time[i] = (double)(s[i].end_ns - s[i].start_ns);
    if (host_cores <= 0)
        return 0;
    load_event *ev = malloc((2 * n + 1) * sizeof *ev);
    double *core_time = malloc((2 * n + 1) * sizeof *core_time);
    if (!ev || !core_time) {
        free(ev);
        free(core_time);
        return -1;
    }
    for (size_t first = 0; first < n;) {
        size_t end = first, nev = 0;
        while (end < n && s[end].run == s[first].run) {
            if (host_shared(&s[end])) {
                ev[nev++] = (load_event){s[end].start_ns, +1};
                ev[nev++] = (load_event){s[end].end_ns, -1};
            }
            end++;
        }
        qsort(ev, nev, sizeof *ev, by_time);
        int running = 0;
        for (size_t i = 0; i < nev; i++) {
            core_time[i] = i == 0 ? 0.0
                                  : core_time[i - 1] + (double)(ev[i].at_ns - ev[i - 1].at_ns) *
                                                           (running > host_cores ? host_cores / running : 1.0);
            running += ev[i].delta;
        }
        for (size_t i = first; i < end; i++)
            if (host_shared(&s[i]))
                time[i] = core_time_between(ev, core_time, nev, s[i].start_ns, s[i].end_ns);
        first = end;
    }
    free(ev);
    free(core_time);
    return 0;
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

/* The gradient writes' bandwidth: the median of bytes written over wall time, over the
 * backwards bound by their write with no time inside their rank's collectives (where the
 * sums take the cores and the memory the write wants: comm_slowdown models that).  The
 * median, for a write's own speed: on cores shared with other ranks one write in a few is
 * held off the core for milliseconds (a 2 MB write took 64 us to 2 ms in the calibration
 * runs), which the wake-up stalls model; the sim does not share the cores out to writes. */
static int fit_grad_write(const run_span *s, size_t n, const bool *inside, int64_t min_bytes, calib_bandwidths *out)
{
    double *rate = malloc((n ? n : 1) * sizeof *rate);
    if (!rate)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (write_bound(&s[i], min_bytes) && !inside[i])
            rate[k++] = (double)s[i].bytes / (double)(s[i].end_ns - s[i].start_ns);
    out->ngrad_write = k;
    out->grad_write_gbps = k ? median_sort(rate, k) : 0;
    free(rate);
    return 0;
}

size_t calib_bandwidths_spans(const calib_bandwidths *b)
{
    return b->ncopy_in + b->ncopy_out + b->noptimizer + b->ngrad_write;
}

int calib_fit_memory(const run_span *s, size_t n, const bool *inside, double host_cores, int64_t min_write_bytes,
                     calib_bandwidths *out)
{
    *out = (calib_bandwidths){0};
    double *time = calloc(n ? n : 1, sizeof *time);
    if (!time || shared_time(s, n, host_cores, time) != 0) {
        free(time);
        return -1;
    }
    out->copy_in_gbps = bandwidth_of(s, time, n, SPAN_COPY_IN, 2.0, &out->ncopy_in);
    out->copy_out_gbps = bandwidth_of(s, time, n, SPAN_COPY_OUT, 2.0, &out->ncopy_out);
    out->optimizer_gbps = bandwidth_of(s, time, n, SPAN_OPTIMIZER, 3.0, &out->noptimizer);
    free(time);
    return fit_grad_write(s, n, inside, min_write_bytes, out);
}
