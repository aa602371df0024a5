/* test_whatif.c — `ddpprof whatif` on recorded and imported runs: the unchanged scenario
 * replays its source within 5 % in step time and 5 points in overlap, a new bucket cap
 * re-buckets as DDP would for a known model, a new world size moves communication only,
 * and runs it cannot derive from are refused with the reason. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* The job step (mean over measured iterations of the slowest rank's) and DDP's overlap
 * (mean over ranks) of run `id`, from the iteration_stats view. */
static double step_ms(const char *db, int64_t id)
{
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT AVG(s) / 1e6 FROM (SELECT MAX(step_ns) AS s FROM iteration_stats WHERE run_id = %lld AND "
             "warmup = 0 GROUP BY iter)",
             (long long)id);
    return db_double(db, sql);
}

static double overlap_pct(const char *db, int64_t id)
{
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT AVG(o) FROM (SELECT 100.0 * SUM(overlap_ns) / SUM(comm_ns) AS o FROM iteration_stats WHERE "
             "run_id = %lld AND warmup = 0 GROUP BY rank)",
             (long long)id);
    return db_double(db, sql);
}

static void expect_replay(const char *db, int64_t source, int64_t replay)
{
    double a = step_ms(db, source), b = step_ms(db, replay);
    double oa = overlap_pct(db, source), ob = overlap_pct(db, replay);
    if (!(a > 0) || fabs(b - a) / a > 0.05 || fabs(ob - oa) > 5.0)
        fail_msg("replay of run %lld: step %.3f ms against %.3f (%.1f %%), overlap %.1f against %.1f", (long long)source,
                 b, a, 100.0 * (b - a) / a, ob, oa);
}

/* A recorded (predicted) run of skewed.ini, ResNet-18 with a slow rank: the replay finds
 * the model from the recorded scenario and gives its step and overlap back; the derived
 * scenario is written as an INI that runs as it is. */
static void test_replay_recorded(void **state)
{
    (void)state;
    char db[300], scen[300], out[300];
    scratch_path(db, sizeof db, "recorded.sqlite");
    scratch_path(out, sizeof out, "derived.ini");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.iterations=4", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "--scenario-out", out, NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "model: resnet18"));
    assert_non_null(strstr(r.out, "run 1 (source) beside run 2 (prediction)"));
    expect_replay(db, 1, 2);
    /* The derived scenario runs on its own. */
    assert_int_equal(ddpprof_cmd(&r, "predict", out, "-o", db, "-q", NULL), 0);
    assert_int_equal(r.status, 0);
    expect_replay(db, 1, 3);
}

/* A new bucket cap on a run whose model is known re-buckets its parameters as DDP does:
 * ResNet-18's rebuilt buckets at 35 MiB are 2052000, 38297600 and 6408448 bytes. */
static void test_rebucketing_known_model(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "rebucket.sqlite");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.iterations=3", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "-s", "ddp.bucket_cap_mb=35", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: exit %d: %s", r.status, r.err);
    char sizes[200];
    db_text(db, "SELECT group_concat(nbytes, ',') FROM (SELECT nbytes FROM bucket WHERE run_id = 2 AND version = 1 "
                "ORDER BY idx)",
            sizes, sizeof sizes);
    assert_string_equal(sizes, "2052000,38297600,6408448");
}

/* More ranks change the collectives, not the compute: each rank's compute per iteration
 * stays the source's (the measured speeds repeat over the new ranks), the transfer of
 * the largest bucket grows with the ring's 2(n-1)/n. */
static void test_world_size_moves_comm_only(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "world.sqlite");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.iterations=3", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "--sweep", "run.world_size=4,16", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: exit %d: %s", r.status, r.err);
    const char *compute = "SELECT AVG(compute_ns) FROM iteration_stats WHERE run_id = %d AND warmup = 0 AND rank %% 4 = 2";
    char sql[300];
    snprintf(sql, sizeof sql, compute, 2);
    double c4 = db_double(db, sql);
    snprintf(sql, sizeof sql, compute, 3);
    double c16 = db_double(db, sql);
    if (!(c4 > 0) || fabs(c16 - c4) / c4 > 0.01)
        fail_msg("the slow rank's compute: %.0f ns at 4 ranks, %.0f at 16", c4, c16);
    const char *transfer = "SELECT MAX(transfer_ns) FROM collective WHERE run_id = %d AND iter >= 2 AND bucket IS NOT NULL";
    snprintf(sql, sizeof sql, transfer, 2);
    double t4 = db_double(db, sql);
    snprintf(sql, sizeof sql, transfer, 3);
    double t16 = db_double(db, sql);
    if (!(t16 > t4))
        fail_msg("the largest bucket's transfer: %.0f ns at 4 ranks, %.0f at 16", t4, t16);
}

/* An imported PyTorch-profiler trace (Kineto's format, NCCL kernels with their sizes, one
 * rank slow): no zoo model gives its buckets, so the replay works bucket by bucket, and
 * gives the trace's step and overlap back. */
