/* test_sim_host.c — the sim backend, worked out by hand (the model: tests/sim_by_hand.h): the
 * host's cores: busy intervals, core shares and weights, ops on a crowded host, late exits,
 * results copied out, sums on host cores and late compute wakes. */
#include "sim_by_hand.h"

/* sim_busy_end on its own: an op's end with busy intervals before, across and after it. */
static void test_busy_intervals(void **state)
{
    (void)state;
    sim_busy b = {0};
    assert_int_equal(sim_busy_end(&b, 100, 1000, 1.0), 1100); /* nothing busy */
    assert_int_equal(sim_busy_note(&b, 0, 1000), 0);
    /* Inside from its start at 500: 100 ns of work at a quarter speed. */
    assert_int_equal(sim_busy_end(&b, 500, 100, 3.0), 900);
    /* 1000 ns from 500 at half speed: 250 done by 1000, 750 after it. */
    assert_int_equal(sim_busy_end(&b, 500, 1000, 1.0), 1750);
    assert_int_equal(sim_busy_note(&b, 1500, 1600), 0);
    assert_int_equal(sim_busy_note(&b, 1700, 1800), 0);
    /* From 1400, 400 ns at half speed inside [1500, 1600] and [1700, 1800]: 100 free,
     * 50 inside, 100 free, 50 inside, the last 100 free: ends at 1900. */
    assert_int_equal(sim_busy_end(&b, 1400, 400, 1.0), 1900);
    /* An op that ends before the next interval is not slowed; those that ended before
     * its start are dropped. */
    assert_int_equal(sim_busy_end(&b, 1600, 50, 1.0), 1650);
    assert_int_equal(b.count, 1);
    /* A zero-length interval is no interval. */
    assert_int_equal(sim_busy_note(&b, 2000, 2000), 0);
    assert_int_equal(b.count, 1);
    assert_true(sim_busy_covers(&b, 1800)); /* [1700, 1800]: its end is inside, its start not */
    assert_false(sim_busy_covers(&b, 1700));
    assert_false(sim_busy_covers(&b, 1801));
    for (int i = 0; i < 100; i++) /* growth past the first allocation keeps the order */
        assert_int_equal(sim_busy_note(&b, 3000 + 20 * i, 3010 + 20 * i), 0);
    assert_int_equal(sim_busy_end(&b, 3000, 20, 1.0), 3030); /* 5 inside (10 ns), 10 free, 5 inside */
    sim_busy_free(&b);
    assert_null(b.v);
}

/* Runs host `h` to the earliest end of its ops, as the world does when nothing else can
 * move; that end. */
static int64_t host_step(sim_host *h, sim_host_job *scratch)
{
    int64_t t = sim_host_next_end(h, scratch);
    if (t != INT64_MAX)
        sim_host_finish_until(h, t);
    return t;
}

static int64_t host_end(sim_host *h, int member)
{
    int64_t end;
    assert_true(sim_host_take_end(h, member, &end));
    return end;
}

/* A host of 1.5 cores, four members.  Members 0 and 1 submit 1000 ns of work at 0,
 * member 2 500 ns: three ops share 1.5 cores, half a core each, so member 2's ends at
 * 1000; then two share them, three quarters each, and the 500 ns left of each take 666.7
 * more: 1667.  Member 3's 100 ns at 2000 run alone: 2100.  Nothing is done before the
 * host runs to its end; no work takes no time; a member with an op pending cannot submit
 * another. */
static void test_host_cores_by_hand(void **state)
{
    (void)state;
    sim_host h;
    sim_host_job scratch[4];
    int64_t end;
    assert_int_equal(sim_host_init(&h, 1.5, 1.0, 4), 0);
    assert_int_equal(sim_host_submit(&h, 0, 0, 1000), 0);
    assert_int_equal(sim_host_submit(&h, 1, 0, 1000), 0);
    assert_int_equal(sim_host_submit(&h, 2, 0, 500), 0);
    assert_int_equal(sim_host_submit(&h, 3, 2000, 100), 0);
    assert_int_equal(sim_host_submit(&h, 3, 2200, 100), -1);
    assert_false(sim_host_take_end(&h, 2, &end));
    assert_int_equal(host_step(&h, scratch), 1000);
    assert_int_equal(host_end(&h, 2), 1000);
    assert_false(sim_host_take_end(&h, 0, &end));
    assert_int_equal(host_step(&h, scratch), 1667);
    assert_int_equal(host_end(&h, 0), 1667);
    assert_int_equal(host_end(&h, 1), 1667);
    assert_int_equal(host_step(&h, scratch), 2100);
    assert_int_equal(host_end(&h, 3), 2100);
    assert_true(host_step(&h, scratch) == INT64_MAX);
    assert_int_equal(sim_host_submit(&h, 3, 2200, 0), 0);
    assert_int_equal(host_end(&h, 3), 2200);
    sim_host_free(&h);
}

