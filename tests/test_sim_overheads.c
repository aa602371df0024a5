/* test_sim_overheads.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h):
 * each op's overheads by hand: the stream hand-off, comm launches, the roofline of a backward,
 * comm slowdown and wake-ups, per-kind bandwidths, and the host's wake after a step. */
#include "sim_by_hand.h"

/* Each span of `want` is in the run, exactly (others may be too). */
static void expect_some_spans(sqlite3 *db, int64_t run, const want_span *want, size_t nwant)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select count(*) from span where run_id = ?1 and rank = ?2 and iter = ?3 and "
                                        "stream = ?4 and kind = ?5 and name = ?6 and start_ns = ?7 and end_ns = ?8",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < nwant; i++) {
        const want_span *w = &want[i];
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int(st, 2, w->rank);
        sqlite3_bind_int(st, 3, w->iter);
        sqlite3_bind_text(st, 4, w->stream, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, w->kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, w->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, w->start);
        sqlite3_bind_int64(st, 8, w->end);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        if (sqlite3_column_int(st, 0) != 1)
            fail_msg("no span rank %d iter %d %s %s %s [%lld, %lld]", w->rank, w->iter, w->stream, w->kind, w->name,
                     (long long)w->start, (long long)w->end);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

/* [device] op_overhead_us = 0.5 and op_wakeup_us = 0.25: every op and collective starts
 * 500 ns after its stream and inputs are ready (the hand-off is idle time between
 * spans), forwards and backwards last 250 ns more than their model (the wake-up after
 * the deadline).  One iteration, one bucket (no rebuild follows): construction as in
 * CONSTRUCTION_GAP; from 9500: F layer0 [10000, 11250], F layer1 [11750, 13000], B
 * layer1 [13500, 15750], copy_in param1 [16250, 17250], B layer0 [17750, 20000],
 * copy_in param0 [20500, 21500]; the bucket's allreduce arrives 22000, 6000: [22000,
 * 28000]; copy_out param0 [28500, 29500], param1 [30000, 31000], SGD [31500, 34500]. */
static void test_op_overhead_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simovh", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=0", "run.iterations=1", "device.op_overhead_us=0.5", "host.op_wakeup_us=0.25", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 0),
        GAP_STEP(1, 0),
    };
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    /* op_overhead_busy_us = 0.1: an op queued behind one the worker ran on its core starts
     * 100 ns after it: B layer0 behind copy_in param1, [17350, 19600], copy_out param1
     * behind param0 and the SGD step behind it; every op after a forward or backward
     * (which sleep), or after the wait for the allreduce, keeps the 500 ns hand-off:
     * copy_in param0 [20100, 21100], the allreduce [21600, 27600], copy_out param0 [28100,
     * 29100], param1 [29200, 30200], SGD [30300, 33300]. */
    assert_int_equal(scenario_override(sc, "host.op_overhead_busy_us=0.1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    run = run_sim(st, sc);
    for (int r = 0; r < 2; r++) {
        const want_span busy[] = {
            {r, 0, "host", "wait", "end of step", 9500, 33300},
            {r, 0, "compute", "forward", "layer0", 10000, 11250},
            {r, 0, "compute", "forward", "layer1", 11750, 13000},
            {r, 0, "compute", "backward", "layer1", 13500, 15750},
            {r, 0, "compute", "copy_in", "param1", 16250, 17250},
            {r, 0, "compute", "backward", "layer0", 17350, 19600},
            {r, 0, "compute", "copy_in", "param0", 20100, 21100},
            {r, 0, "comm", "allreduce", "bucket 0", 21600, 27600},
            {r, 0, "compute", "copy_out", "param0", 28100, 29100},
            {r, 0, "compute", "copy_out", "param1", 29200, 30200},
            {r, 0, "compute", "optimizer", "sgd step", 30300, 33300},
        };
        expect_some_spans(store_db(st), run, busy, sizeof busy / sizeof busy[0]);
    }
    hand_done(sc, st, path);
}

/* [host] comm_launch_us = 0.75 beside op_overhead_us = 0.5 and op_wakeup_us = 0.25: the
 * comm stream, idle since construction, waits for the event after copy_in param0 (ends
 * 21500) and starts the bucket's allreduce 750 + 500 ns later: [22750, 28750]; what
 * follows it moves by 750 too: copy_out param0 [29250, 30250], param1 [30750, 31750],
 * SGD [32250, 35250].  Behind a paced link whose floor outlasts the measured sum (1 us),
 * the stream sleeps to the floor and wakes
 * 750 ns late: each bucket allreduce lasts 750 ns more than the link's 2 x 1 us + bytes /
 * 1000 GB/s (the 4 MB bucket of iteration 0, the rebuilt 2 MB ones after); without the
 * link's floor, the link's time exactly. */
static void test_comm_launch_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simlaunch", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=1", "device.op_overhead_us=0.5",
                                                  "host.op_wakeup_us=0.25", "host.comm_launch_us=0.75", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 750),
        GAP_STEP(1, 750),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);
    /* In a 32 MiB cache (the two ranks' 24 MB fit), cache_comm_launch_us = 0.25 takes its
     * place: everything from the allreduce on 250 ns after the ready time's hand-off. */
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_comm_launch_us=0.25", err, sizeof err), 0);
    const want_span in_cache[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 250),
        GAP_STEP(1, 250),
    };
    expect_spans(db, run_sim(st, sc), in_cache, sizeof in_cache / sizeof in_cache[0]);
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err, sizeof err), 0);

    const char *paced[] = {"run.iterations=3", "network.pace=true", "network.algorithm=measured",
                           "network.measured_ranks=2,2", "network.measured_bytes=1000000,4000000",
                           "network.measured_us=1,1", NULL};
    for (int i = 0; paced[i]; i++)
        assert_int_equal(scenario_override(sc, paced[i], err, sizeof err), 0);
    int64_t runs[2];
    runs[0] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "network.pace=false", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "network.algorithm=ring", err, sizeof err), 0);
    runs[1] = run_sim(st, sc);
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *q;
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "select count(*), min(end_ns - start_ns - 2000 - bytes / 1000), "
                                            "max(end_ns - start_ns - 2000 - bytes / 1000) from span "
                                            "where run_id = ?1 and kind = 'allreduce' and bucket >= 0",
                                            -1, &q, NULL),
                         SQLITE_OK);
        sqlite3_bind_int64(q, 1, runs[k]);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_true(sqlite3_column_int64(q, 0) >= 8);
        assert_int_equal(sqlite3_column_int64(q, 1), k == 0 ? 750 : 0);
        assert_int_equal(sqlite3_column_int64(q, 2), k == 0 ? 750 : 0);
        sqlite3_finalize(q);
    }
    hand_done(sc, st, path);
}

