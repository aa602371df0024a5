/* cpu_device.h — one rank's device.h on the `cpu` backend.
 *
 * Contract: a cpu_world holds the shared parts of a run (communicator, clock origin,
 * span recorder, NVTX domain; see cpu_backend.c); cpu_device_create() gives one rank its device
 * (device.h): a compute and a comm stream, each a worker thread that runs its queue in
 * order, sleeps each timed op to its modelled deadline, and records one span per op
 * into its own ring of the recorder.  Ring index of (rank, stream) is
 * rank * BACKEND_RINGS_PER_RANK + stream; the host's ring is stream DEV_STREAM_COUNT.
 */
#ifndef DDPPROF_CPU_DEVICE_H
#define DDPPROF_CPU_DEVICE_H

#include "engine/backend.h"
#include "engine/cpu/cpu_collectives.h"
#include "engine/device.h"
#include "profiler/nvtx_ranges.h"
#include "profiler/recorder.h"

typedef struct {
    cpu_comm *comm;
    recorder *rec;
    const prof_nvtx *nvtx;
    int64_t t0_ns; /* the run's clock origin (CLOCK_MONOTONIC) */
    int world_size;
    int first_rank; /* rings of rank r start at (r - first_rank) * BACKEND_RINGS_PER_RANK */
} cpu_world;

/* Creates rank `rank`'s device and starts its stream threads.  Returns NULL on failure
 * with the reason in err. */
device *cpu_device_create(const cpu_world *w, int rank, char *err, size_t errlen);
/* Stops the stream threads (after draining or failing their queues) and frees. */
void cpu_device_destroy(device *d);
/* How often stream s has woken the threads waiting on it (another stream's wait for
 * one of its events, a synchronize): once per awaited ticket reached, not once per op. */
uint64_t cpu_device_waiter_wakeups(device *d, dev_stream s);
/* The host thread's span ring for this rank. */
span_ring *cpu_device_host_ring(device *d);

#endif
