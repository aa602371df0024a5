/* launcher.h — runs one scenario end to end on a backend and records it.
 *
 * Contract: launch_run() records the run ('running'), its parameters and initial
 * buckets (run_record.h), starts the span writer, has the ranks started and watched
 * (launch_threads.h), and ends the run 'complete' or 'failed' (with the error naming
 * the rank and collective) — spans recorded until the failure are kept.  A rank that
 * fails or hangs, a failed span write (disk full) or an interrupt aborts the others:
 * nothing waits forever (collectives time out after [run] timeout_s).
 * Returns 0 when the run completed, 1 when it failed at run time (recorded as failed),
 * -1 when it could not be recorded at all (err says why).
 *
 * Ownership: launch_run() borrows sc, m, st, be and opt (with what opt points to) for
 * the call and keeps none of them; what it makes for the run (span writer, statistics,
 * the rebuilt bucket assignment) it frees before it returns.  *res holds values only.
 */
#ifndef DDPPROF_LAUNCHER_H
#define DDPPROF_LAUNCHER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "profiler/store.h"
#include "engine/ddp/trainer.h"

typedef struct {
    bool verify;   /* check the averaged gradients exactly after every synchronised step */
    bool record;   /* false: spans are counted, not stored (profiler cost measurement) */
    bool progress; /* progress bar on stderr (only when stderr is a terminal) */
    const char *label;
    const atomic_int *interrupted; /* set by a signal handler; may be NULL */
    /* Called on each rank after each synchronised step (instead of the built-in check
     * that `verify` selects); may be NULL. */
    trainer_sync_hook on_sync;
    void *on_sync_user;
    /* Ranks as processes started by ddpprof: the command line each rank process runs
     * (this one's), and the sweep point it is at. */
    char *const *self_argv;
    int sweep_point;
} launch_options;

typedef struct {
    int64_t run_id;
    bool complete;
    char error[512];
    double wall_s;
    int64_t spans;
} launch_result;

int launch_run(const scenario *sc, const model *m, store *st, const backend_ops *be, const launch_options *opt,
               launch_result *res, char *err, size_t errlen);

#endif