/* An op done but not taken back (its stream waits on something else) holds the host no
 * longer than its end: two cores, member 0's 500 ns and member 1's 2000 ns from 0 end at
 * 500 and 2000; with member 0's left untaken once the host ran to 500, the next end is
 * member 1's, and member 0 still gives back 500 when taken.  With nothing else pending the
 * host has no next end: a stall, not a loop. */
static void test_host_goes_past_untaken_end(void **state)
{
    (void)state;
    sim_host h;
    sim_host_job scratch[2];
    assert_int_equal(sim_host_init(&h, 2, 1.0, 2), 0);
    assert_int_equal(sim_host_submit(&h, 0, 0, 500), 0);
    assert_int_equal(sim_host_submit(&h, 1, 0, 2000), 0);
    assert_int_equal(host_step(&h, scratch), 500);
    assert_int_equal(host_step(&h, scratch), 2000);
    assert_int_equal(host_end(&h, 1), 2000);
    assert_true(host_step(&h, scratch) == INT64_MAX);
    assert_int_equal(host_end(&h, 0), 500);
    sim_host_free(&h);
}

/* timing_core_shares: a core each while the ops fit; else in proportion to the weights,
 * none above a core (1.5 cores left to two sums when one op takes a whole core). */
static void test_core_shares_by_hand(void **state)
{
    (void)state;
    timing_shares sh = timing_core_shares(2, 1, 1, 0.25);
    assert_true(sh.op == 1.0 && sh.sum == 1.0);
    sh = timing_core_shares(1, 1, 1, 0.25); /* 1 / 1.25 per unit of weight */
    assert_true(fabs(sh.op - 0.8) < 1e-12 && fabs(sh.sum - 0.2) < 1e-12);
    sh = timing_core_shares(2, 2, 2, 0.25);
    assert_true(fabs(sh.op - 0.8) < 1e-12 && fabs(sh.sum - 0.2) < 1e-12);
    sh = timing_core_shares(2, 1, 2, 0.25); /* the op would get 4/3: one core, the sums half each */
    assert_true(sh.op == 1.0 && fabs(sh.sum - 0.5) < 1e-12);
    sh = timing_core_shares(2, 2, 1, 4); /* the sum would get 4/3: one core, the ops half each */
    assert_true(fabs(sh.op - 0.5) < 1e-12 && sh.sum == 1.0);
    sh = timing_core_shares(2, 0, 4, 0.25); /* sums alone: min(1, cores / sums) whatever the weight */
    assert_true(fabs(sh.sum - 0.5) < 1e-12);
    sh = timing_core_shares(1.5, 3, 0, 1);
    assert_true(fabs(sh.op - 0.5) < 1e-12);
}

/* [host] comm_core_weight = 0.25 on one core: member 0 (a rank's compute stream) 1000 ns
 * and member 1 (its comm stream) 500 ns, both at 0.  The op gets 0.8 of the core, the
 * sum 0.2: the op ends at 1250, when the sum has done 250 ns; the 250 left run alone to
 * 1500, the core's work. */
static void test_host_weighted_by_hand(void **state)
{
    (void)state;
    sim_host h;
    sim_host_job scratch[2];
    assert_int_equal(sim_host_init(&h, 1, 0.25, 2), 0);
    assert_int_equal(sim_host_submit(&h, 0, 0, 1000), 0);
    assert_int_equal(sim_host_submit(&h, 1, 0, 500), 0);
    assert_int_equal(sim_host_member_end(&h, 1, scratch), 1500);
    assert_int_equal(host_step(&h, scratch), 1250);
    assert_int_equal(host_end(&h, 0), 1250);
    assert_int_equal(host_step(&h, scratch), 1500);
    assert_int_equal(host_end(&h, 1), 1500);
    sim_host_free(&h);
}

