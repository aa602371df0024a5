/* launcher.c — one run: store records, rank threads on the cpu backend, a watchdog. */
#include "textcopy.h"
#include "launcher.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "backend_cpu.h"
#include "recorder.h"
#include "reducer.h"
#include "trainer.h"
#include "verify.h"

typedef struct {
    cpu_comm *comm;
    atomic_bool stop;
    pthread_mutex_t mu;
    char first_error[512];
    bool has_error;
    const scenario *sc;
} run_ctx;

typedef struct {
    trainer_args args;
    pthread_t thread;
    bool started;
    atomic_int state; /* 0 running, 1 complete, 2 failed */
    char err[512];
} rank_slot;

static void abort_run(void *user, const char *why)
{
    run_ctx *ctx = user;
    pthread_mutex_lock(&ctx->mu);
    if (!ctx->has_error) {
        ctx->has_error = true;
        text_copy(ctx->first_error, sizeof ctx->first_error, why);
    }
    pthread_mutex_unlock(&ctx->mu);
    atomic_store(&ctx->stop, true);
    cpu_comm_abort(ctx->comm, why);
}

static int verify_hook(void *user, int rank, int iter, int micro_first, int micro_last, const dev_param *params,
                       int nparams, char *err, size_t errlen)
{
    (void)iter;
    run_ctx *ctx = user;
    return verify_averaged_gradients(ctx->sc, rank, micro_first, micro_last, params, nparams, err, errlen);
}

static void *rank_main(void *arg)
{
    rank_slot *slot = arg;
    char name[32];
    snprintf(name, sizeof name, "rank %d host", slot->args.dev->rank);
    prof_nvtx_name_thread(name);
    int rc = trainer_run(&slot->args, slot->err, sizeof slot->err);
    atomic_store(&slot->state, rc == 0 ? 1 : 2);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void draw_progress(const char *label, int done, int total, double elapsed)
{
    int width = 30, filled = total ? done * width / total : width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r%s [%s] %d/%d iterations  %.1f s", label ? label : "run", bar, done, total, elapsed);
    fflush(stderr);
}

static void shape_text(const model_param *p, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < p->ndims; d++) {
        int w = snprintf(out + len, outlen - len, "%s%lld", d ? "x" : "", (long long)p->shape[d]);
        if (w < 0 || (size_t)w >= outlen - len)
            break;
        len += (size_t)w;
    }
}

static int write_assignment(store *st, int64_t run_id, int version, const bucket_assignment *a, char *err,
                            size_t errlen)
{
    store_bucket *sb = calloc((size_t)(a->nbuckets ? a->nbuckets : 1), sizeof *sb);
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int b = 0; b < a->nbuckets; b++) {
        sb[b].nbytes = a->buckets[b].nbytes;
        sb[b].size_limit = a->buckets[b].size_limit;
        sb[b].nparams = a->buckets[b].nparams;
        sb[b].params = a->buckets[b].params;
    }
    int rc = store_write_buckets(st, run_id, version, sb, a->nbuckets, err, errlen);
    free(sb);
    return rc;
}

static int record_model(store *st, int64_t run_id, const scenario *sc, const model *m, char *err, size_t errlen)
{
    for (int p = 0; p < m->nparams; p++) {
        char shape[96];
        shape_text(&m->params[p], shape, sizeof shape);
        if (store_write_param(st, run_id, p, m->params[p].name, m->params[p].numel, shape,
                              m->layers[m->params[p].layer].name, err, errlen) != 0)
            return -1;
    }
    bucket_assignment initial;
    if (reducer_initial_assignment(m, sc, &initial) != 0) {
        snprintf(err, errlen, "out of memory computing the bucket assignment");
        return -1;
    }
    int rc = write_assignment(st, run_id, 0, &initial, err, errlen);
    bucket_assignment_free(&initial);
    return rc;
}

