/* cpu_collectives.c — allreduce and broadcast among rank threads over shared memory,
 * with bounded waits that name the missing rank (see cpu_collectives.h).
 *
 * Ownership: from the moment a collective's arrival barrier completes until every
 * participant has left it, each rank's buffer is lent to the communicator — peers read
 * it during the reduce-scatter and the all-gather.  A rank that leaves early (the run
 * was aborted) therefore waits for the lease to be returned by every participant before
 * it gives its buffer back to its caller, who may free it.  Peers inside the data phase
 * only copy and add memory, so that wait is short and bounded. */
#include "textcopy.h"
#include "cpu_collectives.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "halfprec.h"

#define MAX_WORLD 64

struct cpu_comm {
    int world;
    double timeout_s;
    cpu_link_model link;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t abort_cv; /* wakes cpu_comm_sleep_until() on an abort */
    uint64_t generation;
    int arrived;
    bool present[MAX_WORLD];
    bool aborted;
    char why[512];
    /* Participants of the current collective still inside its data phase (reading
     * each other's slots); see the ownership note above. */
    int lent;

    /* Each rank's slot for the collective in progress: written before the arrival
     * barrier, read by the others only until the exit barrier. */
    struct {
        void *buf;
        uint16_t *half;
        int64_t count;
        int64_t seq;
        int64_t arrival_ns;
        dev_dtype dtype;
    } slot[MAX_WORLD];
};

