/* rank_run.h — runs one rank of a run, however it was started (a thread or a process).
 *
 * Contract: rank_run() asks the backend for this rank's device in the given world, runs
 * the trainer on it (trainer.h), and gives the device back.  On failure the rank has
 * already told the others through trainer_args.abort_run.  The trainer's outputs (the
 * bucket assignments) stay in a->trainer until trainer_result_free(&a->trainer).
 * Returns 0, or -1 with err naming the rank and what failed.
 */
#ifndef DDPPROF_RANK_RUN_H
#define DDPPROF_RANK_RUN_H

#include "engine/backend.h"
#include "engine/ddp/trainer.h"

typedef struct {
    const backend_ops *be;
    backend_world *world;
    int rank;
    trainer_args trainer; /* everything but dev and host_ring, which rank_run() fills */
} rank_run_args;

int rank_run(rank_run_args *a, char *err, size_t errlen);

#endif
