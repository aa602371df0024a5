/* sim_backend.c — the `sim` backend's world and its scheduler: run every rank's host
 * program until it blocks in synchronize (or ends), then time what the streams can
 * (collectives couple the ranks), then resume the hosts whose wait is over. */
#include "common/textcopy.h"
#include "engine/sim/sim_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend_common.h"
#include "engine/workload/model_zoo.h"
#include "engine/sim/sim_internal.h"

/* Stack of one rank's host program: the trainer, the reducer and this backend need a
 * few KiB; sanitizers inflate frames several times over.  Mapped lazily. */
#define SIM_STACK_BYTES (256 * 1024)
#define SIM_SPAN_RINGS 16

struct backend_world {
    sim_world w;
};

static void hosts_free(sim_world *w)
{
    for (int h = 0; w->hosts && h < w->nhosts; h++)
        sim_host_free(&w->hosts[h]);
    free(w->hosts);
    free(w->host_scratch);
    free(w->host_more_work);
    w->hosts = NULL;
    w->host_scratch = NULL;
    w->host_more_work = NULL;
    w->nhosts = 0;
}

/* The ranks that share a host's cores ([host] host_cores): a node of
 * network.gpus_per_node ranks, or the whole world. */
static int hosts_create(sim_world *w, const scenario *sc)
{
    if (sc->host_cores <= 0)
        return 0;
    w->host_ranks = scenario_host_ranks(sc);
    w->nhosts = (sc->world_size + w->host_ranks - 1) / w->host_ranks;
    w->hosts = calloc((size_t)w->nhosts, sizeof *w->hosts);
    w->host_scratch = calloc((size_t)w->host_ranks * DEV_STREAM_COUNT, sizeof *w->host_scratch);
    w->host_more_work = calloc((size_t)w->host_ranks * DEV_STREAM_COUNT, sizeof *w->host_more_work);
    if (!w->hosts || !w->host_scratch || !w->host_more_work) {
        hosts_free(w);
        return -1;
    }
    for (int h = 0; h < w->nhosts; h++) {
        int members = sc->world_size - h * w->host_ranks;
        /* A member per stream: each stream's ops are timed in start order. */
        int ranks = members < w->host_ranks ? members : w->host_ranks;
        if (sim_host_init(&w->hosts[h], sc->host_cores, sc->comm_core_weight, ranks * DEV_STREAM_COUNT) != 0) {
            hosts_free(w);
            return -1;
        }
    }
    return 0;
}

/* Whether the memory of a host's ranks fits in [host] cache_mb: the model's size,
 * built once for the world. */
static int fits_cache(const scenario *sc, bool *fits, char *err, size_t errlen)
{
    model m;
    if (model_build(sc, &m, err, errlen) != 0)
        return -1;
    *fits = timing_fits_cache(sc, m.total_numel);
    model_free(&m);
    return 0;
}

/* The world's arrays of one entry per rank or collective (NULL ones are fine). */
static void world_arrays_free(sim_world *w)
{
    free(w->devs);
    free(w->colls);
    free(w->worklist);
    free(w->runnable);
}

static int world_create(const backend_world_args *a, backend_world **out, char *err, size_t errlen)
{
    const scenario *sc = a->sc;
    if (a->create_shared || a->attach_to) {
        snprintf(err, errlen, "the sim backend runs every rank in one process (run.ranks = threads)");
        return -1;
    }
    if (sc->fault == FAULT_HANG) {
        snprintf(err, errlen, "the sim backend cannot model fault.mode = hang (virtual time has no timeout); use "
                              "exit or error");
        return -1;
    }
    backend_world *bw = calloc(1, sizeof *bw);
    sim_world *w = bw ? &bw->w : NULL;
    if (w) {
        w->devs = calloc((size_t)sc->world_size, sizeof *w->devs);
        w->worklist = calloc((size_t)sc->world_size, sizeof *w->worklist);
        w->runnable = calloc((size_t)sc->world_size, sizeof *w->runnable);
    }
    if (!w || !w->devs || !w->worklist || !w->runnable) {
        if (w)
            world_arrays_free(w);
        free(bw);
        snprintf(err, errlen, "out of memory creating a sim world of %d ranks", sc->world_size);
        return -1;
    }
    w->sc = sc;
    w->rec = a->rec;
    w->world_size = sc->world_size;
    w->detail = sc->detail;
    w->span_rings = SIM_SPAN_RINGS;
    net_model_init(&w->net, sc);
    if (hosts_create(w, sc) != 0) {
        world_arrays_free(w);
        free(bw);
        snprintf(err, errlen, "out of memory creating the hosts of a sim world of %d ranks", sc->world_size);
        return -1;
    }
    if (sc->cache_mb > 0 && fits_cache(sc, &w->fits_cache, err, errlen) != 0) {
        hosts_free(w);
        world_arrays_free(w);
        free(bw);
        return -1;
    }
    *out = bw;
    return 0;
}

