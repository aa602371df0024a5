/* ddp_collectives.c — DDP's collectives besides the buckets (see ddp_collectives.h). */
#include "engine/ddp/ddp_collectives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/join_schedule.h"
#include "common/textcopy.h"

static int fail_dev(reducer *r, char *err, size_t errlen)
{
    text_copy(err, errlen, dev_error(r->dev));
    return -1;
}

/* Device memory: the collective reads and writes it on the GPU.  Not kept: callers
 * fill it after growing.  dev_alloc() of a model-sized buffer stays lazy on the heap
 * (untouched pages cost nothing), so an aborted run is not held by clearing it. */
static int grow_scratch(reducer *r, int64_t n, char *err, size_t errlen)
{
    if (r->scratch_len >= n)
        return 0;
    dev_free(r->dev, r->scratch);
    r->scratch_len = 0;
    r->scratch = dev_alloc(r->dev, (size_t)n * sizeof *r->scratch);
    if (!r->scratch) {
        snprintf(err, errlen, "rank %d: out of memory for a %lld-byte collective", r->dev->rank, (long long)n * 4);
        return -1;
    }
    r->scratch_len = n;
    return 0;
}

/* The buffer of a collective that only models DDP's traffic (its content is never
 * read): none on a device that only models time, which moves no data. */
static int traffic_buffer(reducer *r, int64_t count, int32_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (r->dev->no_buffers)
        return 0;
    if (grow_scratch(r, count, err, errlen) != 0)
        return -1;
    *out = r->scratch;
    return 0;
}

/* One collective on `buf` (count int32), recorded as `kind` with `bytes`, waited for. */
static int collective_as(reducer *r, span_kind kind, dev_work work, int root, int32_t *buf, int64_t count,
                         int64_t bytes, const char *name, char *err, size_t errlen)
{
    dev_op op = {.kind = kind, .iter = r->iter, .layer = -1, .bucket = -1, .seq = r->seq++,
                 .bytes = bytes, .work = work};
    text_copy(op.name, sizeof op.name, name);
    op.u.coll.buf = buf;
    op.u.coll.count = count;
    op.u.coll.dtype = DEV_I32;
    op.u.coll.prescale = 1.0f;
    op.u.coll.root = root;
    if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0)
        return fail_dev(r, err, errlen);
    /* The host waits (as DDP's does on CPU): the scratch buffer may grow for the next. */
    if (dev_synchronize(r->dev, DEV_STREAM_COMM) != 0)
        return fail_dev(r, err, errlen);
    return 0;
}

static int collective_from(reducer *r, dev_work work, int root, int32_t *buf, int64_t count, int64_t bytes,
                           const char *name, char *err, size_t errlen)
{
    return collective_as(r, work == WORK_BROADCAST ? SPAN_BROADCAST : SPAN_ALLREDUCE, work, root, buf, count, bytes,
                         name, err, errlen);
}

static int collective(reducer *r, dev_work work, int32_t *buf, int64_t count, int64_t bytes, const char *name,
                      char *err, size_t errlen)
{
    return collective_from(r, work, 0, buf, count, bytes, name, err, errlen);
}

static int broadcast_bytes(reducer *r, int root, int64_t bytes, const char *name, char *err, size_t errlen)
{
    int64_t count = (bytes + 3) / 4;
    int32_t *buf;
    if (traffic_buffer(r, count, &buf, err, errlen) != 0)
        return -1;
    return collective_from(r, WORK_BROADCAST, root, buf, count, bytes, name, err, errlen);
}

/* One float32 chunk holding parameters [p0, p1) and `bytes` in all (the buffers ride in
 * the last chunk); with `values` the parameters' data travel, else only the bytes. */
static int send_params(reducer *r, int root, int p0, int p1, int64_t bytes, bool values, const char *name, char *err,
                       size_t errlen)
{
    int64_t count = (bytes + FP32_BYTES - 1) / FP32_BYTES;
    values = values && !r->dev->no_buffers; /* a time-only device has no parameter data */
    int32_t *buf = NULL;
    if (values) {
        if (grow_scratch(r, count, err, errlen) != 0)
            return -1;
        buf = r->scratch;
    } else if (traffic_buffer(r, count, &buf, err, errlen) != 0) {
        return -1;
    }
    float *f = (float *)buf;
    if (values && r->dev->rank == root)
        for (int64_t p = p0, off = 0; p < p1; off += r->m->params[p].numel, p++)
            if (dev_copy(r->dev, f + off, r->params[p].data, (size_t)r->m->params[p].numel * sizeof *f) != 0)
                return fail_dev(r, err, errlen);
    if (collective_from(r, WORK_BROADCAST, root, buf, count, bytes, name, err, errlen) != 0)
        return -1;
    if (values)
        for (int64_t p = p0, off = 0; p < p1; off += r->m->params[p].numel, p++)
            if (dev_copy(r->dev, r->params[p].data, f + off, (size_t)r->m->params[p].numel * sizeof *f) != 0)
                return fail_dev(r, err, errlen);
    return 0;
}

