/* mlp_math.h — forward, loss and backward of the mlp preset, for real, with cblas.
 *
 * Contract: the network is `nlayers` nn.Linear(width, width) layers, each but the last
 * followed by ReLU; weights are row-major [out][in] as PyTorch stores them, y = x W^T + b.
 * One mlp_step holds one rank's activations for its batch.  mlp_forward_layer(l) computes
 * layer l from layer l-1's output (layer 0 from the input); on the last layer it also
 * computes the loss and its gradient with respect to the output:
 *   mse:            sum (z - y)^2, divided by batch x width for a mean
 *   cross_entropy:  sum -log softmax(z)[class], divided by batch for a mean
 * both multiplied by loss_scale (PyTorch's MSELoss / CrossEntropyLoss definitions).
 * mlp_backward_layer(l), called from the last layer down, writes (or adds, to accumulate)
 * the weight and bias gradients of layer l and passes the gradient to layer l-1 through
 * the ReLU (zero where the ReLU's output is not positive, as autograd does).
 */
#ifndef DDPPROF_MLP_MATH_H
#define DDPPROF_MLP_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/scenario/scenario.h"

typedef struct mlp_step {
    int nlayers, width, batch;
    loss_fn_kind loss;
    loss_reduction_kind reduction;
    float loss_scale;
    float *input;  /* batch x width */
    float *target; /* batch x width (mse) or batch classes (cross_entropy) */
    float **act;   /* act[l]: layer l's output, after its ReLU (none on the last layer) */
    float *delta;  /* gradient of the loss w.r.t. the pre-activation output of the layer
                      being back-propagated, batch x width */
    float *delta_next;
    double loss_value; /* of the last forward */
} mlp_step;

int mlp_step_init(mlp_step *s, int nlayers, int width, int batch, loss_fn_kind loss, loss_reduction_kind reduction,
                  float loss_scale);
void mlp_step_free(mlp_step *s);

/* Asked between slices of each GEMM (about 0.5 GFLOP each): true stops the layer, which
 * then returns -1 with its outputs unspecified.  NULL: never stop.  Slicing splits a GEMM
 * along rows of its output only: each element sums the same terms (BLAS may block them
 * differently, so a large layer can differ from one call in the last bits). */
typedef struct {
    bool (*stop)(void *user);
    void *user;
} mlp_cancel;

int mlp_forward_layer(mlp_step *s, int l, const float *weight, const float *bias, const mlp_cancel *cancel);
int mlp_backward_layer(mlp_step *s, int l, const float *weight, float *grad_weight, float *grad_bias,
                       bool accumulate, const mlp_cancel *cancel);

#endif
