/* sim_device.c — device.h in virtual time: each stream's entries are timed as soon as
 * their dependencies are known (collectives by sim_collective.c), and each timed entry
 * becomes a span (or part of a phase span).  See sim_internal.h for the data and the
 * ordering argument. */
#include "common/textcopy.h"
#include "engine/sim/sim_crowding.h"
#include "engine/sim/sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const device_ops sim_ops;

static void fail_device(sim_device *d, const char *msg)
{
    if (!d->failed) {
        d->failed = true;
        text_copy(d->error, sizeof d->error, msg);
    }
}

/* Queues start small: every rank has its own, and with the copies out folded a compute
 * queue holds a few entries (a comm queue the collectives of a step). */
static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return false;
    *p = np;
    *cap = ncap;
    return true;
}

/* ------------------------------------------------------------------ spans */

static span_kind phase_of(span_kind k)
{
    return k == SPAN_COPY_IN ? SPAN_BACKWARD : k;
}

static void push_phase(sim_stream *st)
{
    if (st->phase.open)
        span_ring_push(st->ring, &st->phase.s);
    st->phase.open = false;
}

void sim_device_flush(sim_device *d)
{
    for (int s = 0; s < DEV_STREAM_COUNT; s++)
        push_phase(&d->streams[s]);
}

static void entry_name(const sim_stream *st, const sim_entry *e, char *out, size_t n)
{
    if (e->name_off != UINT32_MAX) {
        text_copy(out, n, st->names + e->name_off);
    } else if (e->kind == SPAN_ALLREDUCE && e->bucket >= 0) {
        snprintf(out, n, "bucket %d", (int)e->bucket);
    } else {
        text_copy(out, n, span_kind_name((span_kind)e->kind));
    }
}

static void emit(sim_device *d, dev_stream sid, const sim_entry *e, int64_t start, int64_t end)
{
    sim_stream *st = &d->streams[sid];
    bool phase = d->w->detail == RECORD_PHASE && sid == DEV_STREAM_COMPUTE;
    span_kind kind = phase ? phase_of((span_kind)e->kind) : (span_kind)e->kind;
    if (phase && st->phase.open && st->phase.s.kind == kind && st->phase.s.iter == e->iter &&
        st->phase.s.end_ns == start) {
        st->phase.s.end_ns = end;
        st->phase.s.bytes += e->bytes;
        return;
    }
    span s = {.rank = d->base.rank,
              .iter = e->iter,
              .stream = sid == DEV_STREAM_COMPUTE ? STREAM_COMPUTE : STREAM_COMM,
              .kind = (uint8_t)kind,
              .layer = phase ? -1 : e->layer,
              .bucket = phase ? -1 : e->bucket,
              .seq = e->seq,
              .bytes = e->bytes,
              .start_ns = start,
              .end_ns = end};
    if (phase) {
        push_phase(st);
        text_copy(s.name, sizeof s.name, span_kind_name(kind));
        st->phase.s = s;
        st->phase.open = true;
        return;
    }
    entry_name(st, e, s.name, sizeof s.name);
    span_ring_push(st->ring, &s);
}

/* ------------------------------------------------------------------ events */

/* Marks are in ticket order: those before marks_reached (from the head) are reached. */
static void reach_marks(sim_stream *st)
{
    while (st->marks_reached < st->marks_count) {
        sim_mark *m = &st->marks[(st->marks_head + st->marks_reached) % st->marks_cap];
        if (m->ticket > st->completed)
            break;
        if (m->at_ns < 0)
            m->at_ns = st->free_ns;
        st->marks_reached++;
    }
}

/* The time the other stream reached `ticket`, or -1 if it has not yet; marks up to it
 * are consumed (each stream's events are waited for in the order they were made). */