/* One core.  Member 0's 1000 ns at 0 runs alone to 500, when the host has run that far;
 * member 1's 100 ns that started at 100 comes late: at half a core beside member 0 it
 * was done at 300.  Member 2's 1000 ns from 0 catches up 250 ns (half of 500) and shares
 * the core from 500 on: member 0's 500 ns left end at 1500, member 2's 750 then 250 alone
 * at 1750.  Then how long the ops pending take, each member's with more queued behind:
 * two of 1000 ns at 2000, the first with 1000 more, end when the core has done all 3000. */
static void test_host_late_op_and_drain_by_hand(void **state)
{
    (void)state;
    sim_host h;
    sim_host_job scratch[3];
    assert_int_equal(sim_host_init(&h, 1, 1.0, 3), 0);
    assert_int_equal(sim_host_submit(&h, 0, 0, 1000), 0);
    sim_host_finish_until(&h, 500);
    assert_int_equal(sim_host_submit(&h, 1, 100, 100), 0);
    assert_int_equal(host_end(&h, 1), 300);
    assert_int_equal(sim_host_submit(&h, 2, 0, 1000), 0);
    assert_int_equal(host_step(&h, scratch), 1500);
    assert_int_equal(host_end(&h, 0), 1500);
    assert_int_equal(host_step(&h, scratch), 1750);
    assert_int_equal(host_end(&h, 2), 1750);
    assert_true(sim_host_drain_end(&h, (double[3]){0}, scratch) == INT64_MIN);
    assert_int_equal(sim_host_submit(&h, 0, 2000, 1000), 0);
    assert_int_equal(sim_host_submit(&h, 1, 2000, 1000), 0);
    assert_int_equal(sim_host_drain_end(&h, (double[3]){1000, 0, 0}, scratch), 5000);
    assert_int_equal(host_step(&h, scratch), 4000); /* without the work queued */
    sim_host_free(&h);
}

/* Two members on one core each submitting 100,000 ops of 10 ns back to back: every op
 * takes 20 ns at half a core, and both chains end at 2,000,000 ns, the core's work. */
static void test_host_long_chains(void **state)
{
    (void)state;
    sim_host h;
    sim_host_job scratch[2];
    int64_t end0 = 0, end1 = 0;
    assert_int_equal(sim_host_init(&h, 1, 1.0, 2), 0);
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(sim_host_submit(&h, 0, end0, 10), 0);
        assert_int_equal(sim_host_submit(&h, 1, end1, 10), 0);
        assert_int_equal(host_step(&h, scratch), end0 + 20);
        end0 = host_end(&h, 0);
        end1 = host_end(&h, 1);
    }
    assert_int_equal(end0, 2000000);
    assert_int_equal(end1, 2000000);
    sim_host_free(&h);
}

/* [host] host_cores in a run: with one core for two ranks only one copy or step
 * progresses at a time, so their spans cover at least the sum of their lengths in the
 * unshared run (where the ranks copy at the same moments: they cover less), the step is
 * longer, and with two cores (one per rank) the spans are those of the unshared run. */
static void memory_ops_time(sqlite3 *db, int64_t run, int64_t *sum_ns, int64_t *covered_ns)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select start_ns, end_ns from span where run_id = ?1 "
                                        "and kind in ('copy_in', 'copy_out', 'optimizer') order by start_ns",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    int64_t from = -1, to = -1;
    *sum_ns = *covered_ns = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
        *sum_ns += b - a;
        if (a > to) {
            *covered_ns += to - from;
            from = a;
        }
        to = b > to ? b : to;
    }
    *covered_ns += to - from;
    sqlite3_finalize(q);
}

static void test_host_cores_in_a_run(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simhost", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", NULL});
    int64_t own = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t one = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t two = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    int64_t own_sum, own_covered, one_sum, one_covered;
    memory_ops_time(db, own, &own_sum, &own_covered);
    memory_ops_time(db, one, &one_sum, &one_covered);
    assert_true(own_covered < own_sum);
    assert_true(one_covered >= own_sum);
    analysis_run *a = load(st, own), *b = load(st, one);
    assert_true(b->step_ms_mean > a->step_ms_mean);
    analysis_free(a, 1);
    analysis_free(b, 1);
    const char *cols = "rank, iter, stream, kind, name, start_ns, end_ns";
    char sql[512];
    snprintf(sql, sizeof sql,
             "select count(*) from (select %s from span where run_id = ?1 except select %s from span where run_id = ?2)",
             cols, cols);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, own);
    sqlite3_bind_int64(q, 2, two);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(q, 0), 0);
    sqlite3_finalize(q);
    hand_done(sc, st, path);
}

