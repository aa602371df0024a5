/* stats_live.h — a run's per-rank and per-collective statistics, computed from its spans
 * as they are recorded, so that the ranks whose spans are not stored (span_select.h)
 * still have theirs.
 *
 * Contract: stats_live_add() takes every span of the run, each once, in the order one
 * rank's spans were recorded (the ranks may interleave); one thread at a time (the span
 * writer's).  The figures are those store_compute_stats computes from the stored spans
 * (store_stats.c, the definitions of the views), exactly: per (rank, iter) the step's
 * start and end, the unions of compute (C), allreduce (M) and both, and the wait at the
 * allreduces; per collective (seq) its iteration, kind, bucket, bytes, first and last
 * arrival, end and how many ranks took part.  Two things are assumed of the order and
 * checked, and stats_live_exact() is false when either fails (the caller then computes
 * the statistics from the stored spans, as before): a rank's spans of one iteration
 * arrive before any of its spans SPAN_LIVE_WINDOW iterations later, and a rank has at
 * most one span per collective.
 * stats_live_finish() closes what is open and computes the waits, once, after the last
 * span; then the rows are read with stats_live_iterations / stats_live_collectives
 * (sorted by rank and iteration, and by seq; the pointers stay the live's).
 * stats_live_free() frees everything; NULL is fine.
 */
#ifndef DDPPROF_STATS_LIVE_H
#define DDPPROF_STATS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/span.h"

#define SPAN_LIVE_WINDOW 3

typedef struct stats_live stats_live;

/* One rank-iteration, as iteration_stat stores it (overlap = c + m - u, exposed = u - c). */
typedef struct {
    int rank, iter;
    int64_t step_start, step_end, c, m, u, wait;
} stats_live_iteration;

/* One collective, as collective_stat stores it (bucket, bytes -1: NULL). */
typedef struct {
    int64_t seq;
    int iter, bucket, kind;
    int64_t bytes, first_arrival, last_arrival, end, nranks;
} stats_live_collective;

/* A span of a rank-iteration that counts in its unions: compute stream (STATS_C),
 * allreduce (STATS_M), or both. */
enum { STATS_C = 1, STATS_M = 2 };
typedef struct {
    int64_t start, end;
    int flags;
} stats_interval;

/* Sorts v by (start, end) and sets the union lengths of its C set, its M set and of
 * both (the views' windowed sums; store_stats.c computes stored spans' with it too). */
void stats_unions(stats_interval *v, size_t n, int64_t *c, int64_t *m, int64_t *u);

stats_live *stats_live_create(int world_size);
/* 0, or -1 when out of memory (the live is then not exact). */
int stats_live_add(stats_live *l, const span *s);
int stats_live_finish(stats_live *l);
bool stats_live_exact(const stats_live *l);
/* Why it is not exact (empty when it is). */
const char *stats_live_why_not(const stats_live *l);
const stats_live_iteration *stats_live_iterations(const stats_live *l, size_t *n);
const stats_live_collective *stats_live_collectives(const stats_live *l, size_t *n);
/* The lowest seq of a collective named DDP_REBUILD_SPAN_NAME, -1 when none. */
int64_t stats_live_rebuild_seq(const stats_live *l);
void stats_live_free(stats_live *l);

#endif
