/* manual_sync.c — allreduce every gradient after backward, then divide (manual_sync.h). */
#include "engine/ddp/manual_sync.h"

#include <stdio.h>

#include "common/textcopy.h"

static int fail(reducer *r, char *err, size_t errlen)
{
    text_copy(err, errlen, dev_error(r->dev));
    return -1;
}

int manual_sync_after_backward(reducer *r, char *err, size_t errlen)
{
    const model *m = r->m;
    if (dev_wait(r->dev, DEV_STREAM_COMM, dev_record(r->dev, DEV_STREAM_COMPUTE)) != 0)
        return fail(r, err, errlen);
    for (int p = m->nparams - 1; p >= 0; p--) {
        const model_param *mp = &m->params[p];
        dev_op op = {.kind = SPAN_ALLREDUCE, .iter = r->iter, .layer = mp->layer, .bucket = -1, .seq = r->seq++,
                     .bytes = mp->numel * FP32_BYTES, .work = WORK_ALLREDUCE};
        text_copy(op.name, sizeof op.name, mp->name);
        op.u.coll.buf = r->params[p].grad;
        op.u.coll.count = mp->numel;
        op.u.coll.dtype = DEV_F32;
        op.u.coll.prescale = 1.0f;
        if (dev_enqueue(r->dev, DEV_STREAM_COMM, &op) != 0)
            return fail(r, err, errlen);
    }
    if (dev_wait(r->dev, DEV_STREAM_COMPUTE, dev_record(r->dev, DEV_STREAM_COMM)) != 0)
        return fail(r, err, errlen);
    for (int p = m->nparams - 1; p >= 0; p--) {
        const model_param *mp = &m->params[p];
        dev_op op = {.kind = SPAN_COPY_OUT, .iter = r->iter, .layer = mp->layer, .bucket = -1, .seq = -1,
                     .bytes = mp->numel * FP32_BYTES, .work = WORK_SCALE_COPY};
        op.model_ns = timing_memory_ns(r->timing, SPAN_COPY_OUT, 2.0 * (double)mp->numel * FP32_BYTES);
        char name[sizeof op.name + 8];
        snprintf(name, sizeof name, "divide %s", mp->name);
        text_copy(op.name, sizeof op.name, name);
        op.u.copy.dst = r->params[p].grad;
        op.u.copy.src = r->params[p].grad;
        op.u.copy.n = mp->numel;
        op.u.copy.scale = 1.0f / (float)r->world;
        if (dev_enqueue(r->dev, DEV_STREAM_COMPUTE, &op) != 0)
            return fail(r, err, errlen);
    }
    r->expect_hooks = false;
    r->synced_steps++;
    return 0;
}
