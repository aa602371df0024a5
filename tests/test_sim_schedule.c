/* test_sim_schedule.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h):
 * the DDP schedule by hand: equal and skewed ranks, no_sync and the bucket rebuild, join,
 * phase detail, determinism, a failed rank, and the sweep summary. */
#include "sim_by_hand.h"

/* One rank's iteration without skew when buckets are per parameter (iterations after
 * the rebuild), from t0 = the step's first forward:
 *   F layer0 [t0, +1000], F layer1 [+1000, +2000], B layer1 [+2000, +4000], copy_in
 *   param1 [+4000, +5000] (bucket 0 full: its allreduce arrives at +5000 and ends at
 *   +9000), B layer0 [+5000, +7000], copy_in param0 [+7000, +8000] (bucket 1 arrives
 *   when the comm stream is free, +9000, ends +13000), copy_out param1 [+13000,
 *   +14000], param0 [+14000, +15000], SGD [+15000, +18000]. */
#define STEADY(r, it, t0, hs)                                                                                    \
    {r, it, "host", "wait", "end of step", hs, t0 + 18000},                                                   \
        {r, it, "compute", "forward", "layer0", t0, t0 + 1000},                                              \
        {r, it, "compute", "forward", "layer1", t0 + 1000, t0 + 2000},                                       \
        {r, it, "compute", "backward", "layer1", t0 + 2000, t0 + 4000},                                      \
        {r, it, "compute", "copy_in", "param1", t0 + 4000, t0 + 5000},                                       \
        {r, it, "compute", "backward", "layer0", t0 + 5000, t0 + 7000},                                      \
        {r, it, "comm", "allreduce", "bucket 0", t0 + 5000, t0 + 9000},                                      \
        {r, it, "compute", "copy_in", "param0", t0 + 7000, t0 + 8000},                                       \
        {r, it, "comm", "allreduce", "bucket 1", t0 + 9000, t0 + 13000},                                     \
        {r, it, "compute", "copy_out", "param1", t0 + 13000, t0 + 14000},                                    \
        {r, it, "compute", "copy_out", "param0", t0 + 14000, t0 + 15000},                                    \
        {r, it, "compute", "optimizer", "sgd step", t0 + 15000, t0 + 18000}

/* Three iterations of equal ranks: the construction [0, 8000]; iteration 0 with one
 * bucket from 8000 to 27000 (its host wait starts when construction's last broadcast
 * returns, 8000); the rebuild (both hosts enqueue the indices at 27000: [27000, 28000],
 * the sizes [28000, 29000]), so iteration 1 starts at 29000; then two steady steps,
 * 29000-47000 and 47000-65000. */
static void test_equal_ranks_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simhand", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION(0),
        ONE_BUCKET(0, 0, 8000, 8000),
        REBUILD(0, 1, 27000, 28000),
        STEADY(0, 1, 29000, 29000),
        STEADY(0, 2, 47000, 47000),
        CONSTRUCTION(1),
        ONE_BUCKET(1, 0, 8000, 8000),
        REBUILD(1, 1, 27000, 28000),
        STEADY(1, 1, 29000, 29000),
        STEADY(1, 2, 47000, 47000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Measured iterations 1 and 2, each 18000 ns from the first forward (t0 = 29000,
     * 47000) to the step's end; iteration 1's rebuild broadcasts come before its first
     * forward and are neither compute nor allreduce.  Per iteration: C = [t0, t0+8000]
     * + [t0+13000, t0+18000] = 13000; M = [t0+5000, t0+13000] = 8000; M ∩ C =
     * [t0+5000, t0+8000] = 3000: overlap 37.5 %, exposed 5000, no wait (the ranks
     * arrive together at every allreduce). */
    analysis_run *a = load(st, run);
    assert_string_equal(a->backend, "sim");
    assert_int_equal(a->steps, 2);
    assert_ms(a->step_ms_mean, 18000);
    assert_ms(a->step_ms_max, 18000);
    assert_int_equal(a->nranks, 2);
    for (int r = 0; r < 2; r++) {
        assert_ms(a->ranks[r].step_ms, 18000);
        assert_ms(a->ranks[r].compute_ms, 13000);
        assert_ms(a->ranks[r].comm_ms, 8000);
        assert_true(fabs(a->ranks[r].overlap_pct - 37.5) < 1e-9);
        assert_ms(a->ranks[r].exposed_comm_ms, 5000);
        assert_ms(a->ranks[r].wait_ms, 0);
    }
    assert_int_equal(a->buckets_initial, 1);
    assert_int_equal(a->buckets_rebuilt, 2);
    analysis_free(a, 1);
    hand_done(sc, st, path);
}

