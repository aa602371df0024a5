/* join_hooks.c — the allreduces join adds to DDP's forward (join_hooks.h). */
#include "engine/ddp/join_hooks.h"

#include <stdio.h>

#include "common/textcopy.h"
#include "engine/ddp/join_schedule.h"

static bool synchronised_step(const scenario *sc, int iter)
{
    return iter % sc->no_sync_every == sc->no_sync_every - 1;
}

static int fail_dev(reducer *r, char *err, size_t errlen)
{
    text_copy(err, errlen, dev_error(r->dev));
    return -1;
}

int join_scalar_allreduce(reducer *r, float value, const char *name, float *sum, char *err, size_t errlen)
{
    float v = value;
    /* Where the device's memory is the heap the float on the stack is its buffer; a GPU
     * reduces device memory only (NCCL), so the value goes through one float of it. */
    float *buf = &v;
    if (r->dev->ops->copy) {
        if (!r->join_scalar && !(r->join_scalar = dev_alloc(r->dev, sizeof *r->join_scalar)))
            return fail_dev(r, err, errlen);
        if (dev_copy(r->dev, r->join_scalar, &v, sizeof v) != 0)
            return fail_dev(r, err, errlen);
        buf = r->join_scalar;
    }
    dev_op op = {.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = -1, .bucket = -1, .seq = r->seq++,
                 .bytes = FP32_BYTES, .work = WORK_ALLREDUCE};
    text_copy(op.name, sizeof op.name, name);
    op.u.coll.buf = buf;
    op.u.coll.count = 1;
    op.u.coll.dtype = DEV_F32;
    op.u.coll.prescale = 1.0f;
    if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(r->dev, DEV_STREAM_COMM) != 0)
        return fail_dev(r, err, errlen);
    if (buf != &v && dev_copy(r->dev, &v, buf, sizeof v) != 0)
        return fail_dev(r, err, errlen);
    if (sum)
        *sum = v;
    return 0;
}

int join_notify(reducer *r, char *err, size_t errlen)
{
    bool mine = join_has_data(r->sc, r->dev->rank, r->iter);
    return join_scalar_allreduce(r, mine ? 1.0f : 0.0f, "join: ranks training float32", NULL, err, errlen);
}

int join_grad_sync_check(reducer *r, char *err, size_t errlen)
{
    bool mine = join_has_data(r->sc, r->dev->rank, r->iter) && synchronised_step(r->sc, r->iter);
    float sum = 0;
    if (join_scalar_allreduce(r, mine ? 1.0f : 0.0f, "join: requires grad sync float32", &sum, err, errlen) != 0)
        return -1;
    r->join_should_sync = sum > 0.0f;
    return 0;
}
