/* compare.c — which ranks and buckets of two runs can be compared, and the text
 * formatter of the comparison (compare.h). */
#include "reports/compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

const compare_metric compare_rank_metrics[] = {
    {"step_ms", offsetof(analysis_rank, step_ms)},
    {"compute_ms", offsetof(analysis_rank, compute_ms)},
    {"comm_ms", offsetof(analysis_rank, comm_ms)},
    {"overlap_pct", offsetof(analysis_rank, overlap_pct)},
    {"exposed_comm_ms", offsetof(analysis_rank, exposed_comm_ms)},
    {"wait_ms", offsetof(analysis_rank, wait_ms)},
};
const size_t compare_nrank_metrics = sizeof compare_rank_metrics / sizeof compare_rank_metrics[0];

const compare_metric compare_bucket_metrics[] = {
    {"ready_ms", offsetof(analysis_bucket, ready_ms)},
    {"launch_delay_ms", offsetof(analysis_bucket, launch_delay_ms)},
    {"arrival_skew_ms", offsetof(analysis_bucket, arrival_skew_ms)},
    {"transfer_ms", offsetof(analysis_bucket, transfer_ms)},
    {"busbw_gbps", offsetof(analysis_bucket, busbw_gbps)},
};
const size_t compare_nbucket_metrics = sizeof compare_bucket_metrics / sizeof compare_bucket_metrics[0];

double compare_rel_pct(double a, double b)
{
    if (isnan(a) || isnan(b) || a == 0)
        return NAN;
    return 100.0 * (b - a) / fabs(a);
}

static void note(compare_match_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(compare_match_t *m, const char *fmt, ...)
{
    if (m->nnotes >= COMPARE_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->notes[m->nnotes++], sizeof m->notes[0], fmt, ap);
    va_end(ap);
}

static const analysis_rank *find_rank(const analysis_run *r, int rank, size_t *at)
{
    for (size_t i = 0; i < r->nranks; i++)
        if (r->ranks[i].rank == rank) {
            *at = i;
            return &r->ranks[i];
        }
    return NULL;
}

/* "ranks 4..7 only in run 9" for the ranks of `r` missing from `other`. */
static void note_missing_ranks(compare_match_t *m, const analysis_run *r, const analysis_run *other)
{
    size_t missing = 0, at;
    int first = -1, last = -1;
    for (size_t i = 0; i < r->nranks; i++)
        if (!find_rank(other, r->ranks[i].rank, &at)) {
            if (first < 0)
                first = r->ranks[i].rank;
            last = r->ranks[i].rank;
            missing++;
        }
    if (missing == 1)
        note(m, "rank %d only in run %lld: not compared", first, (long long)r->id);
    else if (missing > 1)
        note(m, "%zu ranks (%d..%d) only in run %lld: not compared", missing, first, last, (long long)r->id);
}

int compare_match(const analysis_run *a, const analysis_run *b, compare_match_t *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->rank_pairs = calloc(a->nranks ? a->nranks : 1, sizeof *m->rank_pairs);
    m->bucket_pairs = calloc(a->nbuckets ? a->nbuckets : 1, sizeof *m->bucket_pairs);
    if (!m->rank_pairs || !m->bucket_pairs) {
        compare_match_free(m);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    if (a->world_size != b->world_size)
        note(m, "world sizes differ (run %lld: %d ranks, run %lld: %d): ranks compared by number, the job step "
                "time as it is",
             (long long)a->id, a->world_size, (long long)b->id, b->world_size);
    for (size_t i = 0; i < a->nranks; i++) {
        size_t j;
        if (find_rank(b, a->ranks[i].rank, &j)) {
            m->rank_pairs[m->nranks][0] = i;
            m->rank_pairs[m->nranks][1] = j;
            m->nranks++;
        }
    }
    note_missing_ranks(m, a, b);
    note_missing_ranks(m, b, a);
    if (a->nbuckets != b->nbuckets) {
        note(m, "bucket counts differ (run %lld: %zu, run %lld: %zu): the buckets hold different parameters, "
                "per-bucket figures not compared",
             (long long)a->id, a->nbuckets, (long long)b->id, b->nbuckets);
        return 0;
    }
    bool told = false;
    for (size_t i = 0; i < a->nbuckets; i++) {
        m->bucket_pairs[i][0] = i;
        m->bucket_pairs[i][1] = i;
        if (a->buckets[i].bytes != b->buckets[i].bytes && !told && (told = true))
            note(m, "bucket %d holds %lld bytes in run %lld and %lld in run %lld: compared by index", a->buckets[i].idx,
                 (long long)a->buckets[i].bytes, (long long)a->id, (long long)b->buckets[i].bytes,
                 (long long)b->id);
        m->nbuckets++;
    }
    return 0;
}

void compare_match_free(compare_match_t *m)
{
    free(m->rank_pairs);
    free(m->bucket_pairs);
    m->rank_pairs = NULL;
    m->bucket_pairs = NULL;
}

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
