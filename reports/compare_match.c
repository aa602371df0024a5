/* compare_match.c — which ranks and buckets of two runs can be compared, and why the
 * rest cannot (compare_match.h); the figures compared and their relative difference,
 * for both formatters. */
#include "reports/compare_match.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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