static int64_t mark_time(sim_stream *other, uint64_t ticket)
{
    if (other->completed < ticket)
        return -1;
    int64_t at = other->free_ns;
    while (other->marks_count > 0) {
        sim_mark *m = &other->marks[other->marks_head];
        if (m->ticket > ticket)
            break;
        if (m->ticket == ticket)
            at = m->at_ns;
        other->marks_head = (other->marks_head + 1) % other->marks_cap;
        other->marks_count--;
        if (other->marks_reached > 0)
            other->marks_reached--;
    }
    return at;
}

/* ------------------------------------------------------------------ streams */

static bool advance_stream(sim_device *d, dev_stream sid);

/* Whether the comm stream's busy time up to the compute stream's next op is known: a
 * collective that every rank has not reached yet would slow that op by an unknown
 * amount, so the compute stream waits for it (the last arrival puts this rank back on
 * the worklist).  A collective still behind a wait on the compute stream starts after
 * the op, so it does not count.  This cannot deadlock: take the lowest collective some
 * rank has arrived at but not all; a rank not there yet has its comm stream before it,
 * so that rank's compute stream is held by no collective of its own (one would be lower)
 * and goes on to the event the collective waits for. */
static bool comm_known(sim_device *d)
{
    advance_stream(d, DEV_STREAM_COMM);
    const sim_stream *comm = &d->streams[DEV_STREAM_COMM];
    return comm->count == 0 || comm->q[comm->head].type != SIM_COLL;
}

/* Whether the compute stream's worker takes op `e` without sleeping: it ran the op
 * before on its core (a copy, a step) and `e` was queued by its end.  Measured, such a
 * hand-off takes a microsecond (the median gap between a rank's copies out, 0.4-1.1 us
 * in the calibration runs, where one between forwards that sleep takes 12-35 us) and
 * rarely stalls (in nvtx_small 0.8 % of the gaps between forwards were over 0.3 ms, 0.1 %
 * of those between copies). */
static bool worker_goes_on(const sim_stream *st, const sim_entry *e)
{
    return st->worker_busy && e->enq_ns <= st->free_ns;
}

/* The hand-off stall before compute op `e` ([host] op_gap_stall_*): only where the
 * stream's worker slept before it. */
static int64_t hand_off_stall_ns(sim_device *d, const sim_stream *st, const sim_entry *e)
{
    return worker_goes_on(st, e) ? 0 : (int64_t)sim_host_gap_stall_ns(&d->host_terms, &d->timing);
}

/* Compute op `e`'s hand-off stall, drawn once however often its timing is tried. */
static int64_t compute_stall_ns(sim_device *d, sim_stream *st, const sim_entry *e)
{
    if (!st->stall_drawn) {
        st->stall_ns = hand_off_stall_ns(d, st, e);
        st->stall_drawn = true;
    }
    return st->stall_ns;
}

/* The end of `work_ns` of the compute stream's head op on the host's cores from
 * `start`: submitted once (a sleeping backward's write not `counted` among the ops
 * running), then false until the host has run to its end. */
static bool hosted_end(sim_device *d, int64_t start, uint64_t work_ns, bool counted, int64_t *end)
{
    sim_stream *st = &d->streams[DEV_STREAM_COMPUTE];
    int member = d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMPUTE;
    if (!st->hosted) {
        int rc = counted ? sim_host_submit(d->host, member, start, work_ns)
                         : sim_host_submit_write(d->host, member, start, work_ns);
        if (rc != 0) {
            fail_device(d, "an op submitted to the host's cores while one is pending");
            return false;
        }
        st->hosted = true;
        st->hosted_start_ns = start;
    }
    if (!sim_host_take_end(d->host, member, end))
        return false;
    st->hosted = false;
    return true;
}

/* Times op `e`, the head of the compute stream, on the host's shared cores: submitted
 * once (its hand-off stall drawn once), then false until the host has run to its end. */
static bool time_shared_op(sim_device *d, const sim_entry *e, int64_t gap, int64_t *start, int64_t *end)
{
    sim_stream *st = &d->streams[DEV_STREAM_COMPUTE];
    int64_t at = st->hosted_start_ns;
    if (!st->hosted)
        at = (st->free_ns > e->enq_ns ? st->free_ns : e->enq_ns) + gap + compute_stall_ns(d, st, e);
    if (!hosted_end(d, at, e->dur_ns, true, end))
        return false;
    *start = st->hosted_start_ns;
    return true;
}