bool sim_world_finish_host_ops(sim_world *w)
{
    int64_t first = INT64_MAX;
    for (int h = 0; h < w->nhosts; h++) {
        int64_t end = sim_host_next_end(&w->hosts[h], w->host_scratch);
        first = end < first ? end : first;
    }
    if (first == INT64_MAX)
        return false;
    for (int h = 0; h < w->nhosts; h++) {
        sim_host *host = &w->hosts[h];
        sim_host_finish_until(host, first);
        for (int m = 0; m < host->members; m++)
            if (host->jobs[m].pending && host->jobs[m].done)
                sim_world_push_work(w, h * w->host_ranks + m / DEV_STREAM_COUNT);
    }
    return true;
}

static void world_abort(backend_world *bw, const char *why) { sim_world_abort(&bw->w, why); }

static int world_aborted(backend_world *bw, char *why, size_t whylen)
{
    if (!bw->w.aborted)
        return 0;
    text_copy(why, whylen, bw->w.abort_reason);
    return 1;
}

static const char *world_handle(backend_world *bw)
{
    (void)bw;
    return "";
}

static void world_unlink(backend_world *bw) { (void)bw; }

static int64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void world_destroy(backend_world *bw)
{
    if (!bw)
        return;
    hosts_free(&bw->w);
    world_arrays_free(&bw->w);
    free(bw);
}

static device *device_create(backend_world *bw, int rank, char *err, size_t errlen)
{
    return sim_device_create(&bw->w, rank, err, errlen);
}

/* ------------------------------------------------------------------ scheduler */

typedef struct {
    void (*body)(void *user, int index);
    void *user;
    int index;
} fiber_arg;

static void fiber_main(void *arg)
{
    fiber_arg *fa = arg;
    fa->body(fa->user, fa->index);
}

/* Names the first collective not every rank reached, and who is missing. */
static void explain_stall(sim_world *w)
{
    char why[512];
    for (int64_t s = 0; s < w->ncolls; s++) {
        const sim_collective *c = &w->colls[s];
        if (c->end_ns >= 0)
            continue;
        snprintf(why, sizeof why, "collective %lld never completed: %d of %d ranks arrived", (long long)s,
                 c->arrived, w->world_size);
        sim_world_abort(w, why);
        return;
    }
    sim_world_abort(w, "the ranks stopped with no collective left to complete them");
}

static void mark_runnable(sim_world *w, bool *queued, int r)
{
    if (queued[r])
        return;
    queued[r] = true;
    w->runnable[w->nrunnable++] = r;
}

