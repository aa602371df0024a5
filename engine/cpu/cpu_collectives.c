/* cpu_collectives.c — allreduce and broadcast among the ranks of one machine over
 * shared memory, with bounded waits that name the missing rank (see cpu_collectives.h).
 *
 * Ownership: from the moment a collective's arrival barrier completes until every
 * participant has left it, each rank's buffer (or, between processes, its staging area)
 * is lent to the communicator — peers read it during the reduce-scatter and the
 * all-gather.  A rank that leaves early (the run was aborted) therefore waits for the
 * lease to be returned by every participant before it gives its buffer back to its
 * caller, who may free it.  Peers inside the data phase only copy and add memory, so
 * that wait is short; between processes it is also bounded by the timeout, since a
 * killed peer never returns its lease (its staging area stays mapped, so nothing is
 * freed under anyone). */
#include "common/textcopy.h"
#include "engine/cpu/cpu_comm_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/halfprec.h"

static void describe(const cpu_coll_info *info, char *out, size_t outlen)
{
    if (info->bucket >= 0)
        snprintf(out, outlen, "collective seq %lld (%s, iteration %d, bucket %d)", (long long)info->seq,
                 info->name, info->iter, info->bucket);
    else
        snprintf(out, outlen, "collective seq %lld (%s, iteration %d)", (long long)info->seq, info->name,
                 info->iter);
}

static struct timespec deadline_after(double seconds)
{
    int64_t deadline = cpu_clock_ns() + (int64_t)(seconds * 1e9);
    return (struct timespec){.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000};
}

/* With the lock held, after the timeout: aborts naming who never came. */
static void abort_missing(cpu_comm *c, const cpu_coll_info *info, const char *phase)
{
    cpu_comm_state *st = c->st;
    /* Every rank fits: "0, 1, ..., 63" is 244 bytes.  A rank that did not fit all the
     * same would be left out of its list, not written in part. */
    _Static_assert(CPU_COMM_MAX_WORLD <= 64, "the rank lists below hold 64 ranks");
    char what[160], missing[256] = "", waited[256] = "";
    describe(info, what, sizeof what);
    size_t mlen = 0, wlen = 0;
    int nmissing = 0;
    for (int r = 0; r < st->world; r++) {
        char *dst = st->present[r] ? waited : missing;
        size_t *len = st->present[r] ? &wlen : &mlen;
        int w = snprintf(dst + *len, 256 - *len, "%s%d", *len ? ", " : "", r);
        if (w > 0 && (size_t)w < 256 - *len)
            *len += (size_t)w;
        else
            dst[*len] = '\0';
        nmissing += !st->present[r];
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: rank%s %s did not reach the %s within %.1f s (rank%s %s waited)", what,
             nmissing > 1 ? "s" : "", missing, phase, st->timeout_s, st->world - nmissing > 1 ? "s" : "", waited);
    cpu_comm_abort_locked(c, msg);
}

/* Blocks until every rank has called it for the same generation, the timeout passes,
 * or the communicator is aborted.  `opens_data`: the arrival barrier, which lends every
 * participant's buffer to the communicator. */
static int barrier(cpu_comm *c, int rank, const cpu_coll_info *info, const char *phase, bool opens_data,
                   char *err, size_t errlen)
{
    cpu_comm_state *st = c->st;
    cpu_comm_lock(c);
    if (st->aborted) {
        text_copy(err, errlen, st->why);
        cpu_comm_unlock(c);
        return -1;
    }
    uint64_t gen = st->generation;
    st->present[rank] = true;
    if (++st->arrived == st->world) {
        st->arrived = 0;
        memset(st->present, 0, sizeof st->present);
        st->generation++;
        if (opens_data)
            st->lent = st->world;
        cpu_comm_notify(c, &st->cv);
        cpu_comm_unlock(c);
        return 0;
    }
    struct timespec ts = deadline_after(st->timeout_s);
    while (st->generation == gen && !st->aborted) {
        if (cpu_comm_wait(c, &st->cv, &ts) == ETIMEDOUT && st->generation == gen && !st->aborted)
            abort_missing(c, info, phase);
    }
    int ret = 0;
    if (st->generation == gen) {
        text_copy(err, errlen, st->why);
        ret = -1;
    }
    cpu_comm_unlock(c);
    return ret;
}