/* Whether op `e`, the head of stream `sid`, is a backward that sleeps to its deadline on a
 * shared host after writing its gradients there: the cpu backend's worker writes them on
 * a core, then sleeps out the rest of its model, so the write takes a core from the other
 * ranks' copies and sums though the op's length stays its model's. */
static bool writes_then_sleeps(const sim_device *d, dev_stream sid, const sim_entry *e)
{
    return sid == DEV_STREAM_COMPUTE && d->host && e->type == SIM_OP && e->sleeps && e->write_ns > 0;
}

/* The end of such a backward timed from `start` to its deadline end `*end`: its write is
 * submitted to the host's cores once, and it ends at that deadline, or when the write
 * ends if later (then it would not have slept: its wake-up is kept, a small excess
 * where the write ends within it).  False until the host has run to the write's end. */
static bool join_write(sim_device *d, const sim_entry *e, int64_t start, int64_t *end)
{
    int64_t written;
    if (!hosted_end(d, start, (uint64_t)e->write_ns, false, &written))
        return false;
    *end = written > *end ? written : *end;
    return true;
}

static bool time_deadline_op(sim_device *d, dev_stream sid, const sim_entry *e, int64_t gap, int64_t *start,
                             int64_t *end);

/* Times op `e`, the head of stream `sid`, after `gap` of hand-off: false while its end is
 * not known yet (a collective ahead of a forward or backward on its comm stream, or the
 * host's cores not run to a shared op's end or a sleeping backward's write).  Each draw
 * is made once per op. */
static bool time_op(sim_device *d, dev_stream sid, const sim_entry *e, int64_t gap, int64_t *start, int64_t *end)
{
    if (sid == DEV_STREAM_COMPUTE && d->host && sim_on_host_cores(e))
        return time_shared_op(d, e, gap, start, end);
    if (!time_deadline_op(d, sid, e, gap, start, end))
        return false;
    return !writes_then_sleeps(d, sid, e) || join_write(d, e, *start, end);
}

/* An op timed to its modelled deadline: after the stream's last op and the hand-off, as
 * long as its model, stretched where the comm stream's collectives run beside it. */
static bool time_deadline_op(sim_device *d, dev_stream sid, const sim_entry *e, int64_t gap, int64_t *start,
                             int64_t *end)
{
    sim_stream *st = &d->streams[sid];
    bool contended = sid == DEV_STREAM_COMPUTE && sim_contention_modelled(d) &&
                     (e->kind == SPAN_FORWARD || e->kind == SPAN_BACKWARD);
    bool busy_known = !contended || comm_known(d);
    int64_t busy_from = 0, busy_until = 0;
    if (!busy_known && !sim_comm_busy_bound(d, &busy_from, &busy_until))
        return false;
    if (sid == DEV_STREAM_COMPUTE)
        gap += compute_stall_ns(d, st, e);
    *start = (st->free_ns > e->enq_ns ? st->free_ns : e->enq_ns) + gap;
    if (!busy_known) {
        int inside = sim_ends_inside_busy(d, e, *start, busy_from, busy_until, end);
        if (inside < 0)
            fail_device(d, "out of memory noting when the comm stream is busy");
        return inside > 0;
    }
    *end = contended ? sim_busy_end(&d->comm_busy, *start, e->dur_ns, d->timing.comm_slowdown)
                     : *start + (int64_t)e->dur_ns;
    if (contended && e->sleeps && sim_busy_covers(&d->comm_busy, *end))
        *end += (int64_t)d->host_terms.comm_wakeup_ns; /* only an op that sleeps wakes late */
    return true;
}

/* Whether the compute stream, whose op ended at event time `at`, went straight on to an op
 * on the host's cores: its worker holds a core without sleeping (a backward's write
 * before it sleeps is not such a run: the core is free again once it has written). */