/* [host] comm_launch_per_op_us = 3 on a crowded host (four ranks, one core; rank 1
 * twice as slow, so the ranks' copies fall at different times; copies of 2 MB at 2000
 * GB/s, as long as a backward, so rank 1 copies when the others' buckets are ready): a
 * comm stream that
 * idled until its bucket was ready starts the allreduce op_overhead_us (0.5) plus 3 us
 * for each copy or step of the other ranks running at that moment later, exactly,
 * counted from the recorded spans; some launches meet such copies.  With a core per
 * rank the host is not crowded and every idle launch comes 500 ns after the ready time. */
static void idle_launches(sqlite3 *db, int64_t run, int64_t per_op_ns, int *launches, int *beside_ops)
{
    static const char *sql =
        "with ready as (select rank, iter, bucket, max(end_ns) as at from span where run_id = ?1 and kind = "
        "'copy_in' and bucket >= 0 group by rank, iter, bucket), "
        "launch as (select a.rank, a.start_ns, r.at, (select max(p.end_ns) from span p where p.run_id = ?1 and "
        "p.rank = a.rank and p.stream = 'comm' and p.start_ns < a.start_ns) as prev_end from span a join ready r "
        "on r.rank = a.rank and r.iter = a.iter and r.bucket = a.bucket where a.run_id = ?1 and a.kind = "
        "'allreduce' and a.bucket >= 0) "
        "select start_ns - at, (select count(*) from span o where o.run_id = ?1 and o.rank != launch.rank and "
        "o.kind in ('copy_in', 'copy_out', 'optimizer') and o.start_ns <= at and o.end_ns > at) from launch "
        "where prev_end is null or prev_end < at";
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    *launches = *beside_ops = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t delay = sqlite3_column_int64(q, 0), running = sqlite3_column_int64(q, 1);
        assert_int_equal(delay, 500 + per_op_ns * running);
        (*launches)++;
        *beside_ops += running > 0;
    }
    sqlite3_finalize(q);
}

