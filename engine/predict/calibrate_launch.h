/* calibrate_launch.h — how late an idle comm stream starts a bucket's collective, learned
 * from a measured run (a term of calibrate_run.h's costs).
 *
 * Contract: calib_fit_comm_launch() takes spans in calib_run_fit's order (by run, stream,
 * rank and start) with out->op_overhead_us already learned.  A bucket is ready on a rank
 * when its last copy in ends (the reducer records the compute stream's event there); a
 * bucket allreduce whose comm stream had nothing left to run then (its previous span
 * ended by that time) was launched by the event alone, and its delay is start - ready.
 * On a crowded host (the run's ranks outnumber out->host_cores) the delay grows with the
 * copies, steps and write-bound backwards of the other ranks running at the ready time
 * (calib_host_shared): the comm worker, below compute, waits for a core they hold.  So
 * the delays are fitted by least squares as a + b x, x those ops (0 elsewhere):
 * comm_launch_us is a beyond op_overhead_us (not below 0), comm_launch_per_op_us is b
 * (not below 0; 0 and a the mean when no launch met such ops), comm_launch_sd_us the
 * residuals' standard deviation, nlaunch how many there were (0: nothing learned) and
 * nlaunch_beside_ops how many of them met others' ops on a crowded host.
 * With out->host_cores > 0, a launch whose own rank's compute went straight on with ops on
 * the host's cores (its next such op starting within TIMING_GOES_ON_NS of the ready time,
 * each after it within that of the one before: a run of copies and writes its worker
 * holds a core for) either found a core elsewhere, after a hold of its delay, or started
 * only once that run had ended (nlaunch_behind of the nlaunch_goes_on), a hold at least
 * as long as the run, which then stays out of the line (the run explains its delay).
 * comm_launch_behind_us is the mean of an exponential hold fitted to both by maximum
 * likelihood: the holds' total over those that ended (over 1 when none did).
 * Returns -1 only when out of memory.
 */
#ifndef DDPPROF_CALIBRATE_LAUNCH_H
#define DDPPROF_CALIBRATE_LAUNCH_H

#include <stddef.h>

#include "engine/predict/calibrate_run.h"

int calib_fit_comm_launch(const run_span *s, size_t n, calib_run_costs *out);

#endif
