/* sim_collective.c — collectives in virtual time (sim_internal.h): each rank's arrival,
 * and at the last one the collective's end (the last arrival plus the network model's
 * time), its data handed over where a host reads it, each rank's copy of the result out
 * on a shared host's cores, the stalls drawn in cache and the late exits drawn on a
 * crowded host, and every rank put back on the worklist. */
#include "engine/sim/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sim_collective *collective(sim_world *w, int64_t seq)
{
    if (seq < 0)
        return NULL;
    if (seq >= w->colls_cap) {
        int64_t ncap = w->colls_cap ? w->colls_cap : 256;
        while (ncap <= seq)
            ncap *= 2;
        sim_collective *nc = realloc(w->colls, (size_t)ncap * sizeof *nc);
        if (!nc)
            return NULL;
        for (int64_t i = w->colls_cap; i < ncap; i++)
            nc[i] = (sim_collective){.end_ns = -1, .bytes = -1};
        w->colls = nc;
        w->colls_cap = ncap;
    }
    if (seq >= w->ncolls)
        w->ncolls = seq + 1;
    return &w->colls[seq];
}

/* Rank r's entry for collective `seq`: the head of the stream that arrived at it. */
static sim_entry *arrived_entry(sim_device *d, int64_t seq)
{
    for (int s = 0; s < DEV_STREAM_COUNT; s++) {
        sim_stream *st = &d->streams[s];
        if (st->arrived && st->count > 0 && st->q[st->head].seq == seq)
            return &st->q[st->head];
    }
    return NULL;
}

/* A broadcast's data, from the root's buffer to every other rank's, once all have
 * arrived: the root may reuse its buffer as soon as its host sees the collective end,
 * before the other ranks' streams are timed. */
static void deliver_broadcast(sim_world *w, int64_t seq, int root)
{
    const sim_entry *src = arrived_entry(w->devs[root], seq);
    if (!src || !src->buf)
        return;
    for (int r = 0; r < w->world_size; r++) {
        sim_entry *dst = r == root ? NULL : arrived_entry(w->devs[r], seq);
        if (dst && dst->buf)
            memcpy(dst->buf, src->buf, (size_t)(dst->count < src->count ? dst->count : src->count) * sizeof(int32_t));
    }
}

/* A SUM allreduce's result in every rank's buffer, once all have arrived (the host may
 * read it as soon as it sees the collective end: join's counts of ranks still
 * training).  Buffers reach the sim only where the host reads them, small ones; bucket
 * allreduces carry none.  false: a dtype the sim does not add. */
static bool reduce_allreduce(sim_world *w, int64_t seq)
{
    sim_entry *acc = arrived_entry(w->devs[0], seq);
    if (!acc || !acc->buf)
        return true;
    for (int r = 1; r < w->world_size; r++) {
        const sim_entry *e = arrived_entry(w->devs[r], seq);
        if (!e || !e->buf || e->count != acc->count)
            return true; /* traffic only somewhere: nothing to add */
    }
    if (acc->dtype != DEV_F32 && acc->dtype != DEV_I32)
        return false;
    float *af = acc->buf;
    int32_t *ai = acc->buf;
    if (acc->dtype == DEV_F32 && acc->prescale != 1.0f)
        for (int64_t i = 0; i < acc->count; i++)
            af[i] *= acc->prescale;
    for (int r = 1; r < w->world_size; r++) {
        const sim_entry *e = arrived_entry(w->devs[r], seq);
        const float *ef = e->buf;
        const int32_t *ei = e->buf;
        for (int64_t i = 0; i < acc->count; i++) {
            if (acc->dtype == DEV_F32)
                af[i] += ef[i] * e->prescale;
            else
                ai[i] += ei[i];
        }
    }
    for (int r = 1; r < w->world_size; r++)
        memcpy(arrived_entry(w->devs[r], seq)->buf, acc->buf, (size_t)acc->count * 4);
    return true;
}

/* Each rank's copy of collective `c`'s result out of the staging area on a shared host,
 * submitted to its cores when the last rank arrives (sim_host.h): the copy (read + write,
 * at copy_out_gbps) starts so that, at a core of its own, it ends when the sum is there,
 * since the collective's time ends with the first rank's copy (calibrate --from learns
 * it so), and never before the last arrival.  Every rank's comm worker waits for the sum
 * and starts its copy at once; the copies share the cores with each other and with the
 * ranks' copies and steps.  A rank's end is its copy's end, held no earlier than the
 * collective's (a paced link's floor). */
