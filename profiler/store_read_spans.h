/* store_read_spans.h — reading a run's spans back by rank and iteration: their range of
 * iterations, what kinds of timeline they hold, each (rank, iteration)'s bounds of chosen
 * kinds, a rank's iterations, a rank's spans that bear on how its collectives overlap
 * compute, the mean span of a kind, the bucket allreduces as the `collective` view gives
 * them and each rank's arrival at each collective as `collective_arrival` does.
 * (Whole rows of spans: store_read_span_rows.h.)
 *
 * Contract: every function returns 0, or -1 with "what: SQLite's message" in (err,
 * errlen); a callback's nonzero return stops the iteration and is returned as it is (the
 * callback fills err itself).  Rows handed to a callback are borrowed for the call.
 * Times are ns on the run's clock, as stored.
 */
#ifndef DDPPROF_STORE_READ_SPANS_H
#define DDPPROF_STORE_READ_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

/* The first and last iteration of run `run_id`'s spans; *any false (first 0, last -1)
 * when it has none. */
int store_read_span_iterations(store *st, int64_t run_id, bool *any, int *first, int *last, char *err,
                               size_t errlen);

/* Whether the run has spans on a device stream (an imported trace's device timeline). */
int store_run_has_device_spans(store *st, int64_t run_id, bool *yes, char *err, size_t errlen);
/* Whether the run has a span of kind `kind` ("step": an imported trace's periods). */
int store_run_has_span_kind(store *st, int64_t run_id, const char *kind, bool *yes, char *err, size_t errlen);

/* Which spans store_each_span_group groups. */
typedef struct {
    const char *const *kinds; /* the span kinds taken (nkinds >= 1) */
    int nkinds;
    int iter_from;    /* iterations >= iter_from only */
    bool device_only; /* spans on a device stream only */
    bool of_bucket;   /* spans of a bucket only */
    bool per_bucket;  /* a group per (rank, iteration, bucket); else per (rank, iteration) */
} store_span_groups;

/* One group: its earliest start and latest end. */
typedef struct {
    int rank, iter;
    int bucket; /* -1 unless per_bucket */
    int64_t first_start_ns, last_end_ns;
} store_span_group;
typedef int (*store_span_group_fn)(const store_span_group *g, void *ctx);

/* Calls fn once per group of the run's spans that q selects, in no set order. */
int store_each_span_group(store *st, int64_t run_id, const store_span_groups *q, store_span_group_fn fn, void *ctx,
                          char *err, size_t errlen);

/* Calls fn once per iteration of rank `rank`'s spans, ascending: the group of every
 * kind (bucket -1), its first start and last end. */
int store_each_rank_iteration(store *st, int64_t run_id, int rank, store_span_group_fn fn, void *ctx, char *err,
                              size_t errlen);

/* How many spans of kind `kind` the run has and their mean duration (NAN: none). */
int store_read_span_kind_mean(store *st, int64_t run_id, const char *kind, int *count, double *mean_ns, char *err,
                              size_t errlen);

/* One span of a rank as store_each_overlap_span gives it. */
typedef struct {
    int iter;
    int64_t start_ns, end_ns;
    bool comm; /* a collective other than a bucket allreduce; else compute */
} store_overlap_span;
typedef int (*store_overlap_span_fn)(const store_overlap_span *s, void *ctx);

/* Calls fn for rank `rank`'s spans from iteration iter_from on, ordered by iteration
 * then start: those of the compute stream (on a device stream only, with device_only)
 * and those of the comm stream other than DDP's bucket allreduces. */
int store_each_overlap_span(store *st, int64_t run_id, int rank, int iter_from, bool device_only,
                            store_overlap_span_fn fn, void *ctx, char *err, size_t errlen);

/* One bucket allreduce of the `collective` view. */
typedef struct {
    int iter, bucket;
    int64_t bytes; /* -1: not known */
    int64_t last_arrival_ns, end_ns;
} store_bucket_allreduce;
typedef int (*store_bucket_allreduce_fn)(const store_bucket_allreduce *c, void *ctx);

/* Calls fn for the run's bucket allreduces from iteration iter_from on, ordered by
 * iteration then bucket. */
int store_each_bucket_allreduce(store *st, int64_t run_id, int iter_from, store_bucket_allreduce_fn fn, void *ctx,
                                char *err, size_t errlen);

/* One rank's arrival at one collective (view collective_arrival). */
typedef struct {
    int64_t seq;
    int rank;
    int64_t arrival_ns;
} store_collective_arrival;
typedef int (*store_collective_arrival_fn)(const store_collective_arrival *a, void *ctx);

/* Calls fn for each arrival of the run's collectives, ordered by collective (seq), then
 * last arrival first, then rank. */
int store_each_collective_arrival(store *st, int64_t run_id, store_collective_arrival_fn fn, void *ctx, char *err,
                                  size_t errlen);

#endif