int launch_run(const scenario *sc, const model *m, store *st, const launch_options *opt, launch_result *res,
               char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    int world = sc->world_size;
    double speeds[SCENARIO_MAX_RANKS];
    for (int r = 0; r < world; r++)
        speeds[r] = scenario_rank_speed(sc, r);
    char *ini = scenario_to_ini(sc);
    store_run_info info = {.name = sc->name,
                           .source = sc->source,
                           .scenario_ini = ini ? ini : "",
                           .backend = "cpu",
                           .model = m->name,
                           .world_size = world,
                           .iterations = sc->iterations,
                           .warmup = sc->warmup,
                           .total_params = m->total_numel,
                           .bucket_cap_mb = sc->bucket_cap_mb,
                           .rank_speed = speeds};
    int rc = store_begin_run(st, &info, &res->run_id, err, errlen);
    free(ini);
    if (rc != 0)
        return -1;
    if (record_model(st, res->run_id, sc, m, err, errlen) != 0) {
        char ignored[256];
        store_finish_run(st, res->run_id, err, ignored, sizeof ignored);
        return -1;
    }

    /* Ranks are threads already: BLAS's own thread pool would oversubscribe the cores
     * (and busy-wait), so each BLAS call runs on its caller's thread. */
    openblas_set_num_threads(1);

    run_ctx ctx = {.sc = sc};
    atomic_init(&ctx.stop, false);
    recorder *rec = NULL;
    prof_nvtx nvtx;
    prof_nvtx_init(&nvtx);
    cpu_link_model link = {.bandwidth_gbps = sc->bandwidth_gbps,
                           .latency_us = sc->latency_us,
                           .tree = sc->algorithm == NET_TREE,
                           .pace = sc->pace};
    rank_slot *slots = calloc((size_t)world, sizeof *slots);
    atomic_int *progress = calloc((size_t)world, sizeof *progress);
    char failure[512] = "";
    bool mu_ok = pthread_mutex_init(&ctx.mu, NULL) == 0;
    if (!slots || !progress || !mu_ok || cpu_comm_create(world, sc->timeout_s, &link, &ctx.comm) != 0 ||
        recorder_create(opt->record ? st : NULL, res->run_id, world * CPU_RINGS_PER_RANK, &rec) != 0 ||
        recorder_start(rec) != 0) {
        snprintf(failure, sizeof failure, "cannot set up the run (memory or threads)");
        goto finish;
    }
    cpu_world w = {.comm = ctx.comm, .rec = rec, .nvtx = &nvtx, .world_size = world};
    w.t0_ns = cpu_clock_ns();
    double t_start = now_s();

    for (int r = 0; r < world; r++) {
        atomic_init(&slots[r].state, 0);
        atomic_init(&progress[r], 0);
        device *dev = cpu_device_create(&w, r, failure, sizeof failure);
        if (!dev) {
            abort_run(&ctx, failure);
            break;
        }
        slots[r].args = (trainer_args){.sc = sc,
                                       .m = m,
                                       .dev = dev,
                                       .host_ring = cpu_device_host_ring(dev),
                                       .progress = &progress[r],
                                       .stop_requested = &ctx.stop,
                                       .abort_run = abort_run,
                                       .abort_user = &ctx,
                                       .on_sync = opt->on_sync ? opt->on_sync : opt->verify ? verify_hook : NULL,
                                       .on_sync_user = opt->on_sync ? opt->on_sync_user : &ctx};
        int prc = pthread_create(&slots[r].thread, NULL, rank_main, &slots[r]);
        if (prc != 0) {
            snprintf(failure, sizeof failure, "cannot start rank %d's thread: %s", r, strerror(prc));
            abort_run(&ctx, failure);
            cpu_device_destroy(dev);
            slots[r].args.dev = NULL;
            break;
        }
        slots[r].started = true;
    }

    /* Watch the ranks: a failed one aborts the rest; a signal aborts all. */
    int total = sc->warmup + sc->iterations;
    bool show = opt->progress && isatty(STDERR_FILENO);
    for (;;) {
        int running = 0, min_done = total;
        for (int r = 0; r < world; r++) {
            if (!slots[r].started)
                continue;
            int s = atomic_load(&slots[r].state);
            running += s == 0;
            if (s == 2)
                abort_run(&ctx, slots[r].err);
            int d = atomic_load(&progress[r]);
            if (d < min_done)
                min_done = d;
        }
        if (opt->interrupted && *opt->interrupted)
            abort_run(&ctx, "interrupted by a signal");
        if (show)
            draw_progress(opt->label, min_done, total, now_s() - t_start);
        if (running == 0)
            break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    if (show)
        fprintf(stderr, "\n");
    for (int r = 0; r < world; r++) {
        if (slots[r].started) {
            int jrc = pthread_join(slots[r].thread, NULL);
            if (jrc != 0)
                abort_run(&ctx, "cannot join a rank thread");
        }
        cpu_device_destroy(slots[r].args.dev);
    }
    res->wall_s = now_s() - t_start;
    if (ctx.has_error)
        text_copy(failure, sizeof failure, ctx.first_error);

finish:;
    char rec_err[512] = "";
    if (rec && recorder_stop(rec, rec_err, sizeof rec_err) != 0 && !failure[0])
        text_copy(failure, sizeof failure, rec_err);
    if (rec)
        res->spans = recorder_written(rec);
    int out = 0;
    if (slots && slots[0].args.rebuilt_valid &&
        write_assignment(st, res->run_id, 1, &slots[0].args.rebuilt, err, errlen) != 0 && !failure[0])
        text_copy(failure, sizeof failure, err);
    if (store_finish_run(st, res->run_id, failure[0] ? failure : NULL, err, errlen) != 0)
        out = -1;
    res->complete = failure[0] == '\0';
    text_copy(res->error, sizeof res->error, failure);
    if (out == 0 && !res->complete)
        out = 1;
    if (slots)
        for (int r = 0; r < world; r++)
            trainer_result_free(&slots[r].args);
    free(slots);
    free(progress);
    recorder_destroy(rec);
    cpu_comm_destroy(ctx.comm);
    if (mu_ok)
        pthread_mutex_destroy(&ctx.mu);
    prof_nvtx_destroy(&nvtx);
    return out;
}
