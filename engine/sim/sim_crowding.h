/* sim_crowding.h — what a rank's ops lose to its own comm stream and to the other ranks'
 * work on its host, for sim_device.c's timing of each op.
 *
 * Contract: every function takes a live rank of the world.
 * sim_contention_modelled(): whether its forwards and backwards slow down while its comm
 * stream moves data ([device] comm_slowdown or [host] comm_wakeup_us, sim_contention.h).
 * sim_comm_busy_bound(): while the comm stream's head collective has every rank but this
 * rank's end is not known yet (its part of the sums, or its copy out, still on the host's
 * cores), true with the stream busy from *from to no earlier than *until.  The sums' end
 * is known only once the host runs to it, which waits for the ranks' other work to be
 * submitted: a forward or backward that ends inside that interval needs no more to be
 * timed, and the copies behind it then share the cores with the sums.
 * sim_ends_inside_busy(): times contended op `e` from `start` against the comm stream's
 * busy intervals and that one: 1 with *end when it ends before `until`, 0 when it does
 * not, -1 when out of memory.
 * sim_late_exit_ns(): how late this rank leaves bucket allreduce `e`, which ends at `end`
 * (the draw of sim_collective.c, on a host of fewer cores than ranks, for every rank but
 * the first of its host out): only when its compute stream has nothing to run but what
 * waits for the collective (mid-backward every rank's compute is busy alike and they
 * leave together), and no later than the cores would be free of the copies and steps the
 * ranks already out have submitted and queued, which hold the cores its comm worker
 * queues for.
 * sim_compute_wake_late_ns(): how late a compute stream that idled until its comm
 * stream's event at `at` starts what follows, on a host of fewer cores than ranks: the
 * draw, no later than the cores would be free of the work the host's ranks have
 * submitted and queued.
 * sim_comm_launch_crowded_ns(): how much later than its drawn late start an idle comm
 * stream starts the collective behind its compute stream's event at `at`, on a host of
 * fewer cores than ranks: [host] comm_launch_per_op_us for each copy, step or
 * write-bound backward of the host's other ranks running at `at` (the comm worker runs
 * below compute and waits for a core one of them holds).
 */
#ifndef DDPPROF_SIM_CROWDING_H
#define DDPPROF_SIM_CROWDING_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/sim/sim_internal.h"

bool sim_contention_modelled(const sim_device *d);
bool sim_comm_busy_bound(sim_device *d, int64_t *from, int64_t *until);
int sim_ends_inside_busy(sim_device *d, const sim_entry *e, int64_t start, int64_t from, int64_t until,
                         int64_t *end);
int64_t sim_late_exit_ns(const sim_device *d, const sim_entry *e, int64_t end);
int64_t sim_compute_wake_late_ns(sim_device *d, int64_t at);
int64_t sim_comm_launch_crowded_ns(const sim_device *d, int64_t at);

#endif
