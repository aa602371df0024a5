/* calibrate_launch.c — an idle comm stream's late start, from measured spans
 * (calibrate_launch.h). */
#include "calibrate_launch.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

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

int calib_fit_comm_launch(const run_span *s, size_t n, calib_run_costs *out)
{
    size_t nready;
    bucket_ready *ready = ready_times(s, n, &nready);
    if (!ready)
        return -1;
    double sum = 0, sum2 = 0;
    size_t k = 0;
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
        double delay = (double)(a->start_ns - r->ready_ns);
        sum += delay;
        sum2 += delay * delay;
        k++;
    }
    free(ready);
    out->nlaunch = k;
    if (k == 0)
        return 0;
    double mean = sum / (double)k, var = sum2 / (double)k - mean * mean;
    double beyond = mean / 1e3 - out->op_overhead_us;
    out->comm_launch_us = beyond > 0 ? beyond : 0;
    out->comm_launch_sd_us = var > 0 ? sqrt(var) / 1e3 : 0;
    return 0;
}
