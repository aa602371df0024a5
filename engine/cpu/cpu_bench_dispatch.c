/* cpu_bench_dispatch.c — the per-op cost of the cpu backend's streams, measured through
 * the devices a run uses (cpu_device.c), every rank's at once (cpu_bench_dispatch.h). */
#include "engine/cpu/cpu_bench_dispatch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/cpu/cpu_bench_threads.h"
#include "engine/cpu/cpu_collectives.h"
#include "engine/cpu/cpu_comm_internal.h"
#include "engine/cpu/cpu_device.h"

typedef struct {
    const cpu_world *w;
    cpu_start_line *start;
    int rank, ops, warmup;
    int64_t model_ns;
    int64_t t_start, t_end;
    int rc;
    char err[512];
} dispatcher;

/* Spans of the benchmark are not kept. */
static int discard(void *user, const span *spans, size_t n, char *err, size_t errlen)
{
    (void)user, (void)spans, (void)n, (void)err, (void)errlen;
    return 0;
}

static int enqueue_ops(device *dev, const dispatcher *d, int n, int iter)
{
    dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = SPAN_FORWARD;
    op.work = WORK_NONE;
    op.iter = iter;
    op.layer = 0;
    op.bucket = -1;
    op.seq = -1;
    op.model_ns = (uint64_t)d->model_ns;
    snprintf(op.name, sizeof op.name, "dispatch probe");
    /* Untimed ops go one at a time, the stream idle in between, as a backward pass's
     * copies reach a stream that has run dry: each pays the stream's wake-up. */
    bool one_by_one = d->model_ns == 0;
    for (int i = 0; i < n; i++)
        if (dev_enqueue(dev, DEV_STREAM_COMPUTE, &op) != 0 ||
            (one_by_one && dev_synchronize(dev, DEV_STREAM_COMPUTE) != 0))
            return -1;
    return dev_synchronize(dev, DEV_STREAM_COMPUTE);
}

static void *dispatcher_main(void *arg)
{
    dispatcher *d = arg;
    if (cpu_start_line_wait(d->start) != 0) {
        d->rc = -1;
        return NULL;
    }
    device *dev = cpu_device_create(d->w, d->rank, d->err, sizeof d->err);
    if (!dev) {
        d->rc = -1;
        return NULL;
    }
    if (enqueue_ops(dev, d, d->warmup, 0) != 0) {
        snprintf(d->err, sizeof d->err, "%s", dev_error(dev));
        d->rc = -1;
    } else {
        d->t_start = cpu_clock_ns();
        if (enqueue_ops(dev, d, d->ops, 1) != 0) {
            snprintf(d->err, sizeof d->err, "%s", dev_error(dev));
            d->rc = -1;
        }
        d->t_end = cpu_clock_ns();
    }
    cpu_device_destroy(dev);
    return NULL;
}

static int run_dispatchers(cpu_world *w, int ranks, int64_t model_ns, int ops, int warmup, double *us_per_op,
                           char *err, size_t errlen)
{
    dispatcher *ds = calloc((size_t)ranks, sizeof *ds);
    cpu_start_line start = CPU_START_LINE_INIT;
    if (!ds) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < ranks; r++)
        ds[r] = (dispatcher){.w = w, .start = &start, .rank = r, .ops = ops, .warmup = warmup, .model_ns = model_ns};
    int rc = cpu_bench_run_threads(ranks, dispatcher_main, ds, sizeof *ds, &start, "dispatch", err, errlen);
    if (rc == 0) {
        double excess = 0;
        for (int r = 0; r < ranks && rc == 0; r++) {
            if (ds[r].rc != 0) {
                snprintf(err, errlen, "rank %d: %s", r, ds[r].err[0] ? ds[r].err : "failed");
                rc = -1;
            }
            excess += (double)(ds[r].t_end - ds[r].t_start) / ops - (double)model_ns;
        }
        if (rc == 0)
            *us_per_op = excess / ranks / 1e3;
    }
    free(ds);
    return rc;
}

int cpu_bench_dispatch(int ranks, int64_t model_ns, int ops, int warmup, double *us_per_op, char *err,
                       size_t errlen)
{
    if (ranks < 1 || ranks > CPU_COMM_MAX_WORLD || model_ns < 0 || ops < 1 || warmup < 0) {
        snprintf(err, errlen, "bench dispatch: want 1..%d ranks, model_ns >= 0, ops >= 1", CPU_COMM_MAX_WORLD);
        return -1;
    }
    cpu_link_model link = {0};
    cpu_world w = {.world_size = ranks, .first_rank = 0};
    if (cpu_comm_create(ranks, 120.0, &link, &w.comm) != 0) {
        snprintf(err, errlen, "cannot create a %d-rank communicator", ranks);
        return -1;
    }
    recorder *rec = NULL;
    prof_nvtx nvtx;
    prof_nvtx_init(&nvtx);
    w.nvtx = &nvtx;
    int rc = -1;
    if (recorder_create_sink(discard, NULL, ranks * BACKEND_RINGS_PER_RANK, &rec) != 0 || recorder_start(rec) != 0) {
        snprintf(err, errlen, "cannot start the span recorder of the dispatch benchmark");
    } else {
        w.rec = rec;
        w.t0_ns = cpu_clock_ns();
        rc = run_dispatchers(&w, ranks, model_ns, ops, warmup, us_per_op, err, errlen);
        char rerr[256];
        if (recorder_stop(rec, rerr, sizeof rerr) != 0 && rc == 0) {
            snprintf(err, errlen, "%s", rerr);
            rc = -1;
        }
    }
    if (rec)
        recorder_destroy(rec);
    prof_nvtx_destroy(&nvtx);
    cpu_comm_destroy(w.comm);
    return rc;
}
