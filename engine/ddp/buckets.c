/* buckets.c — PyTorch's greedy bucket assignment by size (see buckets.h for the rules). */
#include "engine/ddp/buckets.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int key;
    int limit_idx;
    bucket_def open;
    int cap; /* capacity of open.params */
} dtype_state;

static int push_param(bucket_def *b, int *cap, int idx)
{
    if (b->nparams == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        int *p = realloc(b->params, (size_t)ncap * sizeof *p);
        if (!p)
            return -1;
        b->params = p;
        *cap = ncap;
    }
    b->params[b->nparams++] = idx;
    return 0;
}

static int emit(bucket_assignment *out, int *cap, bucket_def *b)
{
    if (out->nbuckets == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        bucket_def *p = realloc(out->buckets, (size_t)ncap * sizeof *p);
        if (!p)
            return -1;
        out->buckets = p;
        *cap = ncap;
    }
    out->buckets[out->nbuckets++] = *b;
    memset(b, 0, sizeof *b);
    return 0;
}

static int min_param(const bucket_def *b)
{
    int m = b->params[0];
    for (int i = 1; i < b->nparams; i++)
        if (b->params[i] < m)
            m = b->params[i];
    return m;
}

static int cmp_by_min_param(const void *a, const void *b)
{
    int ma = min_param(a), mb = min_param(b);
    return (ma > mb) - (ma < mb);
}

int bucket_assign(int n, const int64_t *tensor_bytes, const int *dtype_key, const int *order,
                  const int64_t *limits, int nlimits, bucket_assignment *out)
{
    memset(out, 0, sizeof *out);
    if (n < 0 || nlimits < 1 || !tensor_bytes || !limits)
        return -1;
    dtype_state *st = calloc((size_t)(n ? n : 1), sizeof *st);
    if (!st)
        return -1;
    int nstates = 0, out_cap = 0, rc = -1;

    for (int i = 0; i < n; i++) {
        int t = order ? order[i] : i;
        if (t < 0 || t >= n)
            goto done;
        int key = dtype_key ? dtype_key[t] : 0;
        dtype_state *s = NULL;
        for (int k = 0; k < nstates; k++)
            if (st[k].key == key)
                s = &st[k];
        if (!s) {
            s = &st[nstates++];
            s->key = key;
        }
        if (push_param(&s->open, &s->cap, t) != 0)
            goto done;
        s->open.nbytes += tensor_bytes[t];
        s->open.size_limit = limits[s->limit_idx];
        if (s->open.nbytes >= s->open.size_limit) {
            if (emit(out, &out_cap, &s->open) != 0)
                goto done;
            s->cap = 0;
            if (s->limit_idx < nlimits - 1)
                s->limit_idx++;
        }
    }
    for (int k = 0; k < nstates; k++) {
        if (st[k].open.nparams > 0) {
            if (emit(out, &out_cap, &st[k].open) != 0)
                goto done;
            st[k].cap = 0;
        }
    }
    if (!order && out->nbuckets > 1)
        qsort(out->buckets, (size_t)out->nbuckets, sizeof *out->buckets, cmp_by_min_param);
    rc = 0;
done:
    for (int k = 0; k < nstates; k++)
        free(st[k].open.params);
    free(st);
    if (rc != 0)
        bucket_assignment_free(out);
    return rc;
}

void bucket_reverse(bucket_assignment *a)
{
    for (int i = 0, j = a->nbuckets - 1; i < j; i++, j--) {
        bucket_def t = a->buckets[i];
        a->buckets[i] = a->buckets[j];
        a->buckets[j] = t;
    }
}

int bucket_assignment_copy(const bucket_assignment *src, bucket_assignment *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->buckets = calloc((size_t)(src->nbuckets ? src->nbuckets : 1), sizeof *dst->buckets);
    if (!dst->buckets)
        return -1;
    for (int b = 0; b < src->nbuckets; b++) {
        bucket_def *d = &dst->buckets[b];
        *d = src->buckets[b];
        d->params = malloc((size_t)(d->nparams ? d->nparams : 1) * sizeof *d->params);
        if (!d->params) {
            dst->nbuckets = b;
            bucket_assignment_free(dst);
            return -1;
        }
        memcpy(d->params, src->buckets[b].params, (size_t)d->nparams * sizeof *d->params);
    }
    dst->nbuckets = src->nbuckets;
    return 0;
}

void bucket_assignment_free(bucket_assignment *a)
{
    for (int b = 0; b < a->nbuckets; b++)
        free(a->buckets[b].params);
    free(a->buckets);
    a->buckets = NULL;
    a->nbuckets = 0;
}