/* Rank 1 twice as slow (slow_ranks = 1, slowdown = 2: its forwards and backwards take
 * twice as long; copies and the step move bytes at the memory's speed on every rank),
 * iterations 0 and 1 (the rebuild's), iteration 1 measured.
 *   Construction: as with equal ranks, [0, 8000] on both (collectives take no compute).
 *   Iteration 0 from 8000: rank 0 arrives at the one bucket at 16000, rank 1 at 22000
 *   (forward 8000-12000, backward layer1 12000-16000, copy_in 16000-17000, backward
 *   layer0 17000-21000, copy_in 21000-22000); it ends at 22000 + 6000 = 28000.  Both
 *   then copy out and step until 28000 + 2000 + 3000 = 33000.
 *   Rebuild: both arrive at the indices broadcast at 33000: ends 34000; both hosts then
 *   enqueue the sizes: 34000-35000.
 *   Iteration 1 from 35000: rank 0 arrives at bucket 0 at 40000, rank 1 at 44000
 *   (forward 35000-39000, backward layer1 39000-43000, copy_in 43000-44000): ends 48000;
 *   rank 0 at bucket 1 when its comm stream is free, 48000, rank 1 at 49000 (backward
 *   44000-48000, copy_in 48000-49000): ends 53000.  Copies out and the step: both
 *   53000-58000. */
