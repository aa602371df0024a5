/* test_mlp_math.c — the mlp's real gradients against finite differences, gradient
 * accumulation, and the seeded data and DistributedSampler split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "engine/workload/dataset.h"
#include "engine/workload/mlp_math.h"

#define L 3
#define W 6
#define B 5

typedef struct {
    float w[L][W * W], b[L][W];
    float gw[L][W * W], gb[L][W];
    mlp_step s;
} net;

static void net_init(net *n, loss_fn_kind loss, loss_reduction_kind red, float scale)
{
    assert_int_equal(mlp_step_init(&n->s, L, W, B, loss, red, scale), 0);
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < W * W; i++)
            n->w[l][i] = dataset_init_weight(7, 2 * l, i, W);
        for (int i = 0; i < W; i++)
            n->b[l][i] = dataset_init_weight(7, 2 * l + 1, i, W);
    }
    for (int j = 0; j < B; j++)
        dataset_sample(7, W, loss, j, n->s.input + j * W, loss == LOSS_FN_CROSS_ENTROPY ? n->s.target + j : n->s.target + j * W);
}

static double loss_of(net *n)
{
    for (int l = 0; l < L; l++)
        assert_int_equal(mlp_forward_layer(&n->s, l, n->w[l], n->b[l], NULL), 0);
    return n->s.loss_value;
}

static void backward(net *n, bool acc)
{
    loss_of(n);
    for (int l = L - 1; l >= 0; l--)
        assert_int_equal(mlp_backward_layer(&n->s, l, n->w[l], n->gw[l], n->gb[l], acc, NULL), 0);
}

/* Central differences over every weight and bias, relative to the largest gradient. */
static void check_fd(loss_fn_kind loss, loss_reduction_kind red, float scale)
{
    net *n = calloc(1, sizeof *n);
    assert_non_null(n);
    net_init(n, loss, red, scale);
    backward(n, false);
    double gmax = 0, worst = 0;
    for (int l = 0; l < L; l++)
        for (int i = 0; i < W * W + W; i++) {
            float *x = i < W * W ? &n->w[l][i] : &n->b[l][i - W * W];
            double g = i < W * W ? n->gw[l][i] : n->gb[l][i - W * W];
            float keep = *x, h = 3e-3f;
            *x = keep + h;
            double up = loss_of(n);
            *x = keep - h;
            double down = loss_of(n);
            *x = keep;
            double fd = (up - down) / (2.0 * h);
            gmax = fmax(gmax, fabs(fd));
            worst = fmax(worst, fabs(fd - g));
        }
    print_message("fd: worst %g of max %g\n", worst, gmax);
    assert_true(gmax > 0);
    assert_true(worst <= 1e-3 * gmax);
    mlp_step_free(&n->s);
    free(n);
}

static void test_fd_mse_mean(void **state) { (void)state; check_fd(LOSS_FN_MSE, LOSS_MEAN, 1.0f); }
static void test_fd_mse_sum(void **state) { (void)state; check_fd(LOSS_FN_MSE, LOSS_SUM, 1.0f); }
static void test_fd_ce_mean(void **state) { (void)state; check_fd(LOSS_FN_CROSS_ENTROPY, LOSS_MEAN, 1.0f); }
static void test_fd_ce_sum_scaled(void **state) { (void)state; check_fd(LOSS_FN_CROSS_ENTROPY, LOSS_SUM, 3.0f); }

/* mean = sum / (batch x width) for mse, sum / batch for cross-entropy: the gradients
 * are in exactly that ratio. */
static void test_mean_is_scaled_sum(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        loss_fn_kind loss = k ? LOSS_FN_CROSS_ENTROPY : LOSS_FN_MSE;
        net *a = calloc(1, sizeof *a), *s = calloc(1, sizeof *s);
        assert_non_null(a);
        assert_non_null(s);
        net_init(a, loss, LOSS_MEAN, 1.0f);
        net_init(s, loss, LOSS_SUM, 1.0f);
        backward(a, false);
        backward(s, false);
        double n = k ? B : B * W;
        for (int i = 0; i < W * W; i++)
            assert_true(fabs(a->gw[0][i] * n - s->gw[0][i]) <= 1e-5 * (fabs(s->gw[0][i]) + 1e-3));
        mlp_step_free(&a->s);
        mlp_step_free(&s->s);
        free(a);
        free(s);
    }
}

static void test_accumulate_adds(void **state)
{
    (void)state;
    net *n = calloc(1, sizeof *n);
    assert_non_null(n);
    net_init(n, LOSS_FN_MSE, LOSS_MEAN, 1.0f);
    backward(n, false);
    float once[W * W];
    memcpy(once, n->gw[1], sizeof once);
    backward(n, true);
    for (int i = 0; i < W * W; i++)
        assert_true(fabsf(n->gw[1][i] - 2 * once[i]) <= 1e-6f * fabsf(once[i]) + 1e-9f);
    mlp_step_free(&n->s);
    free(n);
}

/* The union of every rank's batch at a step is the world-size-1 batch, each sample once. */
static void test_sampler_split(void **state)
{
    (void)state;
    int worlds[] = {1, 2, 3, 4, 8};
    for (size_t w = 0; w < sizeof worlds / sizeof worlds[0]; w++) {
        int world = worlds[w], per = 6, global = world * per;
        for (int step = 0; step < 3; step++) {
            char seen[64] = {0};
            for (int r = 0; r < world; r++)
                for (int j = 0; j < per; j++) {
                    int64_t idx = dataset_index(step, r, world, per, j);
                    assert_true(idx >= (int64_t)step * global && idx < (int64_t)(step + 1) * global);
                    assert_int_equal(seen[idx - (int64_t)step * global], 0);
                    seen[idx - (int64_t)step * global] = 1;
                    /* DistributedSampler: rank r takes every world-th index, from r */
                    assert_int_equal((idx - (int64_t)step * global) % world, r);
                }
        }
    }
}

