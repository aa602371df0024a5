/* sim_backend.h — the `sim` backend: every rank of a run in virtual time, on one thread.
 *
 * Contract: backend.h.  Ranks are coroutines (sim_fiber.h), not threads; their devices
 * (sim_internal.h) model each op's duration (timing.h) and each collective's transfer
 * (netmodel.h) and do no real work, so a run needs no parameter, gradient or bucket
 * memory.  The same scenario and seed give the same spans, run after run: nothing
 * depends on the wall clock or on addresses.  Never chosen by `auto`.
 *
 * Ownership: sim_backend_ops is a constant table for the life of the process.  A world
 * (world_create, freed by world_destroy) keeps a->sc and a->rec borrowed: both must
 * outlive it and its devices.  A device (device_create, freed by device_destroy)
 * registers itself in its world and keeps it, so the world must outlive it (backend.h).
 * world_handle() returns a constant "".  bench_allreduce allocates and frees a scenario
 * within the call.
 */
#ifndef DDPPROF_SIM_BACKEND_H
#define DDPPROF_SIM_BACKEND_H

#include "engine/backend.h"

extern const backend_ops sim_backend_ops;

#endif