static bool compute_goes_on(const sim_device *d, int64_t at)
{
    const sim_stream *c = &d->streams[DEV_STREAM_COMPUTE];
    return d->host && c->hosted && c->worker_busy && c->hosted_start_ns <= at + TIMING_GOES_ON_NS &&
           c->count > 0 && sim_on_host_cores(&c->q[c->head]);
}

/* The held comm stream starts at `t`, or later where its own late start is. */
static void release_launch(sim_stream *comm, int64_t t)
{
    if (t > comm->launch_at_ns)
        comm->launch_at_ns = t;
    comm->launch_behind = false;
}

/* When the idle comm stream starts what follows the compute stream's event at `at`:
 * false while it is held behind the compute stream's run of ops on the host's cores,
 * which has not ended nor run past the hold yet. */
static bool comm_launch_at(sim_device *d, sim_stream *st, int64_t at, int64_t *start)
{
    if (!st->launch_drawn) {
        st->launch_at_ns = at + (int64_t)sim_host_comm_launch_ns(&d->host_terms, &d->timing) + sim_comm_launch_crowded_ns(d, at);
        int64_t hold = compute_goes_on(d, at) ? (int64_t)sim_host_comm_launch_behind_ns(&d->host_terms, &d->timing) : 0;
        st->launch_behind = hold > 0;
        st->launch_cap_ns = at + hold;
        st->launch_drawn = true;
    }
    if (st->launch_behind && d->streams[DEV_STREAM_COMPUTE].free_ns >= st->launch_cap_ns)
        release_launch(st, st->launch_cap_ns); /* still in its run at the hold's end */
    if (st->launch_behind)
        return false;
    st->launch_drawn = false;
    *start = st->launch_at_ns;
    return true;
}

/* The compute stream's run of ops on the host's cores has ended when its head, if any,
 * is not one its worker goes straight on to: a comm stream held behind the run starts at
 * its end, or at the hold's end if that came first. */
static void end_of_compute_run(sim_device *d, const sim_stream *compute)
{
    sim_stream *comm = &d->streams[DEV_STREAM_COMM];
    if (!comm->launch_behind || compute->hosted)
        return;
    const sim_entry *e = compute->count > 0 ? &compute->q[compute->head] : NULL;
    if (e && e->type == SIM_OP && sim_on_host_cores(e) && worker_goes_on(compute, e))
        return;
    release_launch(comm, compute->free_ns < comm->launch_cap_ns ? compute->free_ns : comm->launch_cap_ns);
}

