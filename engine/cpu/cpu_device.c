/* cpu_device.c — device.h on CPU threads: ordered stream workers, events as tickets,
 * collectives through cpu_collectives, one span per executed op. */
#include "common/textcopy.h"
#include "engine/cpu/cpu_device.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/backend_common.h"
#include "engine/cpu/cpu_priority.h"
#include "engine/cpu/cpu_work.h"

typedef struct {
    bool is_wait;
    dev_op op;
    dev_event ev;
} entry;

typedef struct cpu_device cpu_device;

typedef struct {
    cpu_device *dev;
    dev_stream id;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the worker's: an entry queued, or stop */
    pthread_cond_t done_cv; /* waiters': the ticket they wait for completed, or failure */
    uint64_t wake_at;       /* the lowest ticket a waiter waits for (UINT64_MAX: none) */
    uint64_t wakeups;       /* done_cv broadcasts so far */
    entry *q;
    size_t cap, head, count; /* ring of pending entries */
    uint64_t enqueued, completed;
    bool failed, stop;
    bool busy; /* the worker is executing an entry (it may touch the op's memory) */
    char error[512];
    cpu_scratch scratch;
    span_ring *ring;
} cpu_stream;

struct cpu_device {
    device base;
    const cpu_world *w;
    cpu_stream streams[DEV_STREAM_COUNT];
    span_ring *host_ring;
    pthread_mutex_t err_mu;
    char error[512];
};

static const device_ops cpu_ops;

static void set_device_error(cpu_device *d, const char *msg)
{
    pthread_mutex_lock(&d->err_mu);
    if (!d->error[0])
        text_copy(d->error, sizeof d->error, msg);
    pthread_mutex_unlock(&d->err_mu);
}

static void wake_waiters_locked(cpu_stream *s)
{
    s->wake_at = UINT64_MAX;
    s->wakeups++;
    pthread_cond_broadcast(&s->done_cv);
}

/* Waits on stream s (locked) until ticket `ticket` completes, s fails or `deadline`
 * (NULL: none) passes.  Completions before `ticket` wake no one: a stream waiting on
 * another is woken once, not once per op of the other.  Each wake-up of a niced comm
 * worker took the compute stream's mutex on cores the ranks share; once per compute op
 * (every op of a synchronising step) that held compute's hand-offs up for a scheduler
 * slice at a time: forwards stalled 5x as often in steps with an allreduce as without. */
static void wait_for_ticket_locked(cpu_stream *s, uint64_t ticket, const struct timespec *deadline)
{
    if (ticket < s->wake_at)
        s->wake_at = ticket;
    if (deadline)
        pthread_cond_timedwait(&s->done_cv, &s->mu, deadline);
    else
        pthread_cond_wait(&s->done_cv, &s->mu);
}

static void fail_stream_locked(cpu_stream *s, const char *msg)
{
    if (!s->failed) {
        s->failed = true;
        text_copy(s->error, sizeof s->error, msg);
    }
    s->count = 0; /* what was queued after a failure never runs */
    pthread_cond_broadcast(&s->cv);
    wake_waiters_locked(s);
}

/* Waits for an event of the other stream of the same rank; fails if that stream failed
 * or the run was aborted. */
