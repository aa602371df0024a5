/* hta_figures.c — see hta_figures.h. */
#include "profiler/hta_figures.h"

#include <stdlib.h>

typedef struct {
    int64_t ts, end;
} ival;

typedef struct {
    int64_t t;
    int delta;
} edge;

static int cmp_ival(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* merge_kernel_intervals, in place; returns the groups' count. */
static size_t merge(ival *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_ival);
    size_t g = 0;
    int64_t cummax = 0; /* the latest end before v[i] */
    for (size_t i = 0; i < n; i++) {
        int64_t end = v[i].end;
        if (i == 0 || v[i].ts > cummax)
            v[g++] = v[i];
        else if (end > v[g - 1].end)
            v[g - 1].end = end;
        cummax = i == 0 || end > cummax ? end : cummax;
    }
    return g;
}

static int64_t length(const ival *v, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i].end - v[i].ts;
    return s;
}

int hta_figures_compute(hta_op *ops, size_t n, store_hta_stat *h)
{
    if (n == 0)
        return 1;
    ival *all = malloc(n * sizeof *all), *comp = malloc(n * sizeof *comp), *comm = malloc(n * sizeof *comm);
    edge *e = malloc(4 * n * sizeof *e);
    int ret = -1;
    if (!all || !comp || !comm || !e)
        goto out;
    size_t np = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        ival v = {ops[i].ts, ops[i].end};
        all[i] = v;
        if (ops[i].cls == HTA_OP_COMPUTATION)
            comp[np++] = v;
        else if (ops[i].cls == HTA_OP_COMMUNICATION)
            comm[nc++] = v;
    }
    size_t ga = merge(all, n), gp = merge(comp, np), gc = merge(comm, nc);
    int64_t kernel = all[ga - 1].end - all[0].ts, run = length(all, ga);
    h->kernel_us = kernel;
    h->idle_us = kernel - run;
    h->compute_us = length(comp, gp);
    h->non_compute_us = kernel - h->compute_us - h->idle_us;
    h->comm_us = length(comm, gc);
    /* +1/-1 at communication's starts and ends, +2/-2 at computation's: where the
     * running sum is 3, both run. */
    size_t ne = 0;
    for (size_t i = 0; i < gc; i++) {
        e[ne++] = (edge){comm[i].ts, 1};
        e[ne++] = (edge){comm[i].end, -1};
    }
    for (size_t i = 0; i < gp; i++) {
        e[ne++] = (edge){comp[i].ts, 2};
        e[ne++] = (edge){comp[i].end, -2};
    }
    if (ne > 1)
        qsort(e, ne, sizeof *e, cmp_edge);
    int64_t overlap = 0;
    int running = 0;
    for (size_t i = 0; i < ne; i++) {
        running += e[i].delta;
        if (running == 3 && i + 1 < ne)
            overlap += e[i + 1].t - e[i].t;
    }
    h->comm_overlap_us = overlap;
    ret = 0;
out:
    free(all);
    free(comp);
    free(comm);
    free(e);
    return ret;
}
