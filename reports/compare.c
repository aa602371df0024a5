/* compare.c — the text formatter of the comparison, and compare_write, which loads
 * both runs, matches them (compare_match.c) and hands them to a formatter (compare.h). */
#include "reports/compare.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

/* ---------------------------------------------------------------- text */

static double field(const void *base, size_t offset)
{
    double v;
    memcpy(&v, (const char *)base + offset, sizeof v);
    return v;
}

static void num(FILE *out, double v, const char *fmt)
{
    if (isnan(v) || isinf(v))
        fprintf(out, " %12s", "-");
    else
        fprintf(out, fmt, v);
}

static void row_fmt(FILE *out, const char *label, const char *metric, double a, double b, bool whole)
{
    fprintf(out, "%-12s %-16s", label, metric);
    num(out, a, whole ? " %12.0f" : " %12.3f");
    num(out, b, whole ? " %12.0f" : " %12.3f");
    num(out, isnan(a) || isnan(b) ? NAN : b - a, whole ? " %+12.0f" : " %+12.3f");
    num(out, compare_rel_pct(a, b), " %+11.1f%%");
    fputc('\n', out);
}

static void row(FILE *out, const char *label, const char *metric, double a, double b)
{
    row_fmt(out, label, metric, a, b, false);
}

static void run_line(FILE *out, const char *tag, const analysis_run *r)
{
    fprintf(out, "run %s: %lld \"%s\" (%s, %s, %d ranks, %s, %zu buckets, %d steps)\n", tag, (long long)r->id,
            r->name ? r->name : "", r->backend ? r->backend : "?", r->status ? r->status : "?", r->world_size,
            r->model ? r->model : "?", r->nbuckets, r->steps);
}

static void header(FILE *out, const char *first)
{
    fprintf(out, "%-12s %-16s %12s %12s %12s %12s\n", first, "figure", "A", "B", "B-A", "(B-A)/A");
}

/* A matched pair of ranks, one row per figure; the first row names the rank. */
static void rank_rows(FILE *out, const char *tag, const analysis_rank *x, const analysis_rank *y)
{
    char label[32];
    snprintf(label, sizeof label, "%s%d", tag, x->rank);
    for (size_t k = 0; k < compare_nrank_metrics; k++)
        row(out, k == 0 ? label : "", compare_rank_metrics[k].name, field(x, compare_rank_metrics[k].offset),
            field(y, compare_rank_metrics[k].offset));
}

/* Above 32 matched ranks (rank_select.h): each figure's min, median, p90 and max over A's
 * ranks and over B's, then the slowest and fastest rank of B (by compute ms) beside A's
 * same rank.  -1 out of memory. */
static int rank_summary(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m)
{
    double *va = malloc(m->nranks * sizeof *va), *vb = malloc(m->nranks * sizeof *vb);
    if (!va || !vb) {
        free(va);
        free(vb);
        return -1;
    }
    char note[256];
    size_t recorded = 0;
    for (size_t i = 0; i < m->nranks; i++)
        recorded += b->ranks[m->rank_pairs[i][1]].iterations > 0;
    rank_summary_note(m->nranks, recorded, note, sizeof note);
    fprintf(out, "%s\n", note);
    header(out, "ranks");
    for (int stat = 0; stat < RANK_NSTATS; stat++)
        for (size_t k = 0; k < compare_nrank_metrics; k++) {
            for (size_t i = 0; i < m->nranks; i++) {
                const analysis_rank *x = &a->ranks[m->rank_pairs[i][0]], *y = &b->ranks[m->rank_pairs[i][1]];
                va[i] = x->iterations > 0 ? field(x, compare_rank_metrics[k].offset) : NAN;
                vb[i] = y->iterations > 0 ? field(y, compare_rank_metrics[k].offset) : NAN;
            }
            row(out, k == 0 ? rank_summary_names[stat] : "", compare_rank_metrics[k].name,
                rank_summary_value(va, m->nranks, (rank_summary_stat)stat),
                rank_summary_value(vb, m->nranks, (rank_summary_stat)stat));
        }
    free(va);
    free(vb);
    size_t slowest = 0, fastest = 0;
    if (!rank_select_extremes(b, &slowest, &fastest))
        return 0;
    for (size_t i = 0; i < m->nranks; i++)
        if (m->rank_pairs[i][1] == slowest)
            rank_rows(out, "slowest ", &a->ranks[m->rank_pairs[i][0]], &b->ranks[slowest]);
    for (size_t i = 0; i < m->nranks; i++)
        if (m->rank_pairs[i][1] == fastest)
            rank_rows(out, "fastest ", &a->ranks[m->rank_pairs[i][0]], &b->ranks[fastest]);
    return 0;
}

