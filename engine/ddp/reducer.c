/* reducer.c — DDP's reducer over device.h: bucketing, in-order launch, rebuild. */
#include "common/textcopy.h"
#include "engine/ddp/reducer.h"

#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/ddp_collectives.h"
#include "engine/ddp/join_hooks.h"
#include "engine/ddp/join_schedule.h"
#include "engine/ddp/manual_sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The buckets' table; their memory (the arena) stays for the next assignment. */
static void free_buckets(reducer *r)
{
    free(r->buckets);
    r->buckets = NULL;
}

/* Lays r->current's flat buffers out one after another in the arena, and fills the
 * parameter -> (bucket, offset) map.  Every assignment covers the same parameters, so
 * the rebuilt buckets fit where the first ones were: like PyTorch's caching allocator
 * handing the freed bucket memory back, the rebuild maps no new device memory (on the
 * cpu backend, no page of it is faulted in and zeroed again mid-run). */
static int setup_buckets(reducer *r, char *err, size_t errlen)
{
    r->buckets = calloc((size_t)r->current.nbuckets, sizeof *r->buckets);
    if (!r->buckets)
        goto oom;
    int64_t total = 0;
    for (int b = 0; b < r->current.nbuckets; b++) {
        const bucket_def *bd = &r->current.buckets[b];
        int64_t off = 0;
        for (int i = 0; i < bd->nparams; i++)
            off += r->m->params[bd->params[i]].numel;
        r->buckets[b].numel = off;
        total += off;
    }
    /* A shared layout came indexed; this rank's own is indexed here. */
    if (!r->current_shared) {
        bucket_layout_index(r->m, &r->current, r->own_param_bucket, r->own_param_offset);
        r->param_bucket = r->own_param_bucket;
        r->param_offset = r->own_param_offset;
    }
    if (r->dev->no_buffers)
        return 0; /* the device only models time: ops carry no memory */
    if (total > r->arena_numel) {
        dev_free(r->dev, r->arena);
        r->arena_numel = 0;
        r->arena = dev_alloc(r->dev, (size_t)(total ? total : 1) * sizeof(float));
        if (!r->arena)
            goto oom;
        r->arena_numel = total;
    }
    int64_t at = 0;
    for (int b = 0; b < r->current.nbuckets; b++) {
        r->buckets[b].buf = r->arena + at;
        at += r->buckets[b].numel;
    }
    return 0;
oom:
    snprintf(err, errlen, "rank %d: out of memory allocating gradient buckets", r->dev->rank);
    return -1;
}

/* Parameter p's place in its bucket; NULL when the buckets have no memory. */
static float *bucket_view(const reducer *r, int p)
{
    float *buf = r->buckets[r->param_bucket[p]].buf;
    return buf ? buf + r->param_offset[p] : NULL;
}

int reducer_init(reducer *r, device *dev, const model *m, const scenario *sc, timing_model *timing,
                 dev_param *params, param_tables *shared, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->m = m;
    r->sc = sc;
    r->timing = timing;
    r->params = params;
    r->world = dev->world_size;
    /* Only a rank without buffers has tables like every other rank's (param_tables.h). */
    r->shared = dev->no_buffers ? shared : NULL;
    int n = m->nparams;
    if (!r->shared) {
        r->own_param_bucket = calloc((size_t)n, sizeof *r->own_param_bucket);
        r->own_param_offset = calloc((size_t)n, sizeof *r->own_param_offset);
    }
    r->is_view = calloc((size_t)n, sizeof *r->is_view);
    /* Rank 0's order is the one broadcast at the rebuild; no other rank reads its own. */
    r->ready_order = dev->rank == 0 ? calloc((size_t)n, sizeof *r->ready_order) : NULL;
    /* A time-only device's ranks take it only for the rebuild (ddp_sync_bucket_indices):
     * held from the start, it was 4 B a parameter on every rank for the whole run. */
    r->bcast = dev->no_buffers ? NULL : dev_alloc(dev, ((size_t)n + 1) * sizeof *r->bcast);
    bool used_map = sc->find_unused_parameters || sc->static_graph;
    r->local_used = used_map ? dev_alloc(dev, (size_t)n * sizeof *r->local_used) : NULL;
    /* Where the device's memory is the heap the map is written in place: no host copy. */
    bool staged = used_map && dev->ops->copy;
    r->local_used_host = staged ? calloc((size_t)n, sizeof *r->local_used_host) : NULL;
    r->prev_forward_synced = true;
    if ((!r->shared && (!r->own_param_bucket || !r->own_param_offset)) || !r->is_view || (dev->rank == 0 && !r->ready_order) ||
        (!dev->no_buffers && !r->bcast) || (used_map && !r->local_used) || (staged && !r->local_used_host))
        goto oom;

    if (r->shared) {
        /* The world's copy: the same assignment and index bucket_plan_initial() gives here. */
        const bucket_layout *L = param_tables_initial(r->shared);
        r->initial = L->a;
        r->current = L->a;
        r->initial_shared = r->current_shared = true;
        r->param_bucket = L->param_bucket;
        r->param_offset = L->param_offset;
    } else {
        if (bucket_plan_initial(m, sc, &r->initial) != 0)
            goto oom;
        if (bucket_assignment_copy(&r->initial, &r->current) != 0)
            goto oom;
    }
    if (setup_buckets(r, err, errlen) != 0 || ddp_construction(r, err, errlen) != 0) {
        reducer_free(r);
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "rank %d: out of memory setting up the reducer", dev->rank);
    reducer_free(r);
    return -1;
}

