/* report.h — the ddpprof report of one run or of every run, as text or JSON.
 *
 * Contract: report_write() computes the figures (analysis.h) and hands them to one
 * formatter; nothing is written to `out` unless the analysis succeeded.  Figures and
 * their definitions are those of analysis.h.
 *
 * Text (per-rank tables: every rank up to 32, above that a summary, rank_select.h):
 * per run a header (id, name, status and error, backend, world size, model,
 * parameters, iterations measured / warm-up, bucket counts, step time) and aligned
 * tables with units in the column names: per rank, step attribution per rank, per
 * bucket.  Undefined figures print as "-".
 *
 * HTML: one self-contained page (inline CSS and SVG) with the same figures, drawn;
 * each figure element carries data-json, its path in the JSON report.
 *
 * JSON: one object {"runs": [...]}; every figure under a unit-suffixed key
 * ("step_ms_mean", "overlap_pct", "busbw_gbps", "bytes"); undefined figures are null.
 * Per run: id, name, status ('complete', 'failed', 'running', or 'abandoned' for a
 * run left 'running' by a writer that is gone), status_detail (the writer of a
 * running or abandoned run and what became of it; null otherwise), error, backend,
 * world_size, model, total_params, source, started_at, finished_at, iterations_planned,
 * warmup_planned, bucket_cap_mb,
 * iterations_measured, iterations_warmup, all_iterations, buckets_initial,
 * buckets_rebuilt, bucket_version, steps, step_ms_mean/min/max, representative_iter
 * (the iteration the HTML timeline shows), ranks[] (rank, speed,
 * iterations, step_ms, compute_ms, comm_ms, overlap_pct, exposed_comm_ms, wait_ms,
 * attribution {compute_ms, exposed_transfer_ms, exposed_wait_ms, other_ms}),
 * buckets[] (idx, bytes, nparams, collectives, ready_samples, ready_ms,
 * launch_delay_ms, arrival_skew_ms, transfer_ms, busbw_gbps), record_detail ("op", or
 * "phase" when compute spans were merged per phase: the text header says so too),
 * stragglers[] (every rank the others wait for, analysis.h), straggler_rank (the first,
 * or null) and straggler_others_wait_ms.
 */
#ifndef DDPPROF_REPORT_H
#define DDPPROF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/store.h"
#include "reports/analysis.h"
#include "reports/rank_select.h"

typedef enum { REPORT_TEXT = 0, REPORT_JSON, REPORT_HTML } report_format;

/* Reports run `run_id`, or every run when run_id is -1, to `out`.  Returns 0, or -1
 * with err ("no run with id N", "no runs in DB", an SQLite or write error). */
int report_write(store *st, int64_t run_id, report_format fmt, FILE *out, char *err, size_t errlen);
/* The same with the text's per-rank tables showing `sel`'s ranks (rank_select.h; NULL:
 * every rank up to 32, a summary above).  JSON and HTML are always complete. */
int report_write_ranks(store *st, int64_t run_id, report_format fmt, const rank_select *sel, FILE *out,
                       char *err, size_t errlen);

/* The formatters, for callers that already hold the figures.  Return 0 or -1 with err. */
int report_text(FILE *out, const analysis_run *runs, size_t nruns, const rank_select *sel, char *err,
                size_t errlen);
int report_json(FILE *out, const analysis_run *runs, size_t nruns, char *err, size_t errlen);
/* HTML also reads each run's representative iteration's spans from st
 * (report_html.c says what the page holds). */
int report_html(FILE *out, store *st, const analysis_run *runs, size_t nruns, char *err, size_t errlen);

#endif
