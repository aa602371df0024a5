/* cpu_backend.h — the `cpu` backend's ops table (backend.h): ranks on CPU threads,
 * real gradient bytes reduced over shared memory. */
#ifndef DDPPROF_CPU_BACKEND_H
#define DDPPROF_CPU_BACKEND_H

#include "engine/backend.h"

extern const backend_ops cpu_backend_ops;

#endif
