/* mlp_math.c — the mlp's forward, loss and backward with cblas (see mlp_math.h). */
#include "mlp_math.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int mlp_step_init(mlp_step *s, int nlayers, int width, int batch, loss_fn_kind loss, loss_reduction_kind reduction,
                  float loss_scale)
{
    memset(s, 0, sizeof *s);
    s->nlayers = nlayers;
    s->width = width;
    s->batch = batch;
    s->loss = loss;
    s->reduction = reduction;
    s->loss_scale = loss_scale;
    size_t n = (size_t)batch * (size_t)width;
    s->input = calloc(n, sizeof(float));
    s->target = calloc(n, sizeof(float));
    s->delta = calloc(n, sizeof(float));
    s->delta_next = calloc(n, sizeof(float));
    s->act = calloc((size_t)nlayers, sizeof *s->act);
    if (!s->input || !s->target || !s->delta || !s->delta_next || !s->act)
        goto oom;
    for (int l = 0; l < nlayers; l++)
        if (!(s->act[l] = calloc(n, sizeof(float))))
            goto oom;
    return 0;
oom:
    mlp_step_free(s);
    return -1;
}

void mlp_step_free(mlp_step *s)
{
    if (s->act)
        for (int l = 0; l < s->nlayers; l++)
            free(s->act[l]);
    free(s->act);
    free(s->input);
    free(s->target);
    free(s->delta);
    free(s->delta_next);
    memset(s, 0, sizeof *s);
}

static const float *layer_input(const mlp_step *s, int l)
{
    return l == 0 ? s->input : s->act[l - 1];
}

static void mse(mlp_step *s, const float *z)
{
    int64_t n = (int64_t)s->batch * s->width;
    float norm = s->reduction == LOSS_MEAN ? 1.0f / (float)n : 1.0f;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        float d = z[i] - s->target[i];
        sum += (double)d * d;
        s->delta[i] = 2.0f * d * norm * s->loss_scale;
    }
    s->loss_value = sum * norm * s->loss_scale;
}

static void cross_entropy(mlp_step *s, const float *z)
{
    int w = s->width;
    float norm = s->reduction == LOSS_MEAN ? 1.0f / (float)s->batch : 1.0f;
    double sum = 0;
    for (int i = 0; i < s->batch; i++) {
        const float *row = z + (int64_t)i * w;
        float *d = s->delta + (int64_t)i * w;
        int cls = (int)s->target[i];
        float mx = row[0];
        for (int j = 1; j < w; j++)
            mx = row[j] > mx ? row[j] : mx;
        float total = 0;
        for (int j = 0; j < w; j++)
            total += expf(row[j] - mx);
        float log_total = logf(total);
        sum += (double)(log_total - (row[cls] - mx));
        for (int j = 0; j < w; j++) {
            float p = expf(row[j] - mx - log_total);
            d[j] = (p - (j == cls ? 1.0f : 0.0f)) * norm * s->loss_scale;
        }
    }
    s->loss_value = sum * norm * s->loss_scale;
}

void mlp_forward_layer(mlp_step *s, int l, const float *weight, const float *bias)
{
    int w = s->width, b = s->batch;
    float *out = s->act[l];
    for (int i = 0; i < b; i++)
        memcpy(out + (int64_t)i * w, bias, (size_t)w * sizeof *bias);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, w, w, 1.0f, layer_input(s, l), w, weight, w, 1.0f, out,
                w);
    if (l < s->nlayers - 1) {
        for (int64_t i = 0; i < (int64_t)b * w; i++)
            out[i] = out[i] > 0.0f ? out[i] : 0.0f;
        return;
    }
    if (s->loss == LOSS_FN_CROSS_ENTROPY)
        cross_entropy(s, out);
    else
        mse(s, out);
}

void mlp_backward_layer(mlp_step *s, int l, const float *weight, float *grad_weight, float *grad_bias,
                        bool accumulate)
{
    int w = s->width, b = s->batch;
    /* dW = delta^T x input, [out][in] like the weight */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, w, w, b, 1.0f, s->delta, w, layer_input(s, l), w,
                accumulate ? 1.0f : 0.0f, grad_weight, w);
    for (int j = 0; j < w; j++) {
        float sum = 0;
        for (int i = 0; i < b; i++)
            sum += s->delta[(int64_t)i * w + j];
        grad_bias[j] = accumulate ? grad_bias[j] + sum : sum;
    }
    if (l == 0)
        return;
    /* delta of layer l-1 = (delta x W) masked by the ReLU that followed layer l-1 */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, w, w, 1.0f, s->delta, w, weight, w, 0.0f,
                s->delta_next, w);
    const float *a = s->act[l - 1];
    for (int64_t i = 0; i < (int64_t)b * w; i++)
        if (!(a[i] > 0.0f))
            s->delta_next[i] = 0.0f;
    float *t = s->delta;
    s->delta = s->delta_next;
    s->delta_next = t;
}
