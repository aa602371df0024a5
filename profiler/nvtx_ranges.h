/* nvtx_ranges.h — NVTX ranges in the `ddpprof` domain, so Nsight Systems shows a run.
 *
 * Contract: a prof_nvtx is created once per run and shared read-only by all threads.
 * Push/pop nest per thread.  NVTX costs nothing when no tool is attached; without the
 * CUDA toolkit's headers (DDPPROF_HAVE_NVTX undefined) every call compiles to nothing.
 *
 * Ownership: prof_nvtx_init() creates the domain, which the prof_nvtx holds until
 * prof_nvtx_destroy(); the other calls borrow their arguments for the call.
 */
#ifndef DDPPROF_NVTX_RANGES_H
#define DDPPROF_NVTX_RANGES_H

#include <stdint.h>

#include "profiler/span.h"

typedef struct {
    void *domain;
} prof_nvtx;

void prof_nvtx_init(prof_nvtx *n);
void prof_nvtx_destroy(prof_nvtx *n);
/* Pushes a range named `msg` in colour `argb` on the calling thread. */
void prof_nvtx_push(const prof_nvtx *n, const char *msg, uint32_t argb);
void prof_nvtx_pop(const prof_nvtx *n);
/* The ARGB colour a range of span kind `k` is drawn in, the same whichever backend
 * pushes it, so that a kind reads alike across runs in Nsight Systems. */
uint32_t prof_nvtx_colour(span_kind k);
/* Names the calling OS thread in the timeline ("rank 2 comm"). */
void prof_nvtx_name_thread(const char *name);

#endif
