/* analysis.c — the small public helpers of analysis.h over a loaded run: its mean
 * overlap, whether it holds a subset of its job's ranks, the ranks it holds and its
 * stragglers as text.  analysis_load.c loads the runs; all per-span arithmetic happens
 * in the store's view SQL or the statistics stored at a run's end.  Ownership: nothing
 * here allocates; the text goes into the caller's buffer. */
#include "common/errmsg.h"
#include "reports/analysis.h"
#include "reports/analysis_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_run_row.h"
#include "profiler/store_read_stats.h"

double analysis_mean_overlap_pct(const analysis_run *r)
{
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        if (!isnan(r->ranks[k].overlap_pct)) {
            sum += r->ranks[k].overlap_pct;
            n++;
        }
    }
    return n ? sum / n : NAN;
}

bool analysis_is_subset(const analysis_run *r)
{
    return r->nranks > 0 && (int)r->nranks < r->world_size;
}

char *analysis_ranks_held(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    if (!analysis_is_subset(r))
        return buf;
    /* Room for the tail ", ... N ranks of W" whatever the list's length. */
    size_t at = 0, room = n > 40 ? n - 40 : 0;
    int w = snprintf(buf, n, "rank%s ", r->nranks == 1 ? "" : "s");
    at = w > 0 ? (size_t)w : 0;
    size_t i = 0;
    for (; i < r->nranks && at < room; i++) {
        w = snprintf(buf + at, n - at, "%s%d", i ? ", " : "", r->ranks[i].rank);
        if (w < 0 || (size_t)w >= n - at)
            break;
        at += (size_t)w;
    }
    if (i < r->nranks)
        snprintf(buf + at, n - at, ", ... (%zu ranks) of %d", r->nranks, r->world_size);
    else
        snprintf(buf + at, n - at, " of %d", r->world_size);
    return buf;
}

void analysis_stragglers_text(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    size_t len = 0, shown = r->nstragglers > 8 ? 8 : r->nstragglers;
    for (size_t i = 0; i < shown && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%d", i == 0 ? (r->nstragglers > 1 ? "ranks " : "rank ") : ", ",
                         r->stragglers[i]);
        /* Cut (the callers' 160 bytes hold the at most 142 written): len passes n, what
         * fitted stays and nothing more is written. */
        len += w > 0 ? (size_t)w : 0;
    }
    if (r->nstragglers > shown && len < n)
        snprintf(buf + len, n - len, ", ... (%zu ranks)", r->nstragglers);
}
