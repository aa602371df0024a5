/* test_calibrate_run.c — the model's terms learned from a run's spans, worked by hand:
 * the forwards' mean excess over their model, the median gap between consecutive
 * forwards, the copies' and SGD's bandwidth, and each bucket allreduce's time from the
 * last arrival (the median over collectives of one size; those some rank did not record
 * left out), how much slower forwards and backwards run inside their rank's
 * collectives, the copies' core time when a run's ranks share the cores, how late an
 * idle comm stream starts a bucket's allreduce, how late ranks waiting for one leave
 * it on a crowded host, and how fast a backward bound by its gradient write writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "engine/predict/calibrate_run.h"
#include "engine/predict/calibrate_weight.h"

static run_span fwd(int rank, int iter, int64_t start, int64_t end, double model)
{
    return (run_span){.run = 1, .world = 2, .rank = rank, .iter = iter, .stream = STREAM_COMPUTE,
                      .kind = SPAN_FORWARD, .bucket = -1, .seq = -1, .start_ns = start, .end_ns = end,
                      .model_ns = model};
}

static run_span mem(int rank, span_kind kind, int64_t bytes, int64_t start, int64_t end)
{
    return (run_span){.run = 1, .world = 2, .rank = rank, .stream = STREAM_COMPUTE, .kind = (uint8_t)kind,
                      .bucket = -1, .seq = -1, .bytes = bytes, .start_ns = start, .end_ns = end};
}

static run_span ar(int rank, int64_t seq, int64_t bytes, int64_t start, int64_t end)
{
    return (run_span){.run = 1, .world = 2, .rank = rank, .stream = STREAM_COMM, .kind = SPAN_ALLREDUCE,
                      .bucket = 0, .seq = seq, .bytes = bytes, .start_ns = start, .end_ns = end};
}

/* Forwards (model 1000 ns): rank 0 [0, 1100], [1120, 2300], [2330, 3400]: excess 100,
 * 180, 70; gaps 20, 30.  Rank 1 [0, 1200], [1260, 2260]: excess 200, 0; gap 60.  Mean
 * excess 550 / 5 = 110 ns, standard deviation sqrt(5360) ns; median gap of 20, 30, 60 = 30 ns.  Memory, each
 * kind its own: a 1000-byte copy_in in 100 ns (2000 B moved: 20 GB/s), a 1000-byte
 * copy_out in 150 ns (13.33 GB/s), an SGD of 4000 bytes in 1200 ns (12000 B: 10 GB/s).  Allreduces of
 * 8000 B: seq 5 ranks start 100 and 400, end 900 and 910: 510 ns; seq 6 start 0, 50,
 * end 350, 352: 302 ns; seq 7 likewise 700 ns; seq 8 (rank 1 only) left out: median
 * 510 ns.  One 4000-byte allreduce: seq 9, 1000 ns. */
static void test_by_hand(void **state)
{
    (void)state;
    run_span s[] = {
        fwd(0, 3, 0, 1100, 1000),        fwd(0, 3, 1120, 2300, 1000), fwd(0, 3, 2330, 3400, 1000),
        fwd(1, 3, 0, 1200, 1000),        fwd(1, 3, 1260, 2260, 1000),
        mem(0, SPAN_COPY_IN, 1000, 5000, 5100), mem(0, SPAN_COPY_OUT, 1000, 6000, 6150),
        mem(1, SPAN_OPTIMIZER, 4000, 7000, 8200),
        ar(0, 5, 8000, 100, 900),        ar(1, 5, 8000, 400, 910),
        ar(0, 6, 8000, 0, 350),          ar(1, 6, 8000, 50, 352),
        ar(0, 7, 8000, 1000, 1700),      ar(1, 7, 8000, 1000, 1690),
        ar(1, 8, 8000, 0, 99999),
        ar(0, 9, 4000, 0, 1000),         ar(1, 9, 4000, 0, 900),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nforward, 5);
    assert_true(fabs(c.op_wakeup_us - 0.110) < 1e-12);
    /* squares 10000 + 32400 + 4900 + 40000 + 0 = 87300, / 5 = 17460, - 110^2 = 5360 */
    assert_true(fabs(c.op_wakeup_sd_us - sqrt(5360.0) / 1e3) < 1e-12);
    assert_int_equal(c.ngaps, 3);
    assert_true(fabs(c.op_overhead_us - 0.030) < 1e-12);
    assert_int_equal(c.memory.ncopy_in, 1);
    assert_int_equal(c.memory.ncopy_out, 1);
    assert_int_equal(c.memory.noptimizer, 1);
    assert_true(fabs(c.memory.copy_in_gbps - 20.0) < 1e-12);
    assert_true(fabs(c.memory.copy_out_gbps - 2000.0 / 150.0) < 1e-12);
    assert_true(fabs(c.memory.optimizer_gbps - 10.0) < 1e-12);
    assert_int_equal(c.ncollectives, 4);
    assert_int_equal(c.nar, 2);
    for (size_t i = 0; i < c.nar; i++) {
        assert_int_equal(c.ar[i].ranks, 2);
        if (c.ar[i].bytes == 8000)
            assert_true(fabs(c.ar[i].us - 0.510) < 1e-12);
        else if (c.ar[i].bytes == 4000)
            assert_true(fabs(c.ar[i].us - 1.000) < 1e-12);
        else
            fail_msg("unexpected sample of %lld bytes", (long long)c.ar[i].bytes);
    }
}

/* Forwards faster than their model (a run whose clock the model overestimates) give no
 * negative wake-up; spans of two runs are never paired into a gap or a collective. */
static void test_floors_and_runs_apart(void **state)
{
    (void)state;
    run_span s[] = {fwd(0, 1, 0, 900, 1000), fwd(0, 1, 950, 1900, 1000), ar(0, 3, 100, 0, 10),
                    ar(1, 3, 100, 0, 10)};
    s[1].run = 2; /* same rank and iteration, another run */
    s[3].run = 2; /* so seq 3 has one rank per run: not a whole collective */
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, 4, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nforward, 2);
    assert_true(c.op_wakeup_us == 0);
    assert_int_equal(c.ngaps, 0);
    assert_int_equal(c.nar, 0);
}

static run_span bwd(int rank, int64_t bytes, int64_t start, int64_t end, double model)
{
    run_span s = fwd(rank, 3, start, end, model);
    s.kind = SPAN_BACKWARD;
    s.bytes = bytes;
    s.write_bytes = (double)bytes;
    return s;
}

/* comm_slowdown and comm_wakeup_us: a forward [0, 1100] of model 1000 (wake-up 100), a
 * copy_in of 1000 bytes in 100 ns (20 GB/s: every backward's 1000-byte write takes 50
 * ns, below its model).  One allreduce both ranks are in from 3000 (rank 1's arrival)
 * to 10000.  Backwards, each with its time inside, whether its modelled end (start +
 * model + 100) falls inside, and its time beyond the model:
 *   rank 0 [8000, 10900], model 2400: 2000 inside, ends at 10500 (outside), 400 beyond;
 *   rank 1 [4000, 5000], model 400: 1000 inside, ends at 4500 (inside), 500 beyond;
 *   rank 1 [6000, 9000], model 2000: 3000 inside, ends at 8100 (inside), 900 beyond;
 *   rank 0 [11000, 13000]: nothing inside, left out.
 * excess = a x inside + w x late fits all three exactly with a = 0.2, w = 300: s =
 * 0.2 / 0.8 = 0.25, w = 0.3 us. */
