/* calibrate_wakeup.h — how late forwards and backwards wake from the deadline their
 * model sets, how long the hand-off between two ops stalls, and how late a rank's next
 * iteration starts after its step, learned from measured runs (terms of
 * calibrate_run.h's costs).
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
 * calib_fit_gap_stalls() takes the k idle gaps between consecutive forwards of a rank
 * (op_overhead_us is their median): those beyond it by more than STALL_MADS median
 * absolute deviations (when at least MIN_STALLS are) are the stream's worker held off
 * its core between two ops; op_gap_stall_fraction is their share, op_gap_stall_us their
 * mean beyond the median (2-3 % of the gaps, 0.2-0.3 ms, in the calibration runs, where
 * the median is 11 us: with 4 ranks on 2 cores the worker often finds its core taken).
 * calib_fit_host_wake(), after op_overhead_us: for each rank and iteration followed by the
 * next, the time from the end of its last compute op to the start of the next
 * iteration's first op (a forward, or the buffers' broadcast) beyond op_overhead_us: the
 * host, which waited for the step in a synchronize, is woken and wakes a stream's worker
 * in turn; not after an iteration whose last compute op is a backward (it kept its
 * gradients, and predict draws no wake there).  The same split: host_wake_us and host_wake_sd_us the body's mean and
 * deviation, host_wake_stall_fraction and host_wake_stall_us the stalls' share and mean
 * beyond it; nhost_wake how many gaps.  In the calibration runs of the shipped figures:
 * a median of 90-120 us, and 3 % of stalls of 2.4 ms for a small model, 26 % for ResNet-18
 * on a crowded host (the host thread wakes behind the others' copies out and steps).
 * All four return -1 only when out of memory.
 *
 * Ownership: every pointer is borrowed for the call and none is kept; the scratch is
 * allocated and freed within each call.  calib_fit_gap_stalls() sorts `gaps` and
 * calib_stalls() sorts `ex` in place (the caller's arrays).
 */
#ifndef DDPPROF_CALIBRATE_WAKEUP_H
#define DDPPROF_CALIBRATE_WAKEUP_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/predict/calibrate_run.h"

/* Fewer stalls than this are left in the lognormal. */
#define MIN_STALLS 3
/* Stalls lie beyond the median excess by this many median absolute deviations. */
#define STALL_MADS 10.0

/* The time the gradient write of backward `o` takes at the bandwidth learned so far
 * (grad_write_gbps where learned, mem_bw_gbps otherwise; 0 for any other op), and whether
 * `o` slept to its modelled deadline: its write was shorter than its model, as predict
 * decides it (timing_op_sleeps). */
double calib_write_ns(const run_span *o, const calib_run_costs *out);
bool calib_slept(const run_span *o, const calib_run_costs *out);
int calib_fit_wakeup(const run_span *s, size_t n, calib_run_costs *out);
int calib_fit_backward_stalls(const run_span *s, size_t n, const bool *inside, calib_run_costs *out);
int calib_fit_gap_stalls(double *gaps, size_t k, calib_run_costs *out);
int calib_fit_host_wake(const run_span *s, size_t n, calib_run_costs *out);
/* The stalls among the excesses `ex` (k of them, ns; sorted here): those beyond the
 * median by STALL_MADS median absolute deviations, when at least MIN_STALLS are.  Their
 * share of k in *fraction and their mean beyond the rest's in *stall_us (both 0 without
 * stalls).  -1 only when out of memory. */
int calib_stalls(double *ex, size_t k, double *fraction, double *stall_us);

#endif