static int wait_event(cpu_stream *self, dev_event ev, char *err, size_t errlen)
{
    cpu_stream *other = &self->dev->streams[ev.stream];
    int rc = 0;
    pthread_mutex_lock(&other->mu);
    while (other->completed < ev.ticket && !other->failed) {
        if (cpu_comm_aborted(self->dev->w->comm)) {
            cpu_comm_abort_reason(self->dev->w->comm, err, errlen);
            rc = -1;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 50000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        wait_for_ticket_locked(other, ev.ticket, &ts);
    }
    if (rc == 0 && other->completed < ev.ticket) {
        text_copy(err, errlen, other->error);
        rc = -1;
    }
    pthread_mutex_unlock(&other->mu);
    return rc;
}

static bool comm_aborted(void *comm) { return cpu_comm_aborted(comm); }

static int run_op(cpu_stream *s, const dev_op *op, char *err, size_t errlen)
{
    cpu_device *d = s->dev;
    const cpu_world *w = d->w;
    int rank = d->base.rank;
    char label[SPAN_NAME + 48];
    if (op->phase_begin) {
        snprintf(label, sizeof label, "rank %d / %s", rank, span_kind_name(op->kind));
        prof_nvtx_push(w->nvtx, label, prof_nvtx_colour(op->kind));
    }
    if (op->kind == SPAN_ALLREDUCE)
        snprintf(label, sizeof label, "rank %d / bucket %d allreduce", rank, op->bucket);
    else
        snprintf(label, sizeof label, "rank %d / %s %s", rank, span_kind_name(op->kind), op->name);
    prof_nvtx_push(w->nvtx, label, prof_nvtx_colour(op->kind));

    int64_t start = cpu_clock_ns();
    int rc;
    if (op->work == WORK_ALLREDUCE || op->work == WORK_BROADCAST) {
        cpu_coll_info info = {.seq = op->seq, .iter = op->iter, .bucket = op->bucket, .name = op->name};
        if (op->work == WORK_ALLREDUCE)
            rc = cpu_allreduce(w->comm, rank, op->u.coll.buf, op->u.coll.count, op->u.coll.dtype,
                               op->u.coll.prescale, &info, &start, err, errlen);
        else
            rc = cpu_broadcast_i32(w->comm, rank, op->u.coll.root, op->u.coll.buf, op->u.coll.count, &info, &start, err, errlen);
    } else {
        cpu_work_cancel cancel = {.stop = comm_aborted, .user = w->comm};
        rc = cpu_work_run(op, rank, &s->scratch, &cancel, err, errlen);
        if (rc == 0 && op->stretch > 1.0)
            rc = cpu_comm_sleep_until(w->comm, start + (int64_t)((double)(cpu_clock_ns() - start) * op->stretch));
        if (rc == 0 && op->model_ns > 0)
            rc = cpu_comm_sleep_until(w->comm, start + (int64_t)op->model_ns);
        if (rc != 0 && !err[0])
            cpu_comm_abort_reason(w->comm, err, errlen);
    }
    int64_t end = cpu_clock_ns();
    prof_nvtx_pop(w->nvtx);
    if (op->phase_end)
        prof_nvtx_pop(w->nvtx);

    span sp = {.rank = rank,
               .iter = op->iter,
               .stream = s->id == DEV_STREAM_COMPUTE ? STREAM_COMPUTE : STREAM_COMM,
               .kind = (uint8_t)op->kind,
               .layer = op->layer,
               .bucket = op->bucket,
               .seq = op->seq,
               .bytes = op->bytes,
               .start_ns = start - w->t0_ns,
               .end_ns = end - w->t0_ns};
    text_copy(sp.name, sizeof sp.name, op->name);
    /* A collective that failed never happened on this rank: keep only what completed. */
    if (rc == 0)
        span_ring_push(s->ring, &sp);
    return rc;
}

/* A comm stream's worker runs at CPU_COMM_STREAM_NICE (cpu_priority.h): a GPU's compute
 * kernels are not held up by NCCL beside them (NCCL takes a few SMs), whereas on shared
 * cores the ranks' allreduce sums, equal in priority, starve a compute stream for
 * milliseconds at a time, now this rank and now that one (4 ranks on 2 cores: forwards
 * and backwards inside collectives ran 1.3-1.4x their model, more for larger models).
 * Below the compute streams the sums run on what compute leaves: 1.15x whatever the
 * model, and steps repeat more closely.
 *
 * Linux gives each thread its own niceness.  False where raising it is refused: the
 * stream then runs at the compute streams' priority, a matter of speed, not of results. */
static bool yield_cores_to_compute(void)
{
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CPU_COMM_STREAM_NICE) == 0;
}

