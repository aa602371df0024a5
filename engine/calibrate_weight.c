/* calibrate_weight.c — the sums' weight on a host's shared cores, learned from measured
 * runs (calibrate_weight.h). */
#include "calibrate_weight.h"

#include "calibrate_share.h"
#include "calibrate_table.h"

#include <math.h>
#include <stdlib.h>

/* The grid: 2^(k / 4) for k from WEIGHT_K_MIN to WEIGHT_K_MAX. */
#define WEIGHT_K_MIN (-16)
#define WEIGHT_K_MAX 8

typedef struct {
    int world;
    int64_t bytes;
    double log_alone;
} sample;

static int by_size_then_value(const void *pa, const void *pb)
{
    const sample *a = pa, *b = pb;
    if (a->world != b->world)
        return a->world < b->world ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return (a->log_alone > b->log_alone) - (a->log_alone < b->log_alone);
}

/* The sum over samples of the squared distance to their size's median (sorts them). */
static double spread(sample *v, size_t k)
{
    qsort(v, k, sizeof *v, by_size_then_value);
    double sum = 0;
    for (size_t first = 0; first < k;) {
        size_t end = first;
        while (end < k && v[end].world == v[first].world && v[end].bytes == v[first].bytes)
            end++;
        size_t mid = first + (end - first) / 2;
        double med = (end - first) % 2 ? v[mid].log_alone : 0.5 * (v[mid - 1].log_alone + v[mid].log_alone);
        for (size_t i = first; i < end; i++)
            sum += (v[i].log_alone - med) * (v[i].log_alone - med);
        first = end;
    }
    return sum;
}

/* The alone times' spread at weight w, into *out; -1 when out of memory. */
static int spread_at(const run_span *s, size_t n, const run_span *c, size_t nc, double cores, double w, sample *v,
                     size_t *k, double *out)
{
    host_load *load = host_load_build(s, n, c, nc, cores, w);
    if (!load)
        return -1;
    *k = 0;
    for (size_t i = 0; i < nc;) {
        calib_collective g;
        i = calib_collective_next(c, nc, i, true, &g);
        double alone = g.whole ? calib_alone_ns(load, &g, cores, w) : 0;
        if (alone > 0)
            v[(*k)++] = (sample){g.world, g.bytes, log(alone)};
    }
    host_load_free(load);
    *out = spread(v, *k);
    return 0;
}

int calib_fit_comm_weight(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out)
{
    out->comm_core_weight = 1.0;
    out->nweighted = 0;
    sample *v = malloc((nc ? nc : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    double at_one, best = INFINITY, best_w = 1.0;
    int rc = spread_at(s, n, c, nc, out->host_cores, 1.0, v, &k, &at_one);
    for (int e = WEIGHT_K_MIN; rc == 0 && e <= WEIGHT_K_MAX; e++) {
        double w = exp2(e / 4.0), sp;
        rc = spread_at(s, n, c, nc, out->host_cores, w, v, &k, &sp);
        if (rc == 0 && sp < best) {
            best = sp;
            best_w = w;
        }
    }
    free(v);
    if (rc != 0)
        return -1;
    if (best < at_one * (1.0 - CALIB_WEIGHT_MIN_GAIN))
        out->comm_core_weight = best_w;
    out->nweighted = k;
    return 0;
}
