/* rank_select.c — which ranks a text report shows, and the summary's statistics
 * (rank_select.h). */
#include "reports/rank_select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

const char *const rank_summary_names[RANK_NSTATS] = {"min", "median", "p90", "max"};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A rank number: digits only, in int range. */
static int parse_rank(const char *s, const char *end, int *out)
{
    if (s == end || (size_t)(end - s) > 9)
        return -1;
    int v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

int rank_select_parse(const char *text, rank_select *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!strcmp(text, "all")) {
        out->all = true;
        return 0;
    }
    size_t cap = 0;
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *dash = memchr(p, '-', (size_t)(end - p));
        int lo, hi;
        if (parse_rank(p, dash ? dash : end, &lo) != 0 || (dash && parse_rank(dash + 1, end, &hi) != 0) ||
            (dash && hi < lo) || (dash && hi - lo >= 65536)) {
            set_err(err, errlen, "--ranks %s: want all, or ranks and ranges such as 0,5,8-11", text);
            rank_select_free(out);
            return -1;
        }
        if (!dash)
            hi = lo;
        for (int r = lo; r <= hi; r++) {
            if (out->n == cap) {
                cap = cap ? 2 * cap : 16;
                int *grown = realloc(out->ranks, cap * sizeof *grown);
                if (!grown) {
                    set_err(err, errlen, "out of memory");
                    rank_select_free(out);
                    return -1;
                }
                out->ranks = grown;
            }
            out->ranks[out->n++] = r;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    qsort(out->ranks, out->n, sizeof *out->ranks, cmp_int);
    return 0;
}

void rank_select_free(rank_select *s)
{
    if (!s)
        return;
    free(s->ranks);
    memset(s, 0, sizeof *s);
}

bool rank_select_summarise(const rank_select *s, size_t nranks)
{
    return (!s || (!s->all && s->n == 0)) && nranks > RANK_SUMMARY_ABOVE;
}

bool rank_select_shows(const rank_select *s, int rank)
{
    if (!s || s->all || s->n == 0)
        return true;
    return bsearch(&rank, s->ranks, s->n, sizeof *s->ranks, cmp_int) != NULL;
}

double rank_summary_value(double *v, size_t n, rank_summary_stat which)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(v, k, sizeof *v, cmp_double);
    switch (which) {
    case RANK_MIN: return v[0];
    case RANK_MEDIAN: return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    case RANK_P90: return v[(size_t)ceil(0.9 * (double)k) - 1]; /* nearest rank */
    case RANK_MAX: return v[k - 1];
    default: return NAN;
    }
}

bool rank_select_extremes(const analysis_run *r, size_t *slowest, size_t *fastest)
{
    bool any = false;
    for (size_t i = 0; i < r->nranks; i++) {
        double c = r->ranks[i].compute_ms;
        if (isnan(c))
            continue;
        if (!any || c > r->ranks[*slowest].compute_ms)
            *slowest = i;
        if (!any || c < r->ranks[*fastest].compute_ms)
            *fastest = i;
        any = true;
    }
    return any;
}

void rank_summary_note(size_t nranks, size_t recorded, char *buf, size_t n)
{
    char without[64] = "";
    if (recorded < nranks)
        snprintf(without, sizeof without, ", %zu without spans left out", nranks - recorded);
    snprintf(buf, n,
             "(%zu ranks%s: min, median, p90, max; the slowest and fastest by compute ms; --ranks all for each)",
             nranks, without);
}