void reducer_free(reducer *r)
{
    free_buckets(r);
    dev_free(r->dev, r->arena);
    if (!r->initial_shared)
        bucket_assignment_free(&r->initial);
    if (!r->current_shared)
        bucket_assignment_free(&r->current);
    free(r->own_param_bucket);
    free(r->own_param_offset);
    free(r->is_view);
    free(r->ready_order);
    dev_free(r->dev, r->bcast);
    dev_free(r->dev, r->local_used);
    dev_free(r->dev, r->join_scalar);
    free(r->local_used_host);
    dev_free(r->dev, r->scratch);
    memset(r, 0, sizeof *r);
}

static int rebuild(reducer *r, char *err, size_t errlen)
{
    int n = r->m->nparams;
    bucket_assignment rebuilt;
    const bucket_layout *shared = NULL;
    if (ddp_sync_bucket_indices(r, &rebuilt, &shared, err, errlen) != 0)
        return -1;
    /* The streams are idle here (the host synchronised the last step), so the old
     * buffers' memory can take the new ones. */
    free_buckets(r);
    if (!r->current_shared)
        bucket_assignment_free(&r->current);
    r->current = rebuilt;
    r->current_shared = shared != NULL;
    if (shared) {
        r->param_bucket = shared->param_bucket;
        r->param_offset = shared->param_offset;
    } else if (!r->own_param_bucket) {
        /* The shared initial layout had no storage of this rank's: now it needs some. */
        r->own_param_bucket = calloc((size_t)n, sizeof *r->own_param_bucket);
        r->own_param_offset = calloc((size_t)n, sizeof *r->own_param_offset);
        if (!r->own_param_bucket || !r->own_param_offset) {
            snprintf(err, errlen, "rank %d: out of memory rebuilding buckets", r->dev->rank);
            return -1;
        }
    }
    if (setup_buckets(r, err, errlen) != 0)
        return -1;
    if (r->sc->gradient_as_bucket_view) {
        /* Gradients become views of the new buckets; the next backward overwrites them.
         * Stored only when it changes: a shared parameter table (param_tables.h) already
         * holds the NULL view of a device without buffers, and is never written. */
        for (int p = 0; p < n; p++) {
            float *view = bucket_view(r, p);
            if (r->params[p].grad != view)
                r->params[p].grad = view;
            r->is_view[p] = true;
        }
    }
    if (r->dev->no_buffers) {
        /* The broadcasts waited for (ddp_collectives.c): nothing reads it any more. */
        dev_free(r->dev, r->bcast);
        r->bcast = NULL;
    }
    r->version = 1;
    r->rebuild_due = false;
    return 0;
}

int reducer_prepare_forward(reducer *r, int iter, char *err, size_t errlen)
{
    r->iter = iter;
    if (r->sc->join && join_notify(r, err, errlen) != 0)
        return -1;
    if (r->rebuild_due && rebuild(r, err, errlen) != 0)
        return -1;
    /* DDP syncs buffers when the previous forward was a synchronised one (or first). */
    if (r->prev_forward_synced && ddp_sync_buffers(r, err, errlen) != 0)
        return -1;
    r->prev_forward_synced = false;
    if (r->sc->join && join_grad_sync_check(r, err, errlen) != 0)
        return -1;
    return 0;
}

