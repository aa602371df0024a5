/* cupti_collect.h — CUPTI activity collection for the one rank of this process.
 *
 * Contract: cupti_collect_start() enables CUPTI's concurrent-kernel, memcpy, memset,
 * runtime, driver and external-correlation activity kinds with buffer-requested /
 * buffer-completed callbacks, relates cuptiGetTimestamp to the host clock (readings of
 * both, cupti_decode.h's clock sync; refitted for drift at every flush), and decodes
 * completed buffers with cupti_decode into spans pushed to the rank's compute and comm
 * rings (one span per kernel, memcpy or memset of an op; records of no op are counted
 * and not stored).  It returns 1 (with the reason in why) when CUPTI cannot be had here, e.g.
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED because nsys or another profiler holds
 * it: the caller then times ops with CUDA events and says so.  Around each op's launches
 * the device calls cupti_collect_push() (registers the op, pushes its external id) and
 * cupti_collect_pop().  cupti_collect_flush() forces out every completed buffer;
 * cupti_collect_stop() flushes, disables the kinds and gives the counts (dropped records
 * among them, which the caller reports).  One collector per process (CUPTI's callbacks
 * take no user pointer); its calls are safe from any thread.
 */
#ifndef DDPPROF_CUPTI_COLLECT_H
#define DDPPROF_CUPTI_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "engine/cuda/cupti_decode.h"
#include "profiler/recorder.h"
#include "profiler/span.h"

typedef struct cupti_collect cupti_collect;

typedef struct {
    int rank;
    span_ring *compute_ring, *comm_ring; /* spans on STREAM_COMM go to comm_ring */
    int64_t t0_ns;                       /* the run's origin on the host clock */
    int64_t (*host_clock_ns)(void);
    /* Optional: every span goes here instead of the rings (tests). */
    cupti_span_emit emit;
    void *emit_user;
} cupti_collect_config;

/* 0 collecting, 1 CUPTI not available here (why says why), -1 failure (why). */
int cupti_collect_start(const cupti_collect_config *cfg, cupti_collect **out, char *why, size_t whylen);
/* Records of work on `s` that no op claims get this stream. */
int cupti_collect_map_stream(cupti_collect *c, cudaStream_t s, span_stream which, char *err, size_t errlen);
/* Brackets one op's launches.  0, or -1 with err (naming the CUPTI call). */
int cupti_collect_push(cupti_collect *c, const span *op, char *err, size_t errlen);
int cupti_collect_pop(cupti_collect *c, char *err, size_t errlen);
int cupti_collect_flush(cupti_collect *c, char *err, size_t errlen);
/* An op's span timed by its CUDA events, into the same rings as CUPTI's spans (one
 * producer per ring: the decoder's). */
void cupti_collect_emit_timed(cupti_collect *c, const span *sp);
/* Flushes, stops and frees; *stats gets the decoder's final counts and *outside the
 * records that belonged to no ddpprof op (counted, not stored: they are in no
 * iteration); either may be NULL. */
void cupti_collect_stop(cupti_collect *c, cupti_decode_stats *stats, int64_t *outside);

#endif
