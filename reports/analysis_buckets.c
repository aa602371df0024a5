/* analysis_buckets.c — the per-bucket figures of analysis.h: the latest assignment's
 * sizes, its collectives' arrival skew, transfer and bus bandwidth, and each bucket's
 * ready time and launch delay over the counted rank-iterations.
 *
 * Contract: see analysis_internal.h.  Needs the store's read API
 * (profiler/store_read_layout.h, store_read_stats.h) and the rank-iteration rows of
 * analysis_load_its, borrowed.  Ownership: buckets[] is the run's (freed by
 * analysis_free). */
#include "common/errmsg.h"
#include "reports/analysis_internal.h"

#include <math.h>
#include <stdlib.h>

#include "profiler/store_read_layout.h"
#include "profiler/store_read_stats.h"

static analysis_bucket *bucket_slot(analysis_run *r, size_t *cap, int idx, char *err,
                                    size_t errlen)
{
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].idx == idx)
            return &r->buckets[i];
    if (r->nbuckets == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        analysis_bucket *grown = realloc(r->buckets, *cap * sizeof *grown);
        if (!grown) {
            set_err(err, errlen, "out of memory");
            return NULL;
        }
        r->buckets = grown;
    }
    analysis_bucket *b = &r->buckets[r->nbuckets++];
    *b = (analysis_bucket){.idx = idx,
                           .ready_ms = NAN,
                           .launch_delay_ms = NAN,
                           .arrival_skew_ms = NAN,
                           .transfer_ms = NAN,
                           .busbw_gbps = NAN};
    return b;
}

static int cmp_bucket(const void *a, const void *b)
{
    const analysis_bucket *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* rows are ordered by (rank, iter). */
static const its_row *find_its(const its_row *rows, size_t n, int rank, int iter)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const its_row *w = &rows[mid];
        if (w->rank == rank && w->iter == iter)
            return w;
        if (w->rank < rank || (w->rank == rank && w->iter < iter))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

typedef struct {
    analysis_run *r;
    size_t cap;
    char *err;
    size_t errlen;
    /* store_each_bucket_ready's rows: the iteration rows, and the bucket being summed */
    const its_row *rows;
    size_t nrows;
    analysis_bucket *b;
    double ready_sum, delay_sum;
    int delay_n;
} bucket_ctx;

static int add_bucket(const store_bucket_row *row, void *ctx)
{
    bucket_ctx *c = ctx;
    analysis_bucket *b = bucket_slot(c->r, &c->cap, row->idx, c->err, c->errlen);
    if (!b)
        return -1;
    b->bytes = row->nbytes;
    b->nparams = row->nparams;
    return 0;
}

static int add_collectives(const store_bucket_collectives *m, void *ctx)
{
    bucket_ctx *c = ctx;
    analysis_run *r = c->r;
    analysis_bucket *b = bucket_slot(r, &c->cap, m->bucket, c->err, c->errlen);
    if (!b)
        return -1;
    b->collectives = m->collectives;
    b->arrival_skew_ms = ms(m->arrival_skew_ns);
    /* A few ranks of a job: the last arrival is not known. */
    b->transfer_ms = analysis_is_subset(r) ? NAN : ms(m->transfer_ns);
    if (b->nparams == 0 && b->bytes == 0 && !isnan(m->bytes))
        b->bytes = (int64_t)llround(m->bytes);
    /* Each collective's bus bandwidth as the store computes it, averaged: the figure
     * `select avg(busbw_gbps) from collective` gives, defined once. */
    b->busbw_gbps = analysis_is_subset(r) ? NAN : m->busbw_gbps; /* a few ranks: no transfer known */
    return 0;
}

/* The bucket summed so far gets its means. */
static void finish_ready(bucket_ctx *c)
{
    analysis_bucket *b = c->b;
    if (!b)
        return;
    b->ready_ms = b->ready_samples ? ms(c->ready_sum / b->ready_samples) : NAN;
    b->launch_delay_ms = c->delay_n ? ms(c->delay_sum / c->delay_n) : NAN;
    c->b = NULL;
}

/* Rows come grouped by bucket: a bucket's means are taken when the next one starts. */
static int add_ready(const store_bucket_ready *row, void *ctx)
{
    bucket_ctx *c = ctx;
    if (c->b && row->bucket != c->b->idx)
        finish_ready(c);
    const its_row *w = find_its(c->rows, c->nrows, row->rank, row->iter);
    if (!w || !counted(c->r, w))
        return 0;
    if (!c->b) {
        if (!(c->b = bucket_slot(c->r, &c->cap, row->bucket, c->err, c->errlen)))
            return -1;
        c->ready_sum = c->delay_sum = 0;
        c->delay_n = 0;
        c->b->ready_samples = 0;
    }
    c->ready_sum += (double)(row->ready_ns - w->step_start);
    c->b->ready_samples++;
    if (row->arrived) {
        c->delay_sum += (double)(row->arrival_ns - row->ready_ns);
        c->delay_n++;
    }
    return 0;
}

int analysis_bucket_stats(store *st, analysis_run *r, const its_row *rows, size_t nrows, char *err,
                          size_t errlen)
{
    bucket_ctx c = {.r = r, .err = err, .errlen = errlen, .rows = rows, .nrows = nrows};
    /* The latest assignment, as the bucket table holds it; then the collective timings
     * of the counted iterations. */
    if (store_each_bucket(st, r->id, r->bucket_version, add_bucket, &c, err, errlen) != 0 ||
        store_each_bucket_collectives(st, r->id, stats_from(r), r->all_iterations ? -1 : r->warmup_planned,
                                      add_collectives, &c, err, errlen) != 0)
        return -1;
    /* Ready and launch delay, per rank-iteration.  The step start comes from the
     * iteration rows already read, rather than from a second evaluation of the view. */
    if (store_each_bucket_ready(st, r->id, stats_from(r), add_ready, &c, err, errlen) != 0)
        return -1;
    finish_ready(&c);
    if (r->nbuckets > 1)
        qsort(r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket);
    return 0;
}
