/* test_sim_noise.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h): the
 * machine's noise: wake-up spread, stalls after wake-ups, gaps and backwards, and the noise
 * seed drawing the noise alone. */
#include "sim_by_hand.h"

/* op_stall_fraction = 0.1, op_stall_us = 500 with op_wakeup_us = 100 and no spread:
 * every wake-up is 100 us, and one in ten is followed by an exponential stall of mean
 * 500 us; the same seed and rank draw the same stalls. */
static void test_wakeup_stalls(void **state)
{
    (void)state;
    scenario *sc = hand_scenario(
        (const char *[]){"host.op_wakeup_us=100", "host.op_stall_fraction=0.1", "host.op_stall_us=500", NULL});
    timing_model a, b;
    sim_host_terms ha, hb;
    timing_init(&a, sc, 3);
    timing_init(&b, sc, 3);
    sim_host_terms_init(&ha, sc, false);
    sim_host_terms_init(&hb, sc, false);
    const int n = 200000;
    int stalls = 0;
    double stall_sum = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x = sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_FORWARD);
        assert_true(x == sim_host_stream_op_ns(&hb, &b, 1000, 0, SPAN_FORWARD));
        assert_true(x >= 101000);
        if (x > 101000) {
            stalls++;
            stall_sum += (double)(x - 101000);
        }
    }
    double share = (double)stalls / n, mean = stall_sum / stalls;
    if (fabs(share - 0.1) > 0.004 || fabs(mean - 500000) > 15000)
        fail_msg("stalls: %.4f of wake-ups (want 0.1), mean %.0f ns (want 500000)", share, mean);
    assert_true(sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_COPY_IN) == 1000); /* an op not timed neither wakes nor stalls */
    /* Without stalls of their own, backwards stall as forwards do: a stall now and then. */
    int backward_stalls = 0;
    for (int i = 0; i < 1000; i++)
        backward_stalls += sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_BACKWARD) > 101000;
    assert_true(backward_stalls > 50 && backward_stalls < 150);
    scenario_free(sc);
    free(sc);
}

/* [host] op_gap_stall_fraction = 0.2 and op_gap_stall_us = 3: a fifth of the hand-offs
 * stall, 3000 ns on average; none without the term.  In the sim, with every hand-off
 * stalling, no compute op starts when a forward or backward before it ends (they sleep
 * to their deadline here: op_overhead_us is 0 in the hand scenario), while ops queued
 * behind a copy or step, whose worker stays on its core, do; the spans are the same run
 * after run. */
static void test_gap_stalls(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"host.op_gap_stall_fraction=0.2", "host.op_gap_stall_us=3", NULL});
    timing_model t;
    sim_host_terms h;
    timing_init(&t, sc, 0);
    sim_host_terms_init(&h, sc, false);
    const int n = 100000;
    int stalls = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x = sim_host_gap_stall_ns(&h, &t);
        stalls += x > 0;
        sum += (double)x;
    }
    if (fabs((double)stalls / n - 0.2) > 0.006 || fabs(sum / stalls - 3000) > 100)
        fail_msg("gap stalls: %.4f of hand-offs (want 0.2), mean %.0f ns (want 3000)", (double)stalls / n, sum / stalls);
    scenario_free(sc);
    free(sc);
    sc = hand_scenario(NULL);
    timing_init(&t, sc, 0);
    sim_host_terms_init(&h, sc, false);
    assert_true(sim_host_gap_stall_ns(&h, &t) == 0);
    scenario_free(sc);
    free(sc);

    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simgap", &st, err, sizeof err), 0);
    sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=2", "host.op_gap_stall_fraction=1",
                                        "host.op_gap_stall_us=1", NULL});
    int64_t a = run_sim(st, sc), b = run_sim(st, sc);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(store_db(st),
                                        "select count(*), sum(exists (select 1 from span p where p.run_id = s.run_id "
                                        "and p.rank = s.rank and p.stream = 'compute' and p.end_ns = s.start_ns and "
                                        "p.kind in ('forward', 'backward'))), sum(exists (select 1 from span p where "
                                        "p.run_id = s.run_id and p.rank = s.rank and p.stream = 'compute' and "
                                        "p.end_ns = s.start_ns and p.kind not in ('forward', 'backward'))) "
                                        "from span s where s.run_id = ?1 and s.stream = 'compute'",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, a);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_true(sqlite3_column_int64(q, 0) > 10);
    assert_int_equal(sqlite3_column_int64(q, 1), 0);
    assert_true(sqlite3_column_int64(q, 2) > 0);
    sqlite3_finalize(q);
    int64_t count;
    assert_int_equal(span_differences(store_db(st), a, b, &count), 0);
    assert_true(count > 10);
    hand_done(sc, st, path);
}

/* [host] backward_stall_fraction = 1 and backward_stall_us = 2: every backward's
 * wake-up is followed by a stall (of mean 2000 ns), a forward's by none. */
static void test_backward_stalls(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"host.op_wakeup_us=100", "host.backward_stall_fraction=1",
                                                  "host.backward_stall_us=2", NULL});
    timing_model t;
    sim_host_terms h;
    timing_init(&t, sc, 0);
    sim_host_terms_init(&h, sc, false);
    const int n = 20000;
    double stall_sum = 0;
    for (int i = 0; i < n; i++) {
        assert_true(sim_host_stream_op_ns(&h, &t, 1000, 0, SPAN_FORWARD) == 101000);
        uint64_t x = sim_host_stream_op_ns(&h, &t, 1000, 0, SPAN_BACKWARD);
        assert_true(x >= 101000);
        stall_sum += (double)(x - 101000);
    }
    if (fabs(stall_sum / n - 2000) > 100)
        fail_msg("backward stalls: mean %.0f ns (want 2000)", stall_sum / n);
    scenario_free(sc);
    free(sc);
}

