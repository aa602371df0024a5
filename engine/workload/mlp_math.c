/* mlp_math.c — the mlp's forward, loss and backward with cblas (see mlp_math.h). */
#include "engine/workload/mlp_math.h"

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

#define MLP_SLICE_FLOP 5e8

static bool stopped(const mlp_cancel *cancel)
{
    return cancel && cancel->stop && cancel->stop(cancel->user);
}

/* Output rows per slice of a GEMM whose rows each cost 2 x n x k flops. */
static int slice_rows(int n, int k)
{
    double rows = MLP_SLICE_FLOP / (2.0 * (double)n * (double)k);
    return rows < 1 ? 1 : rows > 1e9 ? 1000000000 : (int)rows;
}

/* C[m x n] = alpha op(A) op(B) + beta C over row slices of C, stopping between them.
 * A row slice of op(A) starts at row r of A (no transpose) or at column r (transpose). */
static int sliced_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float *a, int lda,
                        const float *b, int ldb, float beta, float *c, int ldc, const mlp_cancel *cancel)
{
    int step = slice_rows(n, k);
    for (int r = 0; r < m; r += step) {
        if (stopped(cancel))
            return -1;
        int rows = m - r < step ? m - r : step;
        const float *a_r = ta == CblasNoTrans ? a + (int64_t)r * lda : a + r;
        cblas_sgemm(CblasRowMajor, ta, tb, rows, n, k, 1.0f, a_r, lda, b, ldb, beta, c + (int64_t)r * ldc, ldc);
    }
    return 0;
}

int mlp_forward_layer(mlp_step *s, int l, const float *weight, const float *bias, const mlp_cancel *cancel)
{
    int w = s->width, b = s->batch;
    float *out = s->act[l];
    for (int i = 0; i < b; i++)
        memcpy(out + (int64_t)i * w, bias, (size_t)w * sizeof *bias);
    if (sliced_sgemm(CblasNoTrans, CblasTrans, b, w, w, layer_input(s, l), w, weight, w, 1.0f, out, w, cancel) != 0)
        return -1;
    if (l < s->nlayers - 1) {
        for (int64_t i = 0; i < (int64_t)b * w; i++)
            out[i] = out[i] > 0.0f ? out[i] : 0.0f;
        return 0;
    }
    if (s->loss == LOSS_FN_CROSS_ENTROPY)
        cross_entropy(s, out);
    else
        mse(s, out);
    return 0;
}

int mlp_backward_layer(mlp_step *s, int l, const float *weight, float *grad_weight, float *grad_bias,
                       bool accumulate, const mlp_cancel *cancel)
{
    int w = s->width, b = s->batch;
    /* dW = delta^T x input, [out][in] like the weight */
    if (sliced_sgemm(CblasTrans, CblasNoTrans, w, w, b, s->delta, w, layer_input(s, l), w, accumulate ? 1.0f : 0.0f,
                     grad_weight, w, cancel) != 0)
        return -1;
    for (int j = 0; j < w; j++) {
        float sum = 0;
        for (int i = 0; i < b; i++)
            sum += s->delta[(int64_t)i * w + j];
        grad_bias[j] = accumulate ? grad_bias[j] + sum : sum;
    }
    if (l == 0)
        return 0;
    /* delta of layer l-1 = (delta x W) masked by the ReLU that followed layer l-1 */
    if (sliced_sgemm(CblasNoTrans, CblasNoTrans, b, w, w, s->delta, w, weight, w, 0.0f, s->delta_next, w, cancel) !=
        0)
        return -1;
    const float *a = s->act[l - 1];
    for (int64_t i = 0; i < (int64_t)b * w; i++)
        if (!(a[i] > 0.0f))
            s->delta_next[i] = 0.0f;
    float *t = s->delta;
    s->delta = s->delta_next;
    s->delta_next = t;
    return 0;
}
