/* calib_disturbed.h — which measured runs something outside them disturbed, so that
 * `calibrate --from` learns from the others.
 *
 * The measured side of a check is a median over runs, which a run slowed by the machine
 * (another tenant, a burst of interrupts) does not move; the model's terms are means over
 * every op of every run given, which one such run moves for every prediction (a last
 * round of calibration runs 1.5-7x slower than the nine before it once made every
 * predicted step 10-27 % long).  So a run whose mean step is over
 * CALIB_DISTURBED_FACTOR times the median of the runs of its point (the same name,
 * backend and world size) is left out; a point of fewer than CALIB_DISTURBED_MIN_RUNS
 * runs has no median to judge by and keeps them all.
 *
 * Ownership: every array is the caller's: step_ns, point and s are borrowed for the
 * call, leave_out and ratio (n entries) are filled in place; the scratch is freed
 * within the call.
 */
#ifndef DDPPROF_CALIB_DISTURBED_H
#define DDPPROF_CALIB_DISTURBED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/predict/calibrate_run.h"

#define CALIB_DISTURBED_FACTOR 1.5
#define CALIB_DISTURBED_MIN_RUNS 3

/* leave_out[i]: run i's step_ns over the factor times the median of the steps of the
 * runs with its point[i]; ratio[i] (when not NULL): its step over that median (0 where
 * its point has too few runs).  -1 when out of memory. */
int calib_disturbed(const double *step_ns, const int *point, size_t n, bool *leave_out, double *ratio);

/* The mean step in ns of one run's spans s[0..n) (calib_run_fit's run_span): each
 * iteration from its first span's start to its last span's end, over every rank; 0 for
 * none. */
double calib_mean_step_ns(const run_span *s, size_t n);

#endif
