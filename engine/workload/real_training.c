/* real_training.c — the mlp preset trained for real, hooked into the trainer (see
 * real_training.h). */
#include "engine/workload/real_training.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/workload/dataset.h"
#include "engine/workload/mlp_math.h"

struct real_training {
    const scenario *sc;
    const model *m;
    int rank, world, per_rank_batch;
    mlp_step step;
};

bool real_training_applies(const scenario *sc)
{
    return sc->compute == COMPUTE_REAL && strcmp(sc->preset, "mlp") == 0;
}

static float initial_value(const scenario *sc, const model *m, int p, int64_t i)
{
    int64_t fan_in = m->params[m->layers[m->params[p].layer].first_param].shape[1];
    return dataset_init_weight(sc->seed, p, i, fan_in);
}

/* Large layers take a good part of a second: `stop` (may be NULL) is asked every 2^20
 * values; -1 when it was set. */
static int init_params(const scenario *sc, const model *m, dev_param *params, atomic_bool *stop)
{
    for (int p = 0; p < m->nparams; p++)
        for (int64_t i = 0; i < m->params[p].numel; i++) {
            if (stop && (i & ((1 << 20) - 1)) == 0 && atomic_load(stop))
                return -1;
            params[p].data[i] = initial_value(sc, m, p, i);
        }
    return 0;
}

void real_training_initial_weights(const scenario *sc, const model *m, float *flat)
{
    for (int p = 0; p < m->nparams; p++)
        for (int64_t i = 0; i < m->params[p].numel; i++)
            *flat++ = initial_value(sc, m, p, i);
}

int real_training_init(real_training **out, const scenario *sc, const model *m, int rank, int world,
                       dev_param *params, atomic_bool *stop, char *err, size_t errlen)
{
    *out = NULL;
    real_training *rt = calloc(1, sizeof *rt);
    if (!rt) {
        snprintf(err, errlen, "rank %d: out of memory for real training", rank);
        return -1;
    }
    rt->sc = sc;
    rt->m = m;
    rt->rank = rank;
    rt->world = world;
    rt->per_rank_batch = dataset_per_rank_batch(sc);
    for (int l = 0; l < m->nlayers; l++) {
        const model_layer *L = &m->layers[l];
        if (L->nparams != 2 || m->params[L->first_param].ndims != 2 ||
            m->params[L->first_param].shape[0] != m->params[L->first_param].shape[1]) {
            snprintf(err, errlen, "rank %d: real training needs square Linear layers (layer %s)", rank, L->name);
            free(rt);
            return -1;
        }
    }
    int width = (int)m->params[0].shape[0];
    if (mlp_step_init(&rt->step, m->nlayers, width, rt->per_rank_batch, sc->loss, sc->loss_reduction,
                      (float)sc->loss_scale) != 0) {
        snprintf(err, errlen, "rank %d: out of memory for the activations of a batch of %d", rank,
                 rt->per_rank_batch);
        free(rt);
        return -1;
    }
    if (init_params(sc, m, params, stop) != 0) {
        snprintf(err, errlen, "rank %d stopped before its first step: the run was aborted", rank);
        real_training_free(rt);
        return -1;
    }
    *out = rt;
    return 0;
}

void real_training_free(real_training *rt)
{
    if (!rt)
        return;
    mlp_step_free(&rt->step);
    free(rt);
}

int real_training_begin_step(real_training *rt, int step, atomic_bool *stop)
{
    mlp_step *s = &rt->step;
    int w = s->width;
    bool ce = rt->sc->loss == LOSS_FN_CROSS_ENTROPY;
    for (int j = 0; j < s->batch; j++) {
        if (stop && j % 16 == 0 && atomic_load(stop))
            return -1;
        int64_t idx = dataset_index(step, rt->rank, rt->world, s->batch, j);
        dataset_sample(rt->sc->seed, w, rt->sc->loss, idx, s->input + (int64_t)j * w,
                       ce ? s->target + j : s->target + (int64_t)j * w);
    }
    return 0;
}

void real_training_forward_op(real_training *rt, dev_op *op, int layer, const dev_param *params)
{
    int p = rt->m->layers[layer].first_param;
    memset(&op->gemm, 0, sizeof op->gemm);
    op->work = WORK_MLP_FORWARD;
    op->u.mlp.step = &rt->step;
    op->u.mlp.layer = layer;
    op->u.mlp.weight = params[p].data;
    op->u.mlp.bias = params[p + 1].data;
}

void real_training_backward_op(real_training *rt, dev_op *op, int layer, const dev_param *params, bool accumulate)
{
    int p = rt->m->layers[layer].first_param;
    memset(&op->gemm, 0, sizeof op->gemm);
    op->work = WORK_MLP_BACKWARD;
    op->u.mlp.step = &rt->step;
    op->u.mlp.layer = layer;
    op->u.mlp.weight = params[p].data;
    op->u.mlp.bias = params[p + 1].data;
    op->u.mlp.grad_weight = params[p].grad;
    op->u.mlp.grad_bias = params[p + 1].grad;
    op->u.mlp.accumulate = accumulate;
}

double real_training_loss(const real_training *rt)
{
    return rt->step.loss_value;
}