static void test_slowdown_by_hand(void **state)
{
    (void)state;
    run_span s[] = {
        fwd(0, 3, 0, 1100, 1000),           mem(0, SPAN_COPY_IN, 1000, 100, 200),
        ar(0, 1, 8000, 2000, 10000),        ar(1, 1, 8000, 3000, 10000),
        bwd(0, 1000, 8000, 10900, 2400),    bwd(1, 1000, 4000, 5000, 400),
        bwd(1, 1000, 6000, 9000, 2000),     bwd(0, 1000, 11000, 13000, 1000),
    };
    enum { N = sizeof s / sizeof s[0] };
    run_span faster[N];
    memcpy(faster, s, sizeof s); /* calib_run_fit sorts its spans */
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, N, 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.memory.copy_in_gbps - 20.0) < 1e-12);
    assert_true(fabs(c.op_wakeup_us - 0.1) < 1e-12);
    assert_int_equal(c.ncontended, 3);
    assert_true(fabs(c.comm_slowdown - 0.25) < 1e-9);
    assert_true(fabs(c.comm_wakeup_us - 0.3) < 1e-9);

    /* Every op faster than its model inside the collective: neither is below 0. */
    faster[4].end_ns = 9000;
    faster[5].end_ns = 4100;
    faster[6].end_ns = 7000;
    assert_int_equal(calib_run_fit(faster, N, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.ncontended, 3);
    assert_true(c.comm_slowdown == 0);
    assert_true(c.comm_wakeup_us == 0);
}

/* Forwards of model 1000 beyond it by 90, 95, 100, 100, 105, 110 ns and by 2000, 2500,
 * 3000: median 105, median absolute deviation 10, so beyond 205 are stalls, 3 of 9.  The
 * body: mean 100, standard deviation sqrt(250 / 6); the stalls' mean 2500, 2400 beyond
 * the body's.  (The mean of all, 900, is 100 + 3/9 x 2400.)  With two such forwards
 * only, there are no stalls and all nine form the body. */
static void test_stalls_by_hand(void **state)
{
    (void)state;
    const int excess[] = {90, 95, 100, 100, 105, 110, 2000, 2500, 3000};
    run_span s[9];
    for (int i = 0; i < 9; i++)
        s[i] = fwd(i % 2, 3, 10000 * i, 10000 * i + 1000 + excess[i], 1000);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, 9, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nforward, 9);
    assert_true(fabs(c.op_wakeup_us - 0.1) < 1e-12);
    assert_true(fabs(c.op_wakeup_sd_us - sqrt(250.0 / 6) / 1e3) < 1e-12);
    assert_true(fabs(c.op_stall_fraction - 3.0 / 9) < 1e-12);
    assert_true(fabs(c.op_stall_us - 2.4) < 1e-12);

    for (int i = 0; i < 8; i++)
        s[i] = fwd(i % 2, 3, 10000 * i, 10000 * i + 1000 + excess[i], 1000);
    assert_int_equal(calib_run_fit(s, 8, 0, 0, &c, err, sizeof err), 0);
    assert_true(c.op_stall_fraction == 0 && c.op_stall_us == 0);
    assert_true(fabs(c.op_wakeup_us - (600 + 4500) / 8.0 / 1e3) < 1e-12);
}

/* host_cores = 2: four ranks' 1000-byte copies out all in [0, 2000], one more alone in
 * [3000, 4000], and a copy in of rank 0 in [1000, 1500].  Four ops at once on two cores
 * get half a core each, five (in [1000, 1500]) two fifths: each of the four copies out
 * 500 + 200 + 250 = 950 ns of core time, the copy in 200 ns.  Copies out: 5 x 2000 B over
 * 4 x 950 + 1000 ns; copies in: 2000 B over 200 ns, and a copy in of another run, alone
 * on its own machine though at the same moments, 2000 B over 200 ns.  Without
 * host_cores: wall time, 10000 B / 9000 ns and 4000 B / 700 ns.  An allreduce, last
 * arrival at 5000, whose ranks end at 5600 and 7000: with shared cores it lasts until the
 * first rank is out (600 ns; predict shares each rank's copy of the result out),
 * otherwise until the last (2000 ns). */
static void test_shared_cores_by_hand(void **state)
{
    (void)state;
    enum { N = 9 };
    run_span s[N] = {
        mem(0, SPAN_COPY_OUT, 1000, 0, 2000),    mem(1, SPAN_COPY_OUT, 1000, 0, 2000),
        mem(2, SPAN_COPY_OUT, 1000, 0, 2000),    mem(3, SPAN_COPY_OUT, 1000, 0, 2000),
        mem(0, SPAN_COPY_OUT, 1000, 3000, 4000), mem(0, SPAN_COPY_IN, 1000, 1000, 1500),
        ar(0, 3, 4000, 4800, 5600),              ar(1, 3, 4000, 5000, 7000),
        mem(0, SPAN_COPY_IN, 1000, 1000, 1200),
    };
    s[N - 1].run = 2;
    run_span wall[N];
    memcpy(wall, s, sizeof s);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, N, 2, 0, &c, err, sizeof err), 0);
    assert_true(c.host_cores == 2);
    assert_true(fabs(c.memory.copy_out_gbps - 10000.0 / 4800.0) < 1e-12);
    assert_true(fabs(c.memory.copy_in_gbps - 4000.0 / 400.0) < 1e-12);
    assert_int_equal((int)c.nar, 1);
    assert_true(fabs(c.ar[0].us - 0.6) < 1e-12);
    assert_int_equal(calib_run_fit(wall, N, 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.ar[0].us - 2.0) < 1e-12);
    assert_true(c.host_cores == 0);
    assert_true(fabs(c.memory.copy_out_gbps - 10000.0 / 9000.0) < 1e-12);
    assert_true(fabs(c.memory.copy_in_gbps - 4000.0 / 700.0) < 1e-12);
}

/* host_cores = 1, two ranks: a bucket allreduce whose last rank arrives at 1000 and whose
 * first rank is out at 5000 (the other at 5200), and a copy in of rank 0 in [2000, 3000].
 * The sums are two jobs from 1000 to 5000 beside it: two jobs on the core in [1000,
 * 2000] and [3000, 5000] (half a core each), three in [2000, 3000] (a third).  Each sum
 * got 500 + 1000/3 + 1000 ns of the core; alone the two would get half of it each, so the
 * collective alone lasts twice that, 11000/3 ns; the copy in got 1000/3 ns: 2000 B over
 * it.  Without the sums counted (a copy alone on the core) it would be 2000 B over
 * 1000 ns, and the allreduce 4000 ns. */
static void test_sums_share_the_cores_by_hand(void **state)
{
    (void)state;
    run_span s[] = {ar(0, 3, 4000, 0, 5000), ar(1, 3, 4000, 1000, 5200), mem(0, SPAN_COPY_IN, 1000, 2000, 3000)};
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, 3, 1, 0, &c, err, sizeof err), 0);
    assert_int_equal((int)c.nar, 1);
    assert_true(fabs(c.ar[0].us - 11.0 / 3.0) < 1e-9);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / (1000.0 / 3.0)) < 1e-9);
    assert_true(c.comm_core_weight == 1.0); /* one collective: too few to learn a weight from */
}

