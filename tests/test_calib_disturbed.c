/* test_calib_disturbed.c — the runs calibrate --from leaves out as disturbed: a run
 * whose mean step is over 1.5x the median of its point's runs, judged point by point,
 * never where a point has fewer than three runs; a run's mean step from its spans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "reports/calib_disturbed.h"

static void test_left_out_beyond_the_factor(void **state)
{
    (void)state;
    /* Point 0: median 101, so 152 (1.505x) is out and 150 (1.485x) in; point 7, given
     * between them: median 10, so 16 is out. */
    const double step[] = {100, 98, 152, 10, 16, 9, 102, 99, 150, 101};
    const int point[] = {0, 0, 0, 7, 7, 7, 0, 0, 0, 0};
    bool out[10];
    double ratio[10];
    assert_int_equal(calib_disturbed(step, point, 10, out, ratio), 0);
    const bool want[] = {false, false, true, false, true, false, false, false, false, false};
    for (int i = 0; i < 10; i++)
        assert_int_equal(out[i], want[i]);
    assert_true(ratio[2] > 1.5049 && ratio[2] < 1.5050);
    assert_true(ratio[8] > 1.4851 && ratio[8] < 1.4852);
    assert_true(ratio[4] > 1.599 && ratio[4] < 1.601);
}

static void test_too_few_runs_keep_all(void **state)
{
    (void)state;
    /* Two runs of a point have no median to judge by, however far apart they are. */
    const double step[] = {100, 900, 5, 5, 5, 40};
    const int point[] = {3, 3, 1, 1, 1, 1};
    bool out[6];
    double ratio[6];
    assert_int_equal(calib_disturbed(step, point, 6, out, ratio), 0);
    assert_false(out[0]);
    assert_false(out[1]);
    assert_true(ratio[0] == 0 && ratio[1] == 0);
    /* Point 1's median is 5: 40 is out, the others in. */
    assert_false(out[2]);
    assert_true(out[5]);
    assert_true(ratio[5] > 7.99 && ratio[5] < 8.01);
}

/* A run's mean step: each iteration from its first start to its last end over every
 * rank, whatever the order of its spans (iterations 2 and 3: 300 and 500 ns). */
static void test_mean_step_by_hand(void **state)
{
    (void)state;
    const run_span s[] = {
        {.rank = 1, .iter = 3, .start_ns = 1050, .end_ns = 1500}, {.rank = 0, .iter = 2, .start_ns = 100, .end_ns = 300},
        {.rank = 0, .iter = 3, .start_ns = 1000, .end_ns = 1100}, {.rank = 1, .iter = 2, .start_ns = 150, .end_ns = 400},
    };
    assert_true(calib_mean_step_ns(s, 4) == 400.0);
    assert_true(calib_mean_step_ns(s, 1) == 450.0);
    assert_true(calib_mean_step_ns(s, 0) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_left_out_beyond_the_factor),
        cmocka_unit_test(test_too_few_runs_keep_all),
        cmocka_unit_test(test_mean_step_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