static void test_replay_imported(void **state)
{
    (void)state;
    char dir[300], db[300];
    scratch_path(dir, sizeof dir, "kineto");
    scratch_path(db, sizeof db, "imported.sqlite");
    cmd_result r;
    assert_int_equal(python_cmd(&r, "kineto_gen.py", "--out", dir, "--world", "4", "--steps", "6", "--layers", "8",
                                "--slow-rank", "2", "--slow", "1.5", NULL),
                     0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "import", dir, "-o", db, NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "re-buckets whole buckets"));
    expect_replay(db, 1, 2);
    /* A cap of about two buckets merges the later ones two by two (the first keeps its own
     * limit, first_bucket_mb): 1 | 2 + 3 | 4. */
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "-s", "ddp.bucket_cap_mb=1", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM bucket WHERE run_id = 3 AND version = 1"), 3);
}

/* Collectives other than DDP's (model.forward_comm_us, measured at model.comm_ranks): their
 * part of the forward scales with the world size as (n-1)/n, the rest stays: 1000 us of
 * forward with 400 us of it an all_to_all at 2 ranks takes 600 + 400 x (7/8)/(1/2) = 1300
 * us at 8. */
static void test_other_collectives_scale(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "other.sqlite");
    scratch_path(scen, sizeof scen, "other.ini");
    FILE *f = fopen(scen, "w");
    assert_non_null(f);
    fputs("[run]\nbackend = sim\nworld_size = 2\niterations = 3\nwarmup = 1\n"
          "[model]\npreset = custom\nparams = 1000, 1000\nlayer_forward_us = 500, 500\n"
          "layer_backward_us = 500, 500\nforward_comm_us = 400\ncomm_ranks = 2\n",
          f);
    assert_int_equal(fclose(f), 0);
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.world_size=8", NULL), 0);
    assert_int_equal(r.status, 0);
    const char *fwd = "SELECT AVG(d) FROM (SELECT SUM(end_ns - start_ns) AS d FROM span WHERE run_id = %d AND"
                      " kind = 'forward' AND iter >= 1 GROUP BY rank, iter)";
    char sql[300];
    snprintf(sql, sizeof sql, fwd, 1);
    double at2 = db_double(db, sql);
    snprintf(sql, sizeof sql, fwd, 2);
    double at8 = db_double(db, sql);
    if (fabs(at2 - 1e6) > 1e3 || fabs(at8 - 1.3e6) > 1e3)
        fail_msg("forward %.0f ns at 2 ranks (want 1000000), %.0f at 8 (want 1300000)", at2, at8);
}

/* A prediction of 96 ranks keeps the spans of chosen ranks only: whatif measures those and
 * takes the others' speed factors from the run, and replays it. */
static void test_replay_chosen_spans(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "chosen.sqlite");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.world_size=96", "-s",
                                 "skew.speed=1.5,1.5,1.0,1.0", "-s", "skew.speed_repeat=true", "-s", "run.iterations=4",
                                 NULL),
                     0);
    assert_int_equal(r.status, 0);
    assert_true(db_int(db, "SELECT COUNT(*) FROM rank WHERE spans = 0") > 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif of a run with chosen spans: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "by the speed factor the run recorded"));
    expect_replay(db, 1, 2);
}

/* Above 4096 ranks whatif's predictions record spans per phase, unless told otherwise. */
static void test_large_world_phase_detail(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "large.sqlite");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.iterations=3", NULL), 0);
    assert_int_equal(r.status, 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "--sweep", "run.world_size=8,5000", NULL), 0);
    if (r.status != 0)
        fail_msg("whatif: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "record spans per phase"));
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM run WHERE id > 1 AND scenario LIKE '%detail = phase%'"), 2);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-q", "-s", "run.world_size=8", NULL), 0);
    assert_null(strstr(r.out, "record spans per phase"));
}

/* Runs whatif cannot derive from: an unknown run, a run without DDP buckets (one rank). */
static void test_refusals(void **state)
{
    (void)state;
    char db[300], scen[300];
    scratch_path(db, sizeof db, "refuse.sqlite");
    repo_path(scen, sizeof scen, "scenarios/skewed.ini");
    cmd_result r;
    assert_int_equal(ddpprof_cmd(&r, "predict", scen, "-o", db, "-q", "-s", "run.iterations=2", NULL), 0);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "9", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_int_equal(ddpprof_cmd(&r, "whatif", db, "--run", "1", "-s", "ddp.nokey=1", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_int_equal(db_int(db, "SELECT COUNT(*) FROM run"), 1); /* nothing written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_recorded),
        cmocka_unit_test(test_rebucketing_known_model),
        cmocka_unit_test(test_world_size_moves_comm_only),
        cmocka_unit_test(test_replay_imported),
        cmocka_unit_test(test_other_collectives_scale),
        cmocka_unit_test(test_replay_chosen_spans),
        cmocka_unit_test(test_large_world_phase_detail),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, scratch_group_setup, scratch_group_teardown);
}