/* `met` bucket allreduces of 4000 B on two ranks, each beside a copy in of rank 0 in
 * [t, t + 1200] (last arrival t, first rank out at t + 2800), into s: 3 x met spans. */
static size_t met_a_copy(run_span *s, int met)
{
    size_t k = 0;
    for (int j = 0; j < met; j++) {
        int64_t t = 50000 + (int64_t)j * 100000;
        s[k++] = ar(0, 200 + j, 4000, t - 1000, t + 2800);
        s[k++] = ar(1, 200 + j, 4000, t, t + 3000);
        s[k++] = mem(0, SPAN_COPY_IN, 1000, t, t + 1200);
    }
    return k;
}

/* comm_core_weight learned: host_cores = 1, two ranks, bucket allreduces of 4000 B, nine
 * alone (last arrival t, both ranks out at t + 2000) and eight beside a copy in of rank 0
 * in [t, t + 1200] (last arrival t, first rank out at t + 2800).  At weight w the two sums
 * get w / (1 + 2w) of the core each beside the copy, half of it after: alone such a
 * collective would last 2 x (1200 w / (1 + 2w) + 1600 / 2) ns, 2000 ns, the others' time,
 * only at w = 1/4 (at 1 it would be 2400, away from the size's median, 2000).  So the fit
 * takes 1/4 from the eight that met the copy, the table is 2 us, and each copy its two
 * thirds of the core: 2000 B over 800 ns. */
static void test_sums_weight_by_hand(void **state)
{
    (void)state;
    enum { ALONE = 9, MET = 8, N = 2 * ALONE + 3 * MET };
    run_span s[N];
    size_t k = 0;
    for (int j = 0; j < ALONE; j++) {
        int64_t t = (int64_t)j * 100000;
        s[k++] = ar(0, 100 + j, 4000, t, t + 2000);
        s[k++] = ar(1, 100 + j, 4000, t, t + 2000);
    }
    k += met_a_copy(s + k, MET);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, N, 1, 0, &c, err, sizeof err), 0);
    assert_true(c.comm_core_weight == 0.25);
    assert_int_equal((int)c.nweighted, MET);
    assert_int_equal((int)c.nar, 1);
    assert_true(fabs(c.ar[0].us - 2.0) < 1e-9);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / 800.0) < 1e-9);
}

/* Where the runs do not decide, the prior: eight bucket allreduces of 4000 B, each beside
 * the same copy in, and none alone.  They agree with each other at every weight (each is
 * its size's median), so no weight of the grid does better than the comm workers'
 * scheduler weight, 110 / 1024, which the fit keeps (it kept 1 before). */
static void test_sums_weight_prior(void **state)
{
    (void)state;
    enum { MET = 8, N = 3 * MET };
    run_span s[N];
    assert_int_equal(met_a_copy(s, MET), N);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, N, 1, 0, &c, err, sizeof err), 0);
    assert_int_equal((int)c.nweighted, MET);
    assert_true(c.comm_core_weight == 110.0 / 1024.0);
}

/* The rule that keeps the prior: a weight of the grid must spread the collectives' times
 * alone 10 % less.  The disturbed check's 2.37 % (486.181 against 498.002, 2667
 * collectives) and the undisturbed ones' largest, 1.73 % (341.426 against 347.452), keep
 * the prior; 12 % less takes the grid's weight, and so does the by-hand case's exact fit
 * (0 against any spread); a spread under rounding beats nothing. */
static void test_sums_weight_gain_needed(void **state)
{
    (void)state;
    assert_false(calib_weight_beats_prior(486.181, 498.002, 2667));
    assert_false(calib_weight_beats_prior(341.426, 347.452, 2667));
    assert_false(calib_weight_beats_prior(450.0, 498.002, 2667)); /* 9.6 % */
    assert_true(calib_weight_beats_prior(438.0, 498.002, 2667));  /* 12.0 % */
    assert_true(calib_weight_beats_prior(0.0, 1e-3, 8));
    assert_false(calib_weight_beats_prior(0.0, 8e-12, 8)); /* both within rounding */
}

/* A span of run `run` whose host's memory is `host_bytes`. */
static run_span in_run(run_span s, int64_t run, double host_bytes)
{
    s.run = run;
    s.host_bytes = host_bytes;
    return s;
}

static run_span in_bucket(int rank, int iter, span_stream stream, span_kind kind, int bucket, int64_t start,
                          int64_t end)
{
    return (run_span){.run = 1, .world = 2, .rank = rank, .iter = iter, .stream = (uint8_t)stream,
                      .kind = (uint8_t)kind, .bucket = bucket, .seq = stream == STREAM_COMM ? 10 * iter + bucket : -1,
                      .bytes = 1000, .start_ns = start, .end_ns = end};
}

/* An idle comm stream's late start.  Forwards of rank 0 [0, 1000], [1030, 2030]:
 * op_overhead 30 ns.  Rank 0: bucket 0's copies in end at 3000 and 3400 (ready 3400),
 * its allreduce starts 3650 on a stream with nothing before it: 250; bucket 1 ready
 * 6000, the stream free since 5000: starts 6130, 130.  Rank 1: bucket 0 ready 3500,
 * starts 3600: 100, ends 9000; bucket 1 ready 8000 while the stream was still busy:
 * queued, left out; bucket 2 has no copy in: left out.  Delays 250, 130, 100: mean 160,
 * 130 beyond op_overhead; standard deviation sqrt(29800 - 160^2) = sqrt(4200) ns. */
