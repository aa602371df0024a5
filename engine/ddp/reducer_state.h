/* reducer_state.h — the state of one rank's DDP reducer, shared by the reducer and the
 * pieces it calls (DDP's own collectives, join's hooks, the hand-written sync).
 *
 * Contract: a plain struct; reducer_init() (reducer.h) fills it and reducer_free()
 * releases it.  The pieces below the reducer read and advance it (the collective
 * sequence `seq`, the used-parameter map, join's flags) but never call the reducer back.
 */
#ifndef DDPPROF_REDUCER_STATE_H
#define DDPPROF_REDUCER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/ddp/buckets.h"
#include "engine/ddp/param_tables.h"
#include "engine/device.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "engine/cost/timing.h"

typedef struct {
    float *buf;
    int64_t numel;
    int pending;
} reducer_bucket;

typedef struct reducer {
    device *dev;
    const model *m;
    const scenario *sc;
    timing_model *timing;
    dev_param *params; /* owned by the caller; grad pointers are re-pointed to bucket views */
    int world;

    /* The world's shared tables (param_tables.h), or NULL: a rank whose device has no
     * buffers takes its parameter table and bucket layouts from them. */
    param_tables *shared;
    bucket_assignment initial; /* a shallow copy of the shared layout's when initial_shared */
    bucket_assignment current; /* likewise when current_shared */
    bool initial_shared;
    bool current_shared;
    int version; /* 0 before the rebuild, 1 after */
    reducer_bucket *buckets;
    float *arena;        /* every bucket's memory, kept across the rebuild (device memory) */
    int64_t arena_numel;
    const int *param_bucket;     /* parameter -> bucket of `current` */
    const int64_t *param_offset; /* element offset of each param inside its bucket */
    int *own_param_bucket;       /* the storage of those two when not shared, else NULL */
    int64_t *own_param_offset;
    bool *is_view;         /* gradient_as_bucket_view: grad already points into its bucket */

    int iter;
    int next_bucket;
    bool expect_hooks;   /* inside a synchronised backward */
    bool delay_all;      /* static_graph, first synchronised step: reduce after backward */
    int synced_steps;
    bool rebuild_due;
    int *ready_order; /* rank 0 only: the others' order is never read (rank 0's is broadcast) */
    int nready;
    int32_t *bcast; /* broadcast buffer for the rebuild (a time-only device: only during it) */
    int32_t *local_used; /* find_unused_parameters / static_graph: the used-map (0/1), int32 */
    int32_t *local_used_host; /* on a device the host cannot read: the map's values, copied in
                               * before each backward (NULL where the map is host memory) */
    float *join_scalar; /* join's one-float allreduces on a device the host cannot read (dev_alloc) */
    int64_t seq;
    int32_t *scratch; /* data of the collectives that only model DDP's traffic (ddp_collectives.h) */
    int64_t scratch_len;
    bool prev_forward_synced; /* broadcast_buffers: DDP syncs buffers after a synchronised forward */
    bool join_should_sync;    /* join: some rank still training synchronises this step */
} reducer;

#endif
