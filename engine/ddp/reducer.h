/* reducer.h — DDP's gradient reducer, with PyTorch's semantics, over device.h.
 *
 * Contract (per rank; every rank runs the same calls in the same order):
 *  - construction: parameters in registration order; the initial assignment (version 0)
 *    is one bucket for the whole model (PyTorch >= 1.13 without find_unused_parameters or
 *    with static_graph) or the greedy [first_bucket, bucket_cap] assignment, reversed;
 *  - prepare_backward() on synchronised steps only; grad_ready(p) as backward produces
 *    parameter p's gradient: copy into its bucket ×1/world_size (no division with a comm
 *    hook: the hook divides), and when a bucket's last gradient is in and every lower
 *    bucket was launched, record an event on compute, make comm wait on it, enqueue the
 *    bucket's SUM allreduce; buckets launch strictly in index order;
 *  - finalize_backward(): compute waits for comm, then gradients are copied out of the
 *    buckets (not with gradient_as_bucket_view: the gradients are views of the buckets);
 *  - after the first synchronised step, the next prepare_forward() rebuilds the buckets
 *    once from the observed gradient-ready order, rank 0's order broadcast to all
 *    (never with find_unused_parameters unless static_graph).
 * Collectives are numbered in launch order (seq), identically on every rank.
 */
#ifndef DDPPROF_REDUCER_H
#define DDPPROF_REDUCER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/ddp/buckets.h"
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

    bucket_assignment initial;
    bucket_assignment current;
    int version; /* 0 before the rebuild, 1 after */
    reducer_bucket *buckets;
    float *arena;        /* every bucket's memory, kept across the rebuild (device memory) */
    int64_t arena_numel;
    int *param_bucket;
    int64_t *param_offset; /* element offset of each param inside its bucket */
    bool *is_view;         /* gradient_as_bucket_view: grad already points into its bucket */

    int iter;
    int next_bucket;
    bool expect_hooks;   /* inside a synchronised backward */
    bool delay_all;      /* static_graph, first synchronised step: reduce after backward */
    int synced_steps;
    bool rebuild_due;
    int *ready_order;
    int nready;
    int32_t *bcast; /* broadcast buffer for the rebuild */
    int32_t *local_used; /* find_unused_parameters / static_graph: the used-map (0/1), int32 */
    int64_t seq;
    int32_t *scratch; /* data of the collectives that only model DDP's traffic (ddp_collectives.h) */
    int64_t scratch_len;
    bool prev_forward_synced; /* broadcast_buffers: DDP syncs buffers after a synchronised forward */
    bool join_should_sync;    /* join: some rank still training synchronises this step */
} reducer;

/* The construction-time assignment (version 0) of a model under a scenario. */
int reducer_initial_assignment(const model *m, const scenario *sc, bucket_assignment *out);
/* The greedy [first_bucket, bucket_cap] assignment walking `order` (NULL: registration
 * order, buckets sorted by smallest index). */
int reducer_sized_assignment(const model *m, const scenario *sc, const int *order, bucket_assignment *out);

int reducer_init(reducer *r, device *dev, const model *m, const scenario *sc, timing_model *timing,
                 dev_param *params, char *err, size_t errlen);
void reducer_free(reducer *r);

/* Start of a forward pass: performs the one-time rebuild when it is due. */
int reducer_prepare_forward(reducer *r, int iter, char *err, size_t errlen);
/* Start of a synchronised backward pass. */
void reducer_prepare_backward(reducer *r);
/* Parameter p's gradient has been produced (enqueued on the compute stream). */
int reducer_grad_ready(reducer *r, int p, char *err, size_t errlen);
/* End of a synchronised backward pass. */
int reducer_finalize_backward(reducer *r, char *err, size_t errlen);

#endif
