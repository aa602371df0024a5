/* cuda_backend.h — the `cuda` backend's ops table (backend.h): one process per GPU,
 * CUDA streams and events, cuBLAS, NCCL, CUPTI.  Built where the CUDA toolkit is found. */
#ifndef DDPPROF_CUDA_BACKEND_H
#define DDPPROF_CUDA_BACKEND_H

#include "engine/backend.h"

extern const backend_ops cuda_backend_ops;

#endif