/* Times the stream's head entries while their dependencies are known; true if any. */
static bool advance_stream(sim_device *d, dev_stream sid)
{
    sim_stream *st = &d->streams[sid];
    bool progress = false;
    while (st->count > 0 && !d->w->aborted) {
        if (sid == DEV_STREAM_COMPUTE)
            end_of_compute_run(d, st);
        sim_entry *e = &st->q[st->head];
        /* The hand-off to a real stream's worker is idle time before each op and
         * collective, not part of it. */
        int64_t gap = (int64_t)d->timing.op_overhead_ns;
        if (e->type == SIM_OP && sid == DEV_STREAM_COMPUTE && worker_goes_on(st, e))
            gap = (int64_t)d->host_terms.op_overhead_busy_ns;
        if (e->type == SIM_OP) {
            int64_t start, end;
            if (!time_op(d, sid, e, gap, &start, &end))
                break;
            emit(d, sid, e, start, end);
            st->free_ns = end;
            st->last_kind = e->kind;
            st->worker_busy = !e->sleeps;
            st->stall_drawn = false;
        } else if (e->type == SIM_WAIT) {
            int64_t at = mark_time(&d->streams[1 - sid], e->ticket);
            if (at < 0)
                break;
            /* A comm stream that idled until the event starts what follows late; so may a
             * compute stream on a crowded host, woken behind the others' copies. */
            if (sid == DEV_STREAM_COMM && at > st->free_ns) {
                if (!comm_launch_at(d, st, at, &at))
                    break;
            } else if (at > st->free_ns)
                at += sim_compute_wake_late_ns(d, at);
            if (at > st->free_ns) {
                st->free_ns = at;
                st->worker_busy = false; /* it slept until the event */
            }
        } else {
            if (!st->arrived) {
                st->arrival_ns = (st->free_ns > e->enq_ns ? st->free_ns : e->enq_ns) + gap;
                st->arrived = true;
                bool completed = sim_collective_arrive(d, e, st->arrival_ns);
                if (d->w->aborted || (completed && d->host))
                    break; /* on a shared host, its copy out ends when the host runs to it */
            }
            sim_collective *c = &d->w->colls[e->seq];
            if (c->end_ns < 0)
                break;
            /* With late exits drawn, the first rank out is timed first: its copies and
             * step are submitted or queued before anyone it keeps waiting is timed. */
            bool awaits_first = c->late_exits && !c->first_out;
            bool first = awaits_first && sim_collective_first(d->w, e->seq) == d->base.rank;
            if (awaits_first && !first)
                break;
            bool on_host = d->host && d->staged_seq == e->seq;
            if (on_host && d->staged_end_ns < 0 &&
                !sim_host_take_end(d->host, d->host_member * DEV_STREAM_COUNT + DEV_STREAM_COMM, &d->staged_end_ns))
                break;
            int64_t end = on_host && d->staged_end_ns > c->end_ns ? d->staged_end_ns : c->end_ns;
            /* Held to a paced link's floor, the sum was there before it: the stream
             * sleeps to the floor and wakes late. */
            if (c->hosted ? d->staged_end_ns < c->end_ns : c->data_ns < c->end_ns) {
                int64_t woke = c->end_ns + (int64_t)sim_host_comm_launch_ns(&d->host_terms, &d->timing);
                if (woke > end)
                    end = woke;
            }
            end += sim_late_exit_ns(d, e, end);
            emit(d, sid, e, st->arrival_ns, end);
            if (sim_contention_modelled(d) && sim_busy_note(&d->comm_busy, c->last_arrival_ns, end) != 0) {
                fail_device(d, "out of memory noting when the comm stream is busy");
                break;
            }
            st->free_ns = end;
            st->last_kind = e->kind;
            st->arrived = false;
            /* The others are timed after this device's advance, copies out and step
             * included: the worklist runs one device at a time. */
            if (first)
                sim_collective_first_out(d->w, c, e->seq);
        }
        uint64_t ops = 1 + (e->type == SIM_OP ? (uint64_t)e->merged : 0);
        st->head++;
        st->count--;
        st->completed += ops;
        progress = true;
        reach_marks(st);
    }
    if (sid == DEV_STREAM_COMPUTE && st->count == 0)
        end_of_compute_run(d, st);
    if (st->count == 0) {
        st->head = 0;
        st->names_len = 0;
    }
    return progress;
}

/* Whether advance_stream(d, sid) has anything to do: an empty stream has nothing to time,
 * and its one other task, releasing a comm stream held behind the compute stream's run
 * of ops on the host's cores, arises only while one is held.  (An empty stream's head
 * and names were reset when it emptied.)  Every op enqueued advances both streams until
 * neither moves: most of those calls find one empty. */
static bool may_advance(const sim_device *d, dev_stream sid)
{
    return d->streams[sid].count > 0 || (sid == DEV_STREAM_COMPUTE && d->streams[DEV_STREAM_COMM].launch_behind);
}

void sim_device_advance(sim_device *d)
{
    bool a, b;
    do {
        a = may_advance(d, DEV_STREAM_COMPUTE) && advance_stream(d, DEV_STREAM_COMPUTE);
        b = may_advance(d, DEV_STREAM_COMM) && advance_stream(d, DEV_STREAM_COMM);
    } while (a || b);
}

bool sim_device_host_ready(const sim_device *d)
{
    if (d->blocked_on < 0)
        return false;
    if (d->w->aborted || d->failed)
        return true;
    const sim_stream *st = &d->streams[d->blocked_on];
    return st->completed == st->enqueued;
}

