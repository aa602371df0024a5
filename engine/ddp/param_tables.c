/* param_tables.c — per-parameter tables shared by the ranks of a time-only world
 * (param_tables.h).  At 65,536 ranks one copy per rank of GPT-2's 580-parameter tables
 * was about 28 KiB a rank, 1.8 GiB in all. */
#include "engine/ddp/param_tables.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ddp/bucket_plan.h"

struct param_tables {
    const model *m;
    const scenario *sc;
    dev_param *params;
    bucket_layout initial;
    pthread_mutex_t mu; /* guards the rebuilt layout's creation */
    bool rebuilt_tried; /* the first rebuild was planned (or failed: out of memory) */
    bool rebuilt_valid;
    int32_t *rebuilt_order; /* the order the rebuilt layout was planned from */
    bucket_layout rebuilt;
};

void bucket_layout_index(const model *m, const bucket_assignment *a, int *param_bucket, int64_t *param_offset)
{
    for (int b = 0; b < a->nbuckets; b++) {
        const bucket_def *bd = &a->buckets[b];
        int64_t off = 0;
        for (int i = 0; i < bd->nparams; i++) {
            int p = bd->params[i];
            param_bucket[p] = b;
            param_offset[p] = off;
            off += m->params[p].numel;
        }
    }
}

static void layout_free(bucket_layout *L)
{
    bucket_assignment_free(&L->a);
    free(L->param_bucket);
    free(L->param_offset);
    memset(L, 0, sizeof *L);
}

/* Indexes L->a (already planned); 0, or -1 when out of memory. */
static int layout_index(const model *m, bucket_layout *L)
{
    size_t n = m->nparams > 0 ? (size_t)m->nparams : 1;
    L->param_bucket = calloc(n, sizeof *L->param_bucket);
    L->param_offset = calloc(n, sizeof *L->param_offset);
    if (!L->param_bucket || !L->param_offset)
        return -1;
    bucket_layout_index(m, &L->a, L->param_bucket, L->param_offset);
    return 0;
}

param_tables *param_tables_create(const model *m, const scenario *sc)
{
    param_tables *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return NULL;
    }
    t->m = m;
    t->sc = sc;
    t->params = calloc(m->nparams > 0 ? (size_t)m->nparams : 1, sizeof *t->params);
    if (!t->params || bucket_plan_initial(m, sc, &t->initial.a) != 0 || layout_index(m, &t->initial) != 0) {
        param_tables_free(t);
        return NULL;
    }
    for (int p = 0; p < m->nparams; p++)
        t->params[p].numel = m->params[p].numel;
    return t;
}

dev_param *param_tables_params(param_tables *t) { return t->params; }

const bucket_layout *param_tables_initial(const param_tables *t) { return &t->initial; }

const bucket_layout *param_tables_rebuilt(param_tables *t, const int32_t *order)
{
    size_t n = t->m->nparams > 0 ? (size_t)t->m->nparams : 1;
    pthread_mutex_lock(&t->mu);
    if (!t->rebuilt_tried) {
        t->rebuilt_tried = true;
        t->rebuilt_order = malloc(n * sizeof *t->rebuilt_order);
        if (t->rebuilt_order && bucket_plan_sized(t->m, t->sc, order, &t->rebuilt.a) == 0 &&
            layout_index(t->m, &t->rebuilt) == 0) {
            memcpy(t->rebuilt_order, order, (size_t)t->m->nparams * sizeof *order);
            t->rebuilt_valid = true;
        } else {
            layout_free(&t->rebuilt);
        }
    }
    bool same = t->rebuilt_valid && memcmp(t->rebuilt_order, order, (size_t)t->m->nparams * sizeof *order) == 0;
    pthread_mutex_unlock(&t->mu);
    return same ? &t->rebuilt : NULL;
}

void param_tables_free(param_tables *t)
{
    if (!t)
        return;
    free(t->params);
    layout_free(&t->initial);
    layout_free(&t->rebuilt);
    free(t->rebuilt_order);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