/* take_tensors(): float32 tensors in order, a chunk closed once it reaches the limit.
 * With `values`, the chunks carry the parameters' data from `root` to every rank. */
static int broadcast_f32_states(reducer *r, int root, bool params_too, bool values, const char *what, char *err,
                                size_t errlen)
{
    const model *m = r->m;
    int64_t chunk = 0;
    char name[SPAN_NAME];
    snprintf(name, sizeof name, "%s float32", what);
    int first = 0; /* first parameter of the open chunk */
    for (int p = 0; params_too && p < m->nparams; p++) {
        chunk += m->params[p].numel * FP32_BYTES;
        bool full = chunk >= DDP_BROADCAST_CHUNK_BYTES, last = p == m->nparams - 1;
        if (full || last) {
            /* The buffers follow the parameters in the last chunk, unless it was full. */
            int64_t bytes = chunk + (last && !full ? m->buffer_f32_numel * FP32_BYTES : 0);
            if (send_params(r, root, first, p + 1, bytes, values, name, err, errlen) != 0)
                return -1;
            chunk = last && !full ? -1 : 0;
            first = p + 1;
        }
    }
    if (chunk >= 0 && m->buffer_f32_numel > 0 &&
        broadcast_bytes(r, root, m->buffer_f32_numel * FP32_BYTES, name, err, errlen) != 0)
        return -1;
    if (m->buffer_i64_count > 0) {
        snprintf(name, sizeof name, "%s int64", what);
        if (broadcast_bytes(r, root, (int64_t)m->buffer_i64_count * 8, name, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int ddp_construction(reducer *r, char *err, size_t errlen)
{
    if (r->sc->sync == SYNC_MANUAL)
        return 0; /* no DDP: the hand-written loop starts from equal weights itself */
    int world = r->world;
    /* PyTorch's _verify_param_shape_across_processes all-gathers each rank's parameter
     * count; a SUM over slots that only their own rank fills gathers the same, so it
     * runs as an allreduce and is recorded as what it is.  Nobody reads the counts: a
     * time-only device gets none, for world_size slots on each of world_size ranks,
     * and their sum, grow as the square of the world (34 GB and 4 billion additions at
     * 65,536 ranks). */
    int32_t *counts;
    if (traffic_buffer(r, world, &counts, err, errlen) != 0)
        return -1;
    if (counts) {
        int32_t mine = r->m->nparams;
        if (dev_zero(r->dev, counts, (size_t)world * sizeof *counts) != 0 ||
            dev_copy(r->dev, counts + r->dev->rank, &mine, sizeof mine) != 0)
            return fail_dev(r, err, errlen);
    }
    if (collective_as(r, SPAN_ALL_GATHER, WORK_ALLREDUCE, 0, counts, world, 8, DDP_PARAM_COUNT_SPAN_NAME, err,
                      errlen) != 0)
        return -1;
    int64_t dims = 0;
    for (int p = 0; p < r->m->nparams; p++)
        dims += r->m->params[p].ndims;
    if (broadcast_bytes(r, 0, 2 * dims * 8, "verify params: broadcast sizes and strides int64", err, errlen) != 0 ||
        broadcast_f32_states(r, 0, true, false, "sync module states", err, errlen) != 0)
        return -1;
    /* The chunk buffer can be large (the whole model): give it back once sent. */
    dev_free(r->dev, r->scratch);
    r->scratch = NULL;
    r->scratch_len = 0;
    return 0;
}

/* _find_common_rank(): an int64 allreduce (MAX in PyTorch; the result is known here). */
static int common_rank(reducer *r, char *err, size_t errlen)
{
    if (grow_scratch(r, 2, err, errlen) != 0)
        return -1;
    if (dev_zero(r->dev, r->scratch, 2 * sizeof *r->scratch) != 0)
        return fail_dev(r, err, errlen);
    return collective(r, WORK_ALLREDUCE, r->scratch, 2, 8, "join: find common rank int64", err, errlen);
}

int ddp_sync_buffers(reducer *r, char *err, size_t errlen)
{
    if (!r->sc->broadcast_buffers || r->sc->sync == SYNC_MANUAL || (r->m->buffer_f32_numel == 0 && r->m->buffer_i64_count == 0))
        return 0;
    int root = 0;
    if (r->sc->join) {
        /* Rank 0 may have joined with stale buffers: the ranks agree on the highest
         * rank still training (_find_common_rank, an int64 MAX allreduce). */
        root = join_authoritative_rank(r->sc, r->iter);
        if (common_rank(r, err, errlen) != 0)
            return -1;
    }
    return broadcast_f32_states(r, root, false, false, "broadcast buffers", err, errlen);
}

int ddp_sync_final_model(reducer *r, int root, char *err, size_t errlen)
{
    if (common_rank(r, err, errlen) != 0)
        return -1;
    return broadcast_f32_states(r, root, true, true, "join: sync final model", err, errlen);
}

int ddp_sync_bucket_indices(reducer *r, bucket_assignment *out, const bucket_layout **layout, char *err,
                            size_t errlen)
{
    int n = r->m->nparams;
    bucket_assignment mine = {0};
    *layout = NULL;
    int32_t *order = NULL, *sizes = NULL;
    bool staged = r->dev->ops->copy != NULL; /* the host cannot read r->bcast itself */
    if (!r->bcast && !(r->bcast = dev_alloc(r->dev, ((size_t)n + 1) * sizeof *r->bcast)))
        goto oom; /* a time-only device's ranks take it here (reducer_init) */
    order = staged ? malloc(((size_t)n + 1) * sizeof *order) : r->bcast;
    if (!order)
        goto oom;
    if (r->dev->rank == 0) {
        if (bucket_plan_sized(r->m, r->sc, r->ready_order, &mine) != 0)
            goto oom;
        /* The buckets are contiguous runs of the ready order: it is their flattening. */
        for (int i = 0; i < n; i++)
            order[i] = r->ready_order[i];
        order[n] = mine.nbuckets;
        bucket_assignment_free(&mine);
        if (staged && dev_copy(r->dev, r->bcast, order, ((size_t)n + 1) * sizeof *order) != 0)
            goto device_failed;
    }
    if (collective(r, WORK_BROADCAST, r->bcast, n + 1, (int64_t)(n + 1) * 4, DDP_REBUILD_SPAN_NAME, err, errlen) !=
        0)
        goto failed;
    if (staged && dev_copy(r->dev, order, r->bcast, ((size_t)n + 1) * sizeof *order) != 0)
        goto device_failed;
    /* The world's layout when it was planned from this same order: the assignment this
     * rank would plan (bucket_plan_sized is a function of the order), held once. */
    *layout = r->shared ? param_tables_rebuilt(r->shared, order) : NULL;
    if (*layout)
        *out = (*layout)->a;
    else if (bucket_plan_sized(r->m, r->sc, order, out) != 0)
        goto oom;
    int nb = order[n];
    if (nb != out->nbuckets) {
        snprintf(err, errlen, "rank %d: rank 0 rebuilt %d buckets, this rank %d from the same order", r->dev->rank, nb,
                 out->nbuckets);
        goto fail;
    }
    if (grow_scratch(r, nb, err, errlen) != 0)
        goto fail;
    sizes = staged ? malloc((size_t)(nb > 0 ? nb : 1) * sizeof *sizes) : r->scratch;
    if (!sizes) {
        snprintf(err, errlen, "rank %d: out of memory rebuilding buckets", r->dev->rank);
        goto fail;
    }
    for (int b = 0; b < nb; b++)
        sizes[b] = out->buckets[b].nparams;
    if (staged && dev_copy(r->dev, r->scratch, sizes, (size_t)nb * sizeof *sizes) != 0) {
        fail_dev(r, err, errlen);
        goto fail;
    }
    if (collective(r, WORK_BROADCAST, r->scratch, nb, (int64_t)nb * 4, "rebuild: bucket sizes int32", err, errlen) !=
        0)
        goto fail;
    if (staged) {
        free(sizes);
        free(order);
    }
    return 0;
fail:
    if (!*layout)
        bucket_assignment_free(out);
    *layout = NULL;
    goto failed;
device_failed:
    fail_dev(r, err, errlen);
    goto failed;
oom:
    snprintf(err, errlen, "rank %d: out of memory rebuilding buckets", r->dev->rank);
failed:
    if (staged) { /* else both are the device's own buffers */
        free(sizes);
        free(order);
    }
    return -1;
}

int ddp_used_map(reducer *r, char *err, size_t errlen)
{
    dev_op op = {.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = -1, .bucket = -1, .seq = r->seq++,
                 .bytes = (int64_t)r->m->nparams * 4, .work = WORK_ALLREDUCE};
    text_copy(op.name, sizeof op.name, "local_used_map int32");
    op.u.coll.buf = r->local_used;
    op.u.coll.count = r->m->nparams;
    op.u.coll.dtype = DEV_I32;
    op.u.coll.prescale = 1.0f;
    if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0)
        return fail_dev(r, err, errlen);
    return 0;
}

int64_t ddp_collectives_max_bytes(const model *m)
{
    int64_t dims = 0, largest = 0;
    for (int p = 0; p < m->nparams; p++) {
        dims += m->params[p].ndims;
        largest = m->params[p].numel * FP32_BYTES > largest ? m->params[p].numel * FP32_BYTES : largest;
    }
    /* A float32 chunk closes once it reaches the limit: at most limit + one tensor. */
    int64_t states = m->total_numel * FP32_BYTES, cap = DDP_BROADCAST_CHUNK_BYTES + largest;
    int64_t v = (states < cap ? states : cap) + m->buffer_f32_numel * FP32_BYTES;
    int64_t shapes = 2 * dims * 8, order = ((int64_t)m->nparams + 1) * 4;
    v = v > shapes ? v : shapes;
    return v > order ? v : order;
}
