/* calib_from_run.h — `ddpprof calibrate --from DB --run ID`: the spans of measured runs
 * read from a database, each forward given its modelled duration (the run's stored
 * scenario, rebuilt), and handed to calib_run_fit (engine/predict/calibrate_run.h).
 *
 * Contract: 0 with `out` filled and `about` naming the runs (their names, backends and
 * world sizes; cut short in "..." when longer than aboutlen); -1 with err: a run that is
 * not in the database, not complete, or whose stored scenario no longer loads, or out of
 * memory.  Warm-up iterations are left out, as the reports
 * leave them out, and so are runs something outside them disturbed (calib_disturbed.h:
 * a mean step over 1.5x the median of the runs of its name, backend and world size),
 * each named in `about` with its step over that median.  host_cores: the cores the runs' ranks shared (calibrate_run.h); below 0,
 * this machine's when every run is on the cpu backend (its ranks are processes here), else 0.
 * cache_mb: the last-level cache of a host (calibrate_run.h); below 0, this machine's
 * when every run is on the cpu backend, else 0.
 *
 * Ownership: st and runs are borrowed for the call; the spans, rows and scenarios it
 * reads are freed before it returns.  *out holds values only, and `about` is the
 * caller's buffer.
 */
#ifndef DDPPROF_CALIB_FROM_RUN_H
#define DDPPROF_CALIB_FROM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/predict/calibrate_run.h"
#include "profiler/store.h"

int calib_from_runs(store *st, const int64_t *runs, int nruns, double host_cores, double cache_mb,
                    calib_run_costs *out, char *about, size_t aboutlen, char *err, size_t errlen);

#endif
