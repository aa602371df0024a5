/* cpu_work.c — executes the real work of compute-stream operations on the CPU. */
#include "engine/cpu/cpu_work.h"

#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gradgen.h"
#include "engine/workload/mlp_math.h"

static int grow(float **p, size_t *len, size_t want)
{
    if (*len >= want)
        return 0;
    float *np = realloc(*p, want * sizeof *np);
    if (!np)
        return -1;
    /* Values do not matter for timing, but uninitialised floats could be NaN/denormal
     * and change the GEMM's speed.  A short pattern, then doubling copies: filling
     * hundreds of MiB at memory speed, not one division per element. */
    size_t filled = *len, pattern = 97;
    for (size_t i = filled; i < want && i < filled + pattern; i++)
        np[i] = 0.001f * (float)((i - filled) % pattern + 1);
    size_t done = want - filled < pattern ? want - filled : pattern;
    while (filled + done < want) {
        size_t chunk = want - filled - done < done ? want - filled - done : done;
        memcpy(np + filled + done, np + filled, chunk * sizeof *np);
        done += chunk;
    }
    *p = np;
    *len = want;
    return 0;
}

/* About 0.5 GFLOP per slice: tens of milliseconds on one core, so a cancelled run
 * stops promptly, yet large enough that BLAS keeps its efficiency. */
#define GEMM_SLICE_FLOP 5e8

static bool cancelled(const cpu_work_cancel *cancel)
{
    return cancel && cancel->stop && cancel->stop(cancel->user);
}

static int run_gemm(const dev_op *op, cpu_scratch *s, const cpu_work_cancel *cancel, char *err, size_t errlen)
{
    int64_t m = op->gemm.m, n = op->gemm.n, k = op->gemm.k;
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    if (grow(&s->a, &s->a_len, (size_t)(m * k)) || grow(&s->b, &s->b_len, (size_t)(k * n)) ||
        grow(&s->c, &s->c_len, (size_t)(m * n))) {
        snprintf(err, errlen, "out of memory for a %lldx%lldx%lld GEMM", (long long)m, (long long)n,
                 (long long)k);
        return -1;
    }
    double per_row = 2.0 * (double)n * (double)k;
    int64_t slice = (int64_t)(GEMM_SLICE_FLOP / per_row);
    if (slice < 1)
        slice = 1;
    /* Row slices of C = A B: the same arithmetic as one call, with a cancellation point
     * between slices. */
    for (int64_t r = 0; r < m; r += slice) {
        if (cancelled(cancel))
            return -1;
        int64_t rows = m - r < slice ? m - r : slice;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k, 1.0f, s->a + r * k,
                    (int)k, s->b, (int)n, 0.0f, s->c + r * n, (int)n);
    }
    return 0;
}

/* Element-wise work runs in slices of this many elements with a cancellation point
 * between them: a large layer's gradient or copy takes a good part of a second. */
#define ELEM_SLICE ((int64_t)1 << 22)

/* gradgen_value() depends on the element only through its residue mod 11, so a
 * parameter's gradient is one short pattern repeated: filled by copying a block of
 * whole periods, at memory speed, as a GPU's backward writes its gradients. */
#define GRAD_PERIOD 11
#define GRAD_BLOCK (GRAD_PERIOD * 96)

/* Accumulating adds the block with BLAS: gcc at -O2 leaves a plain `g[i] += p[i]` loop
 * scalar (p may alias g), which ran a 9.4 MB layer's accumulation at about 3 GB/s in a
 * 4-rank run, a third of the copy's speed, where a GPU's accumulating backward runs at
 * memory speed as its plain one does.  The sum is the same float addition. */
static void fill_block(float *g, const float *pattern, int64_t n, bool accumulate)
{
    if (!accumulate) {
        memcpy(g, pattern, (size_t)n * sizeof *g);
        return;
    }
    cblas_saxpy((int)n, 1.0f, pattern, 1, g, 1);
}

