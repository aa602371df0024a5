/* cuda_backend.h — the `cuda` backend's ops table (backend.h): one process per GPU,
 * CUDA streams and events, cuBLAS, NCCL, CUPTI.  Built where the CUDA toolkit is found.
 *
 * Ownership: cuda_backend_ops is a constant table for the life of the process.  A world
 * (world_create, freed by world_destroy) holds the NCCL id's text by value; a rank's
 * world (attach_to) also keeps a copy of *a, whose pointers stay borrowed: a->sc until
 * device_create, a->rec and a->nvtx for as long as the device lives (the device keeps
 * them).  The world points at its one device without owning it (device_destroy clears
 * that first), and the device points back at the world: destroy the device before the
 * world.  world_handle()'s text lives as long as the world. */
#ifndef DDPPROF_CUDA_BACKEND_H
#define DDPPROF_CUDA_BACKEND_H

#include "engine/backend.h"

extern const backend_ops cuda_backend_ops;

#endif
