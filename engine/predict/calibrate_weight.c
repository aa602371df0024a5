/* calibrate_weight.c — the sums' weight on a host's shared cores, learned from measured
 * runs (calibrate_weight.h). */
#include "engine/predict/calibrate_weight.h"

#include "engine/predict/calibrate_share.h"
#include "engine/predict/calibrate_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The grid: 2^(k / 4) for k from WEIGHT_K_MIN to WEIGHT_K_MAX. */
#define WEIGHT_K_MIN (-16)
#define WEIGHT_K_MAX 8
#define WEIGHTS (WEIGHT_K_MAX - WEIGHT_K_MIN + 1)
/* A collective met other work on the cores when its time alone moves by more than this
 * (relative) across the grid. */
#define MET_OTHERS 1e-9
/* Spreads apart by less than this per collective (log ratios of 1e-6) are rounding: where
 * every weight fits exactly, none beats the prior. */
#define SPREAD_ROUNDING 1e-12
/* Fewer such collectives than this leave the weight at 1. */
#define MIN_MET 8

static double grid_weight(int i)
{
    return exp2((double)(WEIGHT_K_MIN + i) / 4.0);
}

typedef struct {
    int world;
    int64_t bytes;
    size_t index; /* in collective order */
} sample_key;

static int by_size(const void *pa, const void *pb)
{
    const sample_key *a = pa, *b = pb;
    if (a->world != b->world)
        return a->world < b->world ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Each whole bucket allreduce's log time alone at weight w, in collective order, into
 * v (and its size into keys when not NULL); how many, or -1 when out of memory. */
static long alone_times(const run_span *s, size_t n, const run_span *c, size_t nc, double cores, double w,
                        double write_gbps, double *v, sample_key *keys)
{
    host_load *load = host_load_build(s, n, c, nc, cores, w, write_gbps);
    if (!load)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < nc;) {
        calib_collective g;
        i = calib_collective_next(c, nc, i, true, &g);
        if (!g.whole)
            continue;
        double alone = calib_alone_ns(load, &g, cores, w);
        if (keys)
            keys[k] = (sample_key){g.world, g.bytes, k};
        v[k++] = alone > 0 ? log(alone) : 0.0;
    }
    host_load_free(load);
    return (long)k;
}

/* The sum over the collectives that met other work of the squared distance of their log
 * time alone (v) to their size's median over all of them; keys sorted by size, scratch
 * of k. */
static double spread(const double *v, const sample_key *keys, const bool *met, size_t k, double *scratch)
{
    double sum = 0;
    for (size_t first = 0; first < k;) {
        size_t end = first;
        while (end < k && keys[end].world == keys[first].world && keys[end].bytes == keys[first].bytes)
            end++;
        size_t m = end - first;
        for (size_t i = 0; i < m; i++)
            scratch[i] = v[keys[first + i].index];
        qsort(scratch, m, sizeof *scratch, by_value);
        double med = m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
        for (size_t i = first; i < end; i++)
            if (met[keys[i].index])
                sum += (v[keys[i].index] - med) * (v[keys[i].index] - med);
        first = end;
    }
    return sum;
}

bool calib_weight_beats_prior(double least, double at_prior, size_t nmet)
{
    return least + SPREAD_ROUNDING * (double)nmet < at_prior * (1.0 - CALIB_WEIGHT_MIN_GAIN);
}

int calib_fit_comm_weight(const run_span *s, size_t n, const run_span *c, size_t nc, double write_gbps,
                          calib_run_costs *out)
{
    out->comm_core_weight = 1.0;
    out->nweighted = 0;
    size_t cap = nc ? nc : 1;
    /* The grid's rows, then the prior's. */
    double *v = malloc((WEIGHTS + 1) * cap * sizeof *v), *scratch = malloc(cap * sizeof *scratch);
    sample_key *keys = malloc(cap * sizeof *keys);
    bool *met = calloc(cap, sizeof *met);
    int rc = v && scratch && keys && met ? 0 : -1;
    long k = 0;
    for (int i = 0; rc == 0 && i <= WEIGHTS; i++) {
        double w = i < WEIGHTS ? grid_weight(i) : CALIB_WEIGHT_PRIOR;
        k = alone_times(s, n, c, nc, out->host_cores, w, write_gbps, v + (size_t)i * cap, i == 0 ? keys : NULL);
        rc = k < 0 ? -1 : 0;
    }
    size_t nmet = 0;
    for (long j = 0; rc == 0 && j < k; j++) {
        met[j] = fabs(v[j] - v[(size_t)(WEIGHTS - 1) * cap + (size_t)j]) > MET_OTHERS;
        nmet += met[j];
    }
    if (rc == 0 && nmet >= MIN_MET) {
        qsort(keys, (size_t)k, sizeof *keys, by_size);
        double at_prior = spread(v + (size_t)WEIGHTS * cap, keys, met, (size_t)k, scratch), least = at_prior;
        int best = -1;
        for (int i = 0; i < WEIGHTS; i++) {
            double sp = spread(v + (size_t)i * cap, keys, met, (size_t)k, scratch);
            if (sp < least) {
                least = sp;
                best = i;
            }
        }
        bool better = best >= 0 && calib_weight_beats_prior(least, at_prior, nmet);
        out->comm_core_weight = better ? grid_weight(best) : CALIB_WEIGHT_PRIOR;
        out->nweighted = nmet;
    }
    free(v);
    free(scratch);
    free(keys);
    free(met);
    return rc;
}