static int run_grad(const dev_op *op, int rank, const cpu_work_cancel *cancel)
{
    float pattern[GRAD_BLOCK + GRAD_PERIOD];
    for (int j = 0; j < op->u.grad.np; j++) {
        float *g = op->u.grad.grad[j];
        int64_t n = op->u.grad.numel[j];
        int p = op->u.grad.p0 + j;
        float scale = op->u.grad.scale;
        int64_t base = (int64_t)(rank + 1) * 7 + (int64_t)op->u.grad.micro_step * 3 + (int64_t)p * 5;
        for (int k = 0; k < GRAD_BLOCK + GRAD_PERIOD; k++)
            pattern[k] = scale * (float)((base + k % GRAD_PERIOD) % 64 - 32);
        for (int64_t lo = 0; lo < n; lo += ELEM_SLICE) {
            if (cancelled(cancel))
                return -1;
            int64_t hi = n - lo < ELEM_SLICE ? n : lo + ELEM_SLICE;
            for (int64_t i = lo; i < hi; i += GRAD_BLOCK) {
                int64_t len = hi - i < GRAD_BLOCK ? hi - i : GRAD_BLOCK;
                fill_block(g + i, pattern + i % GRAD_PERIOD, len, op->u.grad.accumulate);
            }
        }
    }
    return 0;
}

static int run_scale_copy(const dev_op *op, const cpu_work_cancel *cancel)
{
    float *dst = op->u.copy.dst;
    const float *src = op->u.copy.src;
    float s = op->u.copy.scale;
    int64_t n = op->u.copy.n;
    if (s == 1.0f && dst == src)
        return 0;
    for (int64_t lo = 0; lo < n; lo += ELEM_SLICE) {
        if (cancelled(cancel))
            return -1;
        int64_t hi = n - lo < ELEM_SLICE ? n : lo + ELEM_SLICE;
        if (s == 1.0f)
            memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *dst);
        else
            for (int64_t i = lo; i < hi; i++)
                dst[i] = src[i] * s;
    }
    return 0;
}

static int run_sgd(const dev_op *op, const cpu_work_cancel *cancel)
{
    for (int p = 0; p < op->u.sgd.n; p++) {
        const dev_param *pr = &op->u.sgd.params[p];
        for (int64_t lo = 0; lo < pr->numel; lo += ELEM_SLICE) {
            if (cancelled(cancel))
                return -1;
            int64_t k = pr->numel - lo < ELEM_SLICE ? pr->numel - lo : ELEM_SLICE;
            cblas_saxpy((int)k, -op->u.sgd.lr, pr->grad + lo, 1, pr->data + lo, 1);
        }
    }
    return 0;
}

int cpu_work_run(const dev_op *op, int rank, cpu_scratch *scratch, const cpu_work_cancel *cancel, char *err,
                 size_t errlen)
{
    if (run_gemm(op, scratch, cancel, err, errlen) != 0)
        return -1;
    const mlp_cancel mlp_stop = {.stop = cancel ? cancel->stop : NULL, .user = cancel ? cancel->user : NULL};
    switch (op->work) {
    case WORK_NONE:
        return 0;
    case WORK_GRAD:
        return run_grad(op, rank, cancel);
    case WORK_SCALE_COPY:
        return run_scale_copy(op, cancel);
    case WORK_SGD:
        return run_sgd(op, cancel);
    case WORK_MLP_FORWARD:
        return mlp_forward_layer(op->u.mlp.step, op->u.mlp.layer, op->u.mlp.weight, op->u.mlp.bias, &mlp_stop);
    case WORK_MLP_BACKWARD:
        return mlp_backward_layer(op->u.mlp.step, op->u.mlp.layer, op->u.mlp.weight, op->u.mlp.grad_weight,
                                  op->u.mlp.grad_bias, op->u.mlp.accumulate, &mlp_stop);
    case WORK_FAIL:
        snprintf(err, errlen, "%s failed (injected fault)", op->name);
        return -1;
    case WORK_ALLREDUCE:
    case WORK_BROADCAST:
        break;
    }
    snprintf(err, errlen, "operation %s is not compute work", op->name);
    return -1;
}

void cpu_scratch_free(cpu_scratch *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    memset(s, 0, sizeof *s);
}
