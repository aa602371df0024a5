/* launch_threads.h — starts a run's ranks as threads of this process and watches them.
 *
 * Contract: launch_threads() creates the backend's world (or uses the one given),
 * starts one thread per rank
 * (rank_run.h), and watches them every 50 ms: a rank that fails, a failed span writer
 * (recorder_failed) or an interrupt aborts the world at once, so every other rank stops
 * within its next cancellation point; nothing waits forever (collectives time out after
 * [run] timeout_s).  It returns once every rank thread has been joined, with the first
 * failure in `failure` ("" when the run completed) and rank 0's rebuilt assignment, if
 * any, in *rebuilt (free with bucket_assignment_free when *rebuilt_valid).
 */
#ifndef DDPPROF_LAUNCH_THREADS_H
#define DDPPROF_LAUNCH_THREADS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/backend.h"
#include "engine/ddp/buckets.h"
#include "engine/launch/launcher.h"
#include "engine/workload/model_zoo.h"
#include "profiler/recorder.h"
#include "engine/scenario/scenario.h"

typedef struct {
    const scenario *sc;
    const model *m;
    const backend_ops *be;
    recorder *rec;
    const prof_nvtx *nvtx;
    const launch_options *opt;
    /* Ranks [first_rank, first_rank + nranks) run here (nranks 0: every rank), in
     * `world` when given (a rank process's view of a shared world: an abort from any
     * process stops them too), else in a world of this process's own. */
    int first_rank, nranks;
    backend_world *world;
} launch_threads_args;

void launch_threads(const launch_threads_args *a, char *failure, size_t failure_len, bucket_assignment *rebuilt,
                    bool *rebuilt_valid);

#endif
