/* calibrate.h — measuring what a model of the cpu (or another) backend must learn: the
 * time of an in-place SUM allreduce over a grid of sizes and world sizes, and the time
 * of the reducer's bucket copies (copy-in scales by 1/world, copy-out is a plain copy).
 *
 * Contract: calib_measure() runs every (world size, size) point through the backend's
 * bench_allreduce and, when the backend has bench_copy, every (kind, size) copy point
 * with as many concurrent copiers as the largest world size (ranks copy at the same
 * time in a run), and, when it has bench_dispatch, the per-op cost of its streams with
 * as many ranks at once.  Each point is timed `repeats` times and the median kept.  Memory is checked (memory_budget.h) before anything runs.  Results
 * are appended to calib_data in plan order; progress lines go to `progress` (may be
 * NULL).  The fit itself is fit_ring.h's.
 *
 * Ownership: nothing here allocates; the plan (its backend table included) and
 * `progress` are borrowed for the call, and calib_data holds its results by value.
 */
#ifndef DDPPROF_CALIBRATE_H
#define DDPPROF_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/backend.h"
#include "engine/predict/fit_ring.h"

#define CALIB_MAX_POINTS 64
#define CALIB_MAX_REPEATS 99

typedef struct {
    const backend_ops *be;
    int ranks[CALIB_MAX_POINTS];
    size_t nranks;
    int64_t sizes[CALIB_MAX_POINTS];
    size_t nsizes;
    int64_t copy_sizes[CALIB_MAX_POINTS]; /* bytes of one copy (fp32) */
    size_t ncopy;
    int iters, warmup;
    int repeats; /* each point is the median of this many timings */
} calib_plan;

typedef enum { CALIB_COPY_IN = 0, CALIB_COPY_OUT } calib_copy_kind;

typedef struct {
    calib_copy_kind kind;
    int copiers;
    int64_t bytes; /* of one buffer; the copy moves twice that (read and write) */
    double us;
} calib_copy;

typedef struct {
    ring_sample ar[CALIB_MAX_POINTS * CALIB_MAX_POINTS];
    size_t nar;
    calib_copy cp[2 * CALIB_MAX_POINTS];
    size_t ncp;
    bool copies_measured;
    char copies_skipped[256]; /* why, when !copies_measured */
    /* The backend's bench_dispatch: the mean cost of one compute-stream op beyond its
     * model, with as many ranks at once as the largest world size: ops of no length
     * (the hand-off alone) and ops timed to CALIB_DISPATCH_MODEL_NS (hand-off and the
     * wake-up after the deadline). */
    bool dispatch_measured;
    int dispatchers;
    double dispatch_us, timed_dispatch_us;
} calib_data;

/* The timed dispatch probe: ops of this modelled length (the order of a layer's op);
 * either probe runs this many ops per repetition after the warm-up. */
#define CALIB_DISPATCH_MODEL_NS 200000
#define CALIB_DISPATCH_OPS 200
#define CALIB_DISPATCH_WARMUP 20

/* 0, or -1 with err (the backend's message, or the memory check's). */
int calib_measure(const calib_plan *p, calib_data *d, FILE *progress, char *err, size_t errlen);

#endif
