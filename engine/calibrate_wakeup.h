/* calibrate_wakeup.h — how late forwards and backwards wake from the deadline their
 * model sets, learned from measured runs (terms of calibrate_run.h's costs).
 *
 * Contract: calib_fit_wakeup() takes the spans of one or more runs: over the forwards
 * that carry a model, their excess over it; beyond the median by more than STALL_MADS
 * median absolute deviations (when at least MIN_STALLS are), stalls.  op_wakeup_us and
 * op_wakeup_sd_us are the mean and standard deviation of the rest (with a mean above 0),
 * op_stall_fraction the stalls' share and op_stall_us their mean beyond op_wakeup_us;
 * nforward how many forwards.
 * calib_fit_backward_stalls(), after calib_fit_wakeup and the bandwidths: the same split
 * over the backwards that sleep to their deadline (their gradient write, at
 * grad_write_gbps where learned and mem_bw_gbps otherwise, is shorter than their model)
 * and have no time inside their rank's collectives (`inside[i]` false; inside, the
 * contention terms model them): backward_stall_fraction and backward_stall_us (their
 * mean beyond op_wakeup_us, the wake-up predict draws before a stall; not below 0);
 * nbackward how many backwards.  On the cpu backend a backward wakes while other ranks'
 * copies into the buckets hold the cores, which no forward meets: in the calibration
 * runs 5 % of the backwards outside collectives came 0.7 ms late, 1 % of the forwards.
 * Both return -1 only when out of memory.
 */
#ifndef DDPPROF_CALIBRATE_WAKEUP_H
#define DDPPROF_CALIBRATE_WAKEUP_H

#include <stdbool.h>
#include <stddef.h>

#include "calibrate_run.h"

/* Fewer stalls than this are left in the lognormal. */
#define MIN_STALLS 3
/* Stalls lie beyond the median excess by this many median absolute deviations. */
#define STALL_MADS 10.0

int calib_fit_wakeup(const run_span *s, size_t n, calib_run_costs *out);
int calib_fit_backward_stalls(const run_span *s, size_t n, const bool *inside, calib_run_costs *out);

#endif
