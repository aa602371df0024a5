/* compare.c — the text formatter of the comparison, and compare_write, which loads
 * both runs, matches them (compare_match.c) and hands them to a formatter (compare.h). */
#include "reports/compare.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
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
    fprintf(out, "%-8s %-16s", label, metric);
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
    fprintf(out, "%-8s %-16s %12s %12s %12s %12s\n", first, "figure", "A", "B", "B-A", "(B-A)/A");
}

int compare_text(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m, char *err,
                 size_t errlen)
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
    header(out, "rank");
    for (size_t i = 0; i < m->nranks; i++) {
        const analysis_rank *x = &a->ranks[m->rank_pairs[i][0]], *y = &b->ranks[m->rank_pairs[i][1]];
        char label[16];
        snprintf(label, sizeof label, "%d", x->rank);
        for (size_t k = 0; k < compare_nrank_metrics; k++)
            row(out, k == 0 ? label : "", compare_rank_metrics[k].name, field(x, compare_rank_metrics[k].offset),
                field(y, compare_rank_metrics[k].offset));
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

int compare_write(sqlite3 *db, int64_t a_id, int64_t b_id, report_format fmt, FILE *out, char *err, size_t errlen)
{
    analysis_run *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (analysis_load(db, a_id, &a, &na, err, errlen) != 0)
        return -1;
    if (analysis_load(db, b_id, &b, &nb, err, errlen) != 0) {
        analysis_free(a, na);
        return -1;
    }
    compare_match_t m;
    int rc = compare_match(a, b, &m, err, errlen);
    if (rc == 0)
        rc = fmt == REPORT_JSON ? compare_json(out, a, b, &m, err, errlen) : compare_text(out, a, b, &m, err, errlen);
    compare_match_free(&m);
    analysis_free(a, na);
    analysis_free(b, nb);
    return rc;
}
