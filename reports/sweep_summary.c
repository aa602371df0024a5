/* sweep_summary.c — one line per sweep point and the fastest point (sweep_summary.h). */
#include "reports/sweep_summary.h"

#include <math.h>
#include <stdlib.h>

#include "reports/analysis.h"

int report_sweep_summary(sqlite3 *db, const int64_t *run_ids, size_t n, FILE *out, char *err, size_t errlen)
{
    analysis_run **runs = calloc(n, sizeof *runs);
    if (!runs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t got;
        rc = analysis_load(db, run_ids[i], &runs[i], &got, err, errlen);
    }
    if (rc == 0) {
        fprintf(out, "\nsweep: step time per point (mean over measured iterations, slowest rank)\n");
        fprintf(out, "  run  %-60s  step ms  overlap %%  max wait ms\n", "point");
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            const analysis_run *r = runs[i];
            double overlap = NAN, wait = NAN;
            if (r->nranks > 0) {
                overlap = r->ranks[0].overlap_pct;
                for (size_t k = 0; k < r->nranks; k++)
                    if (isnan(wait) || r->ranks[k].wait_ms > wait)
                        wait = r->ranks[k].wait_ms;
            }
            fprintf(out, "%5lld  %-60.60s", (long long)r->id, r->name);
            if (r->steps > 0 && !isnan(r->step_ms_mean)) {
                fprintf(out, "  %7.3f", r->step_ms_mean);
                if (best == n || r->step_ms_mean < runs[best]->step_ms_mean)
                    best = i;
            } else {
                fprintf(out, "  %7s", "-");
            }
            if (isnan(overlap))
                fprintf(out, "  %9s", "-");
            else
                fprintf(out, "  %9.1f", overlap);
            if (isnan(wait))
                fprintf(out, "  %11s\n", "-");
            else
                fprintf(out, "  %11.3f\n", wait);
        }
        if (best < n)
            fprintf(out, "best: %s (%.3f ms per step)\n", runs[best]->name, runs[best]->step_ms_mean);
    }
    for (size_t i = 0; i < n; i++)
        if (runs[i])
            analysis_free(runs[i], 1);
    free(runs);
    return rc;
}
