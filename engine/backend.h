/* backend.h — what an executor (backend) gives the engine, beside the per-rank device.
 *
 * Contract: a backend is one backend_ops table in its own folder under engine/ (like an
 * SQLite VFS); nothing outside that folder names its internals.  world_create() sets up
 * what a run's ranks share (communicator, clock origin, where spans go); device_create()
 * gives one rank its device.h streams; world_abort() makes every current and future
 * collective and stream of the world fail at once with `why` (first reason wins).
 * Destroy devices before their world.  bench_allreduce() times in-place SUM allreduces
 * of `bytes` over `ranks` for `iters` iterations after `warmup`, reporting the mean time
 * per iteration; bench_copy() times the reducer's bucket copies the same way.
 * backend_find() is the one place that lists the backends built in.
 */
#ifndef DDPPROF_BACKEND_H
#define DDPPROF_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/device.h"
#include "profiler/nvtx_ranges.h"
#include "profiler/recorder.h"
#include "engine/scenario/scenario.h"

/* Span rings per rank: one per stream plus the host's (index DEV_STREAM_COUNT). */
#define BACKEND_RINGS_PER_RANK (DEV_STREAM_COUNT + 1)

typedef struct backend_world backend_world;

typedef struct {
    const scenario *sc; /* world size, timeout, network model */
    recorder *rec; /* ring ((rank - first_rank) * BACKEND_RINGS_PER_RANK + stream); NULL: no devices */
    int first_rank; /* the lowest rank with devices in this process */
    const prof_nvtx *nvtx;
    /* Ranks as processes.  The coordinator creates the world's shared state
     * (create_shared, sized for collectives of up to stage_bytes per rank) and hands
     * world_handle() to the rank processes, which join it (attach_to).  Neither: the
     * ranks are threads of this process. */
    bool create_shared;
    size_t stage_bytes;
    const char *attach_to;
    /* The run's clock origin on this process's clock (0: now). */
    int64_t t0_ns;
} backend_world_args;

typedef struct backend_ops {
    const char *name;
    /* 1 when a run can use this backend here; 0 with the reason (no GPU, ...). */
    int (*available)(char *why, size_t whylen);
    int (*world_create)(const backend_world_args *a, backend_world **out, char *err, size_t errlen);
    void (*world_abort)(backend_world *w, const char *why);
    /* 1 with the reason once the world was aborted (by any rank or process), else 0. */
    int (*world_aborted)(backend_world *w, char *why, size_t whylen);
    /* What rank processes pass as attach_to; after every rank has joined, world_unlink()
     * removes its name so that nothing is left behind, whatever happens next. */
    const char *(*world_handle)(backend_world *w);
    void (*world_unlink)(backend_world *w);
    /* This process's clock, on the scale t0_ns is given in. */
    int64_t (*clock_ns)(void);
    void (*world_destroy)(backend_world *w);
    device *(*device_create)(backend_world *w, int rank, char *err, size_t errlen);
    void (*device_destroy)(device *d);
    span_ring *(*host_ring)(device *d);
    /* The most ranks one run of this backend can have (0: the scenario's own limit). */
    int max_world;
    int (*bench_allreduce)(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen);
    /* true: every rank is a process of its own whatever the scenario's `ranks` says
     * (a GPU context, NCCL's host id and CUPTI are per process). */
    bool one_rank_per_process;
    /* Optional (NULL: nothing to say): a note on where the ranks of `sc` run that the
     * run's record keeps ("4 ranks share 1 GPU ..."); 1 with the note, else 0. */
    int (*placement_note)(const scenario *sc, char *note, size_t notelen);
    /* The reducer's bucket copies as this backend runs them (copy-in: scale = 1/world;
     * copy-out: scale = 1): `ranks` copiers at once, each moving `bytes` of fp32 from one
     * buffer of its own to another, `iters` times after `warmup`; the mean time of one
     * copy.  NULL where the backend cannot time them. */
    int (*bench_copy)(int ranks, int64_t bytes, float scale, int iters, int warmup, double *us_per_copy,
                      char *err, size_t errlen);
    /* Optional (NULL: not measured): what one compute-stream op costs beyond its model
     * (host to stream hand-off, wake-up after the deadline, its span), `ranks` devices
     * at once each running `ops` ops of model_ns without work after `warmup`; the mean
     * excess per op in microseconds. */
    int (*bench_dispatch)(int ranks, int64_t model_ns, int ops, int warmup, double *us_per_op, char *err,
                          size_t errlen);
    /* Virtual time (NULL for backends whose ranks are threads or processes): runs the
     * host program of every rank, body(user, i) for i in [0, nranks), itself, on the
     * calling thread, and returns when all have ended; between rounds of the ranks it
     * calls watch(user), which may abort the world (an interrupt, a failed writer).
     * Its devices do no real work (device.no_buffers) and all its spans go to
     * span_rings rings, rank r's to ring r % span_rings (one producer: the calling
     * thread). */
    void (*run_ranks)(backend_world *w, int nranks, void (*body)(void *user, int index), void (*watch)(void *user),
                      void *user);
    int span_rings;
} backend_ops;

/* The backend called `name`, or NULL when none is built in by that name. */
const backend_ops *backend_find(const char *name);
/* `auto`: the first built-in backend that is available here, in order of preference
 * (cuda, then cpu); `why` says why a preferred one was passed over ("" if none was). */
const backend_ops *backend_auto(char *why, size_t whylen);
/* The names of the backends built in, comma-separated ("cpu, cuda"). */
void backend_names(char *out, size_t outlen);

#endif