static void test_comm_launch_by_hand(void **state)
{
    (void)state;
    run_span s[] = {
        fwd(0, 2, 0, 1000, 1000),
        fwd(0, 2, 1030, 2030, 1000),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 2900, 3000),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 3300, 3400),
        in_bucket(0, 2, STREAM_COMM, SPAN_ALLREDUCE, 0, 3650, 5000),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 1, 5900, 6000),
        in_bucket(0, 2, STREAM_COMM, SPAN_ALLREDUCE, 1, 6130, 7000),
        in_bucket(1, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 3400, 3500),
        in_bucket(1, 2, STREAM_COMM, SPAN_ALLREDUCE, 0, 3600, 9000),
        in_bucket(1, 2, STREAM_COMPUTE, SPAN_COPY_IN, 1, 7900, 8000),
        in_bucket(1, 2, STREAM_COMM, SPAN_ALLREDUCE, 1, 9010, 9500),
        in_bucket(1, 2, STREAM_COMM, SPAN_ALLREDUCE, 2, 9600, 9700),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.op_overhead_us - 0.030) < 1e-12);
    assert_int_equal(c.nlaunch, 3);
    assert_true(fabs(c.comm_launch_us - 0.130) < 1e-9);
    assert_true(fabs(c.comm_launch_sd_us - sqrt(4200.0) / 1e3) < 1e-9);
    assert_true(c.comm_launch_per_op_us == 0);
    assert_int_equal(c.nlaunch_beside_ops, 0);
    /* On a crowded host (one core for the two ranks) the delays are fitted to the others'
     * copies running at the ready time: rank 0's bucket 0 (ready 3400) met rank 1's copy
     * in [3400, 3500], the other two none.  Delays 250, 130, 100 against 1, 0, 0: slope
     * 90 / (2/3) = 135 ns per op, intercept 160 - 135/3 = 115 (85 beyond op_overhead),
     * residuals 0, 15, -15: standard deviation sqrt(150) ns. */
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 1, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nlaunch, 3);
    assert_int_equal(c.nlaunch_beside_ops, 1);
    assert_true(fabs(c.comm_launch_per_op_us - 0.135) < 1e-9);
    assert_true(fabs(c.comm_launch_us - 0.085) < 1e-9);
    assert_true(fabs(c.comm_launch_sd_us - sqrt(150.0) / 1e3) < 1e-9);

    /* The same spans as a run in a 32 MiB cache (8 MB), beside a run out of it (1 GB) whose
     * two forwards teach op_overhead (30 ns): the launches are learned apart, into the
     * cache_comm_launch terms, and none out of cache. */
    enum { N = sizeof s / sizeof s[0] };
    run_span both[N + 2];
    for (size_t i = 0; i < N; i++)
        both[i] = in_run(s[i], 2, 8e6);
    both[N] = in_run(fwd(0, 2, 0, 1000, 1000), 1, 1e9);
    both[N + 1] = in_run(fwd(0, 2, 1030, 2030, 1000), 1, 1e9);
    assert_int_equal(calib_run_fit(both, N + 2, 0, 32, &c, err, sizeof err), 0);
    assert_int_equal(c.nlaunch, 0);
    assert_int_equal(c.ncache_launch, 3);
    assert_true(fabs(c.cache_comm_launch_us - 0.130) < 1e-9);
    assert_true(fabs(c.cache_comm_launch_sd_us - sqrt(4200.0) / 1e3) < 1e-9);
    assert_true(c.cache_comm_launch_per_op_us == 0 && c.cache_comm_launch_behind_us == 0);
}

/* Launches beside the rank's own compute going straight on (host_cores > 0).  Rank 0:
 * bucket 0 ready 3400, then its copies of bucket 1 [3420, 4400], [4420, 6000], each
 * within 50 us of the one before: a run that ends 6000; its allreduce starts 6100, after
 * the run: behind.  Its bucket 1 (ready 6000) waits for a busy stream: left out.  Rank 1:
 * bucket 0 ready 3500, its copy of bucket 1 [3510, 9000] a run ending 9000, its allreduce
 * starts 3700: a core found elsewhere, a delay of 200 in the line; bucket 1 ready 9000 on
 * a stream free since 8000, no op after it: 300 in the line.  So 1 of 2 behind: holds of
 * at least 2600 (rank 0's run) and of 200 (rank 1's), one of them ended: a mean hold of
 * 2800 ns; the line of 200 and 300: 250 (no forwards, no op_overhead), deviation 50 ns.
 * Without host_cores nothing is behind: delays 2700, 200, 300 in the line. */
static void test_comm_launch_behind_by_hand(void **state)
{
    (void)state;
    run_span s[] = {
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 2900, 3000),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 3300, 3400),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 1, 3420, 4400),
        in_bucket(0, 2, STREAM_COMPUTE, SPAN_COPY_IN, 1, 4420, 6000),
        in_bucket(0, 2, STREAM_COMM, SPAN_ALLREDUCE, 0, 6100, 7000),
        in_bucket(0, 2, STREAM_COMM, SPAN_ALLREDUCE, 1, 7010, 7500),
        in_bucket(1, 2, STREAM_COMPUTE, SPAN_COPY_IN, 0, 3400, 3500),
        in_bucket(1, 2, STREAM_COMPUTE, SPAN_COPY_IN, 1, 3510, 9000),
        in_bucket(1, 2, STREAM_COMM, SPAN_ALLREDUCE, 0, 3700, 8000),
        in_bucket(1, 2, STREAM_COMM, SPAN_ALLREDUCE, 1, 9300, 9800),
    };
    const size_t n = sizeof s / sizeof s[0];
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, n, 2, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nlaunch, 3);
    assert_int_equal(c.nlaunch_goes_on, 2);
    assert_int_equal(c.nlaunch_behind, 1);
    assert_true(fabs(c.comm_launch_behind_us - 2.8) < 1e-9);
    assert_true(fabs(c.comm_launch_us - 0.250) < 1e-9);
    assert_true(fabs(c.comm_launch_sd_us - 0.050) < 1e-9);
    assert_int_equal(calib_run_fit(s, n, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nlaunch, 3);
    assert_int_equal(c.nlaunch_goes_on, 0);
    assert_true(c.comm_launch_behind_us == 0);
    assert_true(fabs(c.comm_launch_us - 3.200 / 3) < 1e-9);
}

/* A rank of a run of `world` ranks: a compute span, or a bucket allreduce of seq `seq`. */
static run_span of_world(int64_t run, int world, int rank, span_kind kind, int64_t seq, int64_t start, int64_t end)
{
    bool comm = kind == SPAN_ALLREDUCE;
    return (run_span){.run = run, .world = world, .rank = rank, .iter = 2,
                      .stream = comm ? STREAM_COMM : STREAM_COMPUTE, .kind = (uint8_t)kind, .bucket = comm ? 0 : -1,
                      .seq = comm ? seq : -1, .bytes = 1000, .start_ns = start, .end_ns = end};
}

/* Late exits on 2 cores.  Run 1, 3 ranks (crowded), times in us:
 *   seq 1, every compute stream idle (last arrival 10, first end 20 by rank 0): rank 1
 *   ends 0.1 ms after it (not late), rank 2 3 ms (late);
 *   seq 2 (last arrival 40, first end 50 by rank 1): rank 0 1 ms late, rank 2 0.2 ms;
 *   seq 3 (last arrival 60, first end 70 by rank 0): ranks 1 and 2 end 5 ms late, but a
 *   backward of theirs runs between the last arrival and the first end: not waiting.
 * Run 2, 2 ranks on the 2 cores (not crowded): a 9 ms lag left out.
 * Looked at 4 ranks, 2 late (3 ms, 1 ms): fraction 0.5, mean 2 ms, deviation 1 ms. */
