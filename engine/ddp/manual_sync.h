/* manual_sync.h — the hand-written alternative to DDP: after backward, allreduce every
 * gradient, then divide by the world size.
 *
 * Contract: what a training script does without DDP,
 *     for p in model.parameters(): dist.all_reduce(p.grad); p.grad /= world_size
 * once backward has finished: the comm stream waits for the whole backward, one SUM
 * allreduce per parameter (last registered first, the order backward produced them),
 * then the compute stream waits for all of them and divides each gradient in place.
 * Nothing overlaps backward, and there are as many collectives as parameters.
 *
 * Ownership: nothing here allocates; the ops enqueued point at r's gradient buffers
 * (r->params[p].grad), which must outlive the streams' work on them.
 */
#ifndef DDPPROF_MANUAL_SYNC_H
#define DDPPROF_MANUAL_SYNC_H

#include <stddef.h>

#include "engine/ddp/reducer_state.h"

/* Enqueues the allreduces and divisions of one synchronised step.  0, or -1 with err. */
int manual_sync_after_backward(reducer *r, char *err, size_t errlen);

#endif