static void test_comm_launch_per_op_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simlaunchop", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.world_size=4", "run.warmup=1", "run.iterations=3",
                                                  "skew.slow_ranks=1", "skew.slowdown=2", "device.mem_bw_gbps=2000",
                                                  "host.host_cores=1",
                                                  "device.op_overhead_us=0.5", "host.comm_launch_per_op_us=3",
                                                  NULL});
    int64_t crowded = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=4", err, sizeof err), 0);
    int64_t roomy = run_sim(st, sc);
    int launches, beside_ops;
    idle_launches(store_db(st), crowded, 3000, &launches, &beside_ops);
    assert_true(launches >= 8);
    assert_true(beside_ops >= 1);
    idle_launches(store_db(st), roomy, 0, &launches, &beside_ops);
    assert_true(launches >= 8);
    hand_done(sc, st, path);
}

/* [host] comm_launch_behind_us on the roofline below, a core per rank, in the second
 * iteration (a bucket per 2 MB parameter): bucket 0 (param1) is ready when its copy in
 * ends, and the compute worker goes straight on with layer0's write-bound backward and
 * param0's copy in, a run of ops on its core (over 4000 ns).  At 0 the comm stream starts
 * bucket 0's allreduce 500 ns (op_overhead) after the ready time; with a hold of a second
 * on average it waits for the run to end: 500 ns after param0's copy in ends; with one of
 * a microsecond it starts between the two, and before the run's end on some rank. */
static void test_comm_launch_behind_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simbehind", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=2", "device.mem_bw_gbps=500",
                                                  "device.op_overhead_us=0.5", "host.op_wakeup_us=0.25",
                                                  "host.host_cores=2", NULL});
    int64_t free_run = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.comm_launch_behind_us=1000000", err, sizeof err), 0);
    int64_t behind_run = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.comm_launch_behind_us=1", err, sizeof err), 0);
    int64_t short_run = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    int before_end = 0;
    for (int r = 0; r < 2; r++) {
        int64_t ready = span_time(db, free_run, r, 1, "copy_in", -1, "param1", true);
        assert_int_equal(span_time(db, free_run, r, 1, "allreduce", 0, NULL, false), ready + 500);
        int64_t run_end = span_time(db, behind_run, r, 1, "copy_in", -1, "param0", true);
        int64_t behind_ready = span_time(db, behind_run, r, 1, "copy_in", -1, "param1", true);
        assert_true(run_end > behind_ready + 4000); /* a backward and a copy after it */
        assert_int_equal(span_time(db, behind_run, r, 1, "allreduce", 0, NULL, false), run_end + 500);
        int64_t short_ready = span_time(db, short_run, r, 1, "copy_in", -1, "param1", true);
        int64_t short_end = span_time(db, short_run, r, 1, "copy_in", -1, "param0", true);
        int64_t start = span_time(db, short_run, r, 1, "allreduce", 0, NULL, false);
        assert_true(start >= short_ready + 500 && start <= short_end + 500);
        before_end += start < short_end + 500;
    }
    assert_true(before_end >= 1);
    hand_done(sc, st, path);
}