static int copy_results_out(sim_world *w, const sim_collective *c, const sim_entry *e)
{
    for (int r = 0; r < w->world_size; r++) {
        sim_device *d = w->devs[r];
        uint64_t work = (uint64_t)(2.0 * (double)e->bytes / d->timing.copy_out_bytes_per_ns);
        int64_t start = c->data_ns - (int64_t)work;
        if (start < c->last_arrival_ns)
            start = c->last_arrival_ns;
        if (sim_host_submit(d->host, d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMM, start, work) != 0)
            return -1;
        d->staged_seq = e->seq;
        d->staged_end_ns = -1;
    }
    return 0;
}

/* When the sum of a `bytes` allreduce is there after the last arrival, before a paced
 * link's floor: the measured table's time, times [host] cache_allreduce_factor where
 * the host's memory fits in its cache, or the link's. */
static double allreduce_data_ns(const sim_world *w, double bytes)
{
    double ns = net_allreduce_data_ns(&w->net, bytes);
    double cache = w->sc->cache_allreduce_factor;
    return w->fits_cache && cache > 0 && w->net.nmeasured > 0 ? ns * cache : ns;
}

/* Whether collective `e`'s sums are work on the host's cores ([host]
 * comm_on_host_cores): a bucket allreduce whose ranks are all of one host, with a
 * measured table to give its time alone there. */
static bool sums_on_host(const sim_world *w, const sim_entry *e)
{
    return w->hosts && w->sc->comm_on_host_cores && w->host_ranks >= w->world_size && w->net.nmeasured > 0 &&
           sim_bucket_allreduce(e);
}

/* Each rank's part of collective `c`'s sums, submitted to the host's cores at the last
 * arrival (sim_host.h): its share of the table's time alone, min(1, cores / ranks) of a
 * core for that long, so that alone the collective lasts the table's time and beside the
 * copies and steps it lasts longer, as theirs do beside it.  Ranks as processes copy the
 * result out of the staging area inside that time (calibrate --from measures it so).  A
 * rank's end is its part's end, held no earlier than a paced link's floor (c->end_ns).
 * The sums start `stall_ns` after the last arrival where a rank's worker was held off. */
static int sum_on_host(sim_world *w, const sim_collective *c, const sim_entry *e, int64_t stall_ns)
{
    double alone_ns = allreduce_data_ns(w, (double)e->bytes);
    double share = timing_core_shares(w->sc->host_cores, 0, w->world_size, w->sc->comm_core_weight).sum;
    for (int r = 0; r < w->world_size; r++) {
        sim_device *d = w->devs[r];
        if (sim_host_submit(d->host, d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMM, c->last_arrival_ns + stall_ns,
                            (uint64_t)(alone_ns * share + 0.5)) != 0)
            return -1;
        d->staged_seq = e->seq;
        d->staged_end_ns = -1;
    }
    return 0;
}

/* How much longer bucket allreduce `e` lasts in cache ([host] cache_allreduce_*stall_*):
 * a short collective's time is its body and, now and then, a rank's worker held off its
 * core for milliseconds.  Drawn by the last rank to arrive, `d`, whose timing model has
 * the terms only in cache (timing_use_cache). */
static int64_t allreduce_stall_ns(sim_device *d, const sim_entry *e)
{
    if (!sim_bucket_allreduce(e))
        return 0;
    return (int64_t)sim_host_allreduce_stall_ns(&d->host_terms, &d->timing, sim_device_crowded(d));
}

/* On a host of fewer cores than ranks, how late each rank but the first of its host out
 * may leave bucket allreduce `e` ([host] comm_exit_late_*): drawn now, in the turning
 * order, so the order the ranks go on in can follow it; whether the rank waits for the
 * collective at all is known only when it is timed (sim_device.c).  The turning order
 * runs up from `first`, so a host's first rank out is `first` or its lowest rank. */
static bool draw_late_exits(sim_world *w, const sim_entry *e, int first)
{
    if (!w->hosts || !sim_bucket_allreduce(e))
        return false;
    bool any = false;
    for (int i = 0; i < w->world_size; i++) {
        int r = (first + i) % w->world_size;
        sim_device *d = w->devs[r];
        int host_first = r / w->host_ranks == first / w->host_ranks ? first : r / w->host_ranks * w->host_ranks;
        if (r == host_first || !sim_device_crowded(d))
            continue;
        d->late_seq = e->seq;
        d->late_ns = (int64_t)sim_host_comm_exit_late_ns(&d->host_terms, &d->timing);
        any |= d->late_ns > 0;
    }
    return any;
}

