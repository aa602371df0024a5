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

#include <stddef.h>

#include "engine/ddp/reducer_state.h"


/* `shared` (may be NULL): the world's tables, used when dev has no buffers. */
int reducer_init(reducer *r, device *dev, const model *m, const scenario *sc, timing_model *timing,
                 dev_param *params, param_tables *shared, char *err, size_t errlen);
void reducer_free(reducer *r);

/* Start of a forward pass: performs the one-time rebuild when it is due. */
int reducer_prepare_forward(reducer *r, int iter, char *err, size_t errlen);
/* Start of a synchronised backward pass. */
int reducer_prepare_backward(reducer *r, char *err, size_t errlen);
/* Parameter p's gradient has been produced (enqueued on the compute stream). */
int reducer_grad_ready(reducer *r, int p, char *err, size_t errlen);
/* End of a synchronised backward pass. */
int reducer_finalize_backward(reducer *r, char *err, size_t errlen);
/* Fills *op with bucket b's allreduce as the comm hook sends it (its dtype, bytes and
 * prescale), numbered next in r's collective sequence; the caller enqueues it on the
 * comm stream.  Also what a joined rank shadows each bucket with (join.h). */
void reducer_bucket_allreduce_op(reducer *r, int b, dev_op *op);

#endif
