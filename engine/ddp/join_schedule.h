/* join_schedule.h — uneven inputs under join: which ranks still have data at a step, and
 * what the gradients are divided by (contract of join itself in join.h).
 *
 * Contract: pure functions of the scenario (skew.rank_steps: rank r has data for
 * rank_steps[r] steps; every rank for every step when the list is empty) and, for
 * join_div_factor, of the reducer's world size and current iteration.
 *
 * Ownership: nothing here allocates; sc and r are borrowed for the call.
 */
#ifndef DDPPROF_JOIN_SCHEDULE_H
#define DDPPROF_JOIN_SCHEDULE_H

#include <stdbool.h>

#include "engine/ddp/reducer_state.h"

bool join_has_data(const scenario *sc, int rank, int iter);
int join_ranks_training(const scenario *sc, int iter);
/* The highest rank with data at `iter` (the buffers' source under join). */
int join_authoritative_rank(const scenario *sc, int iter);
/* What the gradients are divided by at the reducer's current iteration: world_size, or
 * the ranks still training when ddp.divide_by_initial_world_size is false. */
float join_div_factor(const reducer *r);

#endif