int reducer_prepare_backward(reducer *r, char *err, size_t errlen)
{
    r->expect_hooks = true;
    r->next_bucket = 0;
    r->nready = 0;
    for (int b = 0; b < r->current.nbuckets; b++)
        r->buckets[b].pending = r->current.buckets[b].nparams;
    r->delay_all = r->sc->static_graph && r->synced_steps == 0;
    r->prev_forward_synced = true;
    if (!r->local_used)
        return 0;
    int32_t *map = r->local_used_host ? r->local_used_host : r->local_used;
    for (int p = 0; p < r->m->nparams; p++)
        map[p] = 1; /* every parameter of a zoo model takes part */
    if (map != r->local_used &&
        dev_copy(r->dev, r->local_used, map, (size_t)r->m->nparams * sizeof *r->local_used) != 0) {
        text_copy(err, errlen, dev_error(r->dev));
        return -1;
    }
    return 0;
}

static int enqueue_or_fail(reducer *r, dev_stream s, const dev_op *op, char *err, size_t errlen)
{
    if (dev_enqueue(r->dev, s, op) != 0) {
        text_copy(err, errlen, dev_error(r->dev));
        return -1;
    }
    return 0;
}

static int copy_in(reducer *r, int p, char *err, size_t errlen)
{
    const model_param *mp = &r->m->params[p];
    int b = r->param_bucket[p];
    float *view = bucket_view(r, p);
    bool hook = r->sc->comm_hook != COMM_HOOK_NONE;
    float scale = hook ? 1.0f : 1.0f / join_div_factor(r);
    bool in_place = r->is_view[p];
    if (in_place && scale == 1.0f)
        return 0; /* a view of the bucket already, and the hook divides */
    /* One per parameter and step on every rank: no zeroing of the whole op (dev_op_start),
     * no name where the device keeps none. */
    dev_op op;
    dev_op_start(&op, SPAN_COPY_IN, WORK_SCALE_COPY, r->iter, mp->layer, b, -1, mp->numel * FP32_BYTES);
    op.model_ns = timing_memory_ns(r->timing, SPAN_COPY_IN, 2.0 * (double)mp->numel * FP32_BYTES);
    if (!r->dev->drops_op_names)
        text_copy(op.name, sizeof op.name, mp->name);
    op.u.copy.dst = view;
    op.u.copy.src = in_place ? view : r->params[p].grad;
    op.u.copy.n = mp->numel;
    op.u.copy.scale = scale;
    if (enqueue_or_fail(r, DEV_STREAM_COMPUTE, &op, err, errlen) != 0)
        return -1;
    if (r->sc->gradient_as_bucket_view && !in_place) {
        if (r->params[p].grad != view) /* never a store into a shared table (rebuild()) */
            r->params[p].grad = view;
        r->is_view[p] = true;
    }
    return 0;
}

void reducer_bucket_allreduce_op(reducer *r, int b, dev_op *op)
{
    comm_hook_kind hook = r->sc->comm_hook;
    *op = (dev_op){.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = -1, .bucket = b, .seq = r->seq++,
                   .bytes = r->buckets[b].numel * (hook == COMM_HOOK_NONE ? 4 : 2), .work = WORK_ALLREDUCE};
    snprintf(op->name, sizeof op->name, "bucket %d", b);
    op->u.coll.buf = r->buckets[b].buf;
    op->u.coll.count = r->buckets[b].numel;
    op->u.coll.dtype = hook == COMM_HOOK_FP16 ? DEV_F16 : hook == COMM_HOOK_BF16 ? DEV_BF16 : DEV_F32;
    op->u.coll.prescale = hook == COMM_HOOK_NONE ? 1.0f : 1.0f / join_div_factor(r);
}

static int launch(reducer *r, int b, char *err, size_t errlen)
{
    dev_event ev = dev_record(r->dev, DEV_STREAM_COMPUTE);
    if (dev_wait(r->dev, DEV_STREAM_COMM, ev) != 0) {
        text_copy(err, errlen, dev_error(r->dev));
        return -1;
    }
    dev_op op;
    reducer_bucket_allreduce_op(r, b, &op);
    return enqueue_or_fail(r, DEV_STREAM_COMM, &op, err, errlen);
}

