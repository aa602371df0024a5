/* test_sim_cache.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h): the
 * host's cache: stalls of allreduces in cache, what fits per host, bandwidths and wake-ups in
 * cache, and the allreduce factor. */
#include "sim_by_hand.h"

/* [device] cache_allreduce_stall_*: in a 32 MiB cache with every bucket allreduce
 * stalling (fraction 1, 2 us on average), the one iteration of test_op_overhead_by_hand
 * keeps its allreduce's start, 22000, and both ranks leave it together, later than 28000
 * by one exponential draw; all that follows moves by the same draw, and the same draw
 * comes run after run.  The crowded pair (100 us) is not drawn on a host without shared
 * cores, and out of the cache (cache_mb = 0) nothing stalls. */
static void test_cache_allreduce_stall_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simarstall", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){
        "run.warmup=0", "run.iterations=1", "device.op_overhead_us=0.5", "host.op_wakeup_us=0.25",
        "host.cache_mb=32", "host.cache_allreduce_stall_fraction=1", "host.cache_allreduce_stall_us=2",
        "host.cache_allreduce_crowded_stall_fraction=1", "host.cache_allreduce_crowded_stall_us=100", NULL});
    sqlite3 *db = store_db(st);
    int64_t run = run_sim(st, sc);
    int64_t end = span_time(db, run, 0, 0, "allreduce", 0, NULL, true), stall = end - 28000;
    assert_true(stall > 0 && stall < 40000);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(span_time(db, run, r, 0, "allreduce", 0, NULL, false), 22000);
        assert_int_equal(span_time(db, run, r, 0, "allreduce", 0, NULL, true), end);
        assert_int_equal(span_time(db, run, r, 0, "copy_out", -1, "param0", false), 28500 + stall);
        assert_int_equal(span_time(db, run, r, 0, "optimizer", -1, "sgd step", true), 34500 + stall);
    }
    int64_t count = 0;
    assert_int_equal(span_differences(db, run, run_sim(st, sc), &count), 0);
    assert_true(count > 0);
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err, sizeof err), 0);
    const want_span out_of_cache[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 0),
        GAP_STEP(1, 0),
    };
    expect_spans(db, run_sim(st, sc), out_of_cache, sizeof out_of_cache / sizeof out_of_cache[0]);
    hand_done(sc, st, path);
}

/* A host's memory counts its own ranks only: 1e6 parameters x 12 bytes x 2 ranks of a
 * node (22.9 MiB) fit in 32 MiB; the whole world of 8 as one host (91.6 MiB) does not;
 * no cache (0) never fits.  In cache, only the bandwidths given change. */
static void test_cache_fit_per_host(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"run.world_size=8", "network.gpus_per_node=2", "host.cache_mb=32",
                                                  "device.copy_out_gbps=2000", "host.cache_copy_out_gbps=4000", NULL});
    assert_int_equal(scenario_host_ranks(sc), 2);
    assert_true(timing_host_memory_bytes(sc, 1000000) == 24e6);
    assert_true(timing_fits_cache(sc, 1000000));
    assert_false(timing_fits_cache(sc, 2000000));
    timing_model t;
    timing_init(&t, sc, 0);
    timing_use_cache(&t, sc);
    assert_true(t.copy_out_bytes_per_ns == 4000 && t.bytes_per_ns == 4000 && t.optimizer_bytes_per_ns == 4000);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=0", err, sizeof err), 0);
    assert_int_equal(scenario_host_ranks(sc), 8);
    assert_false(timing_fits_cache(sc, 1000000));
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err, sizeof err), 0);
    assert_false(timing_fits_cache(sc, 1));
    scenario_free(sc);
    free(sc);
}

/* The shortest and longest span of `kind` in run `run`, ns. */
static void kind_durations(sqlite3 *db, int64_t run, const char *kind, int64_t *lo, int64_t *hi)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT MIN(end_ns - start_ns), MAX(end_ns - start_ns) FROM span "
                                            "WHERE run_id = ? AND kind = ?", -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    sqlite3_bind_text(q, 2, kind, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    *lo = sqlite3_column_int64(q, 0);
    *hi = sqlite3_column_int64(q, 1);
    sqlite3_finalize(q);
}

/* [host] cache_mb: the two ranks' memory, 12 bytes x 1e6 parameters each (22.9 MiB),
 * fits in 32 MiB, so the copies and the SGD step move at the cache_*_gbps bandwidths:
 * a 2 MB parameter's copy in (4 MB moved) at 8000 GB/s takes 500 ns, out at 4000 1000 ns,
 * the 12 MB SGD step at 2000 6000 ns; in a 16 MiB cache it does not fit, and they take
 * mem_bw_gbps's 1000, copy_out_gbps's 2000 and optimizer_gbps's 12000. */
