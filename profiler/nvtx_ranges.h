/* nvtx_ranges.h — NVTX ranges in the `ddpprof` domain, so Nsight Systems shows a run.
 *
 * Contract: a prof_nvtx is created once per run and shared read-only by all threads.
 * Push/pop nest per thread.  NVTX costs nothing when no tool is attached; without the
 * CUDA toolkit's headers (DDPPROF_HAVE_NVTX undefined) every call compiles to nothing.
 */
#ifndef DDPPROF_NVTX_RANGES_H
#define DDPPROF_NVTX_RANGES_H

#include <stdint.h>

typedef struct {
    void *domain;
} prof_nvtx;

void prof_nvtx_init(prof_nvtx *n);
void prof_nvtx_destroy(prof_nvtx *n);
/* Pushes a range named `msg` in colour `argb` on the calling thread. */
void prof_nvtx_push(const prof_nvtx *n, const char *msg, uint32_t argb);
void prof_nvtx_pop(const prof_nvtx *n);
/* Names the calling OS thread in the timeline ("rank 2 comm"). */
void prof_nvtx_name_thread(const char *name);

#endif
