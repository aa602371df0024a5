/* calibrate_weight.h — the weight of the bucket allreduces' sums beside the copies and
 * steps on a host's cores ([host] comm_core_weight), learned from measured runs.
 *
 * Each bucket allreduce of the runs gives its time alone on the host (calib_alone_ns) at
 * a weight: its core time beside what ran with it, over its share alone.  At the right
 * weight the collectives of one size agree whether they met copies or not; so the fit
 * takes the weight, on a grid from 1/16 to 4, whose alone times spread least around their
 * size's median (the sum of squared log ratios), where it does better than the prior by
 * CALIB_WEIGHT_MIN_GAIN, else the prior: the comm workers' scheduler weight beside the
 * compute workers (CPU_COMM_CFS_WEIGHT, cpu/cpu_priority.h).  On this machine the spread
 * varied by 2 % over the whole grid once the cpu backend's spurious wake-ups were gone
 * (check 043316: 284.3-290.6): the runs do not decide, and the scheduler's ratio does.
 * Over sixteen checks the grid's best weight ranged from 0.074 to 1 and bettered the prior
 * by 0.01-1.73 %, and by 2.37 % (0.354) on one whose calibration runs were disturbed (25
 * left out, the prior's spread 498 against 240-443): at a gain of 2 % that weight was
 * taken and every prediction out of cache came out 7-10 % long.  So a weight of the grid
 * must better the prior by 10 %, as a host whose scheduler shares otherwise would.
 * With fewer than 8 collectives that met other work, 1 (and nweighted 0).
 *
 * Contract: calib_fit_comm_weight() takes calib_run_fit's spans `s` (by_place order) and
 * comm spans `c` (collective order), the host's cores (> 0) and the sleeping backwards'
 * write bandwidth the load counts (host_load_build; 0: none); sets
 * out->comm_core_weight and out->nweighted (the collectives behind it).  -1 only when out
 * of memory.  calib_weight_beats_prior() is its rule: whether the grid's least spread
 * `least` (over `nmet` collectives) betters the prior's `at_prior` by
 * CALIB_WEIGHT_MIN_GAIN, beyond rounding.
 *
 * Ownership: s and c are borrowed for the call; the grid's arrays and each weight's
 * host_load are allocated and freed within it.
 */
#ifndef DDPPROF_CALIBRATE_WEIGHT_H
#define DDPPROF_CALIBRATE_WEIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/predict/calibrate_run.h"
#include "engine/cpu/cpu_priority.h"

#define CALIB_WEIGHT_MIN_GAIN 0.10
#define CALIB_WEIGHT_PRIOR CPU_COMM_CFS_WEIGHT

bool calib_weight_beats_prior(double least, double at_prior, size_t nmet);
int calib_fit_comm_weight(const run_span *s, size_t n, const run_span *c, size_t nc, double write_gbps,
                          calib_run_costs *out);

#endif