/* A backward that sleeps still writes its gradients on a core first.  As in the roofline
 * below (copies at 500 GB/s, hand-offs of 500 ns, wake-ups of 250), but with gradient
 * writes at 1600 GB/s: layer1's 2 MB write takes 1250 ns, under its 2000 ns model, so the
 * backward sleeps: [13500, 15750] with a core per rank.  With one core for the two ranks
 * ([host] host_cores = 1) their two writes share it from 13500, half a core each, and
 * end at 13500 + 2 x 1250 = 16000, past the deadline: the backward ends there. */
static void test_sleeping_write_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simsleepw", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=1", "device.mem_bw_gbps=500",
                                                  "device.grad_write_gbps=1600", "device.op_overhead_us=0.5",
                                                  "host.op_wakeup_us=0.25", "host.host_cores=2", NULL});
    int64_t own = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=1", err, sizeof err), 0);
    int64_t shared = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(span_time(db, own, r, 0, "backward", -1, "layer1", false), 13500);
        assert_int_equal(span_time(db, own, r, 0, "backward", -1, "layer1", true), 15750);
        assert_int_equal(span_time(db, shared, r, 0, "backward", -1, "layer1", false), 13500);
        assert_int_equal(span_time(db, shared, r, 0, "backward", -1, "layer1", true), 16000);
    }
    hand_done(sc, st, path);
}

/* The roofline of a backward: at mem_bw_gbps = 500 writing a layer's 2 MB of gradients
 * takes 4000 ns, twice its 2000 ns of FLOPs, so each backward lasts 4000 and has no
 * wake-up (it never sleeps to a deadline); forwards keep 1000 + 250.  Copies move 2 x
 * 2 MB at 500 GB/s: 8000; SGD 12 B x 1e6 params: 24000; every op and collective starts
 * 500 ns after it could.  Construction as in CONSTRUCTION_GAP; from 9500: F [10000,
 * 11250], [11750, 13000]; B layer1 [13500, 17500]; copy_in param1 [18000, 26000]; B
 * layer0 [26500, 30500]; copy_in param0 [31000, 39000]; the one 4 MB bucket, 6000:
 * [39500, 45500]; copy_out param0 [46000, 54000], param1 [54500, 62500]; SGD [63000,
 * 87000]. */
static void test_memory_bound_backward_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simroof", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=1", "device.mem_bw_gbps=500",
                                                  "device.op_overhead_us=0.5", "host.op_wakeup_us=0.25", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
#define ROOFLINE_STEP(r)                                                                                     \
    {r, 0, "host", "wait", "end of step", 9500, 87000},                                                     \
        {r, 0, "compute", "forward", "layer0", 10000, 11250},                                                \
        {r, 0, "compute", "forward", "layer1", 11750, 13000},                                                \
        {r, 0, "compute", "backward", "layer1", 13500, 17500},                                               \
        {r, 0, "compute", "copy_in", "param1", 18000, 26000},                                                \
        {r, 0, "compute", "backward", "layer0", 26500, 30500},                                               \
        {r, 0, "compute", "copy_in", "param0", 31000, 39000},                                                \
        {r, 0, "comm", "allreduce", "bucket 0", 39500, 45500},                                               \
        {r, 0, "compute", "copy_out", "param0", 46000, 54000},                                               \
        {r, 0, "compute", "copy_out", "param1", 54500, 62500},                                               \
        {r, 0, "compute", "optimizer", "sgd step", 63000, 87000}
        ROOFLINE_STEP(0),
        ROOFLINE_STEP(1),