static void test_host_copies_results_out(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simstage", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(
        (const char *[]){"run.world_size=4", "run.warmup=1", "run.iterations=8", "host.host_cores=1",
                         "run.ranks=processes", NULL});
    int64_t one = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=4", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t four = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "run.ranks=threads", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t threads = run_sim(st, sc);
    const char *paced[] = {"run.ranks=processes", "host.host_cores=1", "network.pace=true",
                           "network.algorithm=measured", "network.measured_ranks=4,4",
                           "network.measured_bytes=1000000,4000000", "network.measured_us=1,1", NULL};
    for (int i = 0; paced[i]; i++)
        assert_int_equal(scenario_override(sc, paced[i], (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t floor = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    allreduce_times a1, a4, at, ap;
    bucket_allreduce_times(db, one, &a1);
    bucket_allreduce_times(db, four, &a4);
    bucket_allreduce_times(db, threads, &at);
    bucket_allreduce_times(db, floor, &ap);
    assert_true(a1.n >= 16);
    assert_int_equal(a4.n, a1.n);
    assert_int_equal(at.n, a1.n);
    assert_int_equal(ap.n, a1.n);
    for (int i = 0; i < a1.n; i++) {
        assert_int_equal(a4.seq[i], a1.seq[i]);
        assert_int_equal(a4.time_ns[i], at.time_ns[i]);
        assert_int_equal(a4.spread_ns[i], 0);
        assert_true(a1.time_ns[i] >= at.time_ns[i] + 3000);
        if (i > 0) /* after the rebuild, buckets of 2 MB: the three others' copies exactly */
            assert_int_equal(a1.time_ns[i], at.time_ns[i] + 3000);
        assert_int_equal(a1.spread_ns[i], 0);
        assert_int_equal(ap.time_ns[i], at.time_ns[i]);
        assert_int_equal(ap.spread_ns[i], 0);
    }
    hand_done(sc, st, path);
}

/* [host] comm_on_host_cores: two ranks (threads), a bucket allreduce of 2 MB measured
 * at 2000 us alone (between 1 MB at 1000 us and 4 MB at 4000 us), each rank's copy into a
 * bucket 1000 ns of a core, and each backward's 2 MB gradient write 500 ns of one before
 * it sleeps.  After the rebuild the first bucket's sums run while both ranks write layer
 * 0's gradients and copy them in; the cores are never idle then (two sums alone fill one
 * core, and two cores at a full core each), so the sums end when the cores have done
 * their work, the writes' and the copies': the table's time plus 2 x (500 + 1000) ns /
 * cores, 2003 us on one core and 2001.5 us on two.  The last bucket's sums run alone: the table's time, 2000 us,
 * on either, as does the rebuild iteration's one bucket of 4 MB (4000 us).  Without the
 * key every bucket allreduce lasts the table's time.  With comm_slowdown the backwards
 * beside the sums wait to learn how long the comm stream is busy; the sums still meet the
 * copies behind them (2003 us on one core), not timed alone before those are submitted. */
static void test_sums_on_host_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simsums", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=4", "host.host_cores=1",
                                                  "network.algorithm=measured", "network.measured_ranks=2,2",
                                                  "network.measured_bytes=1000000,4000000",
                                                  "network.measured_us=1000,4000", NULL});
    int64_t table = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.comm_on_host_cores=true", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t one = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t two = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    assert_int_equal(scenario_override(sc, "device.comm_slowdown=0.1", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    int64_t slowed = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    allreduce_times at, a1, a2, as;
    bucket_allreduce_times(db, table, &at);
    bucket_allreduce_times(db, one, &a1);
    bucket_allreduce_times(db, two, &a2);
    bucket_allreduce_times(db, slowed, &as);
    assert_true(at.n >= 8);
    assert_int_equal(a1.n, at.n);
    assert_int_equal(a2.n, at.n);
    for (int i = 0; i < at.n; i++) {
        /* the iteration with the rebuild: one bucket of 4 MB (4000 us), nothing beside it */
        bool beside_copies = i % 2 == 1;
        int64_t alone = i == 0 ? 4000000 : 2000000;
        assert_int_equal(at.time_ns[i], alone);
        assert_int_equal(a1.time_ns[i], beside_copies ? 2003000 : alone);
        assert_int_equal(a2.time_ns[i], beside_copies ? 2001500 : alone);
        assert_int_equal(as.time_ns[i], a1.time_ns[i]);
        assert_int_equal(a1.spread_ns[i], 0);
        assert_int_equal(a2.spread_ns[i], 0);
    }
    hand_done(sc, st, path);
}

