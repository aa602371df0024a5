/* sweep_summary.h — the answer of a sweep in one table: each point's step time, its
 * overlap and the wait of its most-waiting rank, and which point is fastest.
 *
 * Contract: report_sweep_summary() loads the given runs (analysis.h) and prints one line
 * per run in the order given ("run ID  NAME  step ms  ..."), then "best: NAME (X ms per
 * step)" naming the run with the smallest mean step; runs without a step time are
 * listed with "-" and never best.  Returns 0, or -1 with err (nothing printed).
 * report_sweep_summaries() does so for each sweep recorded in a database.
 *
 * Ownership: st, run_ids and out are borrowed for the call; the runs loaded, and the
 * sweeps' lists of ids, are freed before each function returns.
 */
#ifndef DDPPROF_SWEEP_SUMMARY_H
#define DDPPROF_SWEEP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/store.h"

int report_sweep_summary(store *st, const int64_t *run_ids, size_t n, FILE *out, char *err, size_t errlen);

/* Every sweep the database records (run.sweep, schema 7: the runs of one invocation's
 * points, by the first one's id), each as report_sweep_summary() prints it over its
 * complete runs (two or more), in the order of the sweeps.  A file older than schema 7
 * records none: nothing is printed.  Returns 0, or -1 with err. */
int report_sweep_summaries(store *st, FILE *out, char *err, size_t errlen);

#endif