static void test_skewed_rank_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simskew", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=1", "run.iterations=1", "skew.slow_ranks=1", "skew.slowdown=2", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION(0),
        {0, 0, "compute", "forward", "layer0", 8000, 9000},
        {0, 0, "host", "wait", "end of step", 8000, 33000},
        {0, 0, "compute", "forward", "layer1", 9000, 10000},
        {0, 0, "compute", "backward", "layer1", 10000, 12000},
        {0, 0, "compute", "copy_in", "param1", 12000, 13000},
        {0, 0, "compute", "backward", "layer0", 13000, 15000},
        {0, 0, "compute", "copy_in", "param0", 15000, 16000},
        {0, 0, "comm", "allreduce", "bucket 0", 16000, 28000},
        {0, 0, "compute", "copy_out", "param0", 28000, 29000},
        {0, 0, "compute", "copy_out", "param1", 29000, 30000},
        {0, 0, "compute", "optimizer", "sgd step", 30000, 33000},
        REBUILD(0, 1, 33000, 34000),
        {0, 1, "host", "wait", "end of step", 35000, 58000},
        {0, 1, "compute", "forward", "layer0", 35000, 36000},
        {0, 1, "compute", "forward", "layer1", 36000, 37000},
        {0, 1, "compute", "backward", "layer1", 37000, 39000},
        {0, 1, "compute", "copy_in", "param1", 39000, 40000},
        {0, 1, "compute", "backward", "layer0", 40000, 42000},
        {0, 1, "comm", "allreduce", "bucket 0", 40000, 48000},
        {0, 1, "compute", "copy_in", "param0", 42000, 43000},
        {0, 1, "comm", "allreduce", "bucket 1", 48000, 53000},
        {0, 1, "compute", "copy_out", "param1", 53000, 54000},
        {0, 1, "compute", "copy_out", "param0", 54000, 55000},
        {0, 1, "compute", "optimizer", "sgd step", 55000, 58000},
        CONSTRUCTION(1),
        {1, 0, "compute", "forward", "layer0", 8000, 10000},
        {1, 0, "host", "wait", "end of step", 8000, 33000},
        {1, 0, "compute", "forward", "layer1", 10000, 12000},
        {1, 0, "compute", "backward", "layer1", 12000, 16000},
        {1, 0, "compute", "copy_in", "param1", 16000, 17000},
        {1, 0, "compute", "backward", "layer0", 17000, 21000},
        {1, 0, "compute", "copy_in", "param0", 21000, 22000},
        {1, 0, "comm", "allreduce", "bucket 0", 22000, 28000},
        {1, 0, "compute", "copy_out", "param0", 28000, 29000},
        {1, 0, "compute", "copy_out", "param1", 29000, 30000},
        {1, 0, "compute", "optimizer", "sgd step", 30000, 33000},
        REBUILD(1, 1, 33000, 34000),
        {1, 1, "host", "wait", "end of step", 35000, 58000},
        {1, 1, "compute", "forward", "layer0", 35000, 37000},
        {1, 1, "compute", "forward", "layer1", 37000, 39000},
        {1, 1, "compute", "backward", "layer1", 39000, 43000},
        {1, 1, "compute", "copy_in", "param1", 43000, 44000},
        {1, 1, "comm", "allreduce", "bucket 0", 44000, 48000},
        {1, 1, "compute", "backward", "layer0", 44000, 48000},
        {1, 1, "compute", "copy_in", "param0", 48000, 49000},
        {1, 1, "comm", "allreduce", "bucket 1", 49000, 53000},
        {1, 1, "compute", "copy_out", "param1", 53000, 54000},
        {1, 1, "compute", "copy_out", "param0", 54000, 55000},
        {1, 1, "compute", "optimizer", "sgd step", 55000, 58000},
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Iteration 1.  Rank 0: step 58000-35000 = 23000; C = [35000, 43000] + [53000,
     * 58000] = 13000; M = [40000, 53000] = 13000; M ∩ C = [40000, 43000] = 3000 (3/13);
     * exposed 10000; wait (44000-40000) + (49000-48000) = 5000.  Rank 1: step 23000;
     * C = [35000, 49000] + [53000, 58000] = 19000; M = [44000, 48000] + [49000, 53000]
     * = 8000; M ∩ C = [44000, 48000] = 4000 (50 %); exposed 4000; wait 0.  The job's
     * step: 23000. */
    analysis_run *a = load(st, run);
    assert_int_equal(a->steps, 1);
    assert_ms(a->step_ms_mean, 23000);
    assert_ms(a->ranks[0].step_ms, 23000);
    assert_ms(a->ranks[0].compute_ms, 13000);
    assert_ms(a->ranks[0].comm_ms, 13000);
    assert_true(fabs(a->ranks[0].overlap_pct - 300.0 / 13.0) < 1e-9);
    assert_ms(a->ranks[0].exposed_comm_ms, 10000);
    assert_ms(a->ranks[0].wait_ms, 5000);
    assert_ms(a->ranks[1].step_ms, 23000);
    assert_ms(a->ranks[1].compute_ms, 19000);
    assert_ms(a->ranks[1].comm_ms, 8000);
    assert_true(fabs(a->ranks[1].overlap_pct - 50.0) < 1e-9);
    assert_ms(a->ranks[1].exposed_comm_ms, 4000);
    assert_ms(a->ranks[1].wait_ms, 0);
    assert_true(fabs(a->ranks[1].speed - 0.5) < 1e-12);
    analysis_free(a, 1);
    hand_done(sc, st, path);
}

/* no_sync_every = 2, four iterations, none warm-up: iterations 0 and 2 only run
 * forward and backward (no copies, no allreduce, no step); iteration 1 reduces the
 * whole model in one bucket, the rebuild comes before iteration 2 (a no_sync step) and
 * iteration 3 uses the two rebuilt buckets.
 *   construction: [0, 8000], recorded in iteration 0.
 *   it 0: F 8000-10000, B 10000-14000; the host waits from 8000 until 14000.
 *   it 1 (t0 = 14000): the one-bucket step: allreduce 22000-28000, SGD 30000-33000.
 *   it 2: indices 33000-34000, sizes 34000-35000; F 35000-37000, B 37000-41000.
 *   it 3 (t0 = 41000): the steady step, until 59000. */
static void test_no_sync_and_rebuild_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simnosync", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=0", "run.iterations=4", "ddp.no_sync_every=2", "run.world_size=2", NULL});
    int64_t run = run_sim(st, sc);
