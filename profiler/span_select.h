/* span_select.h — which ranks of a run keep their spans.
 *
 * Contract: up to SPAN_SELECT_ALL_UP_TO ranks every rank keeps its spans.  Above, only
 * the chosen ones do: the slowest, the fastest and the median rank by speed factor
 * (run.speeds, [skew]: known before the run, the same on every backend), the ranks at
 * the quantiles 10 %, 25 %, 75 % and 90 % of that order, rank 0, and every rank of
 * `list`; a tie is broken by the lower rank.  `list` is record.spans_ranks: "auto" (or
 * "") for those alone, "all" for every rank, or ranks separated by commas ("0,17,4095")
 * added to them.  The statistics of every rank are kept whichever ranks keep spans
 * (profiler/stats_live.h).
 * span_select_check() says whether `list` is well formed for a world of `world` ranks
 * (0, or -1 with a message naming the bad element); span_select_choose() fills keep[r]
 * (world entries, the caller's) and returns how many ranks keep their spans, or -1 with
 * err (a bad list, out of memory).  Neither keeps state.
 */
#ifndef DDPPROF_SPAN_SELECT_H
#define DDPPROF_SPAN_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#define SPAN_SELECT_ALL_UP_TO 64

int span_select_check(const char *list, int world, char *err, size_t errlen);
int span_select_choose(const char *list, int world, const double *speed, bool *keep, char *err, size_t errlen);
/* Whether `list` keeps every rank of a world of `world` ranks. */
bool span_select_keeps_all(const char *list, int world);

#endif
