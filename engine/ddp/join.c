/* join.c — uneven inputs under DDP's join() (see join.h). */
#include "engine/ddp/join.h"

#include <stdio.h>
#include <string.h>

#include "engine/ddp/ddp_collectives.h"
#include "common/textcopy.h"

bool join_has_data(const scenario *sc, int rank, int iter)
{
    return sc->nrank_steps == 0 || iter < sc->rank_steps[rank];
}

int join_ranks_training(const scenario *sc, int iter)
{
    int n = 0;
    for (int q = 0; q < sc->world_size; q++)
        n += join_has_data(sc, q, iter);
    return n;
}

int join_authoritative_rank(const scenario *sc, int iter)
{
    for (int q = sc->world_size - 1; q >= 0; q--)
        if (join_has_data(sc, q, iter))
            return q;
    return 0;
}

float join_div_factor(const reducer *r)
{
    if (!r->sc->join || r->sc->divide_by_initial_world_size)
        return (float)r->world;
    int n = join_ranks_training(r->sc, r->iter);
    return (float)(n > 0 ? n : 1);
}

static bool synchronised_step(const scenario *sc, int iter)
{
    return iter % sc->no_sync_every == sc->no_sync_every - 1;
}

static int fail_dev(reducer *r, char *err, size_t errlen)
{
    text_copy(err, errlen, dev_error(r->dev));
    return -1;
}

/* A one-element float32 allreduce of `value`, waited for (the host reads the result). */
static int scalar_allreduce(reducer *r, float value, const char *name, float *sum, char *err, size_t errlen)
{
    float v = value;
    dev_op op = {.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = -1, .bucket = -1, .seq = r->seq++, .bytes = 4,
                 .work = WORK_ALLREDUCE};
    text_copy(op.name, sizeof op.name, name);
    op.u.coll.buf = &v;
    op.u.coll.count = 1;
    op.u.coll.dtype = DEV_F32;
    op.u.coll.prescale = 1.0f;
    if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(r->dev, DEV_STREAM_COMM) != 0)
        return fail_dev(r, err, errlen);
    if (sum)
        *sum = v;
    return 0;
}

int join_notify(reducer *r, char *err, size_t errlen)
{
    bool mine = join_has_data(r->sc, r->dev->rank, r->iter);
    return scalar_allreduce(r, mine ? 1.0f : 0.0f, "join: ranks training float32", NULL, err, errlen);
}

int join_grad_sync_check(reducer *r, char *err, size_t errlen)
{
    bool mine = join_has_data(r->sc, r->dev->rank, r->iter) && synchronised_step(r->sc, r->iter);
    float sum = 0;
    if (scalar_allreduce(r, mine ? 1.0f : 0.0f, "join: requires grad sync float32", &sum, err, errlen) != 0)
        return -1;
    r->join_should_sync = sum > 0.0f;
    return 0;
}

/* _match_all_reduce_for_bwd_pass(): every bucket's allreduce with zeros, in order. */
static int zero_buckets(reducer *r, char *err, size_t errlen)
{
    comm_hook_kind hook = r->sc->comm_hook;
    for (int b = 0; b < r->current.nbuckets; b++) {
        if (r->buckets[b].buf) /* none on a device that only models time */
            memset(r->buckets[b].buf, 0, (size_t)r->buckets[b].numel * sizeof(float));
        dev_op op = {.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = -1, .bucket = b, .seq = r->seq++,
                     .bytes = r->buckets[b].numel * (hook == COMM_HOOK_NONE ? 4 : 2), .work = WORK_ALLREDUCE};
        snprintf(op.name, sizeof op.name, "bucket %d", b);
        op.u.coll.buf = r->buckets[b].buf;
        op.u.coll.count = r->buckets[b].numel;
        op.u.coll.dtype = hook == COMM_HOOK_FP16 ? DEV_F16 : hook == COMM_HOOK_BF16 ? DEV_BF16 : DEV_F32;
        op.u.coll.prescale = hook == COMM_HOOK_NONE ? 1.0f : 1.0f / join_div_factor(r);
        if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0)
            return fail_dev(r, err, errlen);
    }
    if (r->sc->find_unused_parameters && !r->sc->static_graph) {
        memset(r->local_used, 0, (size_t)r->m->nparams * sizeof *r->local_used);
        if (ddp_used_map(r, err, errlen) != 0)
            return -1;
    }
    return dev_synchronize(r->dev, DEV_STREAM_COMM) != 0 ? fail_dev(r, err, errlen) : 0;
}

int join_shadow_iteration(reducer *r, int iter, char *err, size_t errlen)
{
    if (reducer_prepare_forward(r, iter, err, errlen) != 0)
        return -1;
    r->prev_forward_synced = r->join_should_sync;
    if (!r->join_should_sync)
        return 0;
    return zero_buckets(r, err, errlen);
}

int join_finish(reducer *r, char *err, size_t errlen)
{
    const scenario *sc = r->sc;
    int last = sc->warmup + sc->iterations - 1;
    r->iter = last;
    if (scalar_allreduce(r, 0.0f, "join: ranks training float32", NULL, err, errlen) != 0)
        return -1;
    /* The last joiners (the ranks with data in the last step) are the candidates; the
     * highest of them wins. */
    return ddp_sync_final_model(r, join_authoritative_rank(sc, last), err, errlen);
}