#define NOSYNC(r, it, t0, hs)                                                                                    \
    {r, it, "host", "wait", "end of step (no_sync)", hs, t0 + 6000},                                        \
        {r, it, "compute", "forward", "layer0", t0, t0 + 1000},                                              \
        {r, it, "compute", "forward", "layer1", t0 + 1000, t0 + 2000},                                       \
        {r, it, "compute", "backward", "layer1", t0 + 2000, t0 + 4000},                                      \
        {r, it, "compute", "backward", "layer0", t0 + 4000, t0 + 6000}
    const want_span want[] = {
        CONSTRUCTION(0),
        NOSYNC(0, 0, 8000, 8000),
        ONE_BUCKET(0, 1, 14000, 14000),
        REBUILD(0, 2, 33000, 34000),
        NOSYNC(0, 2, 35000, 35000),
        STEADY(0, 3, 41000, 41000),
        CONSTRUCTION(1),
        NOSYNC(1, 0, 8000, 8000),
        ONE_BUCKET(1, 1, 14000, 14000),
        REBUILD(1, 2, 33000, 34000),
        NOSYNC(1, 2, 35000, 35000),
        STEADY(1, 3, 41000, 41000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Per iteration (step from the first forward; a no_sync step ends at its last
     * span, the host's wait):
     *   it 0: step 14000-8000 = 6000; C = [8000, 14000] = 6000; M = 0: the
     *   construction's all_gather and the broadcasts are not allreduces.
     *   it 1: step 33000-14000 = 19000; C = [14000, 22000] + [28000, 33000] = 13000;
     *   M = [22000, 28000] = 6000, overlapping nothing (compute idles): exposed 6000.
     *   it 2: step 41000-35000 = 6000 (the rebuild before the forward is outside it);
     *   C = 6000, M = 0.
     *   it 3: step 18000, C 13000, M 8000 of which 3000 overlapped: exposed 5000.
     * Steps 6000, 19000, 6000, 18000: mean 12250, min 6000, max 19000; per rank, means
     * over the 4 iterations: compute 38000/4 = 9500, comm 14000/4 = 3500, exposed
     * 11000/4 = 2750, overlap 3000/14000 = 21.43 %, wait 0 (equal arrivals). */
    analysis_run *a = load(st, run);
    assert_int_equal(a->steps, 4);
    assert_ms(a->step_ms_mean, 12250);
    assert_ms(a->step_ms_min, 6000);
    assert_ms(a->step_ms_max, 19000);
    for (int r = 0; r < 2; r++) {
        assert_ms(a->ranks[r].step_ms, 12250);
        assert_ms(a->ranks[r].compute_ms, 9500);
        assert_ms(a->ranks[r].comm_ms, 3500);
        assert_ms(a->ranks[r].exposed_comm_ms, 2750);
        assert_true(fabs(a->ranks[r].overlap_pct - 300.0 / 14) < 1e-9);
        assert_ms(a->ranks[r].wait_ms, 0);
    }
    analysis_free(a, 1);
    hand_done(sc, st, path);
}

/* ddp.join with uneven inputs (skew.rank_steps = 1, 2: rank 0 runs out of data after
 * iteration 0), warmup 0, two iterations.  join's scalars are float32 allreduces of 4
 * bytes, 2*(1000 + 4/2000) = 2000.004 -> 2000, the common rank an int64 one, 2000; the
 * final model is the 4 MB module broadcast, 5000.  The host waits for each.
 *   construction [0, 8000].
 *   it 0: "ranks training" [8000, 10000], "requires grad sync" [10000, 12000], then
 *   the one-bucket step from 12000 until 31000.
 *   it 1: both hosts at 31000: "ranks training" [31000, 33000], the rebuild's indices
 *   [33000, 34000] and sizes [34000, 35000], "requires grad sync" [35000, 37000]: its
 *   sum, 1 (rank 1 still trains), makes rank 0 shadow the backward's allreduces, which
 *   it enqueues at 37000 and waits for.  Rank 1 runs the steady step from 37000: its
 *   bucket 0 at 42000 (rank 0 has waited there since 37000) until 46000, bucket 1 at
 *   46000 (rank 0's comm stream is free then too) until 50000, the step until 55000.
 *   join's end, recorded in iteration 1: "ranks training" from rank 0 at 50000 and
 *   rank 1 at 55000, until 57000; the common rank [57000, 59000]; the final model from
 *   rank 1 (the last rank with data) [59000, 64000]. */
static void test_join_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simjoin", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=0", "run.iterations=2", "ddp.join=true", "skew.rank_steps=1,2", NULL});
    int64_t run = run_sim(st, sc);