/* ------------------------------------------------------------------ device.h */

static int check_live(sim_device *d)
{
    if (d->w->aborted) {
        fail_device(d, d->w->abort_reason);
        return -1;
    }
    return d->failed ? -1 : 0;
}

/* Folds copy out `e` into the last entry of the blocked compute stream when that is
 * exact: the last is a copy out of the same iteration, not the head (whose timing may be
 * under way) and not followed by an event; and `e` would go on right after it: its
 * worker never sleeps on a copy, and `e` is queued by the earliest the last one could
 * end (its enqueue plus its length), so `e` starts at that end with the busy hand-off,
 * which must be 0 for the two to be one phase span, and draws no stall.  No shared host
 * and no contention: those time a copy by what runs beside it.  Phase detail only: each
 * op is its own span otherwise.  Then the pair ends at the first's end plus the second's
 * length, one span with both their bytes, and completes two ops. */
static bool fold_copy_out(sim_device *d, dev_stream sid, const sim_entry *e)
{
    sim_stream *st = &d->streams[sid];
    if (d->w->detail != RECORD_PHASE || sid != DEV_STREAM_COMPUTE || d->host || sim_contention_modelled(d) ||
        d->host_terms.op_overhead_busy_ns != 0 || e->type != SIM_OP || e->kind != SPAN_COPY_OUT || e->sleeps ||
        st->count < 2)
        return false;
    sim_entry *last = &st->q[st->head + st->count - 1];
    if (last->type != SIM_OP || last->kind != SPAN_COPY_OUT || last->sleeps || last->iter != e->iter ||
        last->merged == INT32_MAX)
        return false;
    if (st->marks_count > 0 &&
        st->marks[(st->marks_head + st->marks_count - 1) % st->marks_cap].ticket == st->enqueued)
        return false; /* an event after the last: it is reached before `e` */
    if (e->enq_ns > last->enq_ns + (int64_t)last->dur_ns)
        return false;
    last->dur_ns += e->dur_ns;
    last->bytes += e->bytes;
    last->merged++;
    return true;
}

static int push(sim_device *d, dev_stream sid, const sim_entry *e, const char *name)
{
    sim_stream *st = &d->streams[sid];
    if (fold_copy_out(d, sid, e)) {
        st->enqueued++;
        sim_device_advance(d);
        return check_live(d);
    }
    size_t at = st->head + st->count;
    if (!grow((void **)&st->q, &st->cap, at + 1, sizeof *st->q)) {
        fail_device(d, "out of memory growing a stream queue");
        return -1;
    }
    st->q[at] = *e;
    st->q[at].name_off = UINT32_MAX;
    /* Phase detail drops op names (one span per phase); a collective stays a span of its
     * own, and those of no bucket are told apart only by name (verify params, sync
     * module states, rebuild, local_used_map, join). */
    bool keep_name = d->w->detail == RECORD_OP || (e->type == SIM_COLL && e->bucket < 0);
    if (name && keep_name) {
        size_t len = strlen(name) + 1;
        if (!grow((void **)&st->names, &st->names_cap, st->names_len + len, 1)) {
            fail_device(d, "out of memory growing a stream queue");
            return -1;
        }
        memcpy(st->names + st->names_len, name, len);
        st->q[at].name_off = (uint32_t)st->names_len;
        st->names_len += len;
    }
    st->count++;
    st->enqueued++;
    sim_device_advance(d);
    return check_live(d);
}

