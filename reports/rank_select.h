/* rank_select.h — which ranks a text report shows: every rank up to 32, a summary above
 * (`--ranks all` or `--ranks 0,5,8-11` to choose), for run, predict, report, whatif and
 * compare alike.
 *
 * Contract: rank_select_parse() reads "all" or a list of ranks and ranges ("0,5,8-11");
 * 0, or -1 with err saying what is wrong.  A NULL selection is the default.
 * rank_select_summarise(): true when the default meets more than RANK_SUMMARY_ABOVE
 * ranks; the tables then show rank_summary_stat rows (min, median, p90, max over the
 * ranks that recorded iterations, each column apart) and the rows of the slowest and fastest rank
 * (rank_select_extremes: the most and the least compute ms per iteration).
 * rank_select_shows(): whether a listed (or "all", or the default below the threshold)
 * selection shows `rank`.  JSON and HTML figures are never selected: always complete.
 * The selection owns its list; rank_select_free() frees it.
 */
#ifndef DDPPROF_RANK_SELECT_H
#define DDPPROF_RANK_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "reports/analysis.h"

#define RANK_SUMMARY_ABOVE 32

typedef struct {
    bool all;    /* --ranks all */
    int *ranks;  /* --ranks LIST, ascending; NULL for the default or all */
    size_t n;
} rank_select;

int rank_select_parse(const char *text, rank_select *out, char *err, size_t errlen);
void rank_select_free(rank_select *s);

bool rank_select_summarise(const rank_select *s, size_t nranks);
bool rank_select_shows(const rank_select *s, int rank);

/* The summary's statistics of a column, in row order. */
typedef enum { RANK_MIN = 0, RANK_MEDIAN, RANK_P90, RANK_MAX, RANK_NSTATS } rank_summary_stat;
extern const char *const rank_summary_names[RANK_NSTATS];

/* v: n values (NAN ones left out; sorted in place).  The statistic, or NAN when none. */
double rank_summary_value(double *v, size_t n, rank_summary_stat which);

/* Indices into r->ranks of the slowest and fastest rank (most and least compute_ms);
 * false when no rank has a compute time. */
bool rank_select_extremes(const analysis_run *r, size_t *slowest, size_t *fastest);

/* The header's note of a summarised table: "(1024 ranks: min, median, p90, max; the
 * slowest and fastest by compute ms; --ranks all for each)", saying how many ranks
 * without spans (an imported trace's absent ranks) the statistics leave out when
 * recorded < nranks. */
void rank_summary_note(size_t nranks, size_t recorded, char *buf, size_t n);

#endif