int64_t cpu_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cpu_sleep_until(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

int64_t cpu_link_allreduce_ns(const cpu_link_model *link, int world, int64_t bytes)
{
    if (world <= 1 || link->bandwidth_gbps <= 0)
        return 0;
    double alpha = link->latency_us * 1e3;
    double per_byte = 1.0 / link->bandwidth_gbps; /* ns per byte at GB/s = 1e9 B/s */
    double t;
    if (link->tree) {
        /* Double binary tree: reduce up and broadcast down, log2(N) steps each. */
        double steps = ceil(log2((double)world));
        t = 2.0 * steps * alpha + 2.0 * (double)bytes * per_byte;
    } else {
        t = 2.0 * (world - 1) * alpha + 2.0 * (world - 1) / world * (double)bytes * per_byte;
    }
    return (int64_t)t;
}

int cpu_comm_create(int world_size, double timeout_s, const cpu_link_model *link, cpu_comm **out)
{
    if (world_size < 1 || world_size > MAX_WORLD)
        return -1;
    cpu_comm *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->world = world_size;
    c->timeout_s = timeout_s;
    c->link = *link;
    pthread_condattr_t ca;
    if (pthread_mutex_init(&c->mu, NULL) != 0)
        goto fail_mutex;
    if (pthread_condattr_init(&ca) != 0)
        goto fail_cond;
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&c->cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_cond;
    }
    if (pthread_cond_init(&c->abort_cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        pthread_cond_destroy(&c->cv);
        goto fail_cond;
    }
    pthread_condattr_destroy(&ca);
    *out = c;
    return 0;
fail_cond:
    pthread_mutex_destroy(&c->mu);
fail_mutex:
    free(c);
    return -1;
}

void cpu_comm_destroy(cpu_comm *c)
{
    if (!c)
        return;
    pthread_cond_destroy(&c->cv);
    pthread_cond_destroy(&c->abort_cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void abort_locked(cpu_comm *c, const char *why)
{
    if (!c->aborted) {
        c->aborted = true;
        size_t n = strnlen(why, sizeof c->why - 1);
        memcpy(c->why, why, n);
        c->why[n] = '\0';
    }
    pthread_cond_broadcast(&c->cv);
    pthread_cond_broadcast(&c->abort_cv);
}

int cpu_comm_sleep_until(cpu_comm *c, int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    pthread_mutex_lock(&c->mu);
    while (!c->aborted && cpu_clock_ns() < deadline_ns) {
        int rc = pthread_cond_timedwait(&c->abort_cv, &c->mu, &ts);
        if (rc != 0 && rc != ETIMEDOUT && rc != EINTR)
            abort_locked(c, "pthread_cond_timedwait failed while sleeping to a modelled deadline");
    }
    int out = c->aborted ? -1 : 0;
    pthread_mutex_unlock(&c->mu);
    return out;
}

void cpu_comm_abort(cpu_comm *c, const char *why)
{
    pthread_mutex_lock(&c->mu);
    abort_locked(c, why);
    pthread_mutex_unlock(&c->mu);
}

bool cpu_comm_aborted(cpu_comm *c)
{
    pthread_mutex_lock(&c->mu);
    bool a = c->aborted;
    pthread_mutex_unlock(&c->mu);
    return a;
}

void cpu_comm_abort_reason(cpu_comm *c, char *out, size_t outlen)
{
    pthread_mutex_lock(&c->mu);
    snprintf(out, outlen, "%s", c->aborted ? c->why : "");
    pthread_mutex_unlock(&c->mu);
}

static void describe(const cpu_coll_info *info, char *out, size_t outlen)
{
    if (info->bucket >= 0)
        snprintf(out, outlen, "collective seq %lld (%s, iteration %d, bucket %d)", (long long)info->seq,
                 info->name, info->iter, info->bucket);
    else
        snprintf(out, outlen, "collective seq %lld (%s, iteration %d)", (long long)info->seq, info->name,
                 info->iter);
}

/* Blocks until every rank has called it for the same generation, the timeout passes,
 * or the communicator is aborted. */
static int barrier(cpu_comm *c, int rank, const cpu_coll_info *info, const char *phase, bool opens_data,
                   char *err, size_t errlen)
{
    pthread_mutex_lock(&c->mu);
    if (c->aborted) {
        text_copy(err, errlen, c->why);
        pthread_mutex_unlock(&c->mu);
        return -1;
    }
    uint64_t gen = c->generation;
    c->present[rank] = true;
    if (++c->arrived == c->world) {
        c->arrived = 0;
        memset(c->present, 0, sizeof c->present);
        c->generation++;
        if (opens_data)
            c->lent = c->world;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    int64_t deadline = cpu_clock_ns() + (int64_t)(c->timeout_s * 1e9);
    struct timespec ts = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000};
    while (c->generation == gen && !c->aborted) {
        int rc = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        if (rc == ETIMEDOUT && c->generation == gen && !c->aborted) {
            char what[160], missing[256] = "", waited[256] = "";
            describe(info, what, sizeof what);
            size_t mlen = 0, wlen = 0;
            int nmissing = 0;
            for (int r = 0; r < c->world; r++) {
                char *dst = c->present[r] ? waited : missing;
                size_t *len = c->present[r] ? &wlen : &mlen;
                int w = snprintf(dst + *len, 256 - *len, "%s%d", *len ? ", " : "", r);
                if (w > 0 && (size_t)w < 256 - *len)
                    *len += (size_t)w;
                nmissing += !c->present[r];
            }
            char msg[1024];
            snprintf(msg, sizeof msg, "%s: rank%s %s did not reach the %s within %.1f s (rank%s %s waited)",
                     what, nmissing > 1 ? "s" : "", missing, phase, c->timeout_s, c->world - nmissing > 1 ? "s" : "",
                     waited);
            abort_locked(c, msg);
        } else if (rc != 0 && rc != ETIMEDOUT) {
            abort_locked(c, "pthread_cond_timedwait failed in a collective");
        }
    }
    int ret = 0;
    if (c->generation == gen) {
        text_copy(err, errlen, c->why);
        ret = -1;
    }
    pthread_mutex_unlock(&c->mu);
    return ret;
}

/* Called once by each participant that passed the arrival barrier, when it stops
 * touching the other ranks' slots.  A rank leaving on failure (`failed`) also waits until
 * no participant reads its slot any more: only then may its caller free the buffer.
 * On success every peer has passed the end barrier, so nobody reads it already. */
static void return_lease(cpu_comm *c, bool failed)
{
    pthread_mutex_lock(&c->mu);
    c->lent--;
    if (c->lent == 0)
        pthread_cond_broadcast(&c->cv);
    /* Untimed on purpose: peers still in the data phase are copying or adding memory,
     * never waiting on anything, so they return their lease promptly. */
    while (failed && c->lent > 0)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

static int check_agreement(cpu_comm *c, int rank, const cpu_coll_info *info, char *err, size_t errlen)
{
    for (int q = 0; q < c->world; q++) {
        if (c->slot[q].seq != c->slot[rank].seq || c->slot[q].count != c->slot[rank].count ||
            c->slot[q].dtype != c->slot[rank].dtype) {
            char what[160], msg[640];
            describe(info, what, sizeof what);
            snprintf(msg, sizeof msg,
                     "%s: ranks disagree: rank %d launched seq %lld with %lld elements, rank %d seq %lld with %lld "
                     "elements",
                     what, rank, (long long)c->slot[rank].seq, (long long)c->slot[rank].count, q,
                     (long long)c->slot[q].seq, (long long)c->slot[q].count);
            cpu_comm_abort(c, msg);
            text_copy(err, errlen, msg);
            return -1;
        }
    }
    return 0;
}

static void chunk_bounds(int64_t count, int world, int r, int64_t *lo, int64_t *hi)
{
    *lo = count * r / world;
    *hi = count * (r + 1) / world;
}

#define BLOCK 1024

static void reduce_chunk_f32(cpu_comm *c, int rank, int64_t lo, int64_t hi)
{
    float acc[BLOCK];
    float *own = c->slot[rank].buf;
    for (int64_t b = lo; b < hi; b += BLOCK) {
        int64_t n = hi - b < BLOCK ? hi - b : BLOCK;
        const float *src0 = (const float *)c->slot[0].buf + b;
        memcpy(acc, src0, (size_t)n * sizeof *acc);
        for (int q = 1; q < c->world; q++) {
            const float *src = (const float *)c->slot[q].buf + b;
            for (int64_t i = 0; i < n; i++)
                acc[i] += src[i];
        }
        memcpy(own + b, acc, (size_t)n * sizeof *acc);
    }
}

static void reduce_chunk_half(cpu_comm *c, int rank, int64_t lo, int64_t hi, bool bf16)
{
    uint16_t *own = c->slot[rank].half;
    for (int64_t i = lo; i < hi; i++) {
        float s = 0.0f;
        for (int q = 0; q < c->world; q++) {
            uint16_t h = c->slot[q].half[i];
            s += bf16 ? bf16_to_f32(h) : f16_to_f32(h);
        }
        own[i] = bf16 ? f32_to_bf16(s) : f32_to_f16(s);
    }
}

static int exchange(cpu_comm *c, int rank, int64_t count, size_t elem, bool half, const cpu_coll_info *info,
                    char *err, size_t errlen)
{
    int64_t lo, hi;
    chunk_bounds(count, c->world, rank, &lo, &hi);
    if (!half)
        reduce_chunk_f32(c, rank, lo, hi);
    else
        reduce_chunk_half(c, rank, lo, hi, c->slot[rank].dtype == DEV_BF16);
    if (barrier(c, rank, info, "all-gather", false, err, errlen) != 0)
        return -1;
    char *own = half ? (char *)c->slot[rank].half : (char *)c->slot[rank].buf;
    for (int q = 0; q < c->world; q++) {
        if (q == rank)
            continue;
        int64_t qlo, qhi;
        chunk_bounds(count, c->world, q, &qlo, &qhi);
        const char *src = half ? (const char *)c->slot[q].half : (const char *)c->slot[q].buf;
        memcpy(own + qlo * (int64_t)elem, src + qlo * (int64_t)elem, (size_t)(qhi - qlo) * elem);
    }
    return barrier(c, rank, info, "end of the collective", false, err, errlen);
}

int cpu_allreduce(cpu_comm *c, int rank, void *buf, int64_t count, dev_dtype dtype, float prescale,
                  const cpu_coll_info *info, int64_t *arrival_ns, char *err, size_t errlen)
{
    int64_t arrival = cpu_clock_ns();
    *arrival_ns = arrival;
    bool half = dtype == DEV_F16 || dtype == DEV_BF16;
    uint16_t *h = NULL;
    if (half) {
        h = malloc((size_t)(count ? count : 1) * sizeof *h);
        if (!h) {
            snprintf(err, errlen, "out of memory compressing a %lld-element bucket", (long long)count);
            return -1;
        }
        const float *f = buf;
        for (int64_t i = 0; i < count; i++)
            h[i] = dtype == DEV_BF16 ? f32_to_bf16(f[i] * prescale) : f32_to_f16(f[i] * prescale);
    } else if (dtype != DEV_F32) {
        snprintf(err, errlen, "allreduce supports f32, f16 and bf16");
        return -1;
    }
    c->slot[rank].buf = buf;
    c->slot[rank].half = h;
    c->slot[rank].count = count;
    c->slot[rank].seq = info->seq;
    c->slot[rank].dtype = dtype;
    c->slot[rank].arrival_ns = arrival;

    int rc = barrier(c, rank, info, "collective", true, err, errlen);
    int64_t last_arrival = arrival;
    if (rc == 0) {
        /* From here the buffers are lent to the communicator until return_lease(). */
        rc = check_agreement(c, rank, info, err, errlen);
        if (rc == 0) {
            for (int q = 0; q < c->world; q++)
                if (c->slot[q].arrival_ns > last_arrival)
                    last_arrival = c->slot[q].arrival_ns;
            rc = exchange(c, rank, count, half ? sizeof(uint16_t) : sizeof(float), half, info, err, errlen);
        }
        return_lease(c, rc != 0);
    }
    if (rc == 0 && half) {
        float *f = buf;
        for (int64_t i = 0; i < count; i++)
            f[i] = dtype == DEV_BF16 ? bf16_to_f32(h[i]) : f16_to_f32(h[i]);
    }
    free(h);
    if (rc == 0 && c->link.pace) {
        int64_t bytes = count * (int64_t)(half ? 2 : 4);
        if (cpu_comm_sleep_until(c, last_arrival + cpu_link_allreduce_ns(&c->link, c->world, bytes)) != 0) {
            cpu_comm_abort_reason(c, err, errlen);
            rc = -1;
        }
    }
    return rc;
}

int cpu_broadcast_i32(cpu_comm *c, int rank, int32_t *buf, int64_t count, const cpu_coll_info *info,
                      int64_t *arrival_ns, char *err, size_t errlen)
{
    *arrival_ns = cpu_clock_ns();
    c->slot[rank].buf = buf;
    c->slot[rank].half = NULL;
    c->slot[rank].count = count;
    c->slot[rank].seq = info->seq;
    c->slot[rank].dtype = DEV_I32;
    c->slot[rank].arrival_ns = *arrival_ns;
    if (barrier(c, rank, info, "collective", true, err, errlen) != 0)
        return -1;
    int rc = check_agreement(c, rank, info, err, errlen);
    if (rc == 0 && rank != 0)
        memcpy(buf, c->slot[0].buf, (size_t)count * sizeof *buf);
    if (rc == 0)
        rc = barrier(c, rank, info, "end of the collective", false, err, errlen);
    return_lease(c, rc != 0);
    return rc;
}