static void run_ranks(backend_world *bw, int nranks, void (*body)(void *user, int index), void (*watch)(void *user),
                      void *user)
{
    sim_world *w = &bw->w;
    sim_fiber **fibers = calloc((size_t)nranks, sizeof *fibers);
    fiber_arg *args = calloc((size_t)nranks, sizeof *args);
    bool *started = calloc((size_t)nranks, sizeof *started), *done = calloc((size_t)nranks, sizeof *done);
    bool *queued = calloc((size_t)nranks, sizeof *queued);
    int *batch = calloc((size_t)nranks, sizeof *batch);
    /* Every rank's stack in one mapping: one each would pass the kernel's limit on
     * mappings (vm.max_map_count) beyond 32 thousand ranks. */
    sim_fiber_pool *pool = sim_fiber_pool_create((size_t)nranks, SIM_STACK_BYTES);
    if (!fibers || !args || !started || !done || !queued || !batch) {
        sim_world_abort(w, "out of memory starting the ranks");
        goto out;
    }
    if (!pool) {
        char why[160];
        snprintf(why, sizeof why, "cannot map the stacks of %d ranks (%d KiB each, touched as they grow)", nranks,
                 SIM_STACK_BYTES / 1024);
        sim_world_abort(w, why);
        goto out;
    }
    for (int i = 0; i < nranks; i++) {
        args[i] = (fiber_arg){.body = body, .user = user, .index = i};
        mark_runnable(w, queued, i);
    }
    int ndone = 0;
    while (ndone < nranks) {
        if (watch)
            watch(user);
        /* Every host that can go on runs until it blocks or ends, in rank order of
         * becoming runnable: deterministic. */
        int n = w->nrunnable;
        memcpy(batch, w->runnable, (size_t)n * sizeof *batch);
        w->nrunnable = 0;
        for (int k = 0; k < n; k++) {
            int i = batch[k];
            queued[i] = false;
            if (!started[i]) {
                fibers[i] = sim_fiber_create(pool, (size_t)i, fiber_main, &args[i]);
                if (!fibers[i]) {
                    char why[128];
                    snprintf(why, sizeof why, "rank %d: out of memory starting its host program", i);
                    sim_world_abort(w, why);
                    /* It never started: it counts as ended. */
                    done[i] = started[i] = true;
                    ndone++;
                    continue;
                }
                started[i] = true;
                w->running = fibers[i];
                if (sim_fiber_start(fibers[i]) == 0)
                    done[i] = true;
            } else {
                w->running = fibers[i];
                if (sim_fiber_resume(fibers[i]) == 0)
                    done[i] = true;
            }
            w->running = NULL;
            if (done[i]) {
                sim_fiber_destroy(fibers[i]);
                fibers[i] = NULL;
                ndone++;
            }
        }
        /* Time what the streams can now that the hosts have enqueued their work. */
        while (w->nwork > 0) {
            int r = w->worklist[w->work_head];
            w->work_head = (w->work_head + 1) % w->world_size;
            w->nwork--;
            sim_device *d = w->devs[r];
            if (!d)
                continue;
            d->in_worklist = false;
            sim_device_advance(d);
        }
        for (int r = 0; r < nranks; r++)
            if (!done[r] && w->devs[r] && sim_device_host_ready(w->devs[r]))
                mark_runnable(w, queued, r);
        if (w->nrunnable == 0 && ndone < nranks) {
            if (w->aborted) {
                /* Ranks not yet started (or without a device) end at once. */
                for (int r = 0; r < nranks; r++)
                    if (!done[r])
                        mark_runnable(w, queued, r);
            } else if (!sim_world_finish_host_ops(w)) {
                explain_stall(w);
            }
        }
    }
out:
    if (fibers)
        for (int i = 0; i < nranks; i++)
            sim_fiber_destroy(fibers[i]);
    sim_fiber_pool_destroy(pool);
    free(fibers);
    free(args);
    free(started);
    free(done);
    free(queued);
    free(batch);
}

static int bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen)
{
    (void)iters, (void)warmup;
    scenario *sc = calloc(1, sizeof *sc);
    if (!sc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    scenario_defaults(sc);
    sc->world_size = ranks;
    net_model nm;
    net_model_init(&nm, sc);
    *us_per_iter = net_allreduce_ns(&nm, (double)bytes) / 1e3;
    scenario_free(sc);
    free(sc);
    return 0;
}

const backend_ops sim_backend_ops = {
    .name = "sim",
    .available = backend_available_always,
    .world_create = world_create,
    .world_abort = world_abort,
    .world_aborted = world_aborted,
    .world_handle = world_handle,
    .world_unlink = world_unlink,
    .clock_ns = clock_ns,
    .world_destroy = world_destroy,
    .device_create = device_create,
    .device_destroy = sim_device_destroy,
    .host_ring = sim_device_host_ring,
    .bench_allreduce = bench_allreduce,
    .run_ranks = run_ranks,
    .span_rings = SIM_SPAN_RINGS,
};
