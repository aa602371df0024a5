/* test_calibrate.c — the calibration fit (engine/predict/fit_ring.c), its report and fragment
 * (reports/calib_report.c) and `ddpprof calibrate` end to end: known alpha and B are
 * recovered exactly from noise-free data and within a tolerance under seeded noise,
 * degenerate measurements are refused with a message saying what to measure, the
 * written fragment loads back through scenario_load_file with the fitted values, and
 * the command on the cpu backend at tiny sizes writes a file that loads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/calib_report.h"
#include "engine/predict/calibrate.h"
#include "engine/backend.h"
#include "engine/predict/fit_ring.h"
#include "engine/scenario/scenario.h"
#include "harness.h"

static const int worlds[] = {2, 3, 4, 8};
static const int64_t sizes[] = {4096, 65536, 1 << 20, 16 << 20, 100 << 20};
#define NW (sizeof worlds / sizeof worlds[0])
#define NS (sizeof sizes / sizeof sizes[0])

/* Standard normal from a seeded generator of the test's own (xorshift, Box-Muller). */
static double normal(uint64_t *s)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
        u[i] = ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(2.0 * M_PI * u[1]);
}

/* Samples of t = 2(n-1) alpha + 2(n-1)/n S / B, times (1 + noise * N(0,1)). */
static size_t synth(ring_sample *out, double alpha_us, double gbps, double noise, uint64_t seed)
{
    size_t n = 0;
    for (size_t w = 0; w < NW; w++)
        for (size_t s = 0; s < NS; s++) {
            double steps = 2.0 * (worlds[w] - 1);
            double t = steps * alpha_us + steps / worlds[w] * (double)sizes[s] / (gbps * 1e3);
            out[n++] = (ring_sample){.bytes = sizes[s], .ranks = worlds[w],
                                     .us = t * (1.0 + (noise > 0 ? noise * normal(&seed) : 0))};
        }
    return n;
}

static void test_fit_exact_without_noise(void **state)
{
    (void)state;
    const double cases[][2] = {{13.0, 5.2}, {0.5, 400.0}, {80.0, 1.25}};
    for (size_t c = 0; c < 3; c++) {
        ring_sample s[NW * NS];
        size_t n = synth(s, cases[c][0], cases[c][1], 0, 0);
        ring_fit f;
        char err[256];
        assert_int_equal(fit_ring(s, n, &f, err, sizeof err), 0);
        assert_true(fabs(f.alpha_us - cases[c][0]) < 1e-9 * cases[c][0]);
        assert_true(fabs(f.bandwidth_gbps - cases[c][1]) < 1e-9 * cases[c][1]);
        assert_true(f.rms_rel < 1e-12);
        assert_false(f.alpha_clamped);
        assert_int_equal(f.n, n);
        /* one world size alone gives the same terms */
        ring_fit w;
        assert_int_equal(fit_ring_world(s, n, 4, &w, err, sizeof err), 0);
        assert_true(fabs(w.alpha_us - cases[c][0]) < 1e-9 * cases[c][0]);
        assert_true(fabs(w.bandwidth_gbps - cases[c][1]) < 1e-9 * cases[c][1]);
        assert_int_equal(w.n, NS);
        /* the model at a measured point gives back its time */
        assert_true(fabs(ring_model_us(f.alpha_us, f.bandwidth_gbps, s[7].bytes, s[7].ranks) - s[7].us) <
                    1e-9 * s[7].us);
    }
}

static void test_fit_within_tolerance_with_seeded_noise(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        ring_sample s[NW * NS];
        size_t n = synth(s, 13.0, 5.2, 0.03, seed * 0x9e3779b97f4a7c15ULL);
        ring_fit f;
        char err[256];
        assert_int_equal(fit_ring(s, n, &f, err, sizeof err), 0);
        /* 3% noise on 20 points: B within 4%, alpha within 15%, residual near the noise */
        if (fabs(f.bandwidth_gbps / 5.2 - 1) > 0.04 || fabs(f.alpha_us / 13.0 - 1) > 0.15)
            fail_msg("seed %llu: alpha %g (13), B %g (5.2)", (unsigned long long)seed, f.alpha_us, f.bandwidth_gbps);
        assert_true(f.rms_rel > 0.005 && f.rms_rel < 0.06);
        assert_true(f.max_abs_rel >= f.rms_rel);
    }
}