static void test_comm_exit_by_hand(void **state)
{
    (void)state;
    const int64_t us = 1000;
    run_span s[] = {
        of_world(1, 3, 0, SPAN_ALLREDUCE, 1, 0, 20 * us),   of_world(1, 3, 1, SPAN_ALLREDUCE, 1, 5 * us, 120 * us),
        of_world(1, 3, 2, SPAN_ALLREDUCE, 1, 10 * us, 3020 * us),
        of_world(1, 3, 0, SPAN_ALLREDUCE, 2, 30 * us, 1050 * us), of_world(1, 3, 1, SPAN_ALLREDUCE, 2, 40 * us, 50 * us),
        of_world(1, 3, 2, SPAN_ALLREDUCE, 2, 35 * us, 250 * us),
        of_world(1, 3, 0, SPAN_ALLREDUCE, 3, 60 * us, 70 * us), of_world(1, 3, 1, SPAN_ALLREDUCE, 3, 60 * us, 5070 * us),
        of_world(1, 3, 2, SPAN_ALLREDUCE, 3, 55 * us, 5070 * us),
        of_world(1, 3, 1, SPAN_BACKWARD, -1, 55 * us, 65 * us), of_world(1, 3, 2, SPAN_BACKWARD, -1, 65 * us, 80 * us),
        /* compute that meets no collective's window: before seq 1, after seq 3 */
        of_world(1, 3, 2, SPAN_BACKWARD, -1, 0, 8 * us), of_world(1, 3, 2, SPAN_COPY_OUT, -1, 6000 * us, 6001 * us),
        of_world(2, 2, 0, SPAN_ALLREDUCE, 1, 0, 10 * us),   of_world(2, 2, 1, SPAN_ALLREDUCE, 1, 0, 9010 * us),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 2, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nexit, 4);
    assert_true(fabs(c.comm_exit_late_fraction - 0.5) < 1e-12);
    assert_true(fabs(c.comm_exit_late_us - 2000.0) < 1e-9);
    assert_true(fabs(c.comm_exit_late_sd_us - 1000.0) < 1e-6);
    /* Without shared cores nothing is crowded: nothing learned. */
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nexit, 0);
    assert_true(c.comm_exit_late_fraction == 0 && c.comm_exit_late_us == 0);
}

/* A rank of a run of `world` ranks in iteration `iter`: a compute span, or a bucket
 * allreduce of seq `seq`. */
static run_span in_iter(int64_t run, int world, int rank, int iter, span_kind kind, int64_t seq, int64_t start,
                        int64_t end)
{
    run_span r = of_world(run, world, rank, kind, seq, start, end);
    r.iter = iter;
    return r;
}

/* Late compute wakes on 2 cores.  Run 1, 3 ranks (crowded), times in us; iteration 2 has
 * seqs 1 and 2, iteration 3 seqs 3 and 4 (the last of each: 2 and 4):
 *   seq 1, not its iteration's last: rank 0's next compute 9 ms after its end, left out;
 *   seq 2, ending at 100: rank 0 goes on at 200 (0.1 ms, not late), rank 1 at 2100 (2 ms
 *   late), rank 2's backward runs across the end (not idle: left out);
 *   seq 4, ending at 5000: rank 0 goes on at 9000 (4 ms late), rank 1 at 5300 (0.3 ms),
 *   rank 2 has no compute after it (left out).
 * Run 2, 2 ranks on the 2 cores (not crowded): a 9 ms lag left out.
 * Looked at 4 ranks, 2 late (2 ms, 4 ms): fraction 0.5, mean 3 ms, deviation 1 ms. */
static void test_compute_wake_by_hand(void **state)
{
    (void)state;
    const int64_t us = 1000;
    run_span s[] = {
        in_iter(1, 3, 0, 2, SPAN_ALLREDUCE, 1, 0, 10 * us),    in_iter(1, 3, 1, 2, SPAN_ALLREDUCE, 1, 0, 10 * us),
        in_iter(1, 3, 2, 2, SPAN_ALLREDUCE, 1, 0, 10 * us),    in_iter(1, 3, 0, 2, SPAN_COPY_IN, -1, 9010 * us, 9011 * us),
        in_iter(1, 3, 0, 2, SPAN_ALLREDUCE, 2, 20 * us, 100 * us), in_iter(1, 3, 1, 2, SPAN_ALLREDUCE, 2, 20 * us, 100 * us),
        in_iter(1, 3, 2, 2, SPAN_ALLREDUCE, 2, 20 * us, 100 * us), in_iter(1, 3, 0, 2, SPAN_COPY_OUT, -1, 200 * us, 210 * us),
        in_iter(1, 3, 1, 2, SPAN_COPY_OUT, -1, 2100 * us, 2110 * us), in_iter(1, 3, 2, 2, SPAN_BACKWARD, -1, 90 * us, 120 * us),
        in_iter(1, 3, 2, 2, SPAN_COPY_OUT, -1, 3000 * us, 3010 * us),
        in_iter(1, 3, 0, 3, SPAN_ALLREDUCE, 3, 4000 * us, 4100 * us), in_iter(1, 3, 1, 3, SPAN_ALLREDUCE, 3, 4000 * us, 4100 * us),
        in_iter(1, 3, 2, 3, SPAN_ALLREDUCE, 3, 4000 * us, 4100 * us),
        in_iter(1, 3, 0, 3, SPAN_ALLREDUCE, 4, 4900 * us, 5000 * us), in_iter(1, 3, 1, 3, SPAN_ALLREDUCE, 4, 4900 * us, 5000 * us),
        in_iter(1, 3, 2, 3, SPAN_ALLREDUCE, 4, 4900 * us, 5000 * us), in_iter(1, 3, 0, 3, SPAN_COPY_OUT, -1, 9000 * us, 9010 * us),
        in_iter(1, 3, 1, 3, SPAN_COPY_OUT, -1, 5300 * us, 5310 * us),
        in_iter(2, 2, 0, 2, SPAN_ALLREDUCE, 1, 0, 10 * us),    in_iter(2, 2, 1, 2, SPAN_ALLREDUCE, 1, 0, 10 * us),
        in_iter(2, 2, 0, 2, SPAN_COPY_OUT, -1, 9010 * us, 9020 * us),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 2, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nwake, 4);
    assert_true(fabs(c.compute_wake_late_fraction - 0.5) < 1e-12);
    assert_true(fabs(c.compute_wake_late_us - 3000.0) < 1e-9);
    assert_true(fabs(c.compute_wake_late_sd_us - 1000.0) < 1e-6);
    /* Without shared cores nothing is crowded: nothing learned. */
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nwake, 0);
    assert_true(c.compute_wake_late_fraction == 0 && c.compute_wake_late_us == 0);
}

/* grad_write_gbps: backwards of 2 MiB and model 100 ns, written in 100, 200 and 400 us
 * with no time inside a collective: 2097152 B over each, median 2097152 / 200000 B/ns.
 * Left out: the same write inside its rank's allreduce [1000 us, 2000 us] (the sums take
 * its cores), one whose model is over a quarter of its span (it may sleep), one of 512
 * KiB (too short to tell from a wake-up).  Its model sleeps no more: a write-bound
 * backward ending inside a collective adds no wake-up to comm_wakeup_us's fit, which a
 * sleeping one of model 1000 does (300 ns late). */
static void test_grad_write_by_hand(void **state)
{
    (void)state;
    const int64_t us = 1000, mib = 1 << 20;
    run_span s[] = {
        bwd(0, 2 * mib, 0, 100 * us, 100),          bwd(0, 2 * mib, 200 * us, 400 * us, 100),
        bwd(1, 2 * mib, 0, 400 * us, 100),          bwd(0, 2 * mib, 1100 * us, 1101 * us, 100),
        bwd(1, 2 * mib, 500 * us, 510 * us, 3000),  bwd(1, mib / 2, 600 * us, 700 * us, 100),
        ar(0, 1, 8000, 1000 * us, 2000 * us),       ar(1, 1, 8000, 1000 * us, 2000 * us),
        bwd(1, 1000, 1500 * us, 1500 * us + 1400, 1000),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.memory.ngrad_write, 3);
    assert_true(fabs(c.memory.grad_write_gbps - 2097152.0 / 200000.0) < 1e-12);
    /* Inside the collective: the 1 us write (2 MiB at grad_write: 200 us, so 199 us
     * early, never late) and the sleeping backward (model 1000, 400 beyond it, its end
     * inside): a x 1000 = -199000 and a x 1400 + w = 400 give a < 0, so a = 0 and w = 400. */
    assert_int_equal(c.ncontended, 2);
    assert_true(c.comm_slowdown == 0);
    assert_true(fabs(c.comm_wakeup_us - 0.4) < 1e-9);
    /* On one core the writes share it as copies do, and each is learned from the core
     * time it received: rank 0's [0, 100 us] beside rank 1's [0, 400 us] got 50 us,
     * [200, 400 us] 100 us, rank 1's 50 + 100 + 100 = 250 us (alone in [100, 200 us]):
     * the median 2097152 B / 100 us. */
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 1, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.memory.ngrad_write, 3);
    assert_true(fabs(c.memory.grad_write_gbps - 2097152.0 / 100000.0) < 1e-12);
}

