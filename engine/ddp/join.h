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
 */
#ifndef DDPPROF_JOIN_H
#define DDPPROF_JOIN_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/ddp/reducer.h"

bool join_has_data(const scenario *sc, int rank, int iter);
int join_ranks_training(const scenario *sc, int iter);
/* The highest rank with data at `iter` (the buffers' source under join). */
int join_authoritative_rank(const scenario *sc, int iter);
/* What the gradients are divided by at the reducer's current iteration. */
float join_div_factor(const reducer *r);

/* In DDP's forward, before the rebuild: the notify / count allreduce. */
int join_notify(reducer *r, char *err, size_t errlen);
/* In DDP's forward, after the buffers: the requires-grad-sync allreduce. */
int join_grad_sync_check(reducer *r, char *err, size_t errlen);
/* A joined rank's iteration `iter`: the hooks above, then the zero buckets. */
int join_shadow_iteration(reducer *r, int iter, char *err, size_t errlen);
/* Every rank after the run's last step. */
int join_finish(reducer *r, char *err, size_t errlen);

#endif