static void test_negative_alpha_is_clamped(void **state)
{
    (void)state;
    /* times below the bandwidth term at small sizes: the unconstrained alpha is negative */
    ring_sample s[NW * NS];
    size_t n = synth(s, -0.05, 5.0, 0, 0);
    ring_fit f;
    char err[256];
    assert_int_equal(fit_ring(s, n, &f, err, sizeof err), 0);
    assert_true(f.alpha_clamped);
    assert_true(f.alpha_us == 0);
    assert_true(f.bandwidth_gbps > 4 && f.bandwidth_gbps < 6);
}

static void test_degenerate_inputs_refused(void **state)
{
    (void)state;
    ring_sample s[NW * NS];
    ring_fit f;
    char err[256];
    /* one size, several world sizes */
    ring_sample one_size[] = {{65536, 2, 50}, {65536, 4, 120}};
    assert_int_equal(fit_ring(one_size, 2, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "same size (65536 bytes)"));
    assert_non_null(strstr(err, "at least two sizes"));
    /* one world size, several sizes */
    size_t n = synth(s, 10, 5, 0, 0);
    ring_sample one_world[NS];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].ranks == 4)
            one_world[m++] = s[i];
    assert_int_equal(fit_ring(one_world, m, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "same world size (4 ranks)"));
    assert_non_null(strstr(err, "--ranks"));
    /* a world of one, no samples, a non-positive time */
    ring_sample lone[] = {{65536, 1, 5}, {1 << 20, 2, 50}};
    assert_int_equal(fit_ring(lone, 2, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "fewer than 2 ranks"));
    assert_int_equal(fit_ring(s, 0, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "no measurements"));
    ring_sample zero[] = {{65536, 2, 0}, {1 << 20, 4, 50}};
    assert_int_equal(fit_ring(zero, 2, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "must be positive"));
    /* sizes and world sizes that vary together at one S/n: the terms cannot be separated */
    ring_sample parallel[] = {{2000, 2, 10}, {4000, 4, 25}}; /* x1 and x2 both triple */
    assert_int_equal(fit_ring(parallel, 2, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot separate"));
}

/* Copy samples at a known bandwidth per kind: in at 20 GB/s, out at 80. */
static void synth_copies(calib_data *d)
{
    const int64_t b[] = {1 << 20, 4 << 20, 16 << 20};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            d->cp[d->ncp++] = (calib_copy){.kind = (calib_copy_kind)k, .copiers = 4, .bytes = b[i],
                                           .us = 2.0 * (double)b[i] / ((k == 0 ? 20.0 : 80.0) * 1e3)};
    d->copies_measured = true;
}

static void test_copy_fit_and_harmonic_mean(void **state)
{
    (void)state;
    calib_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->nar = synth(d->ar, 13.0, 5.2, 0, 0);
    synth_copies(d);
    calib_fit f;
    char err[256];
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    assert_true(f.have_copy);
    assert_true(fabs(f.copy_in_gbps - 20) < 1e-9 && fabs(f.copy_out_gbps - 80) < 1e-9);
    assert_true(fabs(f.mem_bw_gbps - 32) < 1e-9); /* 2 / (1/20 + 1/80) */
    /* a copy-in plus a copy-out of the same bytes take the measured pair's time */
    double pair = calib_copy_model_us(f.mem_bw_gbps, 4 << 20) * 2;
    assert_true(fabs(pair - (d->cp[1].us + d->cp[4].us)) < 1e-9 * pair);
    copy_sample bad[] = {{0, 1}};
    double bw, rms;
    assert_int_equal(fit_memcpy(bad, 1, &bw, &rms, err, sizeof err), -1);
    assert_int_equal(fit_memcpy(bad, 0, &bw, &rms, err, sizeof err), -1);
    free(d);
}

/* The dispatch cost is the measured excess per op, floored at 0, and reaches the
 * fragment only when it was measured (without copies it opens [device] itself). */
static void test_dispatch_fit(void **state)
{
    (void)state;
    calib_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->nar = synth(d->ar, 13.0, 5.2, 0, 0);
    calib_plan p = {.be = backend_find("cpu"), .ranks = {2, 3, 4, 8}, .nranks = 4, .iters = 1, .repeats = 1};
    for (size_t i = 0; i < NS; i++)
        p.sizes[p.nsizes++] = sizes[i];
    calib_fit f;
    char err[256];
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    assert_false(f.have_dispatch);
    char *ini = calib_ini_text(&p, d, &f, "test machine");
    assert_non_null(ini);
    assert_null(strstr(ini, "op_overhead_us"));
    free(ini);

    d->dispatch_measured = true;
    d->dispatchers = 4;
    d->dispatch_us = 42.25;
    d->timed_dispatch_us = 100;
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    assert_true(f.have_dispatch && fabs(f.op_overhead_us - 42.25) < 1e-12);
    assert_true(fabs(f.op_wakeup_us - 57.75) < 1e-12); /* the timed ops' excess beyond the hand-off */
    ini = calib_ini_text(&p, d, &f, "test machine");
    assert_non_null(ini);
    assert_non_null(strstr(ini, "[device]\nop_overhead_us = 42.2500\n\n[host]\nop_wakeup_us = 57.7500\n"));
    free(ini);

    d->dispatch_us = -3.0; /* a timer a hair early */
    d->timed_dispatch_us = -5.0;
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    assert_true(f.have_dispatch && f.op_overhead_us == 0 && f.op_wakeup_us == 0);
    d->dispatch_us = 30; /* timed ops that came out cheaper than untimed: no wake-up term */
    d->timed_dispatch_us = 20;
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    assert_true(f.op_overhead_us == 30 && f.op_wakeup_us == 0);
    free(d);
}

static void test_fragment_loads_back_with_fitted_values(void **state)
{
    (void)state;
    calib_data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    uint64_t seed = 42;
    d->nar = synth(d->ar, 13.0, 5.2, 0.02, seed);
    synth_copies(d);
    d->dispatch_measured = true;
    d->dispatchers = 4;
    d->dispatch_us = 123.5;
    d->timed_dispatch_us = 200;
    calib_fit f;
    char err[SCENARIO_ERR];
    assert_int_equal(calib_fit_all(d, &f, err, sizeof err), 0);
    calib_plan p = {.be = backend_find("cpu"), .ranks = {2, 3, 4, 8}, .nranks = 4, .iters = 1, .repeats = 1};
    for (size_t i = 0; i < NS; i++)
        p.sizes[p.nsizes++] = sizes[i];
    char *ini = calib_ini_text(&p, d, &f, "test machine");
    assert_non_null(ini);
    char frag[256], top[256];
    snprintf(frag, sizeof frag, "%s/calibration.ini", scratch_dir());
    write_file(frag, ini);
    free(ini);

    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    /* alone */
    assert_int_equal(scenario_load_file(frag, sc, err, sizeof err), 0);
    assert_true(fabs(sc->latency_us - f.ring.alpha_us) < 1e-4);
    assert_true(fabs(sc->bandwidth_gbps - f.ring.bandwidth_gbps) < 1e-4);
    assert_true(fabs(sc->mem_bw_gbps - f.mem_bw_gbps) < 1e-4);
    assert_true(fabs(sc->op_overhead_us - 123.5) < 1e-4);
    assert_true(fabs(sc->op_wakeup_us - 76.5) < 1e-4);
    /* the measurements themselves, one entry per point, in order (lists wrap lines) */
    assert_int_equal(sc->algorithm, NET_MEASURED);
    assert_int_equal(sc->nmeasured_us, (int)d->nar);
    assert_int_equal(sc->nmeasured_ranks, (int)d->nar);
    assert_int_equal(sc->nmeasured_bytes, (int)d->nar);
    for (size_t i = 0; i < d->nar; i++) {
        assert_int_equal(sc->measured_ranks[i], d->ar[i].ranks);
        assert_int_equal(sc->measured_bytes[i], d->ar[i].bytes);
        assert_true(fabs(sc->measured_us[i] - d->ar[i].us) <= 0.05 + 1e-9);
    }
    /* included by a scenario, which keeps the last word */
    snprintf(top, sizeof top, "%s/uses.ini", scratch_dir());
    write_file(top, "include = calibration.ini\n[run]\nworld_size = 2\n[device]\npreset = h100\n");
    scenario_free(sc); /* the fragment's lists, before loading again */
    assert_int_equal(scenario_load_file(top, sc, err, sizeof err), 0);
    assert_true(fabs(sc->latency_us - f.ring.alpha_us) < 1e-4);
    assert_true(fabs(sc->bandwidth_gbps - f.ring.bandwidth_gbps) < 1e-4);
    assert_true(fabs(sc->mem_bw_gbps - f.mem_bw_gbps) < 1e-4); /* explicit beats the preset */
    assert_true(fabs(sc->op_overhead_us - 123.5) < 1e-4);
    assert_int_equal(sc->world_size, 2);
    scenario_free(sc);
    free(sc);
    free(d);
}

/* Replaces run `to`'s spans in the database at `db` by run `from`'s, their timeline
 * stretched by `factor` (every start and end, from 0): the same run, its steps factor
 * times as long. */
static int copy_run_stretched(const char *db, int from, int to, double factor)
{
    sqlite3 *h;
    if (sqlite3_open(db, &h) != SQLITE_OK) {
        sqlite3_close(h);
        return -1;
    }
    char sql[512];
    snprintf(sql, sizeof sql,
             "DELETE FROM span WHERE run_id = %d; INSERT INTO span (run_id, rank, iter, stream, kind, name, layer, "
             "bucket, seq, bytes, start_ns, end_ns) SELECT %d, rank, iter, stream, kind, name, layer, bucket, seq, "
             "bytes, CAST(start_ns * %.17g AS INTEGER), CAST(end_ns * %.17g AS INTEGER) FROM span WHERE run_id = %d",
             to, to, factor, factor, from);
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    sqlite3_close(h);
    return rc;
}

/* calibrate --from: a recorded cpu run of 2 ranks with two bucket sizes gives a fragment
 * that loads back with the figures it printed (each bucket allreduce measured at 2
 * ranks, forwards' wake-up, copies' bandwidth), from one run or many; a run that is not
 * there is exit 2. */
static void test_calibrate_from_a_run(void **state)
{
    (void)state;
    char db[256], out[256];
    snprintf(db, sizeof db, "%s/runs.sqlite", scratch_dir());
    snprintf(out, sizeof out, "%s/from.ini", scratch_dir());
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    const char *run[] = {"run", "scenarios/baseline.ini", "-q", "-o", db, "-s", "run.world_size=2", "-s",
                         "run.iterations=3", "-s", "run.warmup=1", "-s", "model.batch=8", NULL};
    ddpprof_run(r, run);
    if (r->status != 0)
        fail_msg("run exited %d: %s", r->status, r->err);
    const char *from[] = {"calibrate", "--from", db, "--run", "1", "-o", out, NULL};
    ddpprof_run(r, from);
    if (r->status != 0)
        fail_msg("calibrate --from exited %d: %s", r->status, r->err);
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    char err[SCENARIO_ERR];
    if (scenario_load_file(out, sc, err, sizeof err) != 0)
        fail_msg("the written file does not load: %s", err);
    assert_int_equal(sc->algorithm, NET_MEASURED);
    assert_true(sc->nmeasured_us >= 2); /* baseline's 25 MB cap: ResNet-18 in 3 buckets */
    for (int i = 0; i < sc->nmeasured_us; i++) {
        assert_int_equal(sc->measured_ranks[i], 2);
        assert_true(sc->measured_us[i] > 0);
    }
    double wake = -1, bw = -1;
    const char *w = strstr(r->out, "op_wakeup");
    const char *m = strstr(r->out, "mem_bw");
    assert_non_null(w);
    assert_non_null(m);
    assert_int_equal(sscanf(w, "op_wakeup %lf", &wake), 1);
    assert_int_equal(sscanf(m, "mem_bw %lf", &bw), 1);
    assert_true(fabs(wake - sc->op_wakeup_us) < 1e-3 && bw > 0 && fabs(bw - sc->mem_bw_gbps) < 1e-3);
    /* Learned from many runs (here one, named twelve times), the fragment still loads:
     * the comment naming them is wrapped to the scenario format's line length.  With
     * --host-cores it says how many cores the bandwidths were shared out over. */
    const char *many[] = {"calibrate", "--from", db, "--run", "1", "--run", "1", "--run", "1", "--run", "1",
                          "--run", "1", "--run", "1", "--run", "1", "--run", "1", "--run", "1", "--run", "1",
                          "--run", "1", "--run", "1", "--host-cores", "2", "-o", out, NULL};
    ddpprof_run(r, many);
    if (r->status != 0)
        fail_msg("calibrate --from exited %d: %s", r->status, r->err);
    scenario_free(sc); /* the first fragment's lists, before loading again */
    if (scenario_load_file(out, sc, err, sizeof err) != 0)
        fail_msg("the fragment from twelve runs does not load: %s", err);
    assert_true(sc->host_cores == 2);
    assert_non_null(strstr(r->out, "host_cores"));
    /* Runs of one name, backend and world size are named once, with their ids. */
    if (!strstr(r->out, "learned from 12 runs \"baseline\" (cpu, 2 ranks: 1 1 1 1 1 1 1 1 1 1 1 1))"))
        fail_msg("the runs learned from are not named once with their ids: %s", r->out);
    /* As many --run as a long check gives (ten rounds of calibration points run a few
     * times each: hundreds): no cap on their count. */
    enum { MANY_RUNS = 300 };
    const char **lots = malloc((2 * MANY_RUNS + 6) * sizeof *lots);
    assert_non_null(lots);
    int n = 0;
    lots[n++] = "calibrate";
    lots[n++] = "--from";
    lots[n++] = db;
    for (int i = 0; i < MANY_RUNS; i++) {
        lots[n++] = "--run";
        lots[n++] = "1";
    }
    lots[n++] = "-o";
    lots[n++] = out;
    lots[n] = NULL;
    ddpprof_run(r, lots);
    free(lots);
    if (r->status != 0)
        fail_msg("calibrate --from with %d runs exited %d: %s", MANY_RUNS, r->status, r->err);
    assert_non_null(strstr(r->out, "learned from 300 runs \"baseline\""));
    /* Run 1 again as run 2 of the same point, its steps 1.2x as long, is learned from; at
     * 2x it is left out as disturbed, named with its ratio, and what is learned is what
     * the other runs alone give. */
    const char *again[] = {"run", "scenarios/baseline.ini", "-q", "-o", db, "-s", "run.world_size=2", "-s",
                           "run.iterations=3", "-s", "run.warmup=1", "-s", "model.batch=8", NULL};
    ddpprof_run(r, again);
    if (r->status != 0)
        fail_msg("run exited %d: %s", r->status, r->err);
    const char *three[] = {"calibrate", "--from", db, "--run", "1", "--run", "1", "--run", "1", "-o", out, NULL};
    ddpprof_run(r, three);
    assert_int_equal(r->status, 0);
    double wake_three = -1;
    assert_non_null(w = strstr(r->out, "op_wakeup"));
    assert_int_equal(sscanf(w, "op_wakeup %lf", &wake_three), 1);
    const char *four[] = {"calibrate", "--from", db, "--run", "1", "--run", "1", "--run", "1", "--run", "2", "-o",
                          out, NULL};
    assert_int_equal(copy_run_stretched(db, 1, 2, 1.2), 0);
    ddpprof_run(r, four);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "4 runs \"baseline\" (cpu, 2 ranks: 1 1 1 2)"));
    assert_null(strstr(r->out, "left out"));
    assert_int_equal(copy_run_stretched(db, 1, 2, 2.0), 0);
    ddpprof_run(r, four);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "3 runs \"baseline\" (cpu, 2 ranks: 1 1 1)"));
    const char *left = strstr(r->out, "left out as disturbed");
    assert_non_null(left);
    double ratio = 0;
    const char *named = strstr(left, "run 2 (");
    assert_non_null(named);
    assert_int_equal(sscanf(named, "run 2 (%lfx)", &ratio), 1);
    assert_true(fabs(ratio - 2.0) < 0.01);
    double wake_kept = -1;
    assert_non_null(w = strstr(r->out, "op_wakeup"));
    assert_int_equal(sscanf(w, "op_wakeup %lf", &wake_kept), 1);
    assert_true(wake_kept == wake_three);
    const char *cores_alone[] = {"calibrate", "--host-cores", "2", NULL};
    ddpprof_run(r, cores_alone);
    assert_int_equal(r->status, 2);
    const char *cache_alone[] = {"calibrate", "--cache-mb", "32", NULL};
    ddpprof_run(r, cache_alone);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--cache-mb need --from"));
    const char *bad_cache[] = {"calibrate", "--from", db, "--run", "1", "--cache-mb", "lots", NULL};
    ddpprof_run(r, bad_cache);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--cache-mb lots"));
    const char *missing[] = {"calibrate", "--from", db, "--run", "7", "-o", out, NULL};
    ddpprof_run(r, missing);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "no run 7"));
    const char *mixed[] = {"calibrate", "--from", db, "--run", "1", "--ranks", "2,4", NULL};
    ddpprof_run(r, mixed);
    assert_int_equal(r->status, 2);
    scenario_free(sc);
    free(sc);
    free(r);
}