static int sim_enqueue(device *base, dev_stream s, const dev_op *op)
{
    sim_device *d = (sim_device *)base;
    if (check_live(d) != 0)
        return -1;
    if (op->work == WORK_FAIL) {
        char msg[SPAN_NAME + 96];
        snprintf(msg, sizeof msg, "rank %d: %s failed (injected fault)", d->base.rank, op->name);
        fail_device(d, msg);
        return -1;
    }
    bool coll = op->work == WORK_ALLREDUCE || op->work == WORK_BROADCAST;
    uint64_t dur = op->model_ns;
    if (dur == 0 && op->gemm.m > 0)
        dur = (uint64_t)(2.0 * (double)op->gemm.m * (double)op->gemm.n * (double)op->gemm.k / d->timing.flops_per_ns);
    bool timed = !coll && (op->kind == SPAN_FORWARD || op->kind == SPAN_BACKWARD);
    bool sleeps = false;
    /* A backward writes its gradients (reads them too when it accumulates). */
    double work_bytes = !coll && op->work == WORK_GRAD ? timing_write_bytes((double)op->bytes, op->u.grad.accumulate) : 0.0;
    if (!coll) {
        sleeps = timed && timing_op_sleeps(&d->timing, dur, work_bytes);
        dur = sim_host_stream_op_ns(&d->host_terms, &d->timing, dur, work_bytes, (span_kind)op->kind);
    }
    sim_entry e = {.type = coll ? SIM_COLL : SIM_OP,
                   .kind = (uint8_t)op->kind,
                   .work = (uint8_t)op->work,
                   .iter = op->iter,
                   .layer = op->layer,
                   .bucket = op->bucket,
                   .seq = op->seq,
                   .bytes = op->bytes,
                   .enq_ns = d->host_ns,
                   .dur_ns = dur,
                   .buf = coll ? op->u.coll.buf : NULL,
                   .count = coll ? op->u.coll.count : 0,
                   .root = op->work == WORK_BROADCAST ? op->u.coll.root : 0,
                   .dtype = coll ? (uint8_t)op->u.coll.dtype : (uint8_t)sleeps,
                   .prescale = coll ? op->u.coll.prescale : 1.0f};
    if (sleeps && work_bytes > 0 && d->host)
        e.write_ns = (int64_t)timing_write_ns(&d->timing, work_bytes);
    if (coll && op->seq < 0) {
        fail_device(d, "a collective without a sequence number");
        return -1;
    }
    if (op->work == WORK_BROADCAST && (op->u.coll.root < 0 || op->u.coll.root >= d->base.world_size)) {
        char msg[SPAN_NAME + 96];
        snprintf(msg, sizeof msg, "rank %d: broadcast %s from rank %d, outside the world of %d", d->base.rank,
                 op->name, op->u.coll.root, d->base.world_size);
        fail_device(d, msg);
        return -1;
    }
    return push(d, s, &e, op->name);
}

static dev_event sim_record(device *base, dev_stream s)
{
    sim_device *d = (sim_device *)base;
    sim_stream *st = &d->streams[s];
    dev_event ev = {.stream = s, .ticket = st->enqueued};
    size_t at = st->marks_count;
    if (st->marks_count == st->marks_cap) {
        /* Unwrap the ring into a larger array. */
        size_t ncap = st->marks_cap ? st->marks_cap * 2 : 8;
        sim_mark *nm = malloc(ncap * sizeof *nm);
        if (!nm) {
            fail_device(d, "out of memory recording an event");
            return ev;
        }
        for (size_t i = 0; i < st->marks_count; i++)
            nm[i] = st->marks[(st->marks_head + i) % st->marks_cap];
        free(st->marks);
        st->marks = nm;
        st->marks_cap = ncap;
        st->marks_head = 0;
    }
    bool reached = st->completed >= ev.ticket;
    st->marks[(st->marks_head + at) % st->marks_cap] = (sim_mark){.ticket = ev.ticket, .at_ns = reached ? st->free_ns : -1};
    st->marks_count++;
    if (reached && st->marks_reached == at)
        st->marks_reached++;
    return ev;
}

static int sim_wait(device *base, dev_stream s, dev_event ev)
{
    sim_device *d = (sim_device *)base;
    if (check_live(d) != 0)
        return -1;
    if (ev.stream == (int)s) /* a stream waiting for itself has nothing to wait for */
        return 0;
    sim_entry e = {.type = SIM_WAIT, .ticket = ev.ticket, .enq_ns = d->host_ns, .seq = -1};
    return push(d, s, &e, NULL);
}