#undef ROOFLINE_STEP
    };
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    /* Such a backward holds a core as a copy does: with one core for the two ranks
     * ([host] host_cores = 1) the two ranks' writes of layer1 share it from 13500, half
     * a core each, and end at 13500 + 2 x 4000; their copies in of param1 likewise, from
     * 22000 to 22000 + 2 x 8000.  With a core each the run is the one above. */
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    run = run_sim(st, sc);
    for (int r = 0; r < 2; r++) {
        const want_span shared[] = {
            {r, 0, "compute", "backward", "layer1", 13500, 21500},
            {r, 0, "compute", "copy_in", "param1", 22000, 38000},
        };
        expect_some_spans(store_db(st), run, shared, sizeof shared / sizeof shared[0]);
    }
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    run = run_sim(st, sc);
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    hand_done(sc, st, path);
}

/* [device] comm_slowdown = 3: a forward or backward inside its rank's collective runs at
 * a quarter of its speed.  Iteration 0 (one bucket) has no compute inside a collective:
 * as with equal ranks, [8000, 27000], and the rebuild [27000, 29000].  Iterations 1 and
 * 2, from t0 (29000, then 49000): F [t0, +1000], [+1000, +2000]; B layer1 [+2000,
 * +4000]; copy_in param1 [+4000, +5000]; bucket 0's allreduce [+5000, +9000].  B
 * layer0 starts at +5000 inside it: 4000 ns at a quarter speed do 1000 ns of its 2000,
 * the rest at full speed after +9000: [+5000, +10000].  copy_in param0 [+10000, +11000]
 * (copies are not slowed); bucket 1 [+11000, +15000]; copy_out param1 [+15000, +16000],
 * param0 [+16000, +17000]; SGD [+17000, +20000].  Per iteration: step 20000; C = [t0,
 * +11000] + [+15000, +20000] = 16000; M = [+5000, +9000] + [+11000, +15000] = 8000, of
 * which [+5000, +9000] under compute: overlap 50 %, exposed 4000. */
#define CONTENDED(r, it, t0)                                                                                     \
    {r, it, "host", "wait", "end of step", t0, t0 + 20000},                                                   \
        {r, it, "compute", "forward", "layer0", t0, t0 + 1000},                                              \
        {r, it, "compute", "forward", "layer1", t0 + 1000, t0 + 2000},                                       \
        {r, it, "compute", "backward", "layer1", t0 + 2000, t0 + 4000},                                      \
        {r, it, "compute", "copy_in", "param1", t0 + 4000, t0 + 5000},                                       \
        {r, it, "compute", "backward", "layer0", t0 + 5000, t0 + 10000},                                     \
        {r, it, "comm", "allreduce", "bucket 0", t0 + 5000, t0 + 9000},                                      \
        {r, it, "compute", "copy_in", "param0", t0 + 10000, t0 + 11000},                                     \
        {r, it, "comm", "allreduce", "bucket 1", t0 + 11000, t0 + 15000},                                    \
        {r, it, "compute", "copy_out", "param1", t0 + 15000, t0 + 16000},                                    \
        {r, it, "compute", "copy_out", "param0", t0 + 16000, t0 + 17000},                                    \
        {r, it, "compute", "optimizer", "sgd step", t0 + 17000, t0 + 20000}

static void test_comm_slowdown_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simslow", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", "device.comm_slowdown=3", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        CONSTRUCTION(0),  ONE_BUCKET(0, 0, 8000, 8000), REBUILD(0, 1, 27000, 28000), CONTENDED(0, 1, 29000),
        CONTENDED(0, 2, 49000), CONSTRUCTION(1), ONE_BUCKET(1, 0, 8000, 8000), REBUILD(1, 1, 27000, 28000),
        CONTENDED(1, 1, 29000), CONTENDED(1, 2, 49000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);
    analysis_run *a = load(st, run);
    assert_ms(a->step_ms_mean, 20000);
    for (int r = 0; r < 2; r++) {
        assert_ms(a->ranks[r].compute_ms, 16000);
        assert_ms(a->ranks[r].comm_ms, 8000);
        assert_ms(a->ranks[r].exposed_comm_ms, 4000);
        assert_true(fabs(a->ranks[r].overlap_pct - 50.0) < 1e-9);
    }
    analysis_free(a, 1);
    hand_done(sc, st, path);
}