static void test_calibrate_cpu_end_to_end(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof out, "%s/cpu.ini", scratch_dir());
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    const char *args[] = {"calibrate", "--backend", "cpu", "--ranks", "2,3", "--sizes", "64K,1M,4M",
                          "--copy-sizes", "256K,1M", "--iters", "3", "--warmup", "1", "--repeats", "3", "-o", out, NULL};
    ddpprof_run(r, args);
    if (r->status != 0)
        fail_msg("calibrate exited %d: %s", r->status, r->err);
    /* one line per measurement (2 world sizes x 3 sizes, 2 kinds x 2 copy sizes); sizes
     * large enough that time grows with size above the noise of single wake-ups */
    int rows = 0;
    for (const char *p = r->out; (p = strchr(p, '\n')) != NULL; p++)
        if (strncmp(p + 1, "    2 ", 6) == 0 || strncmp(p + 1, "    3 ", 6) == 0)
            rows++;
    assert_int_equal(rows, 6);
    assert_non_null(strstr(r->out, "fit: alpha = "));
    assert_non_null(strstr(r->out, "RMS relative error"));
    assert_non_null(strstr(r->out, "\ncopy-in "));
    assert_non_null(strstr(r->out, "\ncopy-out"));
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    char err[SCENARIO_ERR];
    if (scenario_load_file(out, sc, err, sizeof err) != 0)
        fail_msg("the written file does not load: %s", err);
    assert_true(sc->bandwidth_gbps > 0 && sc->latency_us >= 0 && sc->mem_bw_gbps > 0);
    /* the cpu backend measures its streams' per-op cost: printed and written alike */
    const char *ovh = strstr(r->out, "fit: op_overhead = ");
    assert_non_null(ovh);
    double op_us = -1;
    double wake_us = -1;
    assert_int_equal(sscanf(ovh, "fit: op_overhead = %lf us per op, op_wakeup = %lf us", &op_us, &wake_us), 2);
    assert_true(op_us >= 0 && fabs(op_us - sc->op_overhead_us) < 1e-3);
    assert_true(wake_us >= 0 && fabs(wake_us - sc->op_wakeup_us) < 1e-3);
    /* the printed fit is the one written */
    const char *fit = strstr(r->out, "fit: alpha = ");
    assert_non_null(fit);
    double alpha = 0, gbps = 0;
    assert_int_equal(sscanf(fit, "fit: alpha = %lf us, B = %lf GB/s", &alpha, &gbps), 2);
    assert_true(fabs(alpha - sc->latency_us) < 1e-3 && fabs(gbps - sc->bandwidth_gbps) < 1e-3);
    scenario_free(sc);
    free(sc);
    free(r);
}

