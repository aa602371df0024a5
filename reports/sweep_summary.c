/* sweep_summary.c — one line per sweep point and the fastest point (sweep_summary.h). */
#include "reports/sweep_summary.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_run.h"
#include "reports/analysis.h"

static bool has_step(const analysis_run *r) { return r->steps > 0 && !isnan(r->step_ms_mean); }

static void print_or_dash(FILE *out, const char *fmt, const char *dash_fmt, double v)
{
    if (isnan(v))
        fprintf(out, dash_fmt, "-");
    else
        fprintf(out, fmt, v);
}

int report_sweep_summary(store *st, const int64_t *run_ids, size_t n, FILE *out, char *err, size_t errlen)
{
    analysis_run **runs = calloc(n, sizeof *runs);
    if (!runs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t got;
        rc = analysis_load(st, run_ids[i], &runs[i], &got, err, errlen);
    }
    if (rc == 0) {
        fprintf(out, "\nsweep: per point, the job's step (the slowest rank's, per measured iteration: mean, and min-max\n"
                     "over iterations), DDP's overlap (mean over ranks) and the longest wait (the most-waiting rank)\n");
        /* The point column as wide as its longest name, so the table fits where the names do. */
        int wname = (int)strlen("point");
        for (size_t i = 0; i < n; i++)
            if (runs[i]->name && (int)strlen(runs[i]->name) > wname)
                wname = (int)strlen(runs[i]->name);
        fprintf(out, "  run  %-*s  %9s  %19s  %9s  %11s\n", wname, "point", "step ms", "min-max ms", "overlap %",
                "max wait ms");
        size_t best = n, second = n;
        for (size_t i = 0; i < n; i++) {
            const analysis_run *r = runs[i];
            double wait = NAN;
            for (size_t k = 0; k < r->nranks; k++)
                if (isnan(wait) || r->ranks[k].wait_ms > wait)
                    wait = r->ranks[k].wait_ms;
            fprintf(out, "%5lld  %-*s", (long long)r->id, wname, r->name ? r->name : "-");
            if (has_step(r)) {
                char range[32];
                snprintf(range, sizeof range, "%.3f-%.3f", r->step_ms_min, r->step_ms_max);
                fprintf(out, "  %9.3f  %19s", r->step_ms_mean, range);
                if (best == n || r->step_ms_mean < runs[best]->step_ms_mean) {
                    second = best;
                    best = i;
                } else if (second == n || r->step_ms_mean < runs[second]->step_ms_mean) {
                    second = i;
                }
            } else {
                fprintf(out, "  %9s  %19s", "-", "-");
            }
            print_or_dash(out, "  %9.1f", "  %9s", analysis_mean_overlap_pct(r));
            print_or_dash(out, "  %11.3f\n", "  %11s\n", wait);
        }
        /* A point is named best only when even its slowest iteration beats the next point's
         * fastest: within the spread over iterations, the points are not told apart. */
        if (best < n && second == n)
            fprintf(out, "best: %s (%.3f ms per step), the only point with a step time\n", runs[best]->name,
                    runs[best]->step_ms_mean);
        else if (best < n && runs[best]->step_ms_max < runs[second]->step_ms_min)
            fprintf(out, "best: %s (%.3f ms per step; its slowest iteration beats the next point's fastest)\n",
                    runs[best]->name, runs[best]->step_ms_mean);
        else if (best < n)
            fprintf(out, "best: none beyond the spread over iterations (fastest mean %s, %.3f ms; %s's iterations "
                         "overlap its range)\n",
                    runs[best]->name, runs[best]->step_ms_mean, runs[second]->name);
    }
    for (size_t i = 0; i < n; i++)
        if (runs[i])
            analysis_free(runs[i], 1);
    free(runs);
    return rc;
}

/* The runs of the sweep being gathered, printed when the next sweep starts. */
typedef struct {
    store *st;
    FILE *out;
    int64_t sweep;
    int64_t *ids;
    size_t n, cap;
    char *err;
    size_t errlen;
} sweep_points;

static int print_sweep(sweep_points *p)
{
    fprintf(p->out, "\nsweep from run %lld:", (long long)p->sweep);
    int rc = report_sweep_summary(p->st, p->ids, p->n, p->out, p->err, p->errlen);
    p->n = 0;
    return rc;
}

static int add_point(int64_t sweep, int64_t run_id, void *ctx)
{
    sweep_points *p = ctx;
    if (p->n > 0 && sweep != p->sweep && print_sweep(p) != 0)
        return -1;
    p->sweep = sweep;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        int64_t *g = realloc(p->ids, cap * sizeof *g);
        if (!g) {
            snprintf(p->err, p->errlen, "out of memory");
            return -1;
        }
        p->ids = g;
        p->cap = cap;
    }
    p->ids[p->n++] = run_id;
    return 0;
}

int report_sweep_summaries(store *st, FILE *out, char *err, size_t errlen)
{
    sweep_points p = {.st = st, .out = out, .sweep = -1, .err = err, .errlen = errlen};
    int ret = store_each_sweep_point(st, add_point, &p, err, errlen);
    if (ret == 0 && p.n > 0)
        ret = print_sweep(&p);
    free(p.ids);
    return ret != 0 ? -1 : 0;
}