static void test_per_rank_batch(void **state)
{
    (void)state;
    scenario sc;
    scenario_defaults(&sc);
    sc.world_size = 4;
    sc.batch = 7;
    assert_int_equal(dataset_per_rank_batch(&sc), 7);
    sc.global_batch = 32;
    assert_int_equal(dataset_per_rank_batch(&sc), 8);
}

static void test_uniform_exact(void **state)
{
    (void)state;
    double sum = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        float u = dataset_uniform(1, 1, i);
        assert_true(u >= -1.0f && u < 1.0f);
        float k = u * (float)(1 << 23);
        assert_true(k == floorf(k)); /* k / 2^23: exact in fp32 */
        sum += u;
    }
    assert_true(fabs(sum / 10000) < 0.05);
    assert_true(dataset_uniform(1, 1, 5) == dataset_uniform(1, 1, 5));
    assert_true(dataset_uniform(1, 1, 5) != dataset_uniform(2, 1, 5));
}

/* A layer wide enough to be cut into several GEMM slices (about 0.5 GFLOP each) gives
 * one cblas_sgemm's result over the whole batch to fp32 rounding (OpenBLAS blocks a
 * 238-row GEMM differently from a 1024-row one), forward and both backward GEMMs. */
static void assert_close(const float *got, const float *want, int64_t n)
{
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        worst = fmax(worst, fabs((double)got[i] - want[i]));
        scale = fmax(scale, fabs((double)want[i]));
    }
    assert_true(scale > 0);
    if (worst > 1e-5 * scale)
        fail_msg("sliced GEMM off by %g (scale %g)", worst, scale);
}

static bool stop_on_second(void *user)
{
    int *calls = user;
    return ++*calls >= 2;
}

static void test_sliced_gemms_same_bits_and_stop(void **state)
{
    (void)state;
    enum { LW = 1024, LB = 1024 }; /* 2 GFLOP per GEMM: four slices */
    mlp_step s;
    assert_int_equal(mlp_step_init(&s, 2, LW, LB, LOSS_FN_MSE, LOSS_MEAN, 1.0f), 0);
    float *w = malloc(sizeof(float) * LW * LW), *bias = calloc(LW, sizeof(float));
    float *gw = malloc(sizeof(float) * LW * LW), *gb = malloc(sizeof(float) * LW);
    float *want = malloc(sizeof(float) * LB * LW), *want_gw = malloc(sizeof(float) * LW * LW);
    assert_non_null(w), assert_non_null(bias), assert_non_null(gw), assert_non_null(gb);
    assert_non_null(want), assert_non_null(want_gw);
    for (int64_t i = 0; i < (int64_t)LW * LW; i++)
        w[i] = dataset_init_weight(3, 0, i, LW);
    for (int64_t i = 0; i < (int64_t)LB * LW; i++)
        s.input[i] = dataset_init_weight(3, 1, i, LW);
    assert_int_equal(mlp_forward_layer(&s, 0, w, bias, NULL), 0);
    memset(want, 0, sizeof(float) * LB * LW); /* the bias, zero, preloaded as the layer does */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, LB, LW, LW, 1.0f, s.input, LW, w, LW, 1.0f, want, LW);
    for (int64_t i = 0; i < (int64_t)LB * LW; i++)
        want[i] = want[i] > 0.0f ? want[i] : 0.0f;
    assert_close(s.act[0], want, (int64_t)LB * LW);

    assert_int_equal(mlp_forward_layer(&s, 1, w, bias, NULL), 0);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, LW, LW, LB, 1.0f, s.delta, LW, s.act[0], LW, 0.0f, want_gw,
                LW);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, LB, LW, LW, 1.0f, s.delta, LW, w, LW, 0.0f, want, LW);
    for (int64_t i = 0; i < (int64_t)LB * LW; i++)
        if (!(s.act[0][i] > 0.0f))
            want[i] = 0.0f;
    assert_int_equal(mlp_backward_layer(&s, 1, w, gw, gb, false, NULL), 0);
    assert_close(gw, want_gw, (int64_t)LW * LW);
    assert_close(s.delta, want, (int64_t)LB * LW); /* layer 0's delta */

    int calls = 0;
    mlp_cancel cancel = {.stop = stop_on_second, .user = &calls};
    assert_int_equal(mlp_forward_layer(&s, 0, w, bias, &cancel), -1);
    assert_int_equal(calls, 2); /* asked before each slice, stopped at the second */
    mlp_step_free(&s);
    free(w), free(bias), free(gw), free(gb), free(want), free(want_gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_mse_mean),        cmocka_unit_test(test_fd_mse_sum),
        cmocka_unit_test(test_fd_ce_mean),         cmocka_unit_test(test_fd_ce_sum_scaled),
        cmocka_unit_test(test_mean_is_scaled_sum), cmocka_unit_test(test_accumulate_adds),
        cmocka_unit_test(test_sampler_split),      cmocka_unit_test(test_per_rank_batch),
        cmocka_unit_test(test_uniform_exact),      cmocka_unit_test(test_sliced_gemms_same_bits_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