static void test_calibrate_refuses_degenerate_plans(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof out, "%s/never.ini", scratch_dir());
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    const char *one_size[] = {"calibrate", "--ranks", "2,3", "--sizes", "64K", "--copy-sizes", "none",
                              "--iters", "1", "-o", out, NULL};
    ddpprof_run(r, one_size);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "same size"));
    assert_int_equal(access(out, F_OK), -1); /* nothing written */
    const char *one_world[] = {"calibrate", "--ranks", "2", "--sizes", "4K,64K", "--copy-sizes", "none",
                               "--iters", "1", "-o", out, NULL};
    ddpprof_run(r, one_world);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "same world size"));
    assert_int_equal(access(out, F_OK), -1);
    const char *bad_rank[] = {"calibrate", "--ranks", "1,2", "-o", out, NULL};
    ddpprof_run(r, bad_rank);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--ranks: '1'"));
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_exact_without_noise),
        cmocka_unit_test(test_fit_within_tolerance_with_seeded_noise),
        cmocka_unit_test(test_negative_alpha_is_clamped),
        cmocka_unit_test(test_degenerate_inputs_refused),
        cmocka_unit_test(test_copy_fit_and_harmonic_mean),
        cmocka_unit_test(test_dispatch_fit),
        cmocka_unit_test(test_fragment_loads_back_with_fitted_values),
        cmocka_unit_test(test_calibrate_cpu_end_to_end), cmocka_unit_test(test_calibrate_from_a_run),
        cmocka_unit_test(test_calibrate_refuses_degenerate_plans),
    };
    return cmocka_run_group_tests(tests, scratch_group_setup, scratch_group_teardown);
}
