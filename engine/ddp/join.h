/* join.h — uneven inputs under DDP's join() (PyTorch 1.13's Join and _DDPJoinHook).
 *
 * Contract: with ddp.join, rank r has data for skew.rank_steps[r] steps (all when the
 * list is empty).  Every forward of a rank with data starts with an allreduce of 1.0
 * (its notify_join_context); a rank out of data joins and, each iteration, answers it
 * with 0.0 (the join loop counting the ranks still training), rebuilds with the others,
 * syncs the buffers with them (from the highest rank still training, agreed by an int64
 * MAX allreduce), answers the allreduce of "does anyone sync gradients this step" (1.0
 * from a training rank on a synchronised step, else 0.0), and when someone does, shadows
 * every bucket's allreduce with zeros (and the used-parameter bitmap with
 * find_unused_parameters), in bucket order.  The gradients are divided by world_size,
 * or by the ranks still training when ddp.divide_by_initial_world_size is false.  After
 * the last step every rank takes the loop's last count (0) and the post-hook
 * _sync_final_model: the last joiners' highest rank sends its parameters and buffers to
 * all (the values, so a rank that joined early ends with the trained weights).
 *
 * Ownership: nothing here allocates; r is borrowed for the call.
 */
#ifndef DDPPROF_JOIN_H
#define DDPPROF_JOIN_H

#include <stddef.h>

#include "engine/ddp/reducer.h"

/* A joined rank's iteration `iter`: the forward's hooks (join_hooks.h), then the zero
 * buckets. */
int join_shadow_iteration(reducer *r, int iter, char *err, size_t errlen);
/* Every rank after the run's last step. */
int join_finish(reducer *r, char *err, size_t errlen);

#endif