#undef CONTENDED

/* [host] comm_wakeup_us = 0.5: a forward or backward whose end falls inside its rank's
 * collective ends 500 ns later.  As with equal ranks (test_equal_ranks_by_hand) but in
 * iterations 1 and 2, from t0: B layer0 starts at +5000 with bucket 0's allreduce [+5000,
 * +9000] and would end at +7000, inside it: [+5000, +7500].  copy_in param0 [+7500,
 * +8500]; bucket 1 when the comm stream is free, [+9000, +13000], the rest as in STEADY:
 * the step stays 18000 (the allreduces bound it).  Nothing else ends inside a
 * collective: iteration 0's forwards start when construction's collectives have ended,
 * iteration 1's when the rebuild's have. */
static void test_comm_wakeup_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simcwake", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", "host.comm_wakeup_us=0.5", NULL});
    int64_t run = run_sim(st, sc);
#define LATE_WAKE(r, it, t0)                                                                                     \
    {r, it, "host", "wait", "end of step", t0, t0 + 18000},                                                   \
        {r, it, "compute", "forward", "layer0", t0, t0 + 1000},                                              \
        {r, it, "compute", "forward", "layer1", t0 + 1000, t0 + 2000},                                       \
        {r, it, "compute", "backward", "layer1", t0 + 2000, t0 + 4000},                                      \
        {r, it, "compute", "copy_in", "param1", t0 + 4000, t0 + 5000},                                       \
        {r, it, "compute", "backward", "layer0", t0 + 5000, t0 + 7500},                                      \
        {r, it, "comm", "allreduce", "bucket 0", t0 + 5000, t0 + 9000},                                      \
        {r, it, "compute", "copy_in", "param0", t0 + 7500, t0 + 8500},                                       \
        {r, it, "comm", "allreduce", "bucket 1", t0 + 9000, t0 + 13000},                                     \
        {r, it, "compute", "copy_out", "param1", t0 + 13000, t0 + 14000},                                    \
        {r, it, "compute", "copy_out", "param0", t0 + 14000, t0 + 15000},                                    \
        {r, it, "compute", "optimizer", "sgd step", t0 + 15000, t0 + 18000}
    const want_span want[] = {
        CONSTRUCTION(0), ONE_BUCKET(0, 0, 8000, 8000), REBUILD(0, 1, 27000, 28000), LATE_WAKE(0, 1, 29000),
        LATE_WAKE(0, 2, 47000), CONSTRUCTION(1), ONE_BUCKET(1, 0, 8000, 8000), REBUILD(1, 1, 27000, 28000),
        LATE_WAKE(1, 1, 29000), LATE_WAKE(1, 2, 47000),
    };
#undef LATE_WAKE
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    hand_done(sc, st, path);
}

/* The backwards of a run with comm_wakeup_us = 0.5: how many there are, how many last
 * exactly `dur` ns, and how many of those end inside an allreduce of their rank. */
static void backward_durations(sqlite3 *db, int64_t run, int64_t dur, int64_t *n, int64_t *exact, int64_t *inside)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select count(*), coalesce(sum(b.end_ns - b.start_ns = ?2), 0), "
                                        "coalesce(sum(b.end_ns - b.start_ns = ?2 and exists (select 1 from span a "
                                        "where a.run_id = b.run_id and a.rank = b.rank and a.kind = 'allreduce' and "
                                        "a.start_ns < b.end_ns and b.end_ns < a.end_ns)), 0) from span b "
                                        "where b.run_id = ?1 and b.kind = 'backward'",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    sqlite3_bind_int64(q, 2, dur);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    *n = sqlite3_column_int64(q, 0);
    *exact = sqlite3_column_int64(q, 1);
    *inside = sqlite3_column_int64(q, 2);
    sqlite3_finalize(q);
}