/* Called once by each participant that passed the arrival barrier, when it stops
 * touching the other ranks' slots.  A rank leaving on failure (`failed`) also waits
 * until no participant reads its slot any more: only then may its caller free the
 * buffer.  On success every peer has passed the end barrier, so nobody reads it. */
static void return_lease(cpu_comm *c, bool failed)
{
    cpu_comm_state *st = c->st;
    cpu_comm_lock(c);
    st->lent--;
    if (st->lent == 0)
        cpu_comm_notify(c, &st->cv);
    if (st->processes) {
        struct timespec ts = deadline_after(st->timeout_s);
        while (failed && st->lent > 0)
            if (cpu_comm_wait(c, &st->cv, &ts) == ETIMEDOUT)
                break;
    } else {
        /* Untimed on purpose: peer threads still in the data phase are copying or
         * adding memory, never waiting on anything, so they return their lease soon. */
        while (failed && st->lent > 0)
            cpu_comm_wait(c, &st->cv, NULL);
    }
    cpu_comm_unlock(c);
}

static int check_agreement(cpu_comm *c, int rank, const cpu_coll_info *info, char *err, size_t errlen)
{
    cpu_comm_state *st = c->st;
    for (int q = 0; q < st->world; q++) {
        if (st->slot[q].seq != st->slot[rank].seq || st->slot[q].count != st->slot[rank].count ||
            st->slot[q].dtype != st->slot[rank].dtype) {
            char what[160], msg[640];
            describe(info, what, sizeof what);
            snprintf(msg, sizeof msg,
                     "%s: ranks disagree: rank %d launched seq %lld with %lld elements, rank %d seq %lld with %lld "
                     "elements",
                     what, rank, (long long)st->slot[rank].seq, (long long)st->slot[rank].count, q,
                     (long long)st->slot[q].seq, (long long)st->slot[q].count);
            cpu_comm_abort(c, msg);
            text_copy(err, errlen, msg);
            return -1;
        }
    }
    return 0;
}

/* Rank q's data for the collective in progress, as this process sees it. */
static char *slot_data(cpu_comm *c, int q, bool half)
{
    if (c->st->processes)
        return c->stage + (size_t)q * c->st->stage_bytes;
    return half ? (char *)c->st->slot[q].half : (char *)c->st->slot[q].buf;
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
    float *own = (float *)slot_data(c, rank, false);
    for (int64_t b = lo; b < hi; b += BLOCK) {
        int64_t n = hi - b < BLOCK ? hi - b : BLOCK;
        memcpy(acc, (const float *)slot_data(c, 0, false) + b, (size_t)n * sizeof *acc);
        for (int q = 1; q < c->st->world; q++) {
            const float *src = (const float *)slot_data(c, q, false) + b;
            for (int64_t i = 0; i < n; i++)
                acc[i] += src[i];
        }
        memcpy(own + b, acc, (size_t)n * sizeof *acc);
    }
}

static void reduce_chunk_i32(cpu_comm *c, int rank, int64_t lo, int64_t hi)
{
    int32_t *own = (int32_t *)slot_data(c, rank, false);
    for (int64_t i = lo; i < hi; i++) {
        int64_t sum = 0;
        for (int q = 0; q < c->st->world; q++)
            sum += ((const int32_t *)slot_data(c, q, false))[i];
        own[i] = (int32_t)sum;
    }
}