#define JOIN_START(r)                                                                                         \
    CONSTRUCTION(r), {r, 0, "comm", "allreduce", "join: ranks training float32", 8000, 10000},               \
        {r, 0, "comm", "allreduce", "join: requires grad sync float32", 10000, 12000},                       \
        ONE_BUCKET(r, 0, 12000, 12000), {r, 1, "comm", "allreduce", "join: ranks training float32", 31000, 33000}, \
        REBUILD(r, 1, 33000, 34000), {r, 1, "comm", "allreduce", "join: requires grad sync float32", 35000, 37000}
#define JOIN_END(r, at)                                                                                       \
    {r, 1, "comm", "allreduce", "join: ranks training float32", at, 57000},                                  \
        {r, 1, "comm", "allreduce", "join: find common rank int64", 57000, 59000},                           \
        {r, 1, "comm", "broadcast", "join: sync final model float32", 59000, 64000}
    const want_span want[] = {
        JOIN_START(0),
        {0, 1, "comm", "allreduce", "bucket 0", 37000, 46000},
        {0, 1, "comm", "allreduce", "bucket 1", 46000, 50000},
        JOIN_END(0, 50000),
        JOIN_START(1),
        STEADY(1, 1, 37000, 37000),
        JOIN_END(1, 55000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);
    hand_done(sc, st, path);
}

/* The same scenario and seed give the same span table (every column but run_id), with
 * jitter, lognormal per-rank speeds and a fraction of slow ranks in play; another seed
 * gives another. */
static void check_deterministic(const char *const extra[])
{
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simdet", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(extra);
    int64_t a = run_sim(st, sc), b = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "run.seed=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t c = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    int64_t count;
    assert_int_equal(span_differences(db, a, b, &count), 0);
    assert_true(count > 1000);
    assert_true(span_differences(db, a, c, &count) > 0);
    hand_done(sc, st, path);
}

static void test_deterministic(void **state)
{
    (void)state;
    const char *const plain[] = {"run.world_size=16", "run.iterations=3", "skew.jitter=0.1", "skew.speed_sigma=0.2",
                                 "skew.slow_fraction=0.25", "skew.slowdown=1.5", "model.params=", "model.preset=resnet18",
                                 "model.batch=8", NULL};
    check_deterministic(plain);
    /* With the terms that make a compute stream wait for its comm stream's collective
     * and draw every wake-up: the order the ranks are timed in must not show. */
    const char *const contended[] = {"run.world_size=16", "run.iterations=3", "skew.jitter=0.1",
                                     "skew.speed_sigma=0.2", "model.params=", "model.preset=resnet18",
                                     "model.batch=8", "device.comm_slowdown=0.3", "host.comm_wakeup_us=0.5",
                                     "host.op_wakeup_us=1", "host.op_wakeup_sd_us=1", NULL};
    check_deterministic(contended);
    /* Sixteen ranks sharing three cores for their copies and steps. */
    const char *const shared[] = {"run.world_size=16", "run.iterations=3", "skew.jitter=0.1", "skew.speed_sigma=0.2",
                                  "model.params=", "model.preset=resnet18", "model.batch=8", "host.host_cores=3",
                                  NULL};
    check_deterministic(shared);
}

/* record.detail = phase: each rank-iteration's compute ops become one span per phase
 * (copies into buckets inside backward), collectives stay one span each, and every
 * figure of the report but bucket readiness is the same as with every op recorded. */
