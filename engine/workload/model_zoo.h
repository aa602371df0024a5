/* model_zoo.h — parameter lists and per-layer FLOPs of the models ddpprof trains.
 *
 * Contract: model_build() turns the [model] section of a scenario into a model:
 * parameters in registration order (name, shape, element count) grouped into layers
 * (the unit of forward and backward compute), each layer with its forward FLOPs per
 * sample and the parameters it owns (a contiguous range of the parameter list).
 * Presets reproduce the published models' parameter lists exactly (ResNet-18 has
 * 11,689,512 parameters, ResNet-50 25,557,032, as torchvision's).  Backward FLOPs are
 * twice the forward FLOPs (gradient of input and of weights), the usual rule.
 */
#ifndef DDPPROF_MODEL_ZOO_H
#define DDPPROF_MODEL_ZOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/scenario/scenario.h"

#define MODEL_NAME 96
#define MODEL_MAX_DIMS 4

typedef struct {
    char name[MODEL_NAME]; /* "layer1.0.conv1.weight" */
    int ndims;
    int64_t shape[MODEL_MAX_DIMS];
    int64_t numel;
    int layer; /* index into model.layers */
} model_param;

typedef struct {
    char name[MODEL_NAME]; /* "layer1.0.conv1" */
    double fwd_flops;      /* per sample */
    int first_param;       /* params [first_param, first_param + nparams) */
    int nparams;           /* may be 0 (e.g. a pooling layer) */
    /* GEMM shape of the layer for `compute = real` (per sample: m x n x k,
     * 2*m*n*k = fwd_flops); 0 where the layer is not a GEMM. */
    int64_t gemm_m, gemm_n, gemm_k;
    /* Autograd makes this layer's gradients ready in registration order (batch norm,
     * layer norm: weight, then bias, as their backward returns them); otherwise the
     * last-registered first (Linear: the bias, then the weight, which goes through one
     * more node, its transpose). */
    bool grads_in_registration_order;
    /* Measured times at speed 1 (model.layer_forward_us / layer_backward_us), in place of
     * the FLOPs' roofline, where the flags say so. */
    double fwd_ns_measured, bwd_ns_measured;
    /* of those, what collectives other than DDP's took (model.forward_comm_us and
     * backward_comm_us, shared over the layers as their measured times) */
    double fwd_comm_ns, bwd_comm_ns;
    bool fwd_measured, bwd_measured;
} model_layer;

typedef struct {
    char name[64]; /* "resnet18" */
    int nparams;
    model_param *params;
    int nlayers;
    model_layer *layers;
    int64_t total_numel;
    double fwd_flops_per_sample; /* sum over layers */
    /* Module buffers (batch norm's running_mean and running_var, fp32, and its
     * num_batches_tracked, int64), which DDP broadcasts from rank 0. */
    int64_t buffer_f32_numel;
    int buffer_i64_count;
} model;

/* Builds the model of sc's [model] section.  Returns 0, or -1 with err set. */
int model_build(const scenario *sc, model *m, char *err, size_t errlen);
void model_free(model *m);

/* Names of the presets, NULL-terminated (for explain and errors). */
const char *const *model_preset_names(void);

#endif