/* Per bucket allreduce of `run` (two ranks): its iteration, the first rank out, both
 * ends, and how long the first rank's copies out and step of that iteration hold the
 * host's cores after it (the end of the last of them). */
typedef struct {
    int iter, first;
    int64_t first_end, other_end, first_work_end;
} exit_pair;

static int exit_pairs(sqlite3 *db, int64_t run, exit_pair *out, int cap)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select a.iter, a.rank, a.end_ns, b.end_ns, (select max(end_ns) from span m "
                                        " where m.run_id = a.run_id and m.rank = a.rank and m.iter = a.iter and "
                                        " m.kind in ('copy_out', 'optimizer')) from span a join span b on "
                                        "b.run_id = a.run_id and b.seq = a.seq and b.rank <> a.rank where a.run_id = ?1 "
                                        "and a.kind = 'allreduce' and a.bucket >= 0 and (a.end_ns < b.end_ns or "
                                        "(a.end_ns = b.end_ns and a.rank < b.rank)) order by a.seq",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    int n = 0;
    while (sqlite3_step(q) == SQLITE_ROW && n < cap) {
        out[n] = (exit_pair){sqlite3_column_int(q, 0), sqlite3_column_int(q, 1), sqlite3_column_int64(q, 2),
                             sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4)};
        n++;
    }
    sqlite3_finalize(q);
    return n;
}

/* [host] comm_exit_late_*: two ranks on one core (crowded), every rank but the first
 * out late by 300 ns.  After the rebuild each iteration has two buckets: layer 1's
 * allreduce ends while layer 0's backward (2 ms at 1 GFLOP/s) still runs on both ranks,
 * so they leave it together; layer 0's, the last, finds both compute streams waiting:
 * the second rank leaves exactly 300 ns after the first (the first rank's copy out alone
 * holds the core 1000 ns).  With a late exit of 1 s, it leaves when the first rank's
 * copies out and step are done, not later.  With a core each (host_cores = 2) nobody is
 * late. */
static void test_late_exit_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simexit", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.iterations=4", "run.warmup=1", "device.peak_tflops=0.001",
                                                  "host.host_cores=1", "host.comm_exit_late_fraction=1",
                                                  "host.comm_exit_late_us=0.3", NULL});
    int64_t runs[3];
    runs[0] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.comm_exit_late_us=1000000", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    runs[1] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    runs[2] = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    for (int k = 0; k < 3; k++) {
        exit_pair p[16];
        int n = exit_pairs(db, runs[k], p, 16);
        assert_int_equal(n, 9); /* one bucket before the rebuild, then two an iteration */
        for (int i = 0; i < n; i++) {
            bool last = i + 1 == n || p[i + 1].iter != p[i].iter;
            int64_t lag = p[i].other_end - p[i].first_end;
            if (k == 2 || !last)
                assert_int_equal(lag, 0);
            else if (k == 0)
                assert_int_equal(lag, 300);
            else
                assert_int_equal(p[i].other_end, p[i].first_work_end);
            if (k == 1 && last)
                assert_true(lag >= 1000);
        }
    }
    hand_done(sc, st, path);
}

/* [host] compute_wake_late_*: two ranks on one core (crowded), every compute stream that
 * idles until its comm stream's event starts what follows late, no later than the cores
 * are free of the work the host's ranks have submitted and queued.  At each iteration's
 * end both ranks wait for the last bucket allreduce; the rank timed first finds nothing
 * submitted and starts its copies out at the allreduce's end; the other finds those
 * copies and the step queued behind them and starts 300 ns late, or with a late start of
 * 1 s exactly when the first rank's step ends.  With a core each (host_cores = 2) nobody
 * is late. */
typedef struct {
    int64_t allreduce_end, copy_out_start, work_end;
} wake_of_rank;

static int wakes(sqlite3 *db, int64_t run, wake_of_rank out[][2], int cap)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select a.iter, a.rank, a.end_ns, (select min(start_ns) from span m where "
                                        "m.run_id = a.run_id and m.rank = a.rank and m.iter = a.iter and m.kind = "
                                        "'copy_out'), (select max(end_ns) from span m where m.run_id = a.run_id and "
                                        "m.rank = a.rank and m.iter = a.iter and m.kind in ('copy_out', 'optimizer')) "
                                        "from span a where a.run_id = ?1 and a.kind = 'allreduce' and a.bucket >= 0 "
                                        "and a.seq = (select max(seq) from span b where b.run_id = a.run_id and "
                                        "b.iter = a.iter and b.kind = 'allreduce' and b.bucket >= 0) order by a.iter, "
                                        "a.rank",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    int n = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int rank = sqlite3_column_int(q, 1);
        if (rank == 0 && n < cap)
            n++;
        assert_true(n > 0);
        out[n - 1][rank] = (wake_of_rank){sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3),
                                          sqlite3_column_int64(q, 4)};
    }
    sqlite3_finalize(q);
    return n;
}

