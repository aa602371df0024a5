/* test_buckets.c — bucket assignment pinned to PyTorch's own test cases
 * (test_c10d_common.py ComputeBucketAssignmentTest) and to ResNet-18's figures
 * (pytorch/pytorch#48880). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/ddp/buckets.h"
#include "engine/workload/model_zoo.h"
#include "engine/ddp/bucket_plan.h"
#include "engine/ddp/reducer.h"
#include "engine/scenario/scenario.h"

enum { F32 = 0, F64 = 1 };

static void expect_buckets(const bucket_assignment *a, int nb, const int *sizes, const int *members)
{
    assert_int_equal(a->nbuckets, nb);
    int k = 0;
    for (int b = 0; b < nb; b++) {
        assert_int_equal(a->buckets[b].nparams, sizes[b]);
        for (int i = 0; i < sizes[b]; i++)
            assert_int_equal(a->buckets[b].params[i], members[k++]);
    }
}

/* sizes in elements; F32 = 4 bytes, F64 = 8 bytes */
static void assign(int n, const int *numel, const int *dtype, const int64_t *limits, int nlimits,
                   bucket_assignment *out)
{
    int64_t bytes[16];
    for (int i = 0; i < n; i++)
        bytes[i] = (int64_t)numel[i] * (dtype && dtype[i] == F64 ? 8 : 4);
    assert_int_equal(bucket_assign(n, bytes, dtype, NULL, limits, nlimits, out), 0);
}

static void test_single_limit(void **state)
{
    (void)state;
    int numel[] = {100, 200, 100, 50};
    int64_t limits[] = {400};
    bucket_assignment a;
    assign(4, numel, NULL, limits, 1, &a);
    int sizes[] = {1, 1, 1, 1}, members[] = {0, 1, 2, 3};
    expect_buckets(&a, 4, sizes, members);
    bucket_assignment_free(&a);
}

static void test_per_dtype(void **state)
{
    (void)state;
    int numel[] = {50, 25, 50, 25, 50, 25};
    int dtype[] = {F32, F64, F32, F64, F32, F64};
    int64_t limits[] = {400};
    bucket_assignment a;
    assign(6, numel, dtype, limits, 1, &a);
    int sizes[] = {2, 2, 1, 1}, members[] = {0, 2, 1, 3, 4, 5};
    expect_buckets(&a, 4, sizes, members);
    bucket_assignment_free(&a);
}

static void test_limit_list(void **state)
{
    (void)state;
    int numel[] = {10, 10, 10, 10};
    int64_t limits[] = {40, 80};
    bucket_assignment a;
    assign(4, numel, NULL, limits, 2, &a);
    int sizes[] = {1, 2, 1}, members[] = {0, 1, 2, 3};
    expect_buckets(&a, 3, sizes, members);
    assert_int_equal(a.buckets[0].size_limit, 40);
    assert_int_equal(a.buckets[1].size_limit, 80);
    assert_int_equal(a.buckets[2].size_limit, 80);
    bucket_assignment_free(&a);
}

static void test_limit_list_per_dtype(void **state)
{
    (void)state;
    int numel[] = {50, 25, 50, 25, 50, 25};
    int dtype[] = {F32, F64, F32, F64, F32, F64};
    int64_t limits[] = {200, 400};
    bucket_assignment a;
    assign(6, numel, dtype, limits, 2, &a);
    int sizes[] = {1, 1, 2, 2}, members[] = {0, 1, 2, 4, 3, 5};
    expect_buckets(&a, 4, sizes, members);
    int64_t want_limits[] = {200, 200, 400, 400};
    for (int b = 0; b < 4; b++)
        assert_int_equal(a.buckets[b].size_limit, want_limits[b]);
    bucket_assignment_free(&a);
}

static void test_overshoot_never_splits(void **state)
{
    (void)state;
    int numel[] = {1000, 10};
    int64_t limits[] = {40};
    bucket_assignment a;
    assign(2, numel, NULL, limits, 1, &a);
    assert_int_equal(a.nbuckets, 2);
    assert_int_equal(a.buckets[0].nbytes, 4000); /* one tensor, 100x over the cap */
    bucket_assignment_free(&a);
}

static void resnet18(model *m, scenario *sc, double cap_mb)
{
    scenario_defaults(sc);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_set(sc, "model.preset", "resnet18", err, sizeof err), 0);
    sc->bucket_cap_mb = cap_mb;
    char merr[256];
    assert_int_equal(model_build(sc, m, merr, sizeof merr), 0);
    assert_int_equal(m->total_numel, 11689512);
}

static void rebuilt_sizes(double cap_mb, const int64_t *want, int nwant)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    model m;
    resnet18(&m, sc, cap_mb);
    /* Gradients become ready in reverse registration order. */
    int *order = malloc((size_t)m.nparams * sizeof *order);
    assert_non_null(order);
    for (int i = 0; i < m.nparams; i++)
        order[i] = m.nparams - 1 - i;
    bucket_assignment a;
    assert_int_equal(bucket_plan_sized(&m, sc, order, &a), 0);
    assert_int_equal(a.nbuckets, nwant);
    for (int b = 0; b < nwant; b++)
        assert_int_equal(a.buckets[b].nbytes, want[b]);
    /* The first bucket is {fc.bias, fc.weight}. */
    assert_string_equal(m.params[a.buckets[0].params[0]].name, "fc.bias");
    assert_string_equal(m.params[a.buckets[0].params[1]].name, "fc.weight");
    bucket_assignment_free(&a);
    free(order);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_resnet18_rebuilt_25mb(void **state)
{
    (void)state;
    int64_t want[] = {2052000, 28852224, 15853824};
    rebuilt_sizes(25, want, 3);
}

static void test_resnet18_rebuilt_35mb(void **state)
{
    (void)state;
    int64_t want[] = {2052000, 38297600, 6408448};
    rebuilt_sizes(35, want, 3);
}

static void test_resnet18_construction(void **state)
{
    (void)state;
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    model m;
    resnet18(&m, sc, 25);
    /* With find_unused_parameters the sized assignment is used at construction, reversed. */
    sc->find_unused_parameters = true;
    bucket_assignment a;
    assert_int_equal(bucket_plan_initial(&m, sc, &a), 0);
    int64_t want[] = {11497376, 33744896, 1515776};
    assert_int_equal(a.nbuckets, 3);
    for (int b = 0; b < 3; b++)
        assert_int_equal(a.buckets[b].nbytes, want[b]);
    bucket_assignment_free(&a);
    /* Without it (PyTorch >= 1.13) iteration 1 uses one bucket holding everything. */
    sc->find_unused_parameters = false;
    assert_int_equal(bucket_plan_initial(&m, sc, &a), 0);
    assert_int_equal(a.nbuckets, 1);
    assert_int_equal(a.buckets[0].nbytes, 11689512LL * 4);
    assert_int_equal(a.buckets[0].nparams, m.nparams);
    bucket_assignment_free(&a);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_limit),
        cmocka_unit_test(test_per_dtype),
        cmocka_unit_test(test_limit_list),
        cmocka_unit_test(test_limit_list_per_dtype),
        cmocka_unit_test(test_overshoot_never_splits),
        cmocka_unit_test(test_resnet18_rebuilt_25mb),
        cmocka_unit_test(test_resnet18_rebuilt_35mb),
        cmocka_unit_test(test_resnet18_construction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
