/* calibrate_table.c — the measured allreduce table learned from runs, and its factor in
 * cache (calibrate_table.h). */
#include "engine/predict/calibrate_table.h"

#include "engine/predict/calibrate_wakeup.h"
#include "engine/predict/median.h"
#include "engine/cost/netmodel.h"
#include "engine/cost/timing.h"

#include <stdbool.h>
#include <stdlib.h>

/* One sample per (world, bytes): the median transfer of its collectives. */
static int add_sample(calib_run_costs *out, int world, int64_t bytes, double us, double **per, size_t *nper,
                      size_t *cap)
{
    size_t k = 0;
    while (k < out->nar && !(out->ar[k].ranks == world && out->ar[k].bytes == bytes))
        k++;
    if (k == out->nar) {
        if (out->nar == CALIB_RUN_MAX_SAMPLES)
            return 0; /* more distinct sizes than a scenario can list: keep the first */
        out->ar[out->nar++] = (ring_sample){.bytes = bytes, .ranks = world, .us = 0};
    }
    if (nper[k] == cap[k]) {
        size_t ncap = cap[k] ? 2 * cap[k] : 8;
        double *np = realloc(per[k], ncap * sizeof *np);
        if (!np)
            return -1;
        per[k] = np;
        cap[k] = ncap;
    }
    per[k][nper[k]++] = us;
    return 0;
}

double calib_alone_ns(const host_load *load, const calib_collective *g, double host_cores, double comm_core_weight)
{
    if (host_cores <= 0)
        return (double)(g->end_ns - g->last_arrival_ns);
    double ns = host_load_sum_core_time(load, g->run, g->last_arrival_ns, g->end_ns);
    return ns / timing_core_shares(host_cores, 0, g->world, comm_core_weight).sum;
}

static double alone_ns(const host_load *load, const calib_collective *g, const calib_run_costs *out)
{
    return calib_alone_ns(load, g, out->host_cores, out->comm_core_weight);
}

int calib_fit_allreduce(const run_span *c, size_t nc, const host_load *load, calib_run_costs *out)
{
    double *per[CALIB_RUN_MAX_SAMPLES] = {0};
    size_t nper[CALIB_RUN_MAX_SAMPLES] = {0}, cap[CALIB_RUN_MAX_SAMPLES] = {0};
    int rc = 0;
    for (size_t i = 0; i < nc && rc == 0;) {
        calib_collective g;
        i = calib_collective_next(c, nc, i, out->host_cores > 0, &g);
        if (!g.whole)
            continue;
        rc = add_sample(out, g.world, g.bytes, alone_ns(load, &g, out) / 1e3, per, nper, cap);
        out->ncollectives++;
    }
    for (size_t k = 0; k < out->nar; k++) {
        if (rc == 0)
            out->ar[k].us = median_sort(per[k], nper[k]);
        free(per[k]);
    }
    return rc;
}

/* The table's time of a `bytes` allreduce among `world` ranks (out->ar), -1 with no
 * point at that world size. */
static double table_ns(const calib_run_costs *out, int world, double bytes)
{
    double b[CALIB_RUN_MAX_SAMPLES], t[CALIB_RUN_MAX_SAMPLES];
    int n = 0;
    for (size_t k = 0; k < out->nar; k++) {
        if (out->ar[k].ranks != world)
            continue;
        int at = n++;
        while (at > 0 && b[at - 1] > (double)out->ar[k].bytes) { /* kept sorted by bytes */
            b[at] = b[at - 1];
            t[at] = t[at - 1];
            at--;
        }
        b[at] = (double)out->ar[k].bytes;
        t[at] = out->ar[k].us * 1e3;
    }
    return n > 0 ? net_interpolate(b, t, n, bytes) : -1;
}

/* For the runs whose memory fits in the cache, after the table is learned from the
 * others: the median of their bucket allreduces' times alone over the table's at their
 * world size and bytes. */
/* One bucket allreduce in cache: its time alone and the table's, and whether its host
 * was crowded. */
typedef struct {
    double alone_ns, table_ns;
    bool crowded;
} cached_collective;

/* The stalls of the collectives in `g` (k of them) of one crowding beyond `factor` times
 * their table's time, into *fraction and *stall_us; their count in *n. */
static int fit_stalls(const cached_collective *g, size_t k, bool crowded, double factor, double *scratch,
                      double *fraction, double *stall_us, size_t *n)
{
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (g[i].crowded == crowded)
            scratch[m++] = g[i].alone_ns - factor * g[i].table_ns;
    *n = m;
    return calib_stalls(scratch, m, fraction, stall_us);
}

int calib_fit_cache_allreduce(const run_span *c, size_t nc, const host_load *load, calib_run_costs *out)
{
    cached_collective *g = malloc((nc ? nc : 1) * sizeof *g);
    double *scratch = malloc((nc ? nc : 1) * sizeof *scratch);
    if (!g || !scratch) {
        free(g);
        free(scratch);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < nc;) {
        calib_collective one;
        i = calib_collective_next(c, nc, i, out->host_cores > 0, &one);
        double table = one.whole ? table_ns(out, one.world, (double)one.bytes) : -1;
        if (table > 0) {
            g[k] = (cached_collective){alone_ns(load, &one, out), table, out->host_cores > 0 && one.world > out->host_cores};
            scratch[k] = g[k].alone_ns / table;
            k++;
        }
    }
    out->ncache_collectives = k;
    out->cache_allreduce_factor = k ? median_sort(scratch, k) : 0;
    int rc = fit_stalls(g, k, false, out->cache_allreduce_factor, scratch, &out->cache_allreduce_stall_fraction,
                        &out->cache_allreduce_stall_us, &out->ncache_uncrowded);
    if (rc == 0)
        rc = fit_stalls(g, k, true, out->cache_allreduce_factor, scratch, &out->cache_allreduce_crowded_stall_fraction,
                        &out->cache_allreduce_crowded_stall_us, &out->ncache_crowded);
    free(g);
    free(scratch);
    return rc;
}