/* A backward that sleeps to its deadline wrote its gradients on a core first, and the
 * second pass of a fit on shared cores counts that write.  One core, two ranks: rank 0's
 * 2 MiB backward bound by its write, alone in [0, 200 us] (model 100 ns), teaches
 * 2097152 B / 200 us; rank 1's backward of 1 MiB sleeps in [1000, 2000 us] (model 900
 * us), so its write holds the core in [1000, 1100 us] at that speed; rank 0's 1000-byte
 * copy in [1000, 1200 us] shares the core with it for the first 100 us: 50 + 100 us of
 * core time, 2000 B over 150 us.  Accumulating (write_bytes twice the bytes) the write
 * lasts to 1200 us and the copy gets 100 us.  Without shared cores, or without the
 * write's bandwidth (no write-bound backward), the copy's 200 us of wall time.  An
 * allreduce far away keeps the run a training run's. */
static void test_sleeping_write_by_hand(void **state)
{
    (void)state;
    const int64_t us = 1000, mib = 1 << 20;
    run_span s[] = {
        bwd(0, 2 * mib, 0, 200 * us, 100),         bwd(1, mib, 1000 * us, 2000 * us, 900 * us),
        mem(0, SPAN_COPY_IN, 1000, 1000 * us, 1200 * us), ar(0, 1, 8000, 5000 * us, 6000 * us),
        ar(1, 1, 8000, 5000 * us, 6000 * us),
    };
    enum { N = sizeof s / sizeof s[0] };
    run_span copy[N];
    calib_run_costs c;
    char err[256];
    memcpy(copy, s, sizeof s);
    assert_int_equal(calib_run_fit(copy, N, 1, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.memory.ngrad_write, 1);
    assert_true(fabs(c.memory.grad_write_gbps - 2097152.0 / 200000.0) < 1e-12);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / 150000.0) < 1e-12);
    memcpy(copy, s, sizeof s);
    copy[1].write_bytes = 2.0 * (double)mib;
    assert_int_equal(calib_run_fit(copy, N, 1, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / 100000.0) < 1e-12);
    memcpy(copy, s, sizeof s);
    assert_int_equal(calib_run_fit(copy, N, 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / 200000.0) < 1e-12);
    memcpy(copy, s, sizeof s);
    copy[0].model_ns = 150 * us; /* now it sleeps too: no write-bound backward */
    assert_int_equal(calib_run_fit(copy, N, 1, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.memory.ngrad_write, 0);
    assert_true(fabs(c.memory.copy_in_gbps - 2000.0 / 200000.0) < 1e-12);
}

/* One span of each kind behind the bandwidths, and their values (GB/s). */
static void expect_one_each(const calib_bandwidths *b, double copy_in, double copy_out, double optimizer,
                            double grad_write)
{
    assert_int_equal(b->ncopy_in, 1);
    assert_int_equal(b->ncopy_out, 1);
    assert_int_equal(b->noptimizer, 1);
    assert_int_equal(b->ngrad_write, 1);
    assert_true(fabs(b->copy_in_gbps - copy_in) < 1e-12);
    assert_true(fabs(b->copy_out_gbps - copy_out) < 1e-12);
    assert_true(fabs(b->optimizer_gbps - optimizer) < 1e-12);
    assert_true(fabs(b->grad_write_gbps - grad_write) < 1e-12);
}

/* Runs whose memory fits in a 32 MiB cache learn the bandwidths in cache apart.  Run 1
 * (1 GB of memory): a 1000-byte copy_in in 100 ns (20 GB/s read + write), a copy_out in
 * 200 ns (10 GB/s), an SGD of 4000 bytes in 1200 ns (10 GB/s), 2 MiB gradient writes in
 * 200 us (10.49 GB/s).  Run 2 (8 MB): the same copies in 50 and 40 ns (40 and 50 GB/s),
 * the SGD in 400 ns (30 GB/s), 128 KiB gradient writes in 4 us (32.8 GB/s; 64 KiB is
 * the least in cache, 1 MiB out of it), and a 3000 ns forward beyond its model, which
 * teaches the wake-up in cache alone (run 1's forward: 100 ns beyond, out of it).  Without
 * a cache both pool: copy_in 4000 B / 150 ns, and no wake-up in cache. */
static void test_cache_bandwidths_by_hand(void **state)
{
    (void)state;
    const int64_t mib = 1 << 20;
    const double big = 1e9, small = 8e6;
    run_span s[] = {
        in_run(fwd(0, 3, 0, 1100, 1000), 1, big),
        in_run(mem(0, SPAN_COPY_IN, 1000, 5000, 5100), 1, big),
        in_run(mem(0, SPAN_COPY_OUT, 1000, 6000, 6200), 1, big),
        in_run(mem(1, SPAN_OPTIMIZER, 4000, 7000, 8200), 1, big),
        in_run(bwd(0, 2 * mib, 10000, 210000, 100), 1, big),
        in_run(fwd(0, 3, 0, 4000, 1000), 2, small),
        in_run(mem(0, SPAN_COPY_IN, 1000, 5000, 5050), 2, small),
        in_run(mem(0, SPAN_COPY_OUT, 1000, 6000, 6040), 2, small),
        in_run(mem(1, SPAN_OPTIMIZER, 4000, 7000, 7400), 2, small),
        in_run(bwd(0, 128 << 10, 10000, 14000, 100), 2, small),
    };
    const size_t n = sizeof s / sizeof s[0];
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, n, 0, 32, &c, err, sizeof err), 0);
    assert_true(c.cache_mb == 32);
    expect_one_each(&c.memory, 20.0, 10.0, 10.0, 2097152.0 / 200000.0);
    assert_int_equal(c.nforward, 1);
    assert_true(fabs(c.op_wakeup_us - 0.1) < 1e-12);
    expect_one_each(&c.cache, 40.0, 50.0, 30.0, 131072.0 / 4000.0);
    assert_int_equal(c.ncache_forward, 1);
    assert_true(fabs(c.cache_op_wakeup_us - 3.0) < 1e-12);
    assert_true(c.cache_op_wakeup_sd_us == 0 && c.cache_op_stall_fraction == 0);

    /* No cache, or one both runs fit in: one set of terms from every span. */
    const double caches[] = {0, 2000};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(calib_run_fit(s, n, 0, caches[k], &c, err, sizeof err), 0);
        assert_int_equal(c.memory.ncopy_in, 2);
        assert_true(fabs(c.memory.copy_in_gbps - 4000.0 / 150.0) < 1e-12);
        assert_int_equal(c.nforward, 2);
        assert_int_equal(c.cache.ncopy_in + c.cache.ncopy_out + c.cache.noptimizer + c.cache.ngrad_write, 0);
        assert_int_equal(c.ncache_forward, 0);
    }
}

