/* sim_crowding.c — what a rank's ops lose to its own comm stream and to the other ranks'
 * work on its host (sim_crowding.h). */
#include "engine/sim/sim_crowding.h"

bool sim_contention_modelled(const sim_device *d)
{
    return d->timing.comm_slowdown > 0 || d->host_terms.comm_wakeup_ns > 0;
}

/* When the host's cores would be free of the work its ranks have submitted and queued
 * behind it, if no other started. */
static int64_t host_busy_until(const sim_device *d)
{
    sim_world *w = d->w;
    int base = d->base.rank / w->host_ranks * w->host_ranks;
    for (int m = 0; m < d->host->members; m++) {
        const sim_device *o = w->devs[base + m / DEV_STREAM_COUNT];
        const sim_stream *st = o ? &o->streams[m % DEV_STREAM_COUNT] : NULL;
        double more = 0.0;
        for (size_t i = 1; st && st->hosted && i < st->count; i++) {
            const sim_entry *e = &st->q[st->head + i];
            if (sim_on_host_cores(e))
                more += (double)e->dur_ns;
        }
        w->host_more_work[m] = more;
    }
    return sim_host_drain_end(d->host, w->host_more_work, w->host_scratch);
}

/* `late`, no later than the host's cores would be free, from `from` on, of the work its
 * ranks have submitted and queued: the cores a woken thread of this rank queues for. */
static int64_t within_held(const sim_device *d, int64_t late, int64_t from)
{
    int64_t busy_until = host_busy_until(d);
    int64_t held = busy_until > from ? busy_until - from : 0;
    return late < held ? late : held;
}

int64_t sim_late_exit_ns(const sim_device *d, const sim_entry *e, int64_t end)
{
    if (!d->host || d->late_seq != e->seq || d->late_ns <= 0)
        return 0;
    const sim_stream *compute = &d->streams[DEV_STREAM_COMPUTE];
    if (compute->free_ns > end || (compute->count > 0 && compute->q[compute->head].type != SIM_WAIT))
        return 0;
    return within_held(d, d->late_ns, end);
}

int64_t sim_compute_wake_late_ns(sim_device *d, int64_t at)
{
    if (!sim_device_crowded(d))
        return 0;
    int64_t late = (int64_t)sim_host_compute_wake_late_ns(&d->host_terms, &d->timing);
    return late > 0 ? within_held(d, late, at) : 0;
}

bool sim_comm_busy_bound(sim_device *d, int64_t *from, int64_t *until)
{
    const sim_stream *comm = &d->streams[DEV_STREAM_COMM];
    if (comm->count == 0 || !comm->arrived || comm->q[comm->head].type != SIM_COLL)
        return false;
    const sim_entry *e = &comm->q[comm->head];
    const sim_collective *c = &d->w->colls[e->seq];
    if (c->end_ns < 0)
        return false;
    int64_t bound = c->end_ns;
    if (d->host && d->staged_seq == e->seq) {
        int64_t part = d->staged_end_ns >= 0 ? d->staged_end_ns
                                             : sim_host_member_end(d->host, d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMM,
                                                                   d->w->host_scratch);
        bound = part > bound ? part : bound;
    }
    *from = c->last_arrival_ns;
    *until = bound;
    return bound > *from;
}

int sim_ends_inside_busy(sim_device *d, const sim_entry *e, int64_t start, int64_t from, int64_t until,
                         int64_t *end)
{
    if (start >= until)
        return 0;
    if (sim_busy_note(&d->comm_busy, from, until) != 0)
        return -1;
    int64_t t = sim_busy_end(&d->comm_busy, start, e->dur_ns, d->timing.comm_slowdown);
    bool wakes_late = e->sleeps && sim_busy_covers(&d->comm_busy, t);
    d->comm_busy.count--; /* the interval noted above: the last, and it ends after start */
    if (t >= until)
        return 0;
    *end = t + (wakes_late ? (int64_t)d->host_terms.comm_wakeup_ns : 0);
    return 1;
}

int64_t sim_comm_launch_crowded_ns(const sim_device *d, int64_t at)
{
    if (!d->host || !sim_device_crowded(d) || d->host_terms.comm_launch_per_op_ns <= 0)
        return 0;
    int running = sim_host_ops_running_at(d->host, at, d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMPUTE);
    return (int64_t)(d->host_terms.comm_launch_per_op_ns * running + 0.5);
}