static void *stream_main(void *arg)
{
    cpu_stream *s = arg;
    char tname[48];
    snprintf(tname, sizeof tname, "rank %d %s", s->dev->base.rank, s->id == DEV_STREAM_COMPUTE ? "compute" : "comm");
    prof_nvtx_name_thread(tname);
    if (s->id == DEV_STREAM_COMM && !yield_cores_to_compute()) {
        /* Said where a user looks at the streams: the timeline's thread names. */
        snprintf(tname, sizeof tname, "rank %d comm (niceness refused)", s->dev->base.rank);
        prof_nvtx_name_thread(tname);
    }
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->count == 0 && !s->stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->count == 0 && s->stop)
            break;
        entry e = s->q[s->head];
        s->busy = true;
        pthread_mutex_unlock(&s->mu);

        char err[512] = "";
        int rc = 0;
        if (cpu_comm_aborted(s->dev->w->comm)) {
            cpu_comm_abort_reason(s->dev->w->comm, err, sizeof err);
            rc = -1;
        } else
            rc = e.is_wait ? wait_event(s, e.ev, err, sizeof err) : run_op(s, &e.op, err, sizeof err);

        pthread_mutex_lock(&s->mu);
        s->busy = false;
        if (rc != 0) {
            char msg[640];
            snprintf(msg, sizeof msg, "rank %d: %s", s->dev->base.rank, err);
            /* A rank's own failure names the rank; a peer's abort reason already does. */
            const char *why = strncmp(err, "rank", 4) == 0 || strncmp(err, "collective", 10) == 0 ? err : msg;
            set_device_error(s->dev, why);
            fail_stream_locked(s, why);
            continue;
        }
        if (s->count > 0) {
            s->head = (s->head + 1) % s->cap;
            s->count--;
        }
        s->completed++;
        if (s->completed >= s->wake_at)
            wake_waiters_locked(s);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static int push_entry(cpu_stream *s, const entry *e)
{
    pthread_mutex_lock(&s->mu);
    if (s->failed) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    if (s->count == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 256;
        entry *nq = malloc(ncap * sizeof *nq);
        if (!nq) {
            fail_stream_locked(s, "out of memory growing a stream queue");
            pthread_mutex_unlock(&s->mu);
            return -1;
        }
        for (size_t i = 0; i < s->count; i++)
            nq[i] = s->q[(s->head + i) % s->cap];
        free(s->q);
        s->q = nq;
        s->cap = ncap;
        s->head = 0;
    }
    s->q[(s->head + s->count) % s->cap] = *e;
    s->count++;
    s->enqueued++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static int cpu_enqueue(device *base, dev_stream s, const dev_op *op)
{
    cpu_device *d = (cpu_device *)base;
    entry e = {.is_wait = false, .op = *op};
    return push_entry(&d->streams[s], &e);
}

static dev_event cpu_record(device *base, dev_stream s)
{
    cpu_device *d = (cpu_device *)base;
    cpu_stream *st = &d->streams[s];
    pthread_mutex_lock(&st->mu);
    dev_event ev = {.stream = s, .ticket = st->enqueued};
    pthread_mutex_unlock(&st->mu);
    return ev;
}

static int cpu_wait(device *base, dev_stream s, dev_event ev)
{
    cpu_device *d = (cpu_device *)base;
    entry e = {.is_wait = true, .ev = ev};
    return push_entry(&d->streams[s], &e);
}

static int cpu_synchronize(device *base, dev_stream s)
{
    cpu_device *d = (cpu_device *)base;
    cpu_stream *st = &d->streams[s];
    int rc = 0;
    pthread_mutex_lock(&st->mu);
    /* Not before the worker has left its current entry, failed or not: the caller may
     * free what that entry points at as soon as this returns. */
    while ((st->completed < st->enqueued && !st->failed) || st->busy)
        wait_for_ticket_locked(st, st->enqueued, NULL);
    if (st->failed)
        rc = -1;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static int64_t cpu_now(device *base)
{
    cpu_device *d = (cpu_device *)base;
    return cpu_clock_ns() - d->w->t0_ns;
}

static const char *cpu_error(device *base)
{
    cpu_device *d = (cpu_device *)base;
    /* Written once under err_mu before any stream reports failure; stable after. */
    pthread_mutex_lock(&d->err_mu);
    const char *e = d->error;
    pthread_mutex_unlock(&d->err_mu);
    return e;
}

/* Zeroed memory with every page already mapped, as device memory is once allocated
 * (cudaMalloc maps it then): otherwise the first copy into a new bucket or the first
 * gradient of a layer pays the page faults, at a fraction of memory speed, and
 * iteration 0 and the one after the rebuild time the kernel's allocator instead of the
 * op.  Large buffers ask for 2 MiB pages, as a GPU's allocator uses: 512 times fewer
 * faults to map them, and as many fewer pages to release when a run ends (an
 * interrupted run must be gone within a second). */
#define HUGE_PAGE ((size_t)2 << 20)

static void *cpu_alloc(device *base, size_t bytes)
{
    (void)base;
    if (bytes < HUGE_PAGE) {
        char *p = calloc(1, bytes);
        if (p) {
            volatile char *page = p;
            for (size_t off = 0; off < bytes; off += 4096)
                page[off] = 0;
        }
        return p;
    }
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
        return NULL;
    /* Advice only: where huge pages are off the memset below maps 4 KiB pages. */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, 0, bytes);
    return p;
}

static void cpu_release(device *base, void *p)
{
    (void)base;
    free(p);
}

static const device_ops cpu_ops = {
    .alloc = cpu_alloc,
    .release = cpu_release,
    .enqueue = cpu_enqueue,
    .record = cpu_record,
    .wait = cpu_wait,
    .synchronize = cpu_synchronize,
    .now_ns = cpu_now,
    .error = cpu_error,
};

static void stop_streams(cpu_device *d)
{
    for (int i = 0; i < DEV_STREAM_COUNT; i++) {
        cpu_stream *s = &d->streams[i];
        if (!s->running)
            continue;
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        s->running = false;
    }
}

device *cpu_device_create(const cpu_world *w, int rank, char *err, size_t errlen)
{
    cpu_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory creating rank %d", rank);
        return NULL;
    }
    d->base.ops = &cpu_ops;
    d->base.rank = rank;
    d->base.world_size = w->world_size;
    d->w = w;
    d->host_ring = recorder_ring(w->rec, (rank - w->first_rank) * BACKEND_RINGS_PER_RANK + DEV_STREAM_COUNT);
    if (pthread_mutex_init(&d->err_mu, NULL) != 0) {
        free(d);
        snprintf(err, errlen, "pthread_mutex_init failed");
        return NULL;
    }
    for (int i = 0; i < DEV_STREAM_COUNT; i++) {
        cpu_stream *s = &d->streams[i];
        s->dev = d;
        s->id = (dev_stream)i;
        s->ring = recorder_ring(w->rec, (rank - w->first_rank) * BACKEND_RINGS_PER_RANK + i);
        s->wake_at = UINT64_MAX;
        if (pthread_mutex_init(&s->mu, NULL) != 0 || backend_cond_init_monotonic(&s->cv) != 0 ||
            backend_cond_init_monotonic(&s->done_cv) != 0) {
            snprintf(err, errlen, "rank %d: cannot initialise a stream's mutex/condition", rank);
            stop_streams(d);
            free(d);
            return NULL;
        }
        int rc = pthread_create(&s->thread, NULL, stream_main, s);
        if (rc != 0) {
            snprintf(err, errlen, "rank %d: cannot start a stream thread: %s", rank, strerror(rc));
            stop_streams(d);
            free(d);
            return NULL;
        }
        s->running = true;
    }
    return &d->base;
}

void cpu_device_destroy(device *base)
{
    if (!base)
        return;
    cpu_device *d = (cpu_device *)base;
    stop_streams(d);
    for (int i = 0; i < DEV_STREAM_COUNT; i++) {
        free(d->streams[i].q);
        cpu_scratch_free(&d->streams[i].scratch);
        pthread_mutex_destroy(&d->streams[i].mu);
        pthread_cond_destroy(&d->streams[i].cv);
        pthread_cond_destroy(&d->streams[i].done_cv);
    }
    pthread_mutex_destroy(&d->err_mu);
    free(d);
}

uint64_t cpu_device_waiter_wakeups(device *base, dev_stream s)
{
    cpu_stream *st = &((cpu_device *)base)->streams[s];
    pthread_mutex_lock(&st->mu);
    uint64_t n = st->wakeups;
    pthread_mutex_unlock(&st->mu);
    return n;
}

span_ring *cpu_device_host_ring(device *base) { return ((cpu_device *)base)->host_ring; }
