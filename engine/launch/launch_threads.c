/* launch_threads.c — ranks as threads of one process, a watchdog over them. */
#include "common/textcopy.h"
#include "engine/launch/launch_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/launch/rank_run.h"
#include "engine/ddp/verify.h"

typedef struct {
    const backend_ops *be;
    backend_world *world;
    atomic_bool stop;
    pthread_mutex_t mu;
    char first_error[512];
    bool has_error;
    const scenario *sc;
} run_ctx;

typedef struct {
    rank_run_args args;
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
    if (ctx->world)
        ctx->be->world_abort(ctx->world, why);
}

static int verify_hook(void *user, int rank, int iter, int micro_first, int micro_last, const dev_param *params,
                       int nparams, char *err, size_t errlen)
{
    (void)iter;
    run_ctx *ctx = user;
    return verify_averaged_gradients(ctx->sc, rank, micro_first, micro_last, params, nparams, err, errlen);
}

/* Virtual time: the backend runs every rank's host program itself, on this thread. */
typedef struct {
    const launch_threads_args *a;
    run_ctx *ctx;
    rank_slot *slots;
} coop_run;

static void rank_body(void *user, int index)
{
    rank_slot *slot = &((coop_run *)user)->slots[index];
    int rc = rank_run(&slot->args, slot->err, sizeof slot->err);
    atomic_store(&slot->state, rc == 0 ? 1 : 2);
}

/* Between the backend's rounds: what watch_ranks() checks for threads. */
static void coop_watch(void *user)
{
    coop_run *cr = user;
    char why[512];
    if (cr->a->rec && recorder_failed(cr->a->rec, why, sizeof why))
        abort_run(cr->ctx, why);
    if (cr->a->opt->interrupted && atomic_load(cr->a->opt->interrupted))
        abort_run(cr->ctx, "interrupted by a signal");
}

