/* store_read_layout.h — reading back how a run was laid out: the ranks it holds (with
 * their speed factors and whether their spans are kept) and DDP's bucket assignments.
 *
 * Contract: every function returns 0, or -1 with "what: SQLite's message" in (err,
 * errlen); a callback's nonzero return stops the iteration and is returned as it is (the
 * callback fills err itself).  Rows handed to a callback are borrowed for the call;
 * arrays are the caller's, filled in place, except store_read_span_ranks's, which it
 * allocates and the caller frees.
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

/* The ranks whose spans the file holds, ascending, into a malloc'ed array (*ranks NULL
 * and *n 0 on failure): those of the rank table whose spans are stored (schema 8
 * rank.spans not 0; every one in an older file) and any that recorded spans without a
 * row there. */
int store_read_span_ranks(store *st, int64_t run_id, int **ranks, size_t *n, char *err, size_t errlen);

/* Calls fn for each bucket assignment of the run (0: DDP's initial one, 1: rebuilt),
 * ascending, with its number of buckets. */
typedef int (*store_bucket_version_fn)(int version, int nbuckets, void *ctx);
int store_each_bucket_version(store *st, int64_t run_id, store_bucket_version_fn fn, void *ctx, char *err,
                              size_t errlen);

/* One bucket of an assignment, as table bucket holds it. */
typedef struct {
    int idx;
    int64_t nbytes; /* 0: not recorded (an imported trace without message sizes) */
    int nparams;
} store_bucket_row;
typedef int (*store_bucket_row_fn)(const store_bucket_row *b, void *ctx);

/* Calls fn for each bucket of assignment `version` of the run, in no set order. */
int store_each_bucket(store *st, int64_t run_id, int version, store_bucket_row_fn fn, void *ctx, char *err,
                      size_t errlen);

/* The run's latest bucket assignment: its version (-1: the run has no buckets) and how
 * many buckets it has. */
int store_read_latest_buckets(store *st, int64_t run_id, int *version, int *nbuckets, char *err, size_t errlen);

/* The bytes of each bucket of the latest assignment into bytes[idx], for 0 <= idx < n:
 * the bucket table's, or where it records none (an imported trace without message
 * sizes writes 0) the largest bytes of an allreduce span of that bucket (0: none).
 * Entries of an idx the assignment lacks are left as they were. */
int store_read_latest_bucket_bytes(store *st, int64_t run_id, int64_t *bytes, int n, char *err, size_t errlen);

#endif
