/* trainer.c — one rank's host loop: forward, backward with the reducer, optimizer. */
#include "common/textcopy.h"
#include "engine/ddp/trainer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/ddp/join.h"
#include "engine/ddp/join_schedule.h"
#include "engine/workload/real_training.h"
#include "engine/cost/timing.h"

typedef struct {
    dev_param *params;
    bool params_shared; /* the world's table (param_tables.h): not this rank's to free */
    float **grad_storage; /* the gradients' own buffers (grad may later point into a bucket);
                           * NULL on a device without buffers */
    int n;
    real_training *rt; /* compute = real on the mlp: the real forward and backward */
    /* The host's copy of the parameters and gradients for the sync hook (--verify), on
     * a device whose memory the host cannot read (device_ops.copy set); else NULL. */
    dev_param *host_view;
    float *host_values;
} rank_memory;

static void memory_free(device *dev, rank_memory *mem)
{
    if (mem->params_shared)
        mem->params = NULL;
    for (int p = 0; p < mem->n; p++) {
        if (mem->params)
            dev_free(dev, mem->params[p].data);
        if (mem->grad_storage)
            dev_free(dev, mem->grad_storage[p]);
    }
    free(mem->params);
    free(mem->grad_storage);
    free(mem->host_view);
    free(mem->host_values);
    real_training_free(mem->rt);
    memset(mem, 0, sizeof *mem);
}

/* Fills parameters in slices, asking between them whether the run was aborted: a large
 * model takes seconds to initialise, and an interrupt must not wait for it. */
#define INIT_SLICE ((int64_t)1 << 22)

/* A device that only models time (no_buffers) gets the parameters' sizes but no memory.
 * 0, or -1 with err (out of memory, the device's error, or the run stopped). */
static int memory_alloc(device *dev, rank_memory *mem, const model *m, param_tables *shared, atomic_bool *stop,
                        char *err, size_t errlen)
{
    mem->n = m->nparams;
    if (dev->no_buffers && shared) {
        /* {NULL, NULL, numel} per parameter on every rank: the world holds it once. */
        mem->params = param_tables_params(shared);
        mem->params_shared = true;
        return 0;
    }
    float *slice = NULL; /* on a device the host cannot write: the values, made here and copied */
    mem->params = calloc((size_t)m->nparams, sizeof *mem->params);
    /* Every rank of a time-only world would hold a NULL per parameter here. */
    mem->grad_storage = dev->no_buffers ? NULL : calloc((size_t)m->nparams, sizeof *mem->grad_storage);
    if (!mem->params || (!dev->no_buffers && !mem->grad_storage))
        goto oom;
    for (int p = 0; p < m->nparams; p++) {
        int64_t n = m->params[p].numel;
        mem->params[p].numel = n;
        if (dev->no_buffers)
            continue;
        mem->params[p].data = dev_alloc(dev, (size_t)n * sizeof(float));
        mem->grad_storage[p] = dev_alloc(dev, (size_t)n * sizeof(float));
        if (!mem->params[p].data || !mem->grad_storage[p])
            goto device_failed;
        mem->params[p].grad = mem->grad_storage[p];
        for (int64_t lo = 0; lo < n; lo += INIT_SLICE) {
            if (stop && atomic_load(stop)) {
                snprintf(err, errlen, "rank %d stopped while initialising its parameters: the run was aborted",
                         dev->rank);
                goto fail;
            }
            int64_t hi = n - lo < INIT_SLICE ? n : lo + INIT_SLICE;
            /* Written in place where the device's memory is the heap, else through a slice. */
            float *to = mem->params[p].data + lo;
            if (dev->ops->copy) {
                if (!slice && !(slice = malloc((size_t)INIT_SLICE * sizeof *slice)))
                    goto oom;
                to = slice;
            }
            for (int64_t i = lo; i < hi; i++)
                to[i - lo] = 0.01f * (float)((p + i) % 13);
            if (to == slice && dev_copy(dev, mem->params[p].data + lo, slice, (size_t)(hi - lo) * sizeof *slice) != 0)
                goto device_failed;
        }
    }
    free(slice);
    return 0;
device_failed:
    /* The heap's allocator sets no device error: NULL from it is out of memory. */
    if (dev->ops->alloc && dev_error(dev)[0]) {
        text_copy(err, errlen, dev_error(dev));
        goto fail;
    }
oom:
    snprintf(err, errlen, "rank %d: out of memory for %lld parameters", dev->rank, (long long)m->total_numel);
fail:
    free(slice);
    return -1;
}

