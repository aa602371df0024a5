/* calibrate_exit.h — how late ranks waiting for a bucket allreduce leave it, and how late
 * their compute goes on after the last one, on a host with fewer cores than ranks, learned
 * from measured runs (terms of calibrate_run.h's costs).
 *
 * Contract: calib_fit_comm_exit() takes the spans in calib_run_fit's order (by run,
 * stream, rank and start) and the comm spans with a seq grouped by collective (run, seq),
 * with out->host_cores set.  Only runs whose world outnumbers host_cores count (with a
 * core each, a woken comm worker runs at once), and only bucket allreduces every rank
 * recorded.  A rank waits for one when its compute stream has no span between the last
 * arrival and the first rank's end; each such rank but the first out leaves `end - first
 * end` after it, late when that passes CALIB_EXIT_LATE_NS.  comm_exit_late_fraction is
 * the late share of those ranks, comm_exit_late_us and comm_exit_late_sd_us the late
 * ones' mean and standard deviation; nexit how many ranks were looked at (0: nothing
 * learned, all three left 0).
 * calib_fit_compute_wake() takes the same spans: for the last bucket allreduce of each
 * iteration that every rank recorded, in the same crowded runs, each rank whose compute
 * stream has no span running at its end goes on with its next compute span (the copies
 * out) `start - end` after it, late when that passes CALIB_EXIT_LATE_NS:
 * compute_wake_late_fraction, compute_wake_late_us, compute_wake_late_sd_us and nwake
 * likewise.  Allocates nothing.
 */
#ifndef DDPPROF_CALIBRATE_EXIT_H
#define DDPPROF_CALIBRATE_EXIT_H

#include <stddef.h>

#include "engine/predict/calibrate_run.h"

/* A comm worker woken on a free core leaves within tens of microseconds; one queued
 * behind another thread's time slice leaves milliseconds later. */
#define CALIB_EXIT_LATE_NS 500000

void calib_fit_comm_exit(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out);
void calib_fit_compute_wake(const run_span *s, size_t n, const run_span *c, size_t nc, calib_run_costs *out);

#endif