static void reduce_chunk_half(cpu_comm *c, int rank, int64_t lo, int64_t hi, bool bf16)
{
    uint16_t *own = (uint16_t *)slot_data(c, rank, true);
    for (int64_t i = lo; i < hi; i++) {
        float s = 0.0f;
        for (int q = 0; q < c->st->world; q++) {
            uint16_t h = ((const uint16_t *)slot_data(c, q, true))[i];
            s += bf16 ? bf16_to_f32(h) : f16_to_f32(h);
        }
        own[i] = bf16 ? f32_to_bf16(s) : f32_to_f16(s);
    }
}

static int exchange(cpu_comm *c, int rank, int64_t count, size_t elem, bool half, const cpu_coll_info *info,
                    char *err, size_t errlen)
{
    int64_t lo, hi;
    chunk_bounds(count, c->st->world, rank, &lo, &hi);
    if (c->st->slot[rank].dtype == DEV_I32)
        reduce_chunk_i32(c, rank, lo, hi);
    else if (!half)
        reduce_chunk_f32(c, rank, lo, hi);
    else
        reduce_chunk_half(c, rank, lo, hi, c->st->slot[rank].dtype == DEV_BF16);
    if (barrier(c, rank, info, "all-gather", false, err, errlen) != 0)
        return -1;
    char *own = slot_data(c, rank, half);
    for (int q = 0; q < c->st->world; q++) {
        if (q == rank)
            continue;
        int64_t qlo, qhi;
        chunk_bounds(count, c->st->world, q, &qlo, &qhi);
        memcpy(own + qlo * (int64_t)elem, slot_data(c, q, half) + qlo * (int64_t)elem, (size_t)(qhi - qlo) * elem);
    }
    return barrier(c, rank, info, "end of the collective", false, err, errlen);
}

/* Fills this rank's slot on arrival: the 16-bit compression of a comm hook, and, between
 * processes, the copy into the staging area.  Returns 0 or -1 with err. */
static int stage_in(cpu_comm *c, int rank, const float *buf, int64_t count, dev_dtype dtype, float prescale,
                    uint16_t **half_out, char *err, size_t errlen)
{
    bool half = dtype == DEV_F16 || dtype == DEV_BF16;
    size_t elem = half ? sizeof(uint16_t) : sizeof(float);
    *half_out = NULL;
    if (c->st->processes && (size_t)count * elem > c->st->stage_bytes) {
        snprintf(err, errlen, "a %lld-byte collective exceeds the %zu-byte staging area", (long long)count * (long long)elem,
                 c->st->stage_bytes);
        return -1;
    }
    if (!half) {
        if (c->st->processes)
            memcpy(slot_data(c, rank, false), buf, (size_t)count * sizeof(float));
        return 0;
    }
    uint16_t *h = c->st->processes ? (uint16_t *)slot_data(c, rank, true)
                                   : malloc((size_t)(count ? count : 1) * sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory compressing a %lld-element bucket", (long long)count);
        return -1;
    }
    /* PyTorch's fp16 / bf16 hooks cast first, then divide by the world size in the
     * 16-bit type (buffer.to(half).div_(world)): two roundings, and a gradient beyond
     * the fp16 range is inf before the division.  prescale is 1 / world size. */
    float divisor = prescale == 1.0f ? 1.0f : roundf(1.0f / prescale);
    bool bf = dtype == DEV_BF16;
    for (int64_t i = 0; i < count; i++) {
        uint16_t v = bf ? f32_to_bf16(buf[i]) : f32_to_f16(buf[i]);
        if (divisor != 1.0f)
            v = bf ? f32_to_bf16(bf16_to_f32(v) / divisor) : f32_to_f16(f16_to_f32(v) / divisor);
        h[i] = v;
    }
    if (!c->st->processes)
        *half_out = h;
    return 0;
}