static void test_phase_detail_keeps_the_figures(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simphase", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=1", "run.iterations=1", "skew.slow_ranks=1", "skew.slowdown=2", NULL});
    int64_t ops = run_sim(st, sc);
    char serr[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "record.detail=phase", serr, sizeof serr), 0);
    int64_t phases = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    /* The spans of test_skewed_rank_by_hand, each rank-iteration's compute ops merged
     * per phase: rank 0, iteration 0: forward 8000-10000, backward with its copies in
     * 10000-16000, copies out 28000-30000, the step 30000-33000; iteration 1: forward
     * 35000-37000, backward 37000-43000, copies out 53000-55000, the step 55000-58000.
     * Rank 1 (forwards and backwards twice as long): iteration 0: 8000-12000,
     * 12000-22000, 28000-30000, 30000-33000; iteration 1: 35000-39000, 39000-49000,
     * 53000-55000, 55000-58000.  Collectives stay one span each, with their names (those
     * of no bucket are told apart by name alone). */
    const want_span want[] = {
        CONSTRUCTION(0),
        {0, 0, "compute", "forward", "forward", 8000, 10000},
        {0, 0, "host", "wait", "end of step", 8000, 33000},
        {0, 0, "compute", "backward", "backward", 10000, 16000},
        {0, 0, "comm", "allreduce", "bucket 0", 16000, 28000},
        {0, 0, "compute", "copy_out", "copy_out", 28000, 30000},
        {0, 0, "compute", "optimizer", "optimizer", 30000, 33000},
        REBUILD(0, 1, 33000, 34000),
        {0, 1, "host", "wait", "end of step", 35000, 58000},
        {0, 1, "compute", "forward", "forward", 35000, 37000},
        {0, 1, "compute", "backward", "backward", 37000, 43000},
        {0, 1, "comm", "allreduce", "bucket 0", 40000, 48000},
        {0, 1, "comm", "allreduce", "bucket 1", 48000, 53000},
        {0, 1, "compute", "copy_out", "copy_out", 53000, 55000},
        {0, 1, "compute", "optimizer", "optimizer", 55000, 58000},
        CONSTRUCTION(1),
        {1, 0, "compute", "forward", "forward", 8000, 12000},
        {1, 0, "host", "wait", "end of step", 8000, 33000},
        {1, 0, "compute", "backward", "backward", 12000, 22000},
        {1, 0, "comm", "allreduce", "bucket 0", 22000, 28000},
        {1, 0, "compute", "copy_out", "copy_out", 28000, 30000},
        {1, 0, "compute", "optimizer", "optimizer", 30000, 33000},
        REBUILD(1, 1, 33000, 34000),
        {1, 1, "host", "wait", "end of step", 35000, 58000},
        {1, 1, "compute", "forward", "forward", 35000, 39000},
        {1, 1, "compute", "backward", "backward", 39000, 49000},
        {1, 1, "comm", "allreduce", "bucket 0", 44000, 48000},
        {1, 1, "comm", "allreduce", "bucket 1", 49000, 53000},
        {1, 1, "compute", "copy_out", "copy_out", 53000, 55000},
        {1, 1, "compute", "optimizer", "optimizer", 55000, 58000},
    };
    expect_spans(db, phases, want, sizeof want / sizeof want[0]);
    /* DDP logger's start of forward leaves construction out by the collectives' names:
     * iteration 0 starts at its first forward (8000) on both ranks, iteration 1 at its
     * indices broadcast (33000 on both), in both runs alike; so does the start of the
     * backward's communication (the first bucket: 16000, 22000; 40000, 44000). */
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select a.rank, a.iter, a.forward_compute_time_start, "
                                        "a.backward_comm_time_start, b.forward_compute_time_start, "
                                        "b.backward_comm_time_start from ddp_logging a join ddp_logging b "
                                        "on b.rank = a.rank and b.iter = a.iter and b.run_id = ?2 "
                                        "where a.run_id = ?1 order by a.rank, a.iter",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, ops);
    sqlite3_bind_int64(q, 2, phases);
    const int64_t fwd_start[2][2] = {{8000, 33000}, {8000, 33000}}, comm_start[2][2] = {{16000, 40000}, {22000, 44000}};
    int rows = 0;
    for (; sqlite3_step(q) == SQLITE_ROW; rows++) {
        int r = sqlite3_column_int(q, 0), it = sqlite3_column_int(q, 1);
        assert_in_range(r, 0, 1);
        assert_in_range(it, 0, 1);
        assert_int_equal(sqlite3_column_int64(q, 2), fwd_start[r][it]);
        assert_int_equal(sqlite3_column_int64(q, 3), comm_start[r][it]);
        assert_int_equal(sqlite3_column_int64(q, 4), fwd_start[r][it]);
        assert_int_equal(sqlite3_column_int64(q, 5), comm_start[r][it]);
    }
    sqlite3_finalize(q);
    assert_int_equal(rows, 4);
    analysis_run *a = load(st, ops), *b = load(st, phases);
    assert_false(a->phase_spans);
    assert_true(b->phase_spans); /* the report says which detail it reads */
    assert_ms(b->step_ms_mean, 23000);
    assert_true(a->step_ms_mean == b->step_ms_mean);
    for (int r = 0; r < 2; r++) {
        assert_true(a->ranks[r].step_ms == b->ranks[r].step_ms);
        assert_true(a->ranks[r].compute_ms == b->ranks[r].compute_ms);
        assert_true(a->ranks[r].comm_ms == b->ranks[r].comm_ms);
        assert_true(a->ranks[r].overlap_pct == b->ranks[r].overlap_pct);
        assert_true(a->ranks[r].wait_ms == b->ranks[r].wait_ms);
    }
    analysis_free(a, 1);
    analysis_free(b, 1);
    hand_done(sc, st, path);
}