/* The parameters as the host can read them: mem->params itself where the device's
 * memory is the heap, else a host copy of every parameter and gradient, refreshed now.
 * NULL with err on failure. */
static const dev_param *host_readable_params(device *dev, rank_memory *mem, char *err, size_t errlen)
{
    if (!dev->ops->copy)
        return mem->params;
    if (!mem->host_view) {
        size_t nparams = mem->n > 0 ? (size_t)mem->n : 1, total = 0;
        for (int p = 0; p < mem->n; p++)
            total += (size_t)mem->params[p].numel;
        mem->host_view = calloc(nparams, sizeof *mem->host_view);
        mem->host_values = calloc(2 * total + 1, sizeof *mem->host_values);
        if (!mem->host_view || !mem->host_values) {
            snprintf(err, errlen, "rank %d: out of memory for a host copy of the parameters", dev->rank);
            return NULL;
        }
        float *at = mem->host_values;
        for (int p = 0; p < mem->n; p++) {
            int64_t n = mem->params[p].numel;
            mem->host_view[p] = (dev_param){.data = at, .grad = at + n, .numel = n};
            at += 2 * n;
        }
    }
    for (int p = 0; p < mem->n; p++) {
        size_t bytes = (size_t)mem->params[p].numel * sizeof(float);
        if (dev_copy(dev, mem->host_view[p].data, mem->params[p].data, bytes) != 0 ||
            dev_copy(dev, mem->host_view[p].grad, mem->params[p].grad, bytes) != 0) {
            text_copy(err, errlen, dev_error(dev));
            return NULL;
        }
    }
    return mem->host_view;
}

static void host_span(trainer_args *a, int iter, const char *name, int64_t start, int64_t end)
{
    span s = {.rank = a->dev->rank, .iter = iter, .stream = STREAM_HOST, .kind = SPAN_WAIT, .layer = -1,
              .bucket = -1, .seq = -1, .bytes = 0, .start_ns = start, .end_ns = end};
    text_copy(s.name, sizeof s.name, name);
    span_ring_push(a->host_ring, &s);
}

static double max_speed(const scenario *sc)
{
    double mx = 0;
    for (int r = 0; r < sc->world_size; r++)
        if (scenario_rank_speed(sc, r) > mx)
            mx = scenario_rank_speed(sc, r);
    return mx;
}

static int enqueue(trainer_args *a, const dev_op *op, char *err, size_t errlen)
{
    if (dev_enqueue(a->dev, DEV_STREAM_COMPUTE, op) != 0) {
        text_copy(err, errlen, dev_error(a->dev));
        return -1;
    }
    return 0;
}

static void layer_op(dev_op *op, const device *dev, const scenario *sc, const model_layer *L, int iter, int layer,
                     span_kind kind, uint64_t model_ns, double stretch)
{
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->iter = iter;
    op->layer = layer;
    op->bucket = -1;
    op->seq = -1;
    if (!dev->drops_op_names) /* two per layer and iteration on every rank */
        text_copy(op->name, sizeof op->name, L->name);
    if (sc->compute == COMPUTE_REAL) {
        /* Real work: the layer's GEMM over the whole batch (backward: twice the rows,
         * for the input and weight gradients); the duration is what BLAS takes. */
        op->gemm.m = L->gemm_m * sc->batch * (kind == SPAN_BACKWARD ? 2 : 1);
        op->gemm.n = L->gemm_n;
        op->gemm.k = L->gemm_k;
        op->stretch = stretch;
    } else {
        op->model_ns = model_ns;
    }
}