/* [device] grad_write_gbps = 800: each layer's 2 MB gradient write takes 2500 ns, longer
 * than its model (2000 ns), so every backward lasts 2500 ns and never sleeps, and so
 * never wakes late (comm_wakeup_us = 0.5), though some end inside their rank's
 * allreduce.  With the write at mem_bw_gbps (500 ns) the backwards sleep to 2000 ns, and
 * one ending inside an allreduce lasts 2500 ns because it wakes 500 ns late. */
static void test_grad_write_never_wakes_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simgw", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", "host.comm_wakeup_us=0.5",
                                                  "device.grad_write_gbps=800", NULL});
    int64_t bound = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "device.grad_write_gbps=0", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t sleeping = run_sim(st, sc);
    int64_t n, exact, inside;
    backward_durations(store_db(st), bound, 2500, &n, &exact, &inside);
    assert_int_equal(n, 2 * 2 * 3); /* 2 ranks x 2 layers x 3 iterations */
    assert_int_equal(exact, n);
    assert_true(inside > 0);
    backward_durations(store_db(st), sleeping, 2500, &n, &exact, &inside);
    assert_true(exact > 0 && exact < n);
    assert_int_equal(inside, exact);
    hand_done(sc, st, path);
}

/* [device] copy_out_gbps = 2000 and optimizer_gbps = 1000: a copy out of a bucket moves
 * 2 x 2 MB in 2000 ns, the SGD step 12 MB in 12000; copies in keep mem_bw_gbps (1000
 * ns).  One iteration, one bucket, from 8000 as in ONE_BUCKET until the allreduce
 * [16000, 22000]; then copy_out param0 [22000, 24000], param1 [24000, 26000], SGD
 * [26000, 38000]. */
static void test_bandwidth_per_kind_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simkind", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=0", "run.iterations=1", "device.copy_out_gbps=2000",
                                                  "device.optimizer_gbps=1000", NULL});
    int64_t run = run_sim(st, sc);
#define PER_KIND(r)                                                                                              \
    {r, 0, "host", "wait", "end of step", 8000, 38000},                                                       \
        {r, 0, "compute", "forward", "layer0", 8000, 9000},                                                  \
        {r, 0, "compute", "forward", "layer1", 9000, 10000},                                                 \
        {r, 0, "compute", "backward", "layer1", 10000, 12000},                                               \
        {r, 0, "compute", "copy_in", "param1", 12000, 13000},                                                \
        {r, 0, "compute", "backward", "layer0", 13000, 15000},                                               \
        {r, 0, "compute", "copy_in", "param0", 15000, 16000},                                                \
        {r, 0, "comm", "allreduce", "bucket 0", 16000, 22000},                                               \
        {r, 0, "compute", "copy_out", "param0", 22000, 24000},                                               \
        {r, 0, "compute", "copy_out", "param1", 24000, 26000},                                               \
        {r, 0, "compute", "optimizer", "sgd step", 26000, 38000}
    const want_span want[] = {CONSTRUCTION(0), PER_KIND(0), CONSTRUCTION(1), PER_KIND(1)};
#undef PER_KIND
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    hand_done(sc, st, path);
}

/* The gaps, per rank and iteration after the first, from the end of the iteration before's
 * last compute op to this one's first op on any stream: their least and greatest, and
 * whether any two differ.  Also the least and greatest gap from that end to the end of the
 * host's wait for the step (the host's own wake). */