/* The sweep summary lists each run's step and names the fastest: the equal-rank step of
 * test_equal_ranks_by_hand (18000 ns) beats the same with rank 1 twice as slow; two equal
 * points are not told apart (no best beyond the spread over iterations). */
static void test_sweep_summary_names_the_best(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simsweep", &st, err, sizeof err), 0);
    scenario *slow = hand_scenario((const char *[]){"run.name=slow", "run.warmup=1", "run.iterations=2",
                                                    "skew.slow_ranks=1", "skew.slowdown=2", NULL});
    scenario *fast = hand_scenario((const char *[]){"run.name=fast", "run.warmup=1", "run.iterations=2", NULL});
    int64_t ids[2] = {run_sim(st, slow), run_sim(st, fast)};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(report_sweep_summary(st, ids, 2, out, err, sizeof err), 0);
    fclose(out);
    assert_non_null(strstr(text, "best: fast (0.018 ms per step; its slowest iteration beats the next point's fastest)"));
    assert_non_null(strstr(text, "slow"));
    free(text);
    scenario *twin = hand_scenario((const char *[]){"run.name=twin", "run.warmup=1", "run.iterations=2", NULL});
    int64_t tied[2] = {ids[1], run_sim(st, twin)};
    out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(report_sweep_summary(st, tied, 2, out, err, sizeof err), 0);
    fclose(out);
    assert_non_null(strstr(text, "best: none beyond the spread over iterations"));
    free(text);
    scenario_free(twin);
    scenario_free(slow);
    scenario_free(fast);
    free(twin);
    free(slow);
    free(fast);
    store_close(st);
    remove_db(path);
}

/* A rank that fails mid-run fails the run with its reason; the spans before are kept. */
static void test_failure_is_recorded(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simfail", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=3", "fault.mode=error",
                                                  "fault.rank=1", "fault.iter=1", NULL});
    model m;
    assert_int_equal(model_build(sc, &m, err, sizeof err), 0);
    launch_options opt = {.record = true};
    launch_result res;
    int rc = launch_run(sc, &m, st, backend_find("sim"), &opt, &res, err, sizeof err);
    model_free(&m);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(res.error, "injected fault"));
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(store_db(st), "select status, (select count(*) from span where run_id = ?1 "
                                                      "and iter = 0) from run where id = ?1",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, res.run_id);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "failed");
    assert_true(sqlite3_column_int64(q, 1) >= 22);
    sqlite3_finalize(q);
    hand_done(sc, st, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_ranks_by_hand),
        cmocka_unit_test(test_skewed_rank_by_hand),
        cmocka_unit_test(test_no_sync_and_rebuild_by_hand),
        cmocka_unit_test(test_join_by_hand),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_phase_detail_keeps_the_figures),
        cmocka_unit_test(test_sweep_summary_names_the_best),
        cmocka_unit_test(test_failure_is_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
