/* analysis_internal.h — what the parts of analysis_load() (reports/analysis*.c) share:
 * the per-rank-iteration rows read once from the store, the conversions every part
 * uses, and each part's entry point.  Nothing outside reports/analysis*.c includes it;
 * the public contract is analysis.h.
 *
 * Ownership: each part fills fields of the analysis_run it is given, which owns what
 * they point at until analysis.c's free_run (analysis_free); the rows of
 * analysis_load_its are the caller's to free, and the other parts only borrow them.
 * Every fallible function returns 0, or -1 with err. */
#ifndef DDPPROF_ANALYSIS_INTERNAL_H
#define DDPPROF_ANALYSIS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"
#include "profiler/store_read_stats.h"
#include "reports/analysis.h"

#define NS_PER_MS 1e6

static inline double ms(double ns)
{
    return ns / NS_PER_MS;
}

/* Whether the run's statistics are read from those stored at its end or the views. */
static inline store_stats_from stats_from(const analysis_run *r)
{
    return r->stored_stats ? STORE_STATS_STORED : STORE_STATS_VIEWS;
}

/* One rank-iteration of the run, in ns. */
typedef struct {
    int rank, iter;
    bool warmup;
    int64_t step, compute, comm, overlap, exposed, wait, step_start;
} its_row;

static inline bool counted(const analysis_run *r, const its_row *w)
{
    return r->all_iterations || !w->warmup;
}

/* analysis_steps.c: the run's rank-iteration rows, ordered by (rank, iter), into a
 * malloc'ed *rows (the caller frees); the step statistics and the representative
 * iteration; the per-rank figures (ranks[]). */
int analysis_load_its(store *st, const analysis_run *r, its_row **rows, size_t *nrows, char *err,
                      size_t errlen);
int analysis_step_stats(analysis_run *r, const its_row *rows, size_t n, char *err, size_t errlen);
int analysis_rank_stats(store *st, analysis_run *r, const its_row *rows, size_t n, char *err,
                        size_t errlen);

/* analysis_imports.c: HTA's figures of each rank (after analysis_rank_stats), and an
 * imported run's source files and host steps. */
int analysis_load_hta(store *st, analysis_run *r, char *err, size_t errlen);
int analysis_load_sources(store *st, analysis_run *r, char *err, size_t errlen);

/* analysis_stragglers.c: the ranks the others wait for (after analysis_rank_stats). */
int analysis_find_stragglers(analysis_run *r, char *err, size_t errlen);

/* analysis_buckets.c: the per-bucket figures (after analysis_step_stats). */
int analysis_bucket_stats(store *st, analysis_run *r, const its_row *rows, size_t nrows, char *err,
                          size_t errlen);

#endif