static void test_compute_wake_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simwake", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.iterations=4", "run.warmup=1", "device.peak_tflops=0.001",
                                                  "host.host_cores=1", "host.compute_wake_late_fraction=1",
                                                  "host.compute_wake_late_us=0.3", NULL});
    int64_t runs[3];
    runs[0] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.compute_wake_late_us=1000000", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    runs[1] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}, SCENARIO_ERR), 0);
    runs[2] = run_sim(st, sc);
    for (int k = 0; k < 3; k++) {
        wake_of_rank w[8][2];
        int n = wakes(store_db(st), runs[k], w, 8);
        assert_int_equal(n, 5); /* the warm-up and four iterations */
        for (int i = 0; i < n; i++) {
            int64_t lag0 = w[i][0].copy_out_start - w[i][0].allreduce_end;
            int64_t lag1 = w[i][1].copy_out_start - w[i][1].allreduce_end;
            int early = lag0 <= lag1 ? 0 : 1, late = 1 - early;
            assert_int_equal(w[i][early].copy_out_start, w[i][early].allreduce_end);
            if (k == 0)
                assert_int_equal(w[i][late].copy_out_start - w[i][late].allreduce_end, 300);
            else if (k == 1)
                assert_int_equal(w[i][late].copy_out_start, w[i][early].work_end);
            else
                assert_int_equal(w[i][late].copy_out_start, w[i][late].allreduce_end);
        }
    }
    hand_done(sc, st, path);
}

/* Late exits per host: four ranks on two hosts of one core each (network.gpus_per_node =
 * 2), every rank late by 300 ns but the first of its host out.  In every bucket allreduce
 * both compute streams wait for (the last of each iteration), each host has one rank out
 * at the collective's end and the other 300 ns after it. */
static void test_late_exit_per_host(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simexith", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.world_size=4", "network.gpus_per_node=2", "run.iterations=4",
                                                  "run.warmup=1", "device.peak_tflops=0.001", "host.host_cores=1",
                                                  "host.comm_exit_late_fraction=1", "host.comm_exit_late_us=0.3",
                                                  NULL});
    int64_t run = run_sim(st, sc);
    sqlite3_stmt *q;
    /* Per last bucket of an iteration and host: how many ranks left at the first end,
     * how many 300 ns after it. */
    assert_int_equal(sqlite3_prepare_v2(store_db(st),
                                        "with a as (select seq, iter, rank, end_ns, min(end_ns) over (partition by seq) "
                                        " first_end, max(seq) over (partition by iter) last_seq from span where run_id = ?1 "
                                        " and kind = 'allreduce' and bucket >= 0) select rank / 2, "
                                        "sum(end_ns = first_end), sum(end_ns = first_end + 300), count(*) from a "
                                        "where seq = last_seq group by seq, rank / 2",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    int groups = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        assert_int_equal(sqlite3_column_int(q, 1), 1);
        assert_int_equal(sqlite3_column_int(q, 2), 1);
        assert_int_equal(sqlite3_column_int(q, 3), 2);
        groups++;
    }
    sqlite3_finalize(q);
    assert_int_equal(groups, 2 * 5); /* two hosts, five iterations */
    hand_done(sc, st, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_intervals),
        cmocka_unit_test(test_core_shares_by_hand),
        cmocka_unit_test(test_host_weighted_by_hand),
        cmocka_unit_test(test_host_cores_by_hand),
        cmocka_unit_test(test_host_goes_past_untaken_end),
        cmocka_unit_test(test_host_late_op_and_drain_by_hand),
        cmocka_unit_test(test_host_long_chains),
        cmocka_unit_test(test_host_cores_in_a_run),
        cmocka_unit_test(test_late_exit_by_hand),
        cmocka_unit_test(test_late_exit_per_host),
        cmocka_unit_test(test_host_copies_results_out),
        cmocka_unit_test(test_sums_on_host_by_hand),
        cmocka_unit_test(test_compute_wake_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
