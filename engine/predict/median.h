/* median.h — the median of a list of doubles, for the fits that learn from measured
 * spans (calibrate_run.c, calibrate_wakeup.c).
 *
 * Contract: median_sort() sorts v[0..n) in place (n > 0) and returns its median (the
 * mean of the two middle values when n is even).
 *
 * Ownership: v is the caller's, reordered in place; nothing is allocated or kept.
 */
#ifndef DDPPROF_MEDIAN_H
#define DDPPROF_MEDIAN_H

#include <stddef.h>

double median_sort(double *v, size_t n);

#endif