static int sim_synchronize(device *base, dev_stream s)
{
    sim_device *d = (sim_device *)base;
    if (check_live(d) != 0)
        return -1;
    sim_device_advance(d);
    sim_stream *st = &d->streams[s];
    if (st->completed != st->enqueued) {
        d->blocked_on = s;
        sim_world *w = d->w;
        if (!w->running) {
            fail_device(d, "a sim device synchronised outside its scheduler");
            return -1;
        }
        sim_fiber_yield(w->running);
        d->blocked_on = -1;
        if (check_live(d) != 0)
            return -1;
    }
    /* A host that waited is woken, and wakes its streams' workers in turn: it goes on late,
     * after a step behind the copies out and steps of the host's other ranks.  Not after
     * an iteration that kept its gradients, which ends with its last backward: measured on
     * no_sync, 66 us on average from there to the next iteration, 1.1 ms after a step. */
    if (st->free_ns > d->host_ns)
        d->host_ns = st->free_ns + (st->last_kind == SPAN_BACKWARD ? 0 : (int64_t)sim_host_wake_ns(&d->host_terms, &d->timing));
    sim_device_flush(d);
    return 0;
}

static int64_t sim_now(device *base) { return ((sim_device *)base)->host_ns; }

static const char *sim_error(device *base)
{
    sim_device *d = (sim_device *)base;
    if (!d->error[0] && d->w->aborted)
        return d->w->abort_reason;
    return d->error;
}

static const device_ops sim_ops = {
    .enqueue = sim_enqueue,
    .record = sim_record,
    .wait = sim_wait,
    .synchronize = sim_synchronize,
    .now_ns = sim_now,
    .error = sim_error,
};

device *sim_device_create(sim_world *w, int rank, char *err, size_t errlen)
{
    if (rank < 0 || rank >= w->world_size) {
        snprintf(err, errlen, "rank %d is outside the world of %d ranks", rank, w->world_size);
        return NULL;
    }
    sim_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory creating rank %d", rank);
        return NULL;
    }
    d->base.ops = &sim_ops;
    d->base.rank = rank;
    d->base.world_size = w->world_size;
    d->base.no_buffers = true;
    /* push() keeps no name of an op that is not a collective unless every op is a span. */
    d->base.drops_op_names = w->detail != RECORD_OP;
    d->w = w;
    d->blocked_on = -1;
    d->staged_seq = -1;
    d->late_seq = -1;
    timing_init(&d->timing, w->sc, rank);
    if (w->fits_cache)
        timing_use_cache(&d->timing, w->sc);
    sim_host_terms_init(&d->host_terms, w->sc, w->fits_cache);
    if (w->hosts) {
        d->host = &w->hosts[rank / w->host_ranks];
        d->host_member = rank % w->host_ranks;
    }
    /* The trainer draws its jitter from a timing model seeded by run.seed: the device's
     * draws of the machine's noise take a stream of their own, from [host] noise_seed
     * where it is set, so that predictions with other noise seeds keep the jitter and skew. */
    d->timing.rng = timing_rank_seed(sim_noise_seed(w), rank) ^ 0xd1b54a32d192ed03ULL;
    d->timing.has_spare = false;
    span_ring *ring = recorder_ring(w->rec, rank % w->span_rings);
    for (int s = 0; s < DEV_STREAM_COUNT; s++)
        d->streams[s].ring = ring;
    w->devs[rank] = d;
    return &d->base;
}

void sim_device_destroy(device *base)
{
    if (!base)
        return;
    sim_device *d = (sim_device *)base;
    sim_device_flush(d);
    d->w->devs[d->base.rank] = NULL;
    for (int s = 0; s < DEV_STREAM_COUNT; s++) {
        free(d->streams[s].q);
        free(d->streams[s].names);
        free(d->streams[s].marks);
    }
    sim_busy_free(&d->comm_busy);
    free(d);
}

span_ring *sim_device_host_ring(device *base)
{
    sim_device *d = (sim_device *)base;
    return d->streams[0].ring;
}