void sim_collective_first_out(sim_world *w, sim_collective *c, int64_t seq)
{
    c->first_out = true;
    int first = sim_collective_first(w, seq);
    /* Those that leave late go on after the others, whose copies and steps then hold the
     * cores they queue for. */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 1; i < w->world_size; i++) {
            const sim_device *d = w->devs[(first + i) % w->world_size];
            bool late = d->late_seq == seq && d->late_ns > 0;
            if (late == (pass == 1))
                sim_world_push_work(w, d->base.rank);
        }
    }
}

int sim_collective_first(const sim_world *w, int64_t seq)
{
    uint64_t turn = ((uint64_t)seq + (sim_noise_seed(w) - w->sc->seed) * 0xD1B54A32D192ED03ull) * 0x9E3779B97F4A7C15ull;
    return (int)((turn >> 32) % (uint64_t)w->world_size);
}

bool sim_collective_arrive(sim_device *d, const sim_entry *e, int64_t at)
{
    sim_world *w = d->w;
    sim_collective *c = collective(w, e->seq);
    char why[512];
    if (!c) {
        snprintf(why, sizeof why, "rank %d: out of memory for collective %lld", d->base.rank, (long long)e->seq);
        sim_world_abort(w, why);
        return false;
    }
    if (c->arrived > 0 && (c->bytes != e->bytes || c->work != e->work)) {
        snprintf(why, sizeof why,
                 "collective %lld (iteration %d): rank %d sends %lld bytes where the ranks before it sent %lld",
                 (long long)e->seq, (int)e->iter, d->base.rank, (long long)e->bytes, (long long)c->bytes);
        sim_world_abort(w, why);
        return false;
    }
    if (c->arrived > 0 && e->work == WORK_BROADCAST && c->root != e->root) {
        snprintf(why, sizeof why,
                 "broadcast %lld (iteration %d): rank %d names rank %d its root where the ranks before it named %d",
                 (long long)e->seq, (int)e->iter, d->base.rank, (int)e->root, (int)c->root);
        sim_world_abort(w, why);
        return false;
    }
    c->bytes = e->bytes;
    c->work = e->work;
    c->root = e->root;
    if (c->arrived == 0 || at > c->last_arrival_ns)
        c->last_arrival_ns = at;
    if (++c->arrived < w->world_size)
        return false;
    double bytes = (double)e->bytes;
    double data = e->work == WORK_BROADCAST ? net_broadcast_ns(&w->net, bytes) : allreduce_data_ns(w, bytes);
    double floor = e->work == WORK_ALLREDUCE && w->net.pace ? net_link_allreduce_ns(&w->net, bytes) : 0;
    int64_t stall = allreduce_stall_ns(d, e);
    c->hosted = sums_on_host(w, e);
    if (c->hosted) /* the sums' end is the host's; a paced link's floor holds the rank no less */
        data = 0;
    else
        data += (double)stall;
    c->end_ns = c->last_arrival_ns + (int64_t)((floor > data ? floor : data) + 0.5);
    c->data_ns = c->last_arrival_ns + (int64_t)(data + 0.5);
    if (e->work == WORK_BROADCAST) {
        deliver_broadcast(w, e->seq, c->root);
    } else if (!reduce_allreduce(w, e->seq)) {
        snprintf(why, sizeof why, "collective %lld (iteration %d): the sim adds only float32 and int32 buffers",
                 (long long)e->seq, (int)e->iter);
        sim_world_abort(w, why);
        return false;
    }
    /* Ranks as processes copy a bucket's sum out of the staging area; ranks as threads
     * sum in place.  On a shared host the rank that completed the collective is put back
     * on the worklist with the others: its copy's end is known only once the host has run
     * to it. */
    int first = sim_collective_first(w, e->seq);
    bool staged = strcmp(w->sc->ranks, "processes") == 0 && sim_bucket_allreduce(e);
    if (c->hosted ? sum_on_host(w, c, e, stall) != 0 : d->host && staged && copy_results_out(w, c, e) != 0) {
        sim_world_abort(w, "out of memory noting the use of the host's cores");
        return false;
    }
    c->late_exits = draw_late_exits(w, e, first);
    for (int i = 0; i < w->world_size; i++) {
        int r = (first + i) % w->world_size;
        if (r != d->base.rank || d->host)
            sim_world_push_work(w, r);
    }
    return true;
}
