/* calibrate_launch.h — how late an idle comm stream starts a bucket's collective, learned
 * from a measured run (a term of calibrate_run.h's costs).
 *
 * Contract: calib_fit_comm_launch() takes spans in calib_run_fit's order (by run, stream,
 * rank and start) with out->op_overhead_us already learned.  A bucket is ready on a rank
 * when its last copy in ends (the reducer records the compute stream's event there); a
 * bucket allreduce whose comm stream had nothing left to run then (its previous span
 * ended by that time) was launched by the event alone, and its delay is start - ready.
 * comm_launch_us is the mean delay beyond op_overhead_us (not below 0), comm_launch_sd_us
 * the delays' standard deviation, nlaunch how many there were (0: nothing learned).
 * Returns -1 only when out of memory.
 */
#ifndef DDPPROF_CALIBRATE_LAUNCH_H
#define DDPPROF_CALIBRATE_LAUNCH_H

#include <stddef.h>

#include "calibrate_run.h"

int calib_fit_comm_launch(const run_span *s, size_t n, calib_run_costs *out);

#endif
