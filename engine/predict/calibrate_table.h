/* calibrate_table.h — the bucket allreduces' measured table, learned from recorded runs
 * (terms of calibrate_run.h's costs).
 *
 * Contract: `c` holds the runs' comm spans with a seq in collective order (run, seq);
 * `load` the share of the host's cores each op got (calibrate_share.h).
 * calib_fit_allreduce() adds, per (world size, bytes), the median over the bucket
 * allreduces every rank recorded of the time from the last arrival to the end (the first
 * rank's with the cores shared, and then the collective's time alone on the host: each
 * rank's part got its core time, and alone would get min(1, cores / world) of a core) to
 * out->ar.  calib_fit_cache_allreduce(), for the runs whose memory fits in the cache and
 * after the table is learned from the others, sets out->cache_allreduce_factor to the
 * median of their collectives' times over the table's at their size (0 with none), and
 * the stalls among them: each collective's time beyond the factor times the table's,
 * split by calib_stalls (beyond the median by STALL_MADS median absolute deviations), on
 * hosts with a core per rank into cache_allreduce_stall_fraction and _us and on crowded
 * ones (world > host_cores > 0) into the crowded pair, with ncache_uncrowded and
 * ncache_crowded the collectives behind each.  In the shipped checks' calibration runs a
 * short allreduce's median was within a fifth of the table's times the factor, but
 * 1-8 % of them took 1-5 ms more (a rank's worker held off its core), which doubled
 * their mean.
 * Both return -1 only when out of memory.  calib_alone_ns() is collective g's time alone
 * on the host: with host_cores > 0 the core time each rank's part of the sums got beside
 * the copies and steps (at comm_core_weight), over the share it would get alone, min(1,
 * cores / world); else its time from the last arrival to the end.
 *
 * Ownership: c, load and g are borrowed for the call and left as they are; the
 * per-size lists and scratch are freed before the functions return, and *out holds
 * values only.
 */
#ifndef DDPPROF_CALIBRATE_TABLE_H
#define DDPPROF_CALIBRATE_TABLE_H

#include <stddef.h>

#include "engine/predict/calibrate_run.h"
#include "engine/predict/calibrate_share.h"

double calib_alone_ns(const host_load *load, const calib_collective *g, double host_cores, double comm_core_weight);
int calib_fit_allreduce(const run_span *c, size_t nc, const host_load *load, calib_run_costs *out);
int calib_fit_cache_allreduce(const run_span *c, size_t nc, const host_load *load, calib_run_costs *out);

#endif