/* Run 1 (1 GB of memory, out of a 32 MiB cache) teaches the table: 4000 B in 1000 ns
 * (last arrival 100, end 1100) and 16000 B in 4000 ns, so 8000 B in 2000 ns between
 * them (log-log).  Run 2 (8 MB, in cache): 8000 B in 600 ns, 4000 B in 500, 16000 B in
 * 2000: 0.3, 0.5 and 0.5 of the table, the median 0.5.  Run 1's copies out, queued one
 * behind the other, start 10 and 30 ns after the one before: a hand-off of 20 ns. */
static void test_cache_allreduce_and_busy_hand_off_by_hand(void **state)
{
    (void)state;
    const double big = 1e9, small = 8e6;
    run_span s[] = {
        in_run(ar(0, 1, 4000, 0, 1100), 1, big),      in_run(ar(1, 1, 4000, 100, 1100), 1, big),
        in_run(ar(0, 2, 16000, 0, 4000), 1, big),     in_run(ar(1, 2, 16000, 0, 4000), 1, big),
        in_run(ar(0, 3, 8000, 0, 600), 2, small),     in_run(ar(1, 3, 8000, 0, 600), 2, small),
        in_run(ar(0, 4, 4000, 0, 500), 2, small),     in_run(ar(1, 4, 4000, 0, 500), 2, small),
        in_run(ar(0, 5, 16000, 0, 2000), 2, small),   in_run(ar(1, 5, 16000, 0, 2000), 2, small),
        in_run(mem(0, SPAN_COPY_OUT, 1000, 10000, 10100), 1, big),
        in_run(mem(0, SPAN_COPY_OUT, 1000, 10110, 10200), 1, big),
        in_run(mem(0, SPAN_COPY_OUT, 1000, 10230, 10300), 1, big),
    };
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, sizeof s / sizeof s[0], 0, 32, &c, err, sizeof err), 0);
    assert_int_equal((int)c.nar, 2);
    assert_int_equal((int)c.ncache_collectives, 3);
    assert_true(fabs(c.cache_allreduce_factor - 0.5) < 1e-9);
    assert_int_equal((int)c.nbusy_gaps, 2);
    assert_true(fabs(c.op_overhead_busy_us - 0.02) < 1e-12);
}

/* Stalls of bucket allreduces in cache: the table's 4000-byte allreduce takes 1000 ns
 * (a run out of cache); thirteen in cache take 480, 490, 500 (six), 510, 520 and three
 * stalls of 3500, 4500 and 5500 ns.  Factor: the median, 0.5; excesses over 500 ns: -20,
 * -10, 0 (six), 10, 20 and 3000, 4000, 5000: median 0, median absolute deviation 10, so
 * the three beyond 100 ns are stalls: 3 of 13, 4000 ns beyond the body's mean of 0.  On a
 * host of one core (two ranks crowd it) the same collectives give the crowded pair. */
static void test_cache_allreduce_stalls_by_hand(void **state)
{
    (void)state;
    const int64_t took[13] = {480, 490, 500, 500, 500, 500, 500, 500, 510, 520, 3500, 4500, 5500};
    run_span s[2 + 2 * 13];
    size_t n = 0;
    s[n++] = in_run(ar(0, 1, 4000, 0, 1000), 1, 1e9);
    s[n++] = in_run(ar(1, 1, 4000, 0, 1000), 1, 1e9);
    for (int i = 0; i < 13; i++)
        for (int r = 0; r < 2; r++)
            s[n++] = in_run(ar(r, 2 + i, 4000, 10000 * i, 10000 * i + took[i]), 2, 8e6);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, n, 0, 32, &c, err, sizeof err), 0);
    assert_int_equal((int)c.ncache_collectives, 13);
    assert_true(fabs(c.cache_allreduce_factor - 0.5) < 1e-9);
    assert_int_equal((int)c.ncache_uncrowded, 13);
    assert_true(fabs(c.cache_allreduce_stall_fraction - 3.0 / 13) < 1e-12);
    assert_true(fabs(c.cache_allreduce_stall_us - 4.0) < 1e-9);
    assert_int_equal((int)c.ncache_crowded, 0);
    assert_true(c.cache_allreduce_crowded_stall_fraction == 0 && c.cache_allreduce_crowded_stall_us == 0);

    assert_int_equal(calib_run_fit(s, n, 1, 32, &c, err, sizeof err), 0);
    assert_int_equal((int)c.ncache_crowded, 13);
    assert_int_equal((int)c.ncache_uncrowded, 0);
    assert_true(c.cache_allreduce_stall_fraction == 0);
    assert_true(fabs(c.cache_allreduce_crowded_stall_fraction - 3.0 / 13) < 1e-12);
    assert_true(fabs(c.cache_allreduce_crowded_stall_us - 4.0) < 1e-6);
}

/* Backward stalls: forwards of model 1000 each 100 ns beyond it (op_wakeup 0.1 us).
 * Backwards of model 1000 and 1000 bytes (the write, at mem_bw 20 GB/s from one copy,
 * takes 50 ns: they sleep) outside collectives, beyond their model by 90, 95, 100, 100,
 * 105, 110 and 2000, 2500, 3000 ns: median 100, median absolute deviation 5, so three of
 * nine are stalls, of mean 2500, 2.4 us beyond the forwards' wake-up.  Left out: a
 * backward 9000 ns late inside its rank's allreduce, one with no model, and one whose
 * 1 MB write (50 us) outlasts its model (it never sleeps). */
static void test_backward_stalls_by_hand(void **state)
{
    (void)state;
    const int excess[] = {90, 95, 100, 100, 105, 110, 2000, 2500, 3000};
    run_span s[16];
    size_t n = 0;
    s[n++] = fwd(0, 3, 0, 1100, 1000);
    s[n++] = fwd(1, 3, 0, 1100, 1000);
    s[n++] = mem(0, SPAN_COPY_IN, 1000, 2000, 2100);
    for (int i = 0; i < 9; i++)
        s[n++] = bwd(i % 2, 1000, 10000 * (i + 1), 10000 * (i + 1) + 1000 + excess[i], 1000);
    s[n++] = ar(0, 1, 8000, 200000, 300000);
    s[n++] = ar(1, 1, 8000, 200000, 300000);
    s[n++] = bwd(0, 1000, 250000, 260000, 1000);
    s[n++] = bwd(1, 1000000, 400000, 450000, 1000);
    run_span two[16];
    memcpy(two, s, sizeof s); /* calib_run_fit sorts its spans */
    two[3 + 8].end_ns = two[3 + 8].start_ns + 1100; /* the 3000 ns stall no more */
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, n, 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.op_wakeup_us - 0.1) < 1e-12);
    assert_int_equal(c.nbackward, 9);
    assert_true(fabs(c.backward_stall_fraction - 3.0 / 9) < 1e-12);
    assert_true(fabs(c.backward_stall_us - 2.4) < 1e-12);
    /* Two stalls only: none learned. */
    assert_int_equal(calib_run_fit(two, n, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.nbackward, 9);
    assert_true(c.backward_stall_fraction == 0 && c.backward_stall_us == 0);
}