static void test_cache_bandwidths_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simcache", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=1", "device.copy_out_gbps=2000",
                                                  "device.optimizer_gbps=1000", "host.cache_mb=32",
                                                  "host.cache_copy_in_gbps=8000", "host.cache_copy_out_gbps=4000",
                                                  "host.cache_optimizer_gbps=2000", NULL});
    int64_t in_cache = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t out_of_cache = run_sim(st, sc);
    const char *kinds[] = {"copy_in", "copy_out", "optimizer"};
    const int64_t cached[] = {500, 1000, 6000}, uncached[] = {1000, 2000, 12000};
    for (int k = 0; k < 3; k++) {
        int64_t lo, hi;
        kind_durations(store_db(st), in_cache, kinds[k], &lo, &hi);
        assert_int_equal(lo, cached[k]);
        assert_int_equal(hi, cached[k]);
        kind_durations(store_db(st), out_of_cache, kinds[k], &lo, &hi);
        assert_int_equal(lo, uncached[k]);
        assert_int_equal(hi, uncached[k]);
    }
    hand_done(sc, st, path);
}

/* [device] cache_op_*: in cache (32 MiB, as above) every forward (1e6 FLOPs at 1 TFLOP/s:
 * 1000 ns) and backward (2000 ns, its 2 MB gradient write at 4000 GB/s only 500) wakes
 * cache_op_wakeup_us = 2 us late, with no stall (cache_op_stall_fraction = 0): 3000 and
 * 4000 ns exactly.  Out of cache (16 MiB) they wake op_wakeup_us = 5 us late and every one
 * stalls as well (op_stall_fraction = 1): more than 6000 and 7000.  In cache with the
 * wake-up left at -1, op_wakeup_us's 5 us holds there too, and the stalls of 0: 6000 and
 * 7000 exactly. */
static void test_cache_wakeups_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simcachewake", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=2", "host.op_wakeup_us=5",
                                                  "host.op_stall_fraction=1", "host.op_stall_us=1000",
                                                  "host.cache_mb=32", "host.cache_op_wakeup_us=2",
                                                  "host.cache_op_wakeup_sd_us=0", "host.cache_op_stall_fraction=0",
                                                  NULL});
    int64_t in_cache = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t out_of_cache = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    assert_int_equal(scenario_override(sc, "host.cache_op_wakeup_us=-1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t in_cache_as_out = run_sim(st, sc);
    const char *kinds[] = {"forward", "backward"};
    const int64_t model[] = {1000, 2000};
    for (int k = 0; k < 2; k++) {
        int64_t lo, hi;
        kind_durations(store_db(st), in_cache, kinds[k], &lo, &hi);
        assert_int_equal(lo, model[k] + 2000);
        assert_int_equal(hi, model[k] + 2000);
        kind_durations(store_db(st), out_of_cache, kinds[k], &lo, &hi);
        assert_true(lo > model[k] + 5000);
        kind_durations(store_db(st), in_cache_as_out, kinds[k], &lo, &hi);
        assert_int_equal(lo, model[k] + 5000);
        assert_int_equal(hi, model[k] + 5000);
    }
    hand_done(sc, st, path);
}

/* [host] cache_allreduce_factor = 0.5 with the measured table of test_sums_on_host_by_hand
 * (2 MB in 2000 us, 4 MB in 4000 us): where the two ranks' memory (2 x 12 B x 1M
 * parameters, 24 MB) fits in cache_mb (100 MiB), every bucket allreduce lasts half the
 * table's time; where it does not (16 MiB), the table's. */
static void test_cache_allreduce_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simcachear", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", "network.algorithm=measured",
                                                  "network.measured_ranks=2,2",
                                                  "network.measured_bytes=1000000,4000000",
                                                  "network.measured_us=1000,4000", "host.cache_mb=100",
                                                  "host.cache_allreduce_factor=0.5", NULL});
    int64_t fits = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t out = run_sim(st, sc);
    allreduce_times af, ao;
    bucket_allreduce_times(store_db(st), fits, &af);
    bucket_allreduce_times(store_db(st), out, &ao);
    assert_true(af.n >= 5);
    assert_int_equal(ao.n, af.n);
    for (int i = 0; i < af.n; i++) {
        int64_t table = i == 0 ? 4000000 : 2000000; /* the rebuild iteration's one 4 MB bucket */
        assert_int_equal(ao.time_ns[i], table);
        assert_int_equal(af.time_ns[i], table / 2);
    }
    hand_done(sc, st, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_allreduce_stall_by_hand),
        cmocka_unit_test(test_cache_allreduce_by_hand),
        cmocka_unit_test(test_cache_bandwidths_by_hand),
        cmocka_unit_test(test_cache_wakeups_by_hand),
        cmocka_unit_test(test_cache_fit_per_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
