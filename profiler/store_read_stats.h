/* store_read_stats.h — a run's statistics read back for its report: per rank-iteration
 * (steps, compute, communication, overlap, wait), per bucket (its collectives' timings,
 * and when each rank had it ready and arrived at its allreduce).
 *
 * Contract: each reader takes its figures either from the tables a run's statistics
 * were stored in when it ended (STORE_STATS_STORED: iteration_stat, collective_stat,
 * bucket_ready_stat; schema 4) or from the store's views over the run's spans
 * (STORE_STATS_VIEWS: iteration_stats, collective, collective_arrival, in their
 * one-run form, store_view_select), which define the same figures: the caller chooses,
 * with store_run_has_stored_stats, and reads a run still recording from its spans.
 * Every function returns 0, or -1 with "what: SQLite's message" in (err, errlen); a
 * callback's nonzero return stops the iteration and is returned as it is (the callback
 * fills err itself).  Rows handed to a callback are borrowed for the call.  Times are
 * ns on the run's clock.
 */
#ifndef DDPPROF_STORE_READ_STATS_H
#define DDPPROF_STORE_READ_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

typedef enum {
    STORE_STATS_VIEWS,  /* computed from the spans now */
    STORE_STATS_STORED, /* as stored when the run ended */
} store_stats_from;

/* Whether the run's statistics were stored (false in a file older than schema 4). */
int store_run_has_stored_stats(store *st, int64_t run_id, bool *yes, char *err, size_t errlen);

/* One rank-iteration (view iteration_stats' columns). */
typedef struct {
    int rank, iter;
    bool warmup;
    int64_t step_ns, compute_ns, comm_ns, overlap_ns, exposed_comm_ns, wait_ns, step_start_ns;
} store_iteration_stat;
typedef int (*store_iteration_stat_fn)(const store_iteration_stat *w, void *ctx);

/* Calls fn for each rank-iteration of the run, ordered by rank then iteration. */
int store_each_iteration_stat(store *st, int64_t run_id, store_stats_from from, store_iteration_stat_fn fn,
                              void *ctx, char *err, size_t errlen);

/* A bucket's collectives, averaged (NAN: no value to average). */
typedef struct {
    int bucket;
    int collectives; /* how many the means are over */
    double arrival_skew_ns, transfer_ns, bytes, busbw_gbps;
} store_bucket_collectives;
typedef int (*store_bucket_collectives_fn)(const store_bucket_collectives *c, void *ctx);

/* Calls fn for each bucket that has collectives in iterations >= iter_from (every
 * iteration when iter_from < 0), in no set order. */
int store_each_bucket_collectives(store *st, int64_t run_id, store_stats_from from, int iter_from,
                                  store_bucket_collectives_fn fn, void *ctx, char *err, size_t errlen);

/* A bucket on a rank-iteration: when its last gradient was copied in (its last copy_in
 * span's end) and when the rank arrived at its allreduce. */
typedef struct {
    int bucket, rank, iter;
    int64_t ready_ns;
    bool arrived; /* false: no allreduce of it on that rank-iteration */
    int64_t arrival_ns;
} store_bucket_ready;
typedef int (*store_bucket_ready_fn)(const store_bucket_ready *b, void *ctx);

/* Calls fn for each (bucket, rank, iteration) with a copy_in span, grouped by bucket
 * (ascending). */
int store_each_bucket_ready(store *st, int64_t run_id, store_stats_from from, store_bucket_ready_fn fn, void *ctx,
                            char *err, size_t errlen);

#endif
