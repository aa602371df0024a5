/* timeline.c — one iteration's spans for drawing (timeline.h). */
#include "common/errmsg.h"
#include "reports/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_span_rows.h"

static int stream_index(const char *s)
{
    if (!s)
        return 0;
    return !strcmp(s, "compute") ? 1 : !strcmp(s, "comm") ? 2 : 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const timeline_span *x = *(const timeline_span *const *)a, *y = *(const timeline_span *const *)b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The last arrival of each collective, given to every rank's span of it. */
static int mark_arrivals(timeline *tl, char *err, size_t errlen)
{
    size_t n = 0;
    timeline_span **ar = malloc((tl->n ? tl->n : 1) * sizeof *ar);
    if (!ar) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < tl->n; i++)
        if (!strcmp(tl->spans[i].kind, "allreduce") && tl->spans[i].seq >= 0)
            ar[n++] = &tl->spans[i];
    qsort(ar, n, sizeof *ar, cmp_seq);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int64_t last = ar[i]->start_ns;
        for (; j < n && ar[j]->seq == ar[i]->seq; j++)
            if (ar[j]->start_ns > last)
                last = ar[j]->start_ns;
        for (size_t k = i; k < j; k++)
            ar[k]->last_arrival_ns = last < ar[k]->end_ns ? last : ar[k]->end_ns;
        i = j;
    }
    free(ar);
    return 0;
}

typedef struct {
    timeline *tl;
    size_t cap;
    char *err;
    size_t errlen;
} timeline_fill;

static int add_span(const store_span_row *row, void *ctx)
{
    timeline_fill *f = ctx;
    timeline *tl = f->tl;
    if (tl->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 256;
        timeline_span *grown = realloc(tl->spans, cap * sizeof *grown);
        if (!grown) {
            set_err(f->err, f->errlen, "out of memory");
            return -1;
        }
        tl->spans = grown;
        f->cap = cap;
    }
    timeline_span *t = &tl->spans[tl->n++];
    t->rank = row->rank;
    t->stream = stream_index(row->stream);
    snprintf(t->kind, sizeof t->kind, "%s", row->kind ? row->kind : "");
    snprintf(t->name, sizeof t->name, "%s", row->name ? row->name : "");
    t->bucket = row->has_bucket ? row->bucket : -1;
    t->seq = row->has_seq ? row->seq : -1;
    t->start_ns = row->start_ns;
    t->end_ns = row->end_ns;
    t->last_arrival_ns = -1;
    if (tl->n == 1 || t->start_ns < tl->t0_ns)
        tl->t0_ns = t->start_ns;
    if (tl->n == 1 || t->end_ns > tl->t1_ns)
        tl->t1_ns = t->end_ns;
    return 0;
}

int timeline_load(store *st, int64_t run_id, int iter, const int *ranks, size_t nranks, timeline *tl, char *err,
                  size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->iter = iter;
    timeline_fill f = {.tl = tl, .err = err, .errlen = errlen};
    int ret = 0;
    /* A rank at a time, through the span table's (run_id, rank, iter) index. */
    for (size_t r = 0; r < nranks && ret == 0; r++) {
        store_span_filter one = {.rank = ranks[r], .iter = iter, .iter_from = -1};
        ret = store_each_span(st, run_id, &one, add_span, &f, err, errlen) != 0 ? -1 : 0;
    }
    if (ret == 0)
        ret = mark_arrivals(tl, err, errlen);
    if (ret < 0)
        timeline_free(tl);
    return ret;
}

void timeline_free(timeline *tl)
{
    free(tl->spans);
    tl->spans = NULL;
    tl->n = 0;
}