static void turnarounds(sqlite3 *db, int64_t run, int64_t *lo, int64_t *hi, bool *spread, int64_t *host_lo,
                        int64_t *host_hi)
{
    static const char *sql =
        "with last as (select rank, iter, max(end_ns) as at from span where run_id = ?1 and stream = 'compute' "
        "group by rank, iter), first as (select rank, iter, min(start_ns) as at from span where run_id = ?1 and "
        "stream != 'host' group by rank, iter), host as (select rank, iter, end_ns as at from span where "
        "run_id = ?1 and stream = 'host' and name like 'end of step%') "
        "select min(f.at - l.at), max(f.at - l.at), count(distinct f.at - l.at), min(h.at - l.at), "
        "max(h.at - l.at), count(*) from last l join first f on f.rank = l.rank and f.iter = l.iter + 1 "
        "join host h on h.rank = l.rank and h.iter = l.iter";
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    *lo = sqlite3_column_int64(q, 0);
    *hi = sqlite3_column_int64(q, 1);
    *spread = sqlite3_column_int64(q, 2) > 1;
    *host_lo = sqlite3_column_int64(q, 3);
    *host_hi = sqlite3_column_int64(q, 4);
    assert_int_equal(sqlite3_column_int64(q, 5), 2 * 3); /* two ranks, three iterations followed by one */
    sqlite3_finalize(q);
}

/* [host] host_wake_us = 2 beside op_overhead_us = 0.5: after the synchronize that ends a
 * step (and the rebuild's broadcasts before iteration 1), the host goes on 2000 ns after
 * its stream is idle, and the next iteration's first op (the rebuild's broadcast, or a
 * forward) starts 2000 + 500 ns after the last compute op of the one before; the host's
 * wait for the step ends 2000 ns after that op.  Without it, 500 and 0.  With every wake-up
 * stalling (exponential, mean 1 us), each gap is longer than 2500 and they differ.  In
 * cache (the two ranks' 24 MB in 32 MiB), cache_host_wake_us = 1 takes its place: 1500.
 * With no_sync_every = 2 iterations 1 and 3 keep their gradients and end with their last
 * backward, after which the host goes on at once: 500 after iteration 1, 2500 after 0 and
 * 2, and the host's wait ends with the backward (0) or 2000 after the step. */
static void test_host_wake_by_hand(void **state)
{
    (void)state;
    char path[64], err[SCENARIO_ERR];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simhostwake", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.warmup=0", "run.iterations=4", "device.op_overhead_us=0.5", NULL});
    sqlite3 *db = store_db(st);
    int64_t lo, hi, host_lo, host_hi;
    bool spread;
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 500 && hi == 500 && host_lo == 0 && host_hi == 0);

    assert_int_equal(scenario_override(sc, "host.host_wake_us=2", err, sizeof err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 2500 && hi == 2500 && host_lo == 2000 && host_hi == 2000);

    assert_int_equal(scenario_override(sc, "host.host_wake_stall_fraction=1", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "host.host_wake_stall_us=1", err, sizeof err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo > 2500 && spread);

    assert_int_equal(scenario_override(sc, "host.host_wake_stall_fraction=0", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_host_wake_us=1", err, sizeof err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 1500 && hi == 1500 && host_lo == 1000 && host_hi == 1000);

    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err, sizeof err), 0);
    assert_int_equal(scenario_override(sc, "ddp.no_sync_every=2", err, sizeof err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 500 && hi == 2500 && host_lo == 0 && host_hi == 2000);
    hand_done(sc, st, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_overhead_by_hand),
        cmocka_unit_test(test_comm_launch_by_hand),
        cmocka_unit_test(test_comm_launch_per_op_by_hand),
        cmocka_unit_test(test_comm_launch_behind_by_hand),
        cmocka_unit_test(test_memory_bound_backward_by_hand),
        cmocka_unit_test(test_sleeping_write_by_hand),
        cmocka_unit_test(test_comm_slowdown_by_hand),
        cmocka_unit_test(test_bandwidth_per_kind_by_hand),
        cmocka_unit_test(test_host_wake_by_hand),
        cmocka_unit_test(test_comm_wakeup_by_hand),
        cmocka_unit_test(test_grad_write_never_wakes_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