int compare_text(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m,
                 const rank_select *sel, char *err, size_t errlen)
{
    run_line(out, "A", a);
    run_line(out, "B", b);
    double sa = a->step_ms_mean, sb = b->step_ms_mean, ra = compare_rel_pct(sa, sb);
    char ta[32] = "-", tb[32] = "-", td[32] = "-";
    if (!isnan(sa))
        snprintf(ta, sizeof ta, "%.3f", sa);
    if (!isnan(sb))
        snprintf(tb, sizeof tb, "%.3f", sb);
    if (!isnan(sa) && !isnan(sb))
        snprintf(td, sizeof td, "%+.3f", sb - sa);
    fprintf(out, "job step time: A %s ms, B %s ms, B-A %s ms", ta, tb, td);
    if (isnan(ra))
        fprintf(out, " (relative difference undefined)\n");
    else
        fprintf(out, " (%+.1f%% of A)\n", ra);
    fprintf(out, "\nper rank (means per iteration; overlap in %%, its difference in points)\n");
    if (rank_select_summarise(sel, m->nranks)) {
        if (rank_summary(out, a, b, m) < 0) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
    } else {
        header(out, "rank");
        for (size_t i = 0; i < m->nranks; i++)
            if (rank_select_shows(sel, a->ranks[m->rank_pairs[i][0]].rank))
                rank_rows(out, "", &a->ranks[m->rank_pairs[i][0]], &b->ranks[m->rank_pairs[i][1]]);
    }
    if (m->nbuckets > 0) {
        fprintf(out, "\nper bucket\n");
        header(out, "bucket");
        for (size_t i = 0; i < m->nbuckets; i++) {
            const analysis_bucket *x = &a->buckets[m->bucket_pairs[i][0]], *y = &b->buckets[m->bucket_pairs[i][1]];
            char label[16];
            snprintf(label, sizeof label, "%d", x->idx);
            row_fmt(out, label, "bytes", (double)x->bytes, (double)y->bytes, true);
            for (size_t k = 0; k < compare_nbucket_metrics; k++)
                row(out, "", compare_bucket_metrics[k].name, field(x, compare_bucket_metrics[k].offset),
                    field(y, compare_bucket_metrics[k].offset));
        }
    }
    for (int i = 0; i < m->nnotes; i++)
        fprintf(out, "%snote: %s\n", i == 0 ? "\n" : "", m->notes[i]);
    if (fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing the comparison failed");
        return -1;
    }
    return 0;
}

int compare_write(store *st, int64_t a_id, int64_t b_id, report_format fmt, FILE *out, char *err, size_t errlen)
{
    return compare_write_ranks(st, a_id, b_id, fmt, NULL, out, err, errlen);
}

int compare_write_ranks(store *st, int64_t a_id, int64_t b_id, report_format fmt, const rank_select *sel, FILE *out,
                        char *err, size_t errlen)
{
    analysis_run *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (analysis_load(st, a_id, &a, &na, err, errlen) != 0)
        return -1;
    if (analysis_load(st, b_id, &b, &nb, err, errlen) != 0) {
        analysis_free(a, na);
        return -1;
    }
    compare_match_t m;
    int rc = compare_match(a, b, &m, err, errlen);
    if (rc == 0)
        rc = fmt == REPORT_JSON ? compare_json(out, a, b, &m, err, errlen) : compare_text(out, a, b, &m, sel, err, errlen);
    compare_match_free(&m);
    analysis_free(a, na);
    analysis_free(b, nb);
    return rc;
}
