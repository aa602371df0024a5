/* cuda_device.h — one rank's device.h on a GPU: the `cuda` backend's device.
 *
 * Contract: cuda_device_create() puts this process's one rank on its GPU
 * (cuda_plan.h's placement, NCCL's environment set first when ranks share the GPU),
 * creates the compute and comm CUDA streams, cuBLAS on the compute stream, and the
 * rank's NCCL communicator from the run's unique id (every rank of the world must call
 * it: it blocks until they have).  Ops become GPU work as cuda_plan.h says, launched
 * when enqueued; dev_record() / dev_wait() are CUDA events and cudaStreamWaitEvent, so
 * the streams order each other on the GPU exactly as DDP's do.  One poller thread per
 * device retires completed ops in order (one span per op, from CUDA events, unless
 * CUPTI's records give the spans: cupti_collect.h), and is the watchdog: a collective
 * the comm stream has reached that does not complete within timeout_s, or an NCCL
 * asynchronous error, aborts the communicator (ncclCommAbort) and fails the device with
 * the rank and the collective named; so does cuda_device_abort() (another rank failed).
 * dev_alloc() memory is cudaMalloc device memory; dev_copy() / dev_zero() reach it on a
 * transfer stream of its own.  Every CUDA, cuBLAS and NCCL call's status
 * is checked, and a failure names the call.
 */
#ifndef DDPPROF_CUDA_DEVICE_H
#define DDPPROF_CUDA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl.h>

#include "engine/device.h"
#include "profiler/nvtx_ranges.h"
#include "profiler/recorder.h"

typedef struct {
    int rank;
    int world_size;
    ncclUniqueId id;
    recorder *rec;  /* rings of this rank start at (rank - first_rank) * BACKEND_RINGS_PER_RANK */
    int first_rank;
    const prof_nvtx *nvtx;
    int64_t t0_ns;   /* the run's origin on cuda_host_clock_ns() */
    double timeout_s;
    bool cupti;      /* try CUPTI activity records (falls back to CUDA events, and says so) */
    void *owner;     /* the backend's world, returned by cuda_device_owner */
} cuda_device_config;

device *cuda_device_create(const cuda_device_config *c, char *err, size_t errlen);
/* Stops the poller, destroys the communicator (aborts it if the device failed). */
void cuda_device_destroy(device *d);
/* Fails every current and future op of this device with `why` and aborts its NCCL
 * communicator (done by the poller; returns at once). */
void cuda_device_abort(device *d, const char *why);
span_ring *cuda_device_host_ring(device *d);
void *cuda_device_owner(device *d);
/* CLOCK_MONOTONIC ns: the host clock of the backend. */
int64_t cuda_host_clock_ns(void);

#endif
