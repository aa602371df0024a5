/* store_equivalence.h — table `equivalence`: the rows an equivalence run writes (one per
 * training of a comparison group, weights compared with the group's reference), read
 * back for its report, and the timing figures of a run that each row records.
 *
 * Contract: the table is outside the versioned schema (files without it read as
 * before): store_ensure_equivalence_table creates it when missing, and a file without it
 * reads as holding no rows.  Every function returns 0, or -1 with "what: SQLite's
 * message" in (err, errlen); a callback's nonzero return stops the iteration and is
 * returned as it is.  A row handed to a callback, its strings included, is borrowed for
 * the call.
 */
#ifndef DDPPROF_STORE_EQUIVALENCE_H
#define DDPPROF_STORE_EQUIVALENCE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

/* One training of a comparison group. */
typedef struct {
    int64_t group_id; /* the reference run's id */
    int64_t run_id;
    const char *variant; /* "reference", "ddp", "hand-written", ... */
    int world_size;
    int nodes, gpus_per_node; /* nodes 0: no topology (NULL in the table) */
    const char *loss_reduction; /* "sum" or "mean" */
    double loss_scale, lr;
    int steps;
    /* NAN: not known (NULL in the table) */
    double max_abs_diff, rel_to_update, update_ratio, replica_max_diff;
    double step_ms, overlap_pct, collectives_per_step;
    const char *verdict;
} store_equivalence_row;

int store_ensure_equivalence_table(store *st, char *err, size_t errlen);

/* Writes (or replaces) the row of (group_id, run_id). */
int store_write_equivalence(store *st, const store_equivalence_row *row, char *err, size_t errlen);

/* Calls fn for each row of every group that holds run `run_id` (every group when run_id
 * is negative), ordered by group then run. */
typedef int (*store_equivalence_fn)(const store_equivalence_row *row, void *ctx);
int store_each_equivalence(store *st, int64_t run_id, store_equivalence_fn fn, void *ctx, char *err,
                           size_t errlen);

/* A run's figures as its equivalence row records them (NAN: not known): the job step
 * (the slowest rank's, mean over measured iterations) in ms and DDP's overlap in % over
 * measured iterations, from view iteration_stats; allreduces per measured iteration. */
typedef struct {
    double step_ms, overlap_pct, collectives_per_step;
} store_equivalence_timing;
int store_read_equivalence_timing(store *st, int64_t run_id, store_equivalence_timing *t, char *err, size_t errlen);

#endif