static void *rank_main(void *arg)
{
    rank_slot *slot = arg;
    char name[32];
    snprintf(name, sizeof name, "rank %d host", slot->args.rank);
    prof_nvtx_name_thread(name);
    int rc = rank_run(&slot->args, slot->err, sizeof slot->err);
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

static int first_rank(const launch_threads_args *a) { return a->nranks ? a->first_rank : 0; }
static int rank_count(const launch_threads_args *a) { return a->nranks ? a->nranks : a->sc->world_size; }

static void prepare_ranks(const launch_threads_args *a, run_ctx *ctx, rank_slot *slots, atomic_int *progress,
                          param_tables *shared)
{
    const launch_options *opt = a->opt;
    for (int i = 0; i < rank_count(a); i++) {
        int r = i + first_rank(a);
        atomic_init(&slots[i].state, 0);
        atomic_init(&progress[i], 0);
        slots[i].args = (rank_run_args){
            .be = a->be,
            .world = ctx->world,
            .rank = r,
            .trainer = {.sc = a->sc,
                        .m = a->m,
                        .progress = &progress[i],
                        .stop_requested = &ctx->stop,
                        .abort_run = abort_run,
                        .abort_user = ctx,
                        .on_sync = opt->on_sync ? opt->on_sync : opt->verify ? verify_hook : NULL,
                        .on_sync_user = opt->on_sync ? opt->on_sync_user : ctx,
                        .shared = shared,
                        /* launch_threads() reads the first slot's rebuilt assignment only. */
                        .keep_assignments = i == 0}};
    }
}

static void start_ranks(const launch_threads_args *a, run_ctx *ctx, rank_slot *slots)
{
    for (int i = 0; i < rank_count(a); i++) {
        int r = i + first_rank(a);
        int prc = pthread_create(&slots[i].thread, NULL, rank_main, &slots[i]);
        if (prc != 0) {
            char why[128];
            snprintf(why, sizeof why, "cannot start rank %d's thread: %s", r, strerror(prc));
            abort_run(ctx, why);
            break;
        }
        slots[i].started = true;
    }
}

/* Returns when no rank thread is running any more. */
static void watch_ranks(const launch_threads_args *a, run_ctx *ctx, rank_slot *slots, atomic_int *progress)
{
    int world = rank_count(a), total = a->sc->warmup + a->sc->iterations;
    bool show = a->opt->progress && isatty(STDERR_FILENO);
    double t_start = now_s();
    for (;;) {
        int running = 0, min_done = total;
        for (int r = 0; r < world; r++) {
            if (!slots[r].started)
                continue;
            int s = atomic_load(&slots[r].state);
            running += s == 0;
            if (s == 2)
                abort_run(ctx, slots[r].err);
            int d = atomic_load(&progress[r]);
            if (d < min_done)
                min_done = d;
        }
        char why[512];
        if (a->rec && recorder_failed(a->rec, why, sizeof why))
            abort_run(ctx, why);
        /* Another process may have aborted a shared world. */
        if (!atomic_load(&ctx->stop) && a->be->world_aborted(ctx->world, why, sizeof why))
            abort_run(ctx, why);
        if (a->opt->interrupted && atomic_load(a->opt->interrupted))
            abort_run(ctx, "interrupted by a signal");
        if (show)
            draw_progress(a->opt->label, min_done, total, now_s() - t_start);
        if (running == 0)
            break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    if (show)
        fprintf(stderr, "\n");
}

void launch_threads(const launch_threads_args *a, char *failure, size_t failure_len, bucket_assignment *rebuilt,
                    bool *rebuilt_valid)
{
    int world = rank_count(a);
    *rebuilt_valid = false;
    failure[0] = '\0';
    run_ctx ctx = {.be = a->be, .sc = a->sc};
    atomic_init(&ctx.stop, false);
    if (pthread_mutex_init(&ctx.mu, NULL) != 0) {
        snprintf(failure, failure_len, "pthread_mutex_init failed");
        return;
    }
    rank_slot *slots = calloc((size_t)world, sizeof *slots);
    atomic_int *progress = calloc((size_t)world, sizeof *progress);
    backend_world_args wa = {.sc = a->sc, .rec = a->rec, .nvtx = a->nvtx};
    char err[512];
    if (!slots || !progress) {
        snprintf(failure, failure_len, "out of memory starting %d ranks", world);
    } else if (a->world) {
        ctx.world = a->world;
    } else if (a->be->world_create(&wa, &ctx.world, err, sizeof err) != 0) {
        text_copy(failure, failure_len, err);
    }
    /* The ranks' common per-parameter tables, used by those whose device has no buffers
     * (a time-only world); NULL when out of memory: each rank then holds its own. */
    param_tables *shared = NULL;
    if (ctx.world) {
        shared = param_tables_create(a->m, a->sc);
        prepare_ranks(a, &ctx, slots, progress, shared);
        if (a->be->run_ranks) {
            coop_run cr = {.a = a, .ctx = &ctx, .slots = slots};
            a->be->run_ranks(ctx.world, world, rank_body, coop_watch, &cr);
            coop_watch(&cr);
            for (int r = 0; r < world; r++)
                if (atomic_load(&slots[r].state) == 2)
                    abort_run(&ctx, slots[r].err);
        } else {
            start_ranks(a, &ctx, slots);
            watch_ranks(a, &ctx, slots, progress);
            for (int r = 0; r < world; r++)
                if (slots[r].started && pthread_join(slots[r].thread, NULL) != 0)
                    abort_run(&ctx, "cannot join a rank thread");
        }
        if (ctx.has_error)
            text_copy(failure, failure_len, ctx.first_error);
        if (slots[0].args.trainer.rebuilt_valid) {
            *rebuilt = slots[0].args.trainer.rebuilt;
            memset(&slots[0].args.trainer.rebuilt, 0, sizeof slots[0].args.trainer.rebuilt);
            slots[0].args.trainer.rebuilt_valid = 0;
            *rebuilt_valid = true;
        }
        if (!a->world)
            a->be->world_destroy(ctx.world);
    }
    if (slots)
        for (int r = 0; r < world; r++)
            trainer_result_free(&slots[r].args.trainer);
    free(slots);
    free(progress);
    param_tables_free(shared); /* every rank has ended */
    pthread_mutex_destroy(&ctx.mu);
}