/* Enacts this rank's [fault] at the start of `iter`: returns -1 to end the rank. */
static int enact_fault(trainer_args *a, int iter, char *err, size_t errlen)
{
    const scenario *sc = a->sc;
    if (sc->fault == FAULT_HANG) {
        /* Stop taking part without telling anyone: the others must detect it. */
        while (!atomic_load(a->stop_requested)) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        snprintf(err, errlen, "rank %d hung at iteration %d (injected fault)", a->dev->rank, iter);
        return -1;
    }
    if (sc->fault == FAULT_EXIT) {
        snprintf(err, errlen, "rank %d exited at iteration %d (injected fault)", a->dev->rank, iter);
        return -1;
    }
    return 0;
}

/* What every step of one rank uses, fixed for the run. */
typedef struct {
    trainer_args *a;
    reducer *r;
    rank_memory *mem;
    timing_model *tm;
    float loss_scale;
    double stretch;
    bool my_fault; /* this rank is the one [fault] names */
} step_plan;

/* The forward pass: every layer's op, first to last. */
static int forward_pass(const step_plan *sp, int it, char *err, size_t errlen)
{
    const scenario *sc = sp->a->sc;
    const model *m = sp->a->m;
    dev_op op;
    for (int l = 0; l < m->nlayers; l++) {
        layer_op(&op, sp->a->dev, sc, &m->layers[l], it, l, SPAN_FORWARD, timing_forward_ns(sp->tm, &m->layers[l]),
                 sp->stretch);
        op.phase_begin = l == 0;
        op.phase_end = l == m->nlayers - 1;
        if (sp->mem->rt)
            real_training_forward_op(sp->mem->rt, &op, l, sp->mem->params);
        if (enqueue(sp->a, &op, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Layer L's backward op: its gradients' work when it has parameters, and the injected
 * failure where [fault] puts it. */
static void backward_op(const step_plan *sp, dev_op *op, const model_layer *L, int it, int l)
{
    const scenario *sc = sp->a->sc;
    const model *m = sp->a->m;
    rank_memory *mem = sp->mem;
    layer_op(op, sp->a->dev, sc, L, it, l, SPAN_BACKWARD, timing_backward_ns(sp->tm, L), sp->stretch);
    op->phase_begin = l == m->nlayers - 1;
    op->phase_end = l == 0;
    if (L->nparams > 0) {
        op->work = WORK_GRAD;
        op->u.grad.p0 = L->first_param;
        op->u.grad.np = L->nparams;
        for (int j = 0; j < L->nparams; j++) {
            op->u.grad.grad[j] = mem->params[L->first_param + j].grad;
            op->u.grad.numel[j] = mem->params[L->first_param + j].numel;
            op->bytes += op->u.grad.numel[j] * FP32_BYTES;
        }
        op->u.grad.micro_step = it;
        op->u.grad.accumulate = trainer_accumulates(sc, it);
        op->u.grad.scale = sp->loss_scale;
        if (mem->rt)
            real_training_backward_op(mem->rt, op, l, mem->params, op->u.grad.accumulate);
    }
    if (sp->my_fault && sc->fault == FAULT_ERROR && it == sc->fault_iter && l == m->nlayers / 2) {
        op->work = WORK_FAIL;
        text_copy(op->name, sizeof op->name, L->name); /* the error names the op */
    }
}

/* The backward pass, last layer first, each layer's gradients handed to the reducer as
 * they become ready. */
static int backward_pass(const step_plan *sp, int it, char *err, size_t errlen)
{
    const model *m = sp->a->m;
    dev_op op;
    for (int l = m->nlayers - 1; l >= 0; l--) {
        const model_layer *L = &m->layers[l];
        backward_op(sp, &op, L, it, l);
        if (enqueue(sp->a, &op, err, errlen) != 0)
            return -1;
        /* Within a layer, in autograd's order (model_zoo.h). */
        for (int i = 0; i < L->nparams; i++) {
            int j = L->grads_in_registration_order ? i : L->nparams - 1 - i;
            if (reducer_grad_ready(sp->r, L->first_param + j, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

/* The SGD step over every parameter. */
static int optimizer_step(const step_plan *sp, int it, char *err, size_t errlen)
{
    const scenario *sc = sp->a->sc;
    const model *m = sp->a->m;
    dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = SPAN_OPTIMIZER;
    op.iter = it;
    op.layer = -1;
    op.bucket = -1;
    op.seq = -1;
    op.work = WORK_SGD;
    op.u.sgd.params = sp->mem->params;
    op.u.sgd.n = sp->mem->n;
    op.u.sgd.lr = (float)sc->lr;
    op.bytes = m->total_numel * FP32_BYTES;
    /* SGD reads the parameter and gradient and writes the parameter. */
    op.model_ns = timing_memory_ns(sp->tm, SPAN_OPTIMIZER, 12.0 * (double)m->total_numel);
    snprintf(op.name, sizeof op.name, "sgd step");
    return enqueue(sp->a, &op, err, errlen);
}

/* The step's end: the host waits for the compute stream (a span of its own), then, on a
 * synchronised step, hands the parameters to on_sync. */
static int end_step(const step_plan *sp, int it, bool sync, char *err, size_t errlen)
{
    trainer_args *a = sp->a;
    int k = a->sc->no_sync_every;
    int64_t t_wait = dev_now_ns(a->dev);
    int rc = dev_synchronize(a->dev, DEV_STREAM_COMPUTE);
    host_span(a, it, sync ? "end of step" : "end of step (no_sync)", t_wait, dev_now_ns(a->dev));
    if (rc != 0) {
        text_copy(err, errlen, dev_error(a->dev));
        return -1;
    }
    if (sync && a->on_sync) {
        const dev_param *seen = host_readable_params(a->dev, sp->mem, err, errlen);
        if (!seen ||
            a->on_sync(a->on_sync_user, a->dev->rank, it, it - (k - 1), it, seen, sp->mem->n, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* One step of a rank with data: forward, backward (synchronised or under no_sync), the
 * optimizer on a synchronised step, and the wait for it all. */
static int train_step(const step_plan *sp, int it, char *err, size_t errlen)
{
    const scenario *sc = sp->a->sc;
    int rank = sp->a->dev->rank;
    int k = sc->no_sync_every;
    bool sync = it % k == k - 1;
    if (reducer_prepare_forward(sp->r, it, err, errlen) != 0)
        return -1;
    if (sp->mem->rt && real_training_begin_step(sp->mem->rt, it, sp->a->stop_requested) != 0) {
        snprintf(err, errlen, "rank %d stopped at iteration %d: the run was aborted", rank, it);
        return -1;
    }
    if (forward_pass(sp, it, err, errlen) != 0 || (sync && reducer_prepare_backward(sp->r, err, errlen) != 0) ||
        backward_pass(sp, it, err, errlen) != 0)
        return -1;
    if (sync && (reducer_finalize_backward(sp->r, err, errlen) != 0 || optimizer_step(sp, it, err, errlen) != 0))
        return -1;
    return end_step(sp, it, sync, err, errlen);
}

static int run_iterations(trainer_args *a, reducer *r, rank_memory *mem, timing_model *tm, char *err,
                          size_t errlen)
{
    const scenario *sc = a->sc;
    int rank = a->dev->rank;
    int total = sc->warmup + sc->iterations;
    step_plan sp = {.a = a, .r = r, .mem = mem, .tm = tm};
    sp.loss_scale = sc->loss_reduction == LOSS_SUM ? (float)sc->batch : 1.0f;
    /* Only real work is stretched (modelled durations include the speed already); the
     * maximum costs O(world_size) per rank, which thousands of ranks feel. */
    sp.stretch = sc->compute == COMPUTE_REAL ? max_speed(sc) / scenario_rank_speed(sc, rank) : 1.0;
    sp.my_fault = sc->fault != FAULT_NONE && sc->fault_rank == rank;

    for (int it = 0; it < total; it++) {
        if (atomic_load(a->stop_requested)) {
            snprintf(err, errlen, "rank %d stopped at iteration %d: the run was aborted", rank, it);
            return -1;
        }
        if (sp.my_fault && it == sc->fault_iter && enact_fault(a, it, err, errlen) != 0)
            return -1;
        if (sc->join && !join_has_data(sc, rank, it)) {
            /* Out of data: shadow the others' collectives (uneven inputs). */
            if (join_shadow_iteration(r, it, err, errlen) != 0)
                return -1;
        } else if (train_step(&sp, it, err, errlen) != 0) {
            return -1;
        }
        if (a->progress)
            atomic_fetch_add(a->progress, 1);
    }
    return sc->join ? join_finish(r, err, errlen) : 0;
}

bool trainer_accumulates(const scenario *sc, int iter)
{
    return sc->no_sync_every > 1 && iter % sc->no_sync_every > 0;
}

int trainer_run(trainer_args *a, char *err, size_t errlen)
{
    rank_memory mem = {0};
    memset(&a->initial, 0, sizeof a->initial);
    memset(&a->rebuilt, 0, sizeof a->rebuilt);
    a->rebuilt_valid = 0;
    if (memory_alloc(a->dev, &mem, a->m, a->shared, a->stop_requested, err, errlen) != 0) {
        memory_free(a->dev, &mem);
        return -1;
    }
    /* A device that only models time has no weights to train: it times the GEMMs.  The
     * mlp's real training computes on the host, in the device's memory: a device whose
     * memory the host cannot touch (device_ops.copy set) cannot run it. */
    if (!a->dev->no_buffers && real_training_applies(a->sc) && a->dev->ops->copy) {
        snprintf(err, errlen,
                 "rank %d: model.compute = real on the mlp preset trains on the host (the cpu backend); on a GPU, "
                 "compute = real runs cuBLAS GEMMs of the zoo models' sizes",
                 a->dev->rank);
        memory_free(a->dev, &mem);
        return -1;
    }
    if (!a->dev->no_buffers && real_training_applies(a->sc) &&
        real_training_init(&mem.rt, a->sc, a->m, a->dev->rank, a->dev->world_size, mem.params, a->stop_requested,
                           err, errlen) != 0) {
        memory_free(a->dev, &mem);
        return -1;
    }
    timing_model tm;
    timing_init(&tm, a->sc, a->dev->rank);
    if (timing_fits_cache(a->sc, a->m->total_numel))
        timing_use_cache(&tm, a->sc);
    reducer r;
    if (reducer_init(&r, a->dev, a->m, a->sc, &tm, mem.params, a->shared, err, errlen) != 0) {
        memory_free(a->dev, &mem);
        return -1;
    }
    int rc = run_iterations(a, &r, &mem, &tm, err, errlen);
    /* Ops still queued may point at this memory: the streams must be idle before it goes. */
    if (rc != 0) {
        if (a->abort_run)
            a->abort_run(a->abort_user, err);
        dev_synchronize(a->dev, DEV_STREAM_COMPUTE);
        dev_synchronize(a->dev, DEV_STREAM_COMM);
    }
    if (a->keep_assignments && bucket_assignment_copy(&r.initial, &a->initial) == 0 && r.version == 1) {
        if (bucket_assignment_copy(&r.current, &a->rebuilt) == 0)
            a->rebuilt_valid = 1;
    }
    reducer_free(&r);
    memory_free(a->dev, &mem);
    return rc;
}

void trainer_result_free(trainer_args *a)
{
    bucket_assignment_free(&a->initial);
    bucket_assignment_free(&a->rebuilt);
    a->rebuilt_valid = 0;
}
