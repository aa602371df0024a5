/* compare.h — two runs side by side: `ddpprof compare DB --run A --run B`.
 *
 * Contract: figures are those of analysis.h (milliseconds, bytes, %, GB/s), each shown
 * as A, B, difference B - A and relative difference (B - A) / |A| in % (undefined,
 * printed "-" / null, when A is 0 or either figure is undefined).  The job step time is
 * step_ms_mean.  Only what is comparable is compared, and the rest is said in notes:
 * ranks present in both runs (by rank number); buckets by index only when both runs
 * show the same number of buckets (otherwise they hold different parameters and the
 * per-bucket table is left out).  compare_match() decides that; the formatters print
 * it.  JSON: {"a": {run}, "b": {run}, "step_ms": {a, b, diff, rel_pct}, "ranks":
 * [{rank, step_ms: {...}, compute_ms, comm_ms, overlap_pct, exposed_comm_ms,
 * wait_ms}], "buckets": [{idx, bytes, ready_ms, launch_delay_ms, arrival_skew_ms,
 * transfer_ms, busbw_gbps}], "not_compared": ["..."]}, run = {id, name, backend,
 * status, world_size, model, buckets, steps}.
 */
#ifndef DDPPROF_COMPARE_H
#define DDPPROF_COMPARE_H

#include <stdio.h>

#include "reports/analysis.h"
#include "reports/report.h"

#define COMPARE_MAX_NOTES 8

typedef struct {
    size_t nranks;
    size_t (*rank_pairs)[2]; /* indices into a->ranks, b->ranks */
    size_t nbuckets;
    size_t (*bucket_pairs)[2];
    int nnotes;
    char notes[COMPARE_MAX_NOTES][160];
} compare_match_t;

/* 0, or -1 with err (out of memory).  Free with compare_match_free. */
int compare_match(const analysis_run *a, const analysis_run *b, compare_match_t *m, char *err, size_t errlen);
void compare_match_free(compare_match_t *m);

/* (b - a) / |a| in %, NAN when undefined. */
double compare_rel_pct(double a, double b);

int compare_text(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m, char *err,
                 size_t errlen);
int compare_json(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m, char *err,
                 size_t errlen);

/* Loads runs a and b from db and writes the comparison.  0, or -1 with err ("no run
 * with id N", SQLite or write errors). */
int compare_write(sqlite3 *db, int64_t a, int64_t b, report_format fmt, FILE *out, char *err, size_t errlen);

/* The figures compared, for both formatters: name (unit-suffixed) and where it is. */
typedef struct {
    const char *name;
    size_t offset; /* of a double in analysis_rank / analysis_bucket */
} compare_metric;

extern const compare_metric compare_rank_metrics[];
extern const size_t compare_nrank_metrics;
extern const compare_metric compare_bucket_metrics[]; /* doubles; bytes is apart */
extern const size_t compare_nbucket_metrics;

#endif