static int mark_ready(reducer *r, int p, char *err, size_t errlen)
{
    if (copy_in(r, p, err, errlen) != 0)
        return -1;
    int b = r->param_bucket[p];
    if (--r->buckets[b].pending > 0)
        return 0;
    /* In index order only: a full bucket waits for every lower one. */
    while (r->next_bucket < r->current.nbuckets && r->buckets[r->next_bucket].pending == 0) {
        if (launch(r, r->next_bucket, err, errlen) != 0)
            return -1;
        r->next_bucket++;
    }
    return 0;
}

int reducer_grad_ready(reducer *r, int p, char *err, size_t errlen)
{
    if (!r->expect_hooks || r->sc->sync == SYNC_MANUAL)
        return 0; /* no_sync (or no DDP): the gradient stays local */
    /* The order is recorded in the first synchronised step, or with static_graph in the
     * second (the first one's hooks only count, and reduction waits for its end). */
    if (r->ready_order && r->synced_steps == (r->sc->static_graph ? 1 : 0))
        r->ready_order[r->nready++] = p;
    if (r->delay_all)
        return 0;
    return mark_ready(r, p, err, errlen);
}

int reducer_finalize_backward(reducer *r, char *err, size_t errlen)
{
    if (r->sc->sync == SYNC_MANUAL)
        return manual_sync_after_backward(r, err, errlen);
    if (r->delay_all) {
        /* PyTorch's delay_all_reduce(): the used-parameter bitmap first, then every bucket.
         * It runs as the autograd engine's final callback, so the bitmap's allreduce is
         * launched only once the backward has ended: the comm stream waits for it. */
        dev_event bwd = dev_record(r->dev, DEV_STREAM_COMPUTE);
        if (dev_wait(r->dev, DEV_STREAM_COMM, bwd) != 0) {
            text_copy(err, errlen, dev_error(r->dev));
            return -1;
        }
        if (ddp_used_map(r, err, errlen) != 0)
            return -1;
        for (int b = 0; b < r->current.nbuckets; b++)
            for (int i = 0; i < r->current.buckets[b].nparams; i++)
                if (mark_ready(r, r->current.buckets[b].params[i], err, errlen) != 0)
                    return -1;
    }
    if (r->next_bucket != r->current.nbuckets) {
        snprintf(err, errlen,
                 "rank %d: expected to have finished reduction: only %d of %d buckets were launched in "
                 "iteration %d",
                 r->dev->rank, r->next_bucket, r->current.nbuckets, r->iter);
        return -1;
    }
    if (r->sc->find_unused_parameters && !r->sc->static_graph && ddp_used_map(r, err, errlen) != 0)
        return -1;
    dev_event ev = dev_record(r->dev, DEV_STREAM_COMM);
    if (dev_wait(r->dev, DEV_STREAM_COMPUTE, ev) != 0) {
        text_copy(err, errlen, dev_error(r->dev));
        return -1;
    }
    if (!r->sc->gradient_as_bucket_view) {
        for (int b = 0; b < r->current.nbuckets; b++) {
            const bucket_def *bd = &r->current.buckets[b];
            for (int i = 0; i < bd->nparams; i++) {
                int p = bd->params[i];
                const model_param *mp = &r->m->params[p];
                dev_op op; /* as in copy_in() */
                dev_op_start(&op, SPAN_COPY_OUT, WORK_SCALE_COPY, r->iter, mp->layer, b, -1, mp->numel * FP32_BYTES);
                op.model_ns = timing_memory_ns(r->timing, SPAN_COPY_OUT, 2.0 * (double)mp->numel * FP32_BYTES);
                if (!r->dev->drops_op_names)
                    text_copy(op.name, sizeof op.name, mp->name);
                op.u.copy.dst = r->params[p].grad;
                op.u.copy.src = bucket_view(r, p);
                op.u.copy.n = mp->numel;
                op.u.copy.scale = 1.0f;
                if (enqueue_or_fail(r, DEV_STREAM_COMPUTE, &op, err, errlen) != 0)
                    return -1;
            }
        }
    }
    r->expect_hooks = false;
    r->synced_steps++;
    if (r->synced_steps == (r->sc->static_graph ? 2 : 1) && (r->sc->static_graph || !r->sc->find_unused_parameters))
        r->rebuild_due = true;
    return 0;
}
