/* test_cpu_work.c — the cpu backend's compute-stream work: the gradients backward writes
 * are gradgen.h's values element by element (set and accumulated, any length, any
 * parameter index), and the scaled bucket copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/cpu/cpu_work.h"
#include "engine/gradgen.h"

static dev_op grad_op(float **bufs, const int64_t *numel, int np, int p0, int micro, bool acc, float scale)
{
    dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = SPAN_BACKWARD;
    op.work = WORK_GRAD;
    op.u.grad.p0 = p0;
    op.u.grad.np = np;
    for (int j = 0; j < np; j++) {
        op.u.grad.grad[j] = bufs[j];
        op.u.grad.numel[j] = numel[j];
    }
    op.u.grad.micro_step = micro;
    op.u.grad.accumulate = acc;
    op.u.grad.scale = scale;
    return op;
}

/* Lengths around the fill's block of whole periods and its slice, so every boundary
 * (a partial block, a slice that is not a multiple of the period) is crossed. */
static const int64_t lengths[] = {1, 10, 11, 1055, 1056, 1057, 4099, (1 << 22) + 13};
#define NLEN (int)(sizeof lengths / sizeof lengths[0])

static void test_grad_values_match_gradgen(void **state)
{
    (void)state;
    float *bufs[NLEN];
    for (int j = 0; j < NLEN; j++) {
        bufs[j] = malloc((size_t)lengths[j] * sizeof(float));
        assert_non_null(bufs[j]);
        for (int64_t i = 0; i < lengths[j]; i++)
            bufs[j][i] = 1e9f; /* overwritten, not added to */
    }
    const int rank = 3, micro = 5, p0 = 7;
    const float scale = 0.25f;
    cpu_scratch scratch = {0};
    char err[256] = "";
    /* One op holds at most DEV_MAX_LAYER_PARAMS parameters. */
    for (int first = 0; first < NLEN; first += DEV_MAX_LAYER_PARAMS) {
        int np = NLEN - first < DEV_MAX_LAYER_PARAMS ? NLEN - first : DEV_MAX_LAYER_PARAMS;
        dev_op op = grad_op(bufs + first, lengths + first, np, p0 + first, micro, false, scale);
        assert_int_equal(cpu_work_run(&op, rank, &scratch, NULL, err, sizeof err), 0);
    }
    for (int j = 0; j < NLEN; j++)
        for (int64_t i = 0; i < lengths[j]; i++)
            if (bufs[j][i] != scale * gradgen_value(rank, micro, p0 + j, i))
                fail_msg("param %d element %lld: %g, want %g", p0 + j, (long long)i, (double)bufs[j][i],
                         (double)(scale * gradgen_value(rank, micro, p0 + j, i)));
    for (int j = 0; j < NLEN; j++)
        free(bufs[j]);
    cpu_scratch_free(&scratch);
}

static void test_grad_accumulates(void **state)
{
    (void)state;
    const int64_t n = 3 * 1056 + 5;
    float *g = malloc((size_t)n * sizeof *g);
    assert_non_null(g);
    cpu_scratch scratch = {0};
    char err[256] = "";
    float *bufs[1] = {g};
    const int64_t numel[1] = {n};
    dev_op first = grad_op(bufs, numel, 1, 2, 0, false, 1.0f);
    dev_op second = grad_op(bufs, numel, 1, 2, 1, true, 1.0f);
    assert_int_equal(cpu_work_run(&first, 1, &scratch, NULL, err, sizeof err), 0);
    assert_int_equal(cpu_work_run(&second, 1, &scratch, NULL, err, sizeof err), 0);
    for (int64_t i = 0; i < n; i++)
        assert_true(g[i] == gradgen_value(1, 0, 2, i) + gradgen_value(1, 1, 2, i));
    free(g);
    cpu_scratch_free(&scratch);
}

static void test_scale_copy(void **state)
{
    (void)state;
    const int64_t n = 1000;
    float src[1000], dst[1000];
    for (int64_t i = 0; i < n; i++)
        src[i] = (float)(i % 17) - 8.0f;
    dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = SPAN_COPY_IN;
    op.work = WORK_SCALE_COPY;
    op.u.copy.dst = dst;
    op.u.copy.src = src;
    op.u.copy.n = n;
    op.u.copy.scale = 0.25f;
    cpu_scratch scratch = {0};
    char err[256] = "";
    assert_int_equal(cpu_work_run(&op, 0, &scratch, NULL, err, sizeof err), 0);
    for (int64_t i = 0; i < n; i++)
        assert_true(dst[i] == src[i] * 0.25f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_values_match_gradgen),
        cmocka_unit_test(test_grad_accumulates),
        cmocka_unit_test(test_scale_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