/* host.noise_seed draws the machine's noise alone: with the wake-ups' spread, other
 * noise seeds give other spans and 0 is run.seed's; with every noise term fixed (no
 * spread, no stalls, no shared cores) another noise seed changes nothing, while another
 * run.seed still draws other jitter and skew. */
static void test_noise_seed_draws_the_noise_alone(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simnoise", &st, err, sizeof err), 0);
    sqlite3 *db = store_db(st);
    scenario *sc = hand_scenario((const char *[]){"run.world_size=8", "run.iterations=3", "skew.jitter=0.1",
                                                  "skew.speed_sigma=0.2", "model.params=", "model.preset=resnet18",
                                                  "model.batch=8", "host.op_wakeup_us=5", "host.op_wakeup_sd_us=5",
                                                  NULL});
    int64_t count, base = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.noise_seed=1", err, sizeof err), 0); /* run.seed is 1 */
    assert_int_equal(span_differences(db, base, run_sim(st, sc), &count), 0);
    assert_true(count > 500);
    assert_int_equal(scenario_override(sc, "host.noise_seed=2", err, sizeof err), 0);
    int64_t two = run_sim(st, sc);
    assert_true(span_differences(db, base, two, &count) > count / 2);

    assert_int_equal(scenario_override(sc, "host.op_wakeup_sd_us=0", err, sizeof err), 0);
    int64_t fixed2 = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.noise_seed=3", err, sizeof err), 0);
    assert_int_equal(span_differences(db, fixed2, run_sim(st, sc), &count), 0);
    assert_int_equal(scenario_override(sc, "run.seed=3", err, sizeof err), 0);
    assert_true(span_differences(db, fixed2, run_sim(st, sc), &count) > count / 2);
    hand_done(sc, st, path);
}

/* op_wakeup_sd_us: each wake-up of a timed op is a lognormal draw of mean op_wakeup_us
 * and that deviation, seeded (the same draws for the same seed and rank, other draws for
 * another rank); a backward whose gradient write outlasts its model has none; with no
 * deviation every wake-up is op_wakeup_us exactly. */
static void test_wakeup_spread(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"host.op_wakeup_us=100", "host.op_wakeup_sd_us=150", NULL});
    timing_model a, b, other;
    sim_host_terms ha, hb, hother;
    timing_init(&a, sc, 1);
    timing_init(&b, sc, 1);
    timing_init(&other, sc, 0);
    sim_host_terms_init(&ha, sc, false);
    sim_host_terms_init(&hb, sc, false);
    sim_host_terms_init(&hother, sc, false);
    const int n = 200000;
    double sum = 0, sum2 = 0;
    int differ = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x = sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_FORWARD);
        assert_true(x == sim_host_stream_op_ns(&hb, &b, 1000, 0, SPAN_FORWARD));
        differ += x != sim_host_stream_op_ns(&hother, &other, 1000, 0, SPAN_FORWARD);
        assert_true(x >= 1000);
        double w = (double)(x - 1000);
        sum += w;
        sum2 += w * w;
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    if (fabs(mean - 100000) > 2000 || fabs(sd - 150000) > 15000)
        fail_msg("wake-ups: mean %.0f ns (want 100000), deviation %.0f ns (want 150000)", mean, sd);
    assert_true(differ > n / 2);
    /* memory-bound: writing 4e6 B at 4000 GB/s takes 1000 ns, more than the 500 ns model */
    assert_true(sim_host_stream_op_ns(&ha, &a, 500, 4e6, SPAN_BACKWARD) == 1000);
    /* a deadline under TIMING_SLEEP_MIN_NS away is past before the worker would sleep:
     * no wake-up, the model alone; at it, a sleep and a wake-up */
    assert_false(timing_op_sleeps(&a, TIMING_SLEEP_MIN_NS - 1, 0));
    assert_true(sim_host_stream_op_ns(&ha, &a, TIMING_SLEEP_MIN_NS - 1, 0, SPAN_FORWARD) == TIMING_SLEEP_MIN_NS - 1);
    assert_true(timing_op_sleeps(&a, TIMING_SLEEP_MIN_NS, 0));
    assert_true(sim_host_stream_op_ns(&ha, &a, TIMING_SLEEP_MIN_NS, 0, SPAN_FORWARD) > TIMING_SLEEP_MIN_NS);
    /* a write that ends within that of the model's deadline: the model, no wake-up */
    assert_false(timing_op_sleeps(&a, 1000 + TIMING_SLEEP_MIN_NS - 1, 4e6));
    assert_true(sim_host_stream_op_ns(&ha, &a, 1000 + TIMING_SLEEP_MIN_NS - 1, 4e6, SPAN_BACKWARD) == 1000 + TIMING_SLEEP_MIN_NS - 1);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "host.op_wakeup_sd_us=0", err, sizeof err), 0);
    timing_init(&a, sc, 1);
    sim_host_terms_init(&ha, sc, false);
    for (int i = 0; i < 100; i++)
        assert_true(sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_FORWARD) == 101000);
    assert_true(sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_COPY_IN) == 1000);
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wakeup_spread),
        cmocka_unit_test(test_noise_seed_draws_the_noise_alone),
        cmocka_unit_test(test_wakeup_stalls),
        cmocka_unit_test(test_backward_stalls),
        cmocka_unit_test(test_gap_stalls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