static void stage_out(cpu_comm *c, int rank, float *buf, int64_t count, dev_dtype dtype, const uint16_t *h)
{
    bool half = dtype == DEV_F16 || dtype == DEV_BF16;
    if (!half) {
        if (c->st->processes)
            memcpy(buf, slot_data(c, rank, false), (size_t)count * sizeof(float));
        return;
    }
    if (c->st->processes)
        h = (const uint16_t *)slot_data(c, rank, true);
    for (int64_t i = 0; i < count; i++)
        buf[i] = dtype == DEV_BF16 ? bf16_to_f32(h[i]) : f16_to_f32(h[i]);
}

int cpu_allreduce(cpu_comm *c, int rank, void *buf, int64_t count, dev_dtype dtype, float prescale,
                  const cpu_coll_info *info, int64_t *arrival_ns, char *err, size_t errlen)
{
    cpu_comm_state *st = c->st;
    int64_t arrival = cpu_clock_ns();
    *arrival_ns = arrival;
    bool half = dtype == DEV_F16 || dtype == DEV_BF16;
    if (!half && dtype != DEV_F32 && dtype != DEV_I32) {
        snprintf(err, errlen, "allreduce supports f32, f16, bf16 and i32");
        return -1;
    }
    uint16_t *h = NULL;
    if (stage_in(c, rank, buf, count, dtype, prescale, &h, err, errlen) != 0)
        return -1;
    st->slot[rank].buf = c->st->processes ? NULL : buf;
    st->slot[rank].half = h;
    st->slot[rank].count = count;
    st->slot[rank].seq = info->seq;
    st->slot[rank].dtype = dtype;
    st->slot[rank].arrival_ns = arrival;

    int rc = barrier(c, rank, info, "collective", true, err, errlen);
    int64_t last_arrival = arrival;
    if (rc == 0) {
        /* From here the buffers are lent to the communicator until return_lease(). */
        rc = check_agreement(c, rank, info, err, errlen);
        if (rc == 0) {
            for (int q = 0; q < st->world; q++)
                if (st->slot[q].arrival_ns > last_arrival)
                    last_arrival = st->slot[q].arrival_ns;
            rc = exchange(c, rank, count, half ? sizeof(uint16_t) : sizeof(float), half, info, err, errlen);
        }
        return_lease(c, rc != 0);
    }
    if (rc == 0)
        stage_out(c, rank, buf, count, dtype, h);
    free(h);
    if (rc == 0 && st->link.pace) {
        int64_t bytes = count * (int64_t)(half ? 2 : 4);
        if (cpu_comm_sleep_until(c, last_arrival + (int64_t)net_link_allreduce_ns(&st->link.net, (double)bytes)) != 0) {
            cpu_comm_abort_reason(c, err, errlen);
            rc = -1;
        }
    }
    return rc;
}

int cpu_broadcast_i32(cpu_comm *c, int rank, int root, int32_t *buf, int64_t count, const cpu_coll_info *info,
                      int64_t *arrival_ns, char *err, size_t errlen)
{
    cpu_comm_state *st = c->st;
    *arrival_ns = cpu_clock_ns();
    if (st->processes) {
        if ((size_t)count * sizeof *buf > st->stage_bytes) {
            snprintf(err, errlen, "a %lld-element broadcast exceeds the staging area", (long long)count);
            return -1;
        }
        memcpy(slot_data(c, rank, false), buf, (size_t)count * sizeof *buf);
    }
    st->slot[rank].buf = st->processes ? NULL : buf;
    st->slot[rank].half = NULL;
    st->slot[rank].count = count;
    st->slot[rank].seq = info->seq;
    st->slot[rank].dtype = DEV_I32;
    st->slot[rank].arrival_ns = *arrival_ns;
    if (barrier(c, rank, info, "collective", true, err, errlen) != 0)
        return -1;
    int rc = check_agreement(c, rank, info, err, errlen);
    if (rc == 0 && rank != root)
        memcpy(buf, slot_data(c, root, false), (size_t)count * sizeof *buf);
    if (rc == 0)
        rc = barrier(c, rank, info, "end of the collective", false, err, errlen);
    return_lease(c, rc != 0);
    return rc;
}
