/* cpu_backend.h — the `cpu` backend's ops table (backend.h): ranks on CPU threads,
 * real gradient bytes reduced over shared memory.
 *
 * Ownership: cpu_backend_ops is a constant table for the life of the process.  A world
 * (world_create, freed by world_destroy) keeps a->rec and a->nvtx borrowed, so both
 * must outlive it and its devices; of a->sc and a->attach_to it copies what it needs.
 * A device (device_create, freed by device_destroy) keeps its world, which must outlive
 * it (backend.h).  world_handle()'s path lives as long as the world.  bench_allreduce
 * and bench_copy allocate and free their buffers within the call. */
#ifndef DDPPROF_CPU_BACKEND_H
#define DDPPROF_CPU_BACKEND_H

#include "engine/backend.h"

extern const backend_ops cpu_backend_ops;

#endif
