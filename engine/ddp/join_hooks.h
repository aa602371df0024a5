/* join_hooks.h — the collectives join adds to every forward of DDP (PyTorch 1.13's
 * _DDPJoinHook), called by the reducer and by a joined rank's shadow iteration.
 *
 * Contract: each is a one-element float32 SUM allreduce on the comm stream, numbered in
 * the reducer's collective sequence and waited for (the host reads the sum).
 * join_notify sends 1.0 from a rank with data, 0.0 from a joined one (the count of ranks
 * still training); join_grad_sync_check sends 1.0 from a rank with data on a synchronised
 * step and sets r->join_should_sync when any rank sent 1.0.  0, or -1 with err.
 *
 * Ownership: r, name and sum are borrowed for the call.  On a device whose memory is the
 * heap the float each allreduce sums is a local of join_scalar_allreduce(), alive until it
 * has synchronised the comm stream; on one the host cannot read (a GPU) it is one float of
 * dev_alloc()'s, allocated at the first call and kept in the reducer (freed with it).
 */
#ifndef DDPPROF_JOIN_HOOKS_H
#define DDPPROF_JOIN_HOOKS_H

#include <stddef.h>

#include "engine/ddp/reducer_state.h"

/* In DDP's forward, before the rebuild: the notify / count allreduce. */
int join_notify(reducer *r, char *err, size_t errlen);
/* In DDP's forward, after the buffers: the requires-grad-sync allreduce. */
int join_grad_sync_check(reducer *r, char *err, size_t errlen);
/* A one-element float32 allreduce of `value` named `name`, waited for; *sum (if not
 * NULL) receives the sum over ranks. */
int join_scalar_allreduce(reducer *r, float value, const char *name, float *sum, char *err, size_t errlen);

#endif
