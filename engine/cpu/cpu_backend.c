/* cpu_backend.c — the `cpu` backend's world (a communicator among rank threads, the
 * run's clock origin) and its allreduce benchmark, as backend.h asks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend_common.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/cpu_bench_copy.h"
#include "engine/cpu/cpu_bench_dispatch.h"
#include "engine/cpu/cpu_collectives.h"
#include "engine/cpu/cpu_comm_internal.h"
#include "engine/cpu/cpu_device.h"

struct backend_world {
    cpu_world w;
};

static int world_create(const backend_world_args *a, backend_world **out, char *err, size_t errlen)
{
    const scenario *sc = a->sc;
    backend_world *bw = calloc(1, sizeof *bw);
    if (!bw) {
        snprintf(err, errlen, "out of memory creating the cpu world");
        return -1;
    }
    cpu_link_model link = {.pace = sc->pace};
    net_model_init(&link.net, sc);
    int rc;
    if (a->create_shared)
        rc = cpu_comm_create_shared(sc->world_size, sc->timeout_s, &link, a->stage_bytes, &bw->w.comm, err, errlen);
    else if (a->attach_to)
        rc = cpu_comm_attach(a->attach_to, sc->world_size, &bw->w.comm, err, errlen);
    else if ((rc = cpu_comm_create(sc->world_size, sc->timeout_s, &link, &bw->w.comm)) != 0)
        snprintf(err, errlen, "cannot create a %d-rank communicator", sc->world_size);
    if (rc != 0) {
        free(bw);
        return -1;
    }
    bw->w.rec = a->rec;
    bw->w.nvtx = a->nvtx;
    bw->w.world_size = sc->world_size;
    bw->w.first_rank = a->first_rank;
    bw->w.t0_ns = a->t0_ns ? a->t0_ns : cpu_clock_ns();
    *out = bw;
    return 0;
}

static void world_abort(backend_world *bw, const char *why) { cpu_comm_abort(bw->w.comm, why); }

static int world_aborted(backend_world *bw, char *why, size_t whylen)
{
    if (!cpu_comm_aborted(bw->w.comm))
        return 0;
    cpu_comm_abort_reason(bw->w.comm, why, whylen);
    return 1;
}

static const char *world_handle(backend_world *bw) { return cpu_comm_path(bw->w.comm); }

static void world_unlink(backend_world *bw) { cpu_comm_unlink(bw->w.comm); }

static void world_destroy(backend_world *bw)
{
    if (!bw)
        return;
    cpu_comm_destroy(bw->w.comm);
    free(bw);
}

static device *device_create(backend_world *bw, int rank, char *err, size_t errlen)
{
    return cpu_device_create(&bw->w, rank, err, errlen);
}

typedef struct {
    cpu_comm *comm;
    int rank;
    float *buf;
    int64_t count;
    int iters, warmup;
    int64_t t_start, t_end;
    int rc;
    char err[512];
} bench_rank;

static void *bench_main(void *arg)
{
    bench_rank *b = arg;
    int64_t arrival;
    for (int i = 0; i < b->warmup + b->iters && b->rc == 0; i++) {
        if (i == b->warmup)
            b->t_start = cpu_clock_ns();
        cpu_coll_info info = {.seq = i, .iter = i, .bucket = -1, .name = "bench allreduce"};
        b->rc = cpu_allreduce(b->comm, b->rank, b->buf, b->count, DEV_F32, 1.0f, &info, &arrival, b->err,
                              sizeof b->err);
    }
    b->t_end = cpu_clock_ns();
    return NULL;
}

static int bench_allreduce(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen)
{
    int64_t count = bytes / FP32_BYTES;
    cpu_link_model link = {0};
    cpu_comm *comm;
    if (cpu_comm_create(ranks, 120.0, &link, &comm) != 0) {
        snprintf(err, errlen, "cannot create a %d-rank communicator", ranks);
        return -1;
    }
    bench_rank *br = calloc((size_t)ranks, sizeof *br);
    pthread_t *th = calloc((size_t)ranks, sizeof *th);
    int rc = 0, started = 0;
    if (!br || !th) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto done;
    }
    for (int r = 0; r < ranks; r++) {
        br[r] = (bench_rank){.comm = comm, .rank = r, .count = count, .iters = iters, .warmup = warmup};
        br[r].buf = malloc((size_t)count * sizeof(float));
        if (!br[r].buf) {
            snprintf(err, errlen, "out of memory for %lld-byte buffers", (long long)bytes);
            rc = -1;
            goto done;
        }
        for (int64_t i = 0; i < count; i++)
            br[r].buf[i] = (float)((r + i) % 7);
    }
    for (int r = 0; r < ranks; r++) {
        int prc = pthread_create(&th[r], NULL, bench_main, &br[r]);
        if (prc != 0) {
            cpu_comm_abort(comm, "cannot start a benchmark thread");
            snprintf(err, errlen, "cannot start a benchmark thread: %s", strerror(prc));
            rc = -1;
            break;
        }
        started++;
    }
    for (int r = 0; r < started; r++)
        if (pthread_join(th[r], NULL) != 0 && rc == 0) {
            snprintf(err, errlen, "cannot join a benchmark thread");
            rc = -1;
        }
    if (rc == 0) {
        double t_sum = 0;
        for (int r = 0; r < ranks; r++) {
            if (br[r].rc != 0) {
                snprintf(err, errlen, "rank %d: %s", r, br[r].err);
                rc = -1;
                goto done;
            }
            t_sum += (double)(br[r].t_end - br[r].t_start) / iters;
        }
        *us_per_iter = t_sum / ranks / 1e3;
    }
done:
    if (br)
        for (int r = 0; r < ranks; r++)
            free(br[r].buf);
    free(br);
    free(th);
    cpu_comm_destroy(comm);
    return rc;
}

const backend_ops cpu_backend_ops = {
    .name = "cpu",
    .available = backend_available_always,
    .world_create = world_create,
    .world_abort = world_abort,
    .world_aborted = world_aborted,
    .world_handle = world_handle,
    .world_unlink = world_unlink,
    .clock_ns = cpu_clock_ns,
    .world_destroy = world_destroy,
    .device_create = device_create,
    .device_destroy = cpu_device_destroy,
    .host_ring = cpu_device_host_ring,
    .max_world = CPU_COMM_MAX_WORLD,
    .bench_allreduce = bench_allreduce,
    .bench_copy = cpu_bench_copy,
    .bench_dispatch = cpu_bench_dispatch,
};
