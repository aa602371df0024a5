/* join.c — a rank out of data under DDP's join(): its shadow iterations and the end of
 * the run (see join.h). */
#include "engine/ddp/join.h"

#include <stdio.h>
#include <string.h>

#include "common/textcopy.h"
#include "engine/ddp/ddp_collectives.h"
#include "engine/ddp/join_hooks.h"
#include "engine/ddp/join_schedule.h"

static int fail_dev(reducer *r, char *err, size_t errlen)
{
    text_copy(err, errlen, dev_error(r->dev));
    return -1;
}

/* _match_all_reduce_for_bwd_pass(): every bucket's allreduce with zeros, in order. */
static int zero_buckets(reducer *r, char *err, size_t errlen)
{
    for (int b = 0; b < r->current.nbuckets; b++) {
        if (r->buckets[b].buf && /* none on a device that only models time */
            dev_zero(r->dev, r->buckets[b].buf, (size_t)r->buckets[b].numel * sizeof(float)) != 0)
            return fail_dev(r, err, errlen);
        dev_op op;
        reducer_bucket_allreduce_op(r, b, &op);
        if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0)
            return fail_dev(r, err, errlen);
    }
    if (r->sc->find_unused_parameters && !r->sc->static_graph) {
        if (dev_zero(r->dev, r->local_used, (size_t)r->m->nparams * sizeof *r->local_used) != 0)
            return fail_dev(r, err, errlen);
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
    if (join_scalar_allreduce(r, 0.0f, "join: ranks training float32", NULL, err, errlen) != 0)
        return -1;
    /* The last joiners (the ranks with data in the last step) are the candidates; the
     * highest of them wins. */
    return ddp_sync_final_model(r, join_authoritative_rank(sc, last), err, errlen);
}
