/* compare.h — two runs side by side: `ddpprof compare DB --run A --run B`.
 *
 * Contract: figures are those of analysis.h (milliseconds, bytes, %, GB/s), each shown
 * as A, B, difference B - A and relative difference (B - A) / |A| in % (undefined,
 * printed "-" / null, when A is 0 or either figure is undefined).  The job step time is
 * step_ms_mean.  Only what is comparable is compared, and the rest is said in notes:
 * ranks present in both runs (by rank number); buckets by index only when both runs
 * show the same number of buckets (otherwise they hold different parameters and the
 * per-bucket table is left out).  compare_match() (compare_match.h) decides that; the
 * formatters print it.  JSON: {"a": {run}, "b": {run}, "step_ms": {a, b, diff,
 * rel_pct}, "ranks": [{rank, step_ms: {...}, compute_ms, comm_ms, overlap_pct,
 * exposed_comm_ms, wait_ms}], "buckets": [{idx, bytes, ready_ms, launch_delay_ms,
 * arrival_skew_ms, transfer_ms, busbw_gbps}], "not_compared": ["..."]}, run = {id,
 * name, backend, status, world_size, model, buckets, steps}.
 */
#ifndef DDPPROF_COMPARE_H
#define DDPPROF_COMPARE_H

#include <stdio.h>

#include "reports/analysis.h"
#include "reports/compare_match.h"
#include "reports/rank_select.h"
#include "reports/report.h"

/* sel: the ranks the text shows (rank_select.h; NULL: every rank up to 32, a summary above). */
int compare_text(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m,
                 const rank_select *sel, char *err, size_t errlen);
int compare_json(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m, char *err,
                 size_t errlen);

/* Loads runs a and b from st and writes the comparison.  0, or -1 with err ("no run
 * with id N", SQLite or write errors). */
int compare_write(store *st, int64_t a, int64_t b, report_format fmt, FILE *out, char *err, size_t errlen);
/* The same, the text's ranks chosen by sel (NULL: the default). */
int compare_write_ranks(store *st, int64_t a, int64_t b, report_format fmt, const rank_select *sel, FILE *out,
                        char *err, size_t errlen);

#endif
