/* analysis_stragglers.c — the stragglers of analysis.h: the ranks the others wait for,
 * judged from the per-rank wait means that analysis_rank_stats computed.
 *
 * Contract: see analysis_internal.h; reads nothing from the store.  Ownership:
 * stragglers[] is the run's (freed by analysis_free). */
#include "common/errmsg.h"
#include "reports/analysis_internal.h"

#include <math.h>
#include <stdlib.h>

/* Every rank the others wait for (analysis.h): a rank whose wait is near the least is
 * one the others wait for, so two equally slow ranks are both named. */
/* The others' wait that names a straggler: a share of the step (a real job's stragglers
 * cost a few percent of it: ranks of an 8-GPU V100 job waiting 1.5 ms for two late ones)
 * and a multiple of the stragglers' own wait (what sets them apart from noise). */
#define STRAGGLER_MIN_STEP_SHARE 0.01
#define STRAGGLER_MIN_RATIO 4.0

int analysis_find_stragglers(analysis_run *r, char *err, size_t errlen)
{
    r->straggler_rank = -1;
    r->straggler_others_wait_ms = NAN;
    double least = NAN, most = NAN, least_step = NAN;
    size_t n = 0;
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        n++;
        if (isnan(least) || k->wait_ms < least) {
            least = k->wait_ms;
            least_step = k->step_ms;
        }
        if (isnan(most) || k->wait_ms > most)
            most = k->wait_ms;
    }
    if (n < 2 || !(most > least))
        return 0;
    double near_least = least + 0.25 * (most - least), others = 0, slow_most = 0;
    size_t nothers = 0;
    r->stragglers = malloc(n * sizeof *r->stragglers);
    if (!r->stragglers) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        if (k->wait_ms <= near_least) {
            r->stragglers[r->nstragglers++] = k->rank;
            slow_most = k->wait_ms > slow_most ? k->wait_ms : slow_most;
        } else {
            others += k->wait_ms;
            nothers++;
        }
    }
    others /= (double)nothers; /* most > near_least: at least one rank is not a straggler */
    if (!(others >= STRAGGLER_MIN_STEP_SHARE * least_step && others >= STRAGGLER_MIN_RATIO * slow_most)) {
        free(r->stragglers);
        r->stragglers = NULL;
        r->nstragglers = 0;
        return 0;
    }
    r->straggler_rank = r->stragglers[0];
    r->straggler_others_wait_ms = others;
    return 0;
}
