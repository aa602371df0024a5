/* backend_cpu.h — the `cpu` executor: ranks are threads of one process.
 *
 * Contract: cpu_world_create() sets up the shared parts of a run (communicator, clock
 * origin, span recorder, NVTX domain); cpu_device_create() gives one rank its device
 * (device.h): a compute and a comm stream, each a worker thread that runs its queue in
 * order, sleeps each timed op to its modelled deadline, and records one span per op
 * into its own ring of the recorder.  Ring index of (rank, stream) is
 * rank * CPU_RINGS_PER_RANK + stream; the host's ring is stream DEV_STREAM_COUNT.
 */
#ifndef DDPPROF_BACKEND_CPU_H
#define DDPPROF_BACKEND_CPU_H

#include "cpu_collectives.h"
#include "device.h"
#include "nvtx_ranges.h"
#include "recorder.h"

#define CPU_RINGS_PER_RANK (DEV_STREAM_COUNT + 1)

typedef struct {
    cpu_comm *comm;
    recorder *rec;
    const prof_nvtx *nvtx;
    int64_t t0_ns; /* the run's clock origin (CLOCK_MONOTONIC) */
    int world_size;
} cpu_world;

/* Creates rank `rank`'s device and starts its stream threads.  Returns NULL on failure
 * with the reason in err. */
device *cpu_device_create(const cpu_world *w, int rank, char *err, size_t errlen);
/* Stops the stream threads (after draining or failing their queues) and frees. */
void cpu_device_destroy(device *d);
/* The host thread's span ring for this rank. */
span_ring *cpu_device_host_ring(device *d);

#endif