/* Gap stalls: consecutive forwards of rank 0 with idle gaps of 18, 19, 20, 20, 21, 22 and
 * 420, 520, 620 ns: median 21 (of nine), median absolute deviation 2, so the three long
 * ones are stalls, 3 of 9 of the gaps, their mean 520 ns, 499 beyond the median. */
static void test_gap_stalls_by_hand(void **state)
{
    (void)state;
    const int gap[] = {18, 19, 20, 20, 21, 22, 420, 520, 620};
    run_span s[10];
    int64_t t = 0;
    for (int i = 0; i < 10; i++) {
        s[i] = fwd(0, 3, t, t + 1000, 1000);
        t += 1000 + (i < 9 ? gap[i] : 0);
    }
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, 10, 0, 0, &c, err, sizeof err), 0);
    assert_int_equal(c.ngaps, 9);
    assert_true(fabs(c.op_overhead_us - 0.021) < 1e-12);
    assert_true(fabs(c.op_gap_stall_fraction - 3.0 / 9) < 1e-12);
    assert_true(fabs(c.op_gap_stall_us - 0.499) < 1e-12);
}

/* The host's wake after a step: rank 0 of run `run` runs iterations 3 to 12, each two
 * forwards (model 1000, 100 ns late) 20 ns apart (op_overhead 20 ns), and a broadcast on
 * the comm stream before the forwards of iteration 8; each iteration's first op starts 20
 * ns + 90, 95, 100, 100, 105, 110, 2000, 2500, 3000 after the one before's last compute
 * op.  Rank 1 runs iterations 3 and 5 alone: no iteration follows another, no gap. */
static size_t host_wake_spans(run_span *s, int64_t run, double host_bytes)
{
    const int excess[] = {90, 95, 100, 100, 105, 110, 2000, 2500, 3000};
    size_t n = 0;
    int64_t t = 0;
    for (int it = 3; it <= 12; it++) {
        if (it == 8) {
            run_span b = ar(0, 100 + it, 64, t, t + 50);
            b.kind = SPAN_BROADCAST;
            b.iter = it;
            s[n++] = in_run(b, run, host_bytes);
            t += 300;
        }
        s[n++] = in_run(fwd(0, it, t, t + 1100, 1000), run, host_bytes);
        s[n++] = in_run(fwd(0, it, t + 1120, t + 2220, 1000), run, host_bytes);
        t += 2220;
        if (it < 12)
            t += 20 + excess[it - 3];
    }
    s[n++] = in_run(fwd(1, 3, 0, 1100, 1000), run, host_bytes);
    s[n++] = in_run(fwd(1, 5, 90000, 91100, 1000), run, host_bytes);
    return n;
}

/* Over the nine gaps (median 100, median absolute deviation 5): the body 90..110 of mean
 * 100 ns and deviation sqrt(250 / 6), three stalls of mean 2500, 2.4 us beyond it.  With
 * a second run out of a 32 MiB cache beside them in cache, the same figures come out as
 * cache_host_wake_*, and the run out of it (1000 ns beyond: op_overhead 20 ns) teaches
 * host_wake_us alone.  An iteration that ends with a backward (it kept its gradients)
 * followed by the next 50 us later adds no gap. */
static void test_host_wake_by_hand(void **state)
{
    (void)state;
    run_span s[40];
    size_t n = host_wake_spans(s, 1, 0);
    s[n++] = (run_span){.run = 1, .world = 2, .rank = 0, .iter = 20, .stream = STREAM_COMPUTE,
                        .kind = SPAN_BACKWARD, .bucket = -1, .seq = -1, .start_ns = 200000, .end_ns = 201000};
    s[n++] = fwd(0, 21, 251000, 252100, 1000);
    calib_run_costs c;
    char err[256];
    assert_int_equal(calib_run_fit(s, n, 0, 0, &c, err, sizeof err), 0);
    assert_true(fabs(c.op_overhead_us - 0.02) < 1e-12);
    assert_int_equal(c.nhost_wake, 9);
    assert_true(fabs(c.host_wake_us - 0.1) < 1e-12);
    assert_true(fabs(c.host_wake_sd_us - sqrt(250.0 / 6) / 1e3) < 1e-12);
    assert_true(fabs(c.host_wake_stall_fraction - 3.0 / 9) < 1e-12);
    assert_true(fabs(c.host_wake_stall_us - 2.4) < 1e-12);

    n = host_wake_spans(s, 2, 8e6);
    s[n++] = in_run(fwd(0, 3, 0, 1100, 1000), 1, 1e9);
    s[n++] = in_run(fwd(0, 3, 1120, 2220, 1000), 1, 1e9);
    s[n++] = in_run(fwd(0, 4, 3240, 4340, 1000), 1, 1e9);
    assert_int_equal(calib_run_fit(s, n, 0, 32, &c, err, sizeof err), 0);
    assert_int_equal(c.nhost_wake, 1);
    assert_true(fabs(c.host_wake_us - 1.0) < 1e-12);
    assert_int_equal(c.ncache_host_wake, 9);
    assert_true(fabs(c.cache_host_wake_us - 0.1) < 1e-12);
    assert_true(fabs(c.cache_host_wake_stall_fraction - 3.0 / 9) < 1e-12);
    assert_true(fabs(c.cache_host_wake_stall_us - 2.4) < 1e-12);
}

static void test_nothing_to_learn(void **state)
{
    (void)state;
    run_span s[] = {ar(0, 1, 100, 0, 10)}; /* one rank of a two-rank collective */
    calib_run_costs c;
    char err[256] = "";
    assert_int_equal(calib_run_fit(s, 1, 0, 0, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "nothing to learn"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_floors_and_runs_apart),
        cmocka_unit_test(test_slowdown_by_hand),
        cmocka_unit_test(test_stalls_by_hand),
        cmocka_unit_test(test_shared_cores_by_hand),
        cmocka_unit_test(test_sums_share_the_cores_by_hand),
        cmocka_unit_test(test_sums_weight_by_hand),
        cmocka_unit_test(test_sums_weight_prior),
        cmocka_unit_test(test_sums_weight_gain_needed),
        cmocka_unit_test(test_comm_launch_by_hand),
        cmocka_unit_test(test_comm_launch_behind_by_hand),
        cmocka_unit_test(test_comm_exit_by_hand),
        cmocka_unit_test(test_compute_wake_by_hand),
        cmocka_unit_test(test_grad_write_by_hand),
        cmocka_unit_test(test_sleeping_write_by_hand),
        cmocka_unit_test(test_cache_bandwidths_by_hand),
        cmocka_unit_test(test_cache_allreduce_and_busy_hand_off_by_hand),
        cmocka_unit_test(test_cache_allreduce_stalls_by_hand),
        cmocka_unit_test(test_backward_stalls_by_hand),
        cmocka_unit_test(test_gap_stalls_by_hand),
        cmocka_unit_test(test_host_wake_by_hand),
        cmocka_unit_test(test_nothing_to_learn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
