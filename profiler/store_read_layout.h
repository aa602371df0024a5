/* store_read_layout.h — reading back how a run was laid out: the ranks it holds (with
 * their speed factors and whether their spans are kept) and DDP's bucket assignments.
 *
 * Contract: every function returns 0, or -1 with "what: SQLite's message" in (err,
 * errlen); a callback's nonzero return stops the iteration and is returned as it is (the
 * callback fills err itself).  Rows handed to a callback are borrowed for the call;
 * arrays are the caller's, filled in place.
 */
#ifndef DDPPROF_STORE_READ_LAYOUT_H
#define DDPPROF_STORE_READ_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

/* One row of table rank. */
typedef struct {
    int rank;
    double speed; /* the run's speed factor of the rank */
    int spans;    /* 1: its spans are stored, 0: not (schema 8), -1: not recorded (every rank's are) */
} store_rank_row;
typedef int (*store_rank_fn)(const store_rank_row *r, void *ctx);

/* Calls fn for each rank of run `run_id` in the rank table, ascending. */
int store_each_rank(store *st, int64_t run_id, store_rank_fn fn, void *ctx, char *err, size_t errlen);

/* The run's latest bucket assignment: its version (-1: the run has no buckets) and how
 * many buckets it has. */
int store_read_latest_buckets(store *st, int64_t run_id, int *version, int *nbuckets, char *err, size_t errlen);

/* The bytes of each bucket of the latest assignment into bytes[idx], for 0 <= idx < n:
 * the bucket table's, or where it records none (an imported trace without message
 * sizes writes 0) the largest bytes of an allreduce span of that bucket (0: none).
 * Entries of an idx the assignment lacks are left as they were. */
int store_read_latest_bucket_bytes(store *st, int64_t run_id, int64_t *bytes, int n, char *err, size_t errlen);

#endif
