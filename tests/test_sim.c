/* test_sim.c — the sim backend, worked out by hand: 2 ranks, a custom model of two
 * 500,000-element parameters (two layers), a device of 1 TFLOP/s at full efficiency
 * and 4000 GB/s, batch 1, links of 1000 GB/s and 1 us.  So, for a rank of speed 1:
 * forward of a layer 2*500000/1000 = 1000 ns, backward 2000 ns, a copy into or out of
 * a bucket 2*4*500000/4000 = 1000 ns, the SGD step 12*1e6/4000 = 3000 ns; a ring
 * allreduce of S bytes over 2 ranks 2*(1000 + S/2000) ns (the whole model, 4 MB: 6000;
 * one parameter, 2 MB: 4000), the rebuild's broadcast of 2 int32 ceil(log2 2)*1000 +
 * 8/1000 ns (1000 after rounding).  bucket_cap_mb = first_bucket_mb = 1 puts each
 * parameter in a bucket of its own after the rebuild (bucket 0 = the last layer's, by
 * ready order).  Every span's start and end, and the report's figures, follow from
 * these; the expected tables below are derived in the comments beside them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "analysis.h"
#include "launcher.h"
#include "model_zoo.h"
#include "netmodel.h"
#include "scenario.h"
#include "store.h"
#include "sweep_summary.h"
#include "tmp_store.h"

typedef struct {
    int rank, iter;
    const char *stream, *kind, *name;
    int64_t start, end;
} want_span;

static scenario *hand_scenario(const char *const extra[])
{
    static const char *const base[] = {
        "run.world_size=2", "run.backend=sim", "model.preset=custom", "model.params=500000,500000",
        "model.batch=1", "device.preset=custom", "device.peak_tflops=1", "device.efficiency=1",
        "device.mem_bw_gbps=4000", "network.bandwidth_gbps=1000", "network.latency_us=1",
        "ddp.bucket_cap_mb=1", "ddp.first_bucket_mb=1", NULL};
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char err[SCENARIO_ERR];
    for (int i = 0; base[i]; i++)
        if (scenario_override(sc, base[i], err) != 0)
            fail_msg("%s", err);
    for (int i = 0; extra && extra[i]; i++)
        if (scenario_override(sc, extra[i], err) != 0)
            fail_msg("%s", err);
    if (scenario_validate(sc, err) != 0)
        fail_msg("%s", err);
    return sc;
}

static int64_t run_sim(store *st, const scenario *sc)
{
    model m;
    char err[512];
    assert_int_equal(model_build(sc, &m, err, sizeof err), 0);
    launch_options opt = {.record = true};
    launch_result res;
    int rc = launch_run(sc, &m, st, backend_find("sim"), &opt, &res, err, sizeof err);
    model_free(&m);
    if (rc != 0)
        fail_msg("launch_run: %d %s %s", rc, err, res.error);
    return res.run_id;
}

static int by_position(const void *pa, const void *pb)
{
    const want_span *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    int c = strcmp(a->stream, b->stream);
    if (c)
        return c;
    return a->end < b->end ? -1 : a->end > b->end;
}

/* Every span of the run against `want` (any order), both sorted by (rank, start,
 * stream, end). */
static void expect_spans(sqlite3 *db, int64_t run, const want_span *want_in, size_t nwant)
{
    want_span *want = malloc(nwant * sizeof *want);
    assert_non_null(want);
    memcpy(want, want_in, nwant * sizeof *want);
    qsort(want, nwant, sizeof *want, by_position);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select rank, iter, stream, kind, name, start_ns, end_ns from span "
                                        "where run_id = ? order by rank, start_ns, stream, end_ns",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, run);
    size_t i = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (i >= nwant)
            fail_msg("more spans than expected: rank %d iter %d %s %s %s [%lld, %lld]", sqlite3_column_int(st, 0),
                     sqlite3_column_int(st, 1), sqlite3_column_text(st, 2), sqlite3_column_text(st, 3),
                     sqlite3_column_text(st, 4), (long long)sqlite3_column_int64(st, 5),
                     (long long)sqlite3_column_int64(st, 6));
        const want_span *w = &want[i];
        char got[256], exp[256];
        snprintf(got, sizeof got, "rank %d iter %d %s %s %s [%lld, %lld]", sqlite3_column_int(st, 0),
                 sqlite3_column_int(st, 1), sqlite3_column_text(st, 2), sqlite3_column_text(st, 3),
                 sqlite3_column_text(st, 4), (long long)sqlite3_column_int64(st, 5),
                 (long long)sqlite3_column_int64(st, 6));
        snprintf(exp, sizeof exp, "rank %d iter %d %s %s %s [%lld, %lld]", w->rank, w->iter, w->stream, w->kind,
                 w->name, (long long)w->start, (long long)w->end);
        assert_string_equal(got, exp);
        i++;
    }
    sqlite3_finalize(st);
    assert_int_equal(i, nwant);
    free(want);
}

static analysis_run *load(sqlite3 *db, int64_t run)
{
    analysis_run *runs;
    size_t n;
    char err[256];
    if (analysis_load(db, run, &runs, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 1);
    return runs;
}

#define NS_TO_MS(x) ((double)(x) / 1e6)

static void assert_ms(double got, int64_t want_ns)
{
    if (!(fabs(got - NS_TO_MS(want_ns)) < 1e-9))
        fail_msg("%.9f ms, expected %lld ns", got, (long long)want_ns);
}

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

/* Iteration 0: one bucket holds the whole model (4 MB): it is launched after the last
 * copy_in (8000) and takes 6000; copies out in bucket order (param0, param1). */
#define FIRST(r)                                                                                             \
    {r, 0, "compute", "forward", "layer0", 0, 1000}, {r, 0, "host", "wait", "end of step", 0, 19000},        \
        {r, 0, "compute", "forward", "layer1", 1000, 2000},                                                  \
        {r, 0, "compute", "backward", "layer1", 2000, 4000},                                                 \
        {r, 0, "compute", "copy_in", "param1", 4000, 5000},                                                  \
        {r, 0, "compute", "backward", "layer0", 5000, 7000},                                                 \
        {r, 0, "compute", "copy_in", "param0", 7000, 8000},                                                  \
        {r, 0, "comm", "allreduce", "bucket 0", 8000, 14000},                                                \
        {r, 0, "compute", "copy_out", "param0", 14000, 15000},                                               \
        {r, 0, "compute", "copy_out", "param1", 15000, 16000},                                               \
        {r, 0, "compute", "optimizer", "sgd step", 16000, 19000}

/* Three iterations of equal ranks: the first with one bucket, then the rebuild (rank
 * 0's ready order broadcast at 19000, when the host enqueues it, until 20000: the host
 * waits for it, so iteration 1 starts at 20000), then two steady steps. */
static void test_equal_ranks_by_hand(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simhand", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario((const char *[]){"run.warmup=1", "run.iterations=2", NULL});
    int64_t run = run_sim(st, sc);
    const want_span want[] = {
        FIRST(0),
        {0, 1, "comm", "broadcast", "rebuild buckets", 19000, 20000},
        STEADY(0, 1, 20000, 20000),
        STEADY(0, 2, 38000, 38000),
        FIRST(1),
        {1, 1, "comm", "broadcast", "rebuild buckets", 19000, 20000},
        STEADY(1, 1, 20000, 20000),
        STEADY(1, 2, 38000, 38000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Measured iterations 1 and 2, each 18000 ns.  Per iteration: C = [t0, t0+8000] +
     * [t0+13000, t0+18000] = 13000; M = [t0+5000, t0+13000] = 8000; M ∩ C = [t0+5000,
     * t0+8000] = 3000: overlap 37.5 %, exposed 5000, no wait. */
    analysis_run *a = load(db, run);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

/* Rank 1 twice as slow (slow_ranks = 1, slowdown = 2: its compute and copies take twice
 * as long), iterations 0 and 1 (the rebuild's), iteration 1 measured.
 *   Iteration 0: rank 0 arrives at the one bucket at 8000, rank 1 at 16000 (forward
 *   0-4000, backward layer1 4000-8000, copy_in 8000-10000, backward layer0 10000-14000,
 *   copy_in 14000-16000); it ends at 16000 + 6000 = 22000.  Rank 0 then copies out and
 *   steps until 27000, rank 1 until 22000 + 2*2000 + 6000 = 32000.
 *   Rebuild: rank 0 arrives at the broadcast at 27000, rank 1 at 32000: ends 33000.
 *   Iteration 1 from 33000: rank 0 arrives at bucket 0 at 38000, rank 1 at 43000 (ends
 *   47000); rank 0 at bucket 1 when its comm stream is free, 47000, rank 1 at 49000
 *   (backward 43000-47000, copy_in 47000-49000): ends 53000.  Copies out and the step:
 *   rank 0 53000-58000, rank 1 53000-63000. */
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
        {0, 0, "compute", "forward", "layer0", 0, 1000},
        {0, 0, "host", "wait", "end of step", 0, 27000},
        {0, 0, "compute", "forward", "layer1", 1000, 2000},
        {0, 0, "compute", "backward", "layer1", 2000, 4000},
        {0, 0, "compute", "copy_in", "param1", 4000, 5000},
        {0, 0, "compute", "backward", "layer0", 5000, 7000},
        {0, 0, "compute", "copy_in", "param0", 7000, 8000},
        {0, 0, "comm", "allreduce", "bucket 0", 8000, 22000},
        {0, 0, "compute", "copy_out", "param0", 22000, 23000},
        {0, 0, "compute", "copy_out", "param1", 23000, 24000},
        {0, 0, "compute", "optimizer", "sgd step", 24000, 27000},
        {0, 1, "comm", "broadcast", "rebuild buckets", 27000, 33000},
        {0, 1, "host", "wait", "end of step", 33000, 58000},
        {0, 1, "compute", "forward", "layer0", 33000, 34000},
        {0, 1, "compute", "forward", "layer1", 34000, 35000},
        {0, 1, "compute", "backward", "layer1", 35000, 37000},
        {0, 1, "compute", "copy_in", "param1", 37000, 38000},
        {0, 1, "compute", "backward", "layer0", 38000, 40000},
        {0, 1, "comm", "allreduce", "bucket 0", 38000, 47000},
        {0, 1, "compute", "copy_in", "param0", 40000, 41000},
        {0, 1, "comm", "allreduce", "bucket 1", 47000, 53000},
        {0, 1, "compute", "copy_out", "param1", 53000, 54000},
        {0, 1, "compute", "copy_out", "param0", 54000, 55000},
        {0, 1, "compute", "optimizer", "sgd step", 55000, 58000},
        {1, 0, "compute", "forward", "layer0", 0, 2000},
        {1, 0, "host", "wait", "end of step", 0, 32000},
        {1, 0, "compute", "forward", "layer1", 2000, 4000},
        {1, 0, "compute", "backward", "layer1", 4000, 8000},
        {1, 0, "compute", "copy_in", "param1", 8000, 10000},
        {1, 0, "compute", "backward", "layer0", 10000, 14000},
        {1, 0, "compute", "copy_in", "param0", 14000, 16000},
        {1, 0, "comm", "allreduce", "bucket 0", 16000, 22000},
        {1, 0, "compute", "copy_out", "param0", 22000, 24000},
        {1, 0, "compute", "copy_out", "param1", 24000, 26000},
        {1, 0, "compute", "optimizer", "sgd step", 26000, 32000},
        {1, 1, "comm", "broadcast", "rebuild buckets", 32000, 33000},
        {1, 1, "host", "wait", "end of step", 33000, 63000},
        {1, 1, "compute", "forward", "layer0", 33000, 35000},
        {1, 1, "compute", "forward", "layer1", 35000, 37000},
        {1, 1, "compute", "backward", "layer1", 37000, 41000},
        {1, 1, "compute", "copy_in", "param1", 41000, 43000},
        {1, 1, "comm", "allreduce", "bucket 0", 43000, 47000},
        {1, 1, "compute", "backward", "layer0", 43000, 47000},
        {1, 1, "compute", "copy_in", "param0", 47000, 49000},
        {1, 1, "comm", "allreduce", "bucket 1", 49000, 53000},
        {1, 1, "compute", "copy_out", "param1", 53000, 55000},
        {1, 1, "compute", "copy_out", "param0", 55000, 57000},
        {1, 1, "compute", "optimizer", "sgd step", 57000, 63000},
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Iteration 1.  Rank 0: step 58000-33000 = 25000; C = [33000, 41000] + [53000,
     * 58000] = 13000; M = [38000, 53000] = 15000; M ∩ C = [38000, 41000] = 3000 (20 %);
     * exposed 12000; wait (43000-38000) + (49000-47000) = 7000.  Rank 1: step 30000;
     * C = [33000, 49000] + [53000, 63000] = 26000; M = [43000, 47000] + [49000, 53000]
     * = 8000; M ∩ C = [43000, 47000] = 4000 (50 %); exposed 4000; wait 0.  The job's
     * step: 30000. */
    analysis_run *a = load(db, run);
    assert_int_equal(a->steps, 1);
    assert_ms(a->step_ms_mean, 30000);
    assert_ms(a->ranks[0].step_ms, 25000);
    assert_ms(a->ranks[0].compute_ms, 13000);
    assert_ms(a->ranks[0].comm_ms, 15000);
    assert_true(fabs(a->ranks[0].overlap_pct - 20.0) < 1e-9);
    assert_ms(a->ranks[0].exposed_comm_ms, 12000);
    assert_ms(a->ranks[0].wait_ms, 7000);
    assert_ms(a->ranks[1].step_ms, 30000);
    assert_ms(a->ranks[1].compute_ms, 26000);
    assert_ms(a->ranks[1].comm_ms, 8000);
    assert_true(fabs(a->ranks[1].overlap_pct - 50.0) < 1e-9);
    assert_ms(a->ranks[1].exposed_comm_ms, 4000);
    assert_ms(a->ranks[1].wait_ms, 0);
    assert_true(fabs(a->ranks[1].speed - 0.5) < 1e-12);
    analysis_free(a, 1);
    free(sc);
    store_close(st);
    remove_db(path);
}

/* no_sync_every = 2, four iterations, none warm-up: iterations 0 and 2 only run
 * forward and backward (no copies, no allreduce, no step); iteration 1 reduces the
 * whole model in one bucket, the rebuild comes before iteration 2 (a no_sync step) and
 * iteration 3 uses the two rebuilt buckets.
 *   it 0: F 0-2000, B 2000-6000; the host waits until 6000.
 *   it 1 (t0 = 6000): as iteration 0 of test_equal_ranks_by_hand, shifted by 6000:
 *   allreduce 14000-20000, SGD 22000-25000.
 *   it 2: broadcast 25000-26000; F 26000-28000, B 28000-32000.
 *   it 3 (t0 = 32000): the steady step. */
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
#define SYNC_ONE_BUCKET(r)                                                                                   \
    {r, 1, "compute", "forward", "layer0", 6000, 7000}, {r, 1, "host", "wait", "end of step", 6000, 25000},  \
        {r, 1, "compute", "forward", "layer1", 7000, 8000},                                                  \
        {r, 1, "compute", "backward", "layer1", 8000, 10000},                                                \
        {r, 1, "compute", "copy_in", "param1", 10000, 11000},                                                \
        {r, 1, "compute", "backward", "layer0", 11000, 13000},                                               \
        {r, 1, "compute", "copy_in", "param0", 13000, 14000},                                                \
        {r, 1, "comm", "allreduce", "bucket 0", 14000, 20000},                                               \
        {r, 1, "compute", "copy_out", "param0", 20000, 21000},                                               \
        {r, 1, "compute", "copy_out", "param1", 21000, 22000},                                               \
        {r, 1, "compute", "optimizer", "sgd step", 22000, 25000}
    const want_span want[] = {
        NOSYNC(0, 0, 0, 0),
        SYNC_ONE_BUCKET(0),
        {0, 2, "comm", "broadcast", "rebuild buckets", 25000, 26000},
        NOSYNC(0, 2, 26000, 26000),
        STEADY(0, 3, 32000, 32000),
        NOSYNC(1, 0, 0, 0),
        SYNC_ONE_BUCKET(1),
        {1, 2, "comm", "broadcast", "rebuild buckets", 25000, 26000},
        NOSYNC(1, 2, 26000, 26000),
        STEADY(1, 3, 32000, 32000),
    };
    sqlite3 *db = store_db(st);
    expect_spans(db, run, want, sizeof want / sizeof want[0]);

    /* Steps 6000, 19000, 6000 (from the first forward at 26000) and 18000: mean
     * 12250.  Overlap over the run: iteration 1's allreduce overlaps nothing (compute
     * idles from 14000 to 20000), iteration 3's 3000 of 8000: 3000 / 14000. */
    analysis_run *a = load(db, run);
    assert_int_equal(a->steps, 4);
    assert_ms(a->step_ms_mean, 12250);
    assert_ms(a->step_ms_min, 6000);
    assert_ms(a->step_ms_max, 19000);
    for (int r = 0; r < 2; r++) {
        assert_true(fabs(a->ranks[r].overlap_pct - 100.0 * 3000 / 14000) < 1e-9);
        assert_ms(a->ranks[r].wait_ms, 0);
    }
    analysis_free(a, 1);
    free(sc);
    store_close(st);
    remove_db(path);
}

/* The same scenario and seed give the same span table (every column but run_id), with
 * jitter, lognormal per-rank speeds and a fraction of slow ranks in play; another seed
 * gives another. */
static void test_deterministic(void **state)
{
    (void)state;
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simdet", &st, err, sizeof err), 0);
    const char *const extra[] = {"run.world_size=16", "run.iterations=3", "skew.jitter=0.1", "skew.speed_sigma=0.2",
                                 "skew.slow_fraction=0.25", "skew.slowdown=1.5", "model.params=", "model.preset=resnet18",
                                 "model.batch=8", NULL};
    scenario *sc = hand_scenario(extra);
    int64_t a = run_sim(st, sc), b = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "run.seed=2", (char[SCENARIO_ERR]){0}), 0);
    int64_t c = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    const char *cols = "rank, iter, stream, kind, name, layer, bucket, seq, bytes, start_ns, end_ns";
    char sql[1024];
    int64_t pairs[2][2] = {{a, b}, {a, c}};
    for (int p = 0; p < 2; p++) {
        snprintf(sql, sizeof sql,
                 "select (select count(*) from span where run_id = ?1), "
                 "(select count(*) from (select %s from span where run_id = ?1 except select %s from span where "
                 "run_id = ?2)) + (select count(*) from (select %s from span where run_id = ?2 except select %s "
                 "from span where run_id = ?1))",
                 cols, cols, cols, cols);
        sqlite3_stmt *q;
        assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
        sqlite3_bind_int64(q, 1, pairs[p][0]);
        sqlite3_bind_int64(q, 2, pairs[p][1]);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_true(sqlite3_column_int64(q, 0) > 1000);
        if (p == 0)
            assert_int_equal(sqlite3_column_int64(q, 1), 0);
        else
            assert_true(sqlite3_column_int64(q, 1) > 0);
        sqlite3_finalize(q);
    }
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "record.detail=phase", serr), 0);
    int64_t phases = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    /* Rank 0, iteration 1 (test_skewed_rank_by_hand): forward 33000-35000, backward with
     * its copies 35000-41000, copies out 53000-55000, the step 55000-58000. */
    const want_span want[] = {
        {0, 0, "compute", "forward", "forward", 0, 2000},
        {0, 0, "host", "wait", "end of step", 0, 27000},
        {0, 0, "compute", "backward", "backward", 2000, 8000},
        {0, 0, "comm", "allreduce", "bucket 0", 8000, 22000},
        {0, 0, "compute", "copy_out", "copy_out", 22000, 24000},
        {0, 0, "compute", "optimizer", "optimizer", 24000, 27000},
        {0, 1, "comm", "broadcast", "rebuild buckets", 27000, 33000},
        {0, 1, "host", "wait", "end of step", 33000, 58000},
        {0, 1, "compute", "forward", "forward", 33000, 35000},
        {0, 1, "compute", "backward", "backward", 35000, 41000},
        {0, 1, "comm", "allreduce", "bucket 0", 38000, 47000},
        {0, 1, "comm", "allreduce", "bucket 1", 47000, 53000},
        {0, 1, "compute", "copy_out", "copy_out", 53000, 55000},
        {0, 1, "compute", "optimizer", "optimizer", 55000, 58000},
        {1, 0, "compute", "forward", "forward", 0, 4000},
        {1, 0, "host", "wait", "end of step", 0, 32000},
        {1, 0, "compute", "backward", "backward", 4000, 16000},
        {1, 0, "comm", "allreduce", "bucket 0", 16000, 22000},
        {1, 0, "compute", "copy_out", "copy_out", 22000, 26000},
        {1, 0, "compute", "optimizer", "optimizer", 26000, 32000},
        {1, 1, "comm", "broadcast", "rebuild buckets", 32000, 33000},
        {1, 1, "host", "wait", "end of step", 33000, 63000},
        {1, 1, "compute", "forward", "forward", 33000, 37000},
        {1, 1, "compute", "backward", "backward", 37000, 49000},
        {1, 1, "comm", "allreduce", "bucket 0", 43000, 47000},
        {1, 1, "comm", "allreduce", "bucket 1", 49000, 53000},
        {1, 1, "compute", "copy_out", "copy_out", 53000, 57000},
        {1, 1, "compute", "optimizer", "optimizer", 57000, 63000},
    };
    expect_spans(db, phases, want, sizeof want / sizeof want[0]);
    analysis_run *a = load(db, ops), *b = load(db, phases);
    assert_false(a->phase_spans);
    assert_true(b->phase_spans); /* the report says which detail it reads */
    assert_ms(b->step_ms_mean, 30000);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

/* The sweep summary lists each run's step and names the fastest: the equal-rank step of
 * test_equal_ranks_by_hand (18000 ns) beats the same with rank 1 twice as slow. */
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
    assert_int_equal(report_sweep_summary(store_db(st), ids, 2, out, err, sizeof err), 0);
    fclose(out);
    assert_non_null(strstr(text, "best: fast (0.018 ms per step)"));
    assert_non_null(strstr(text, "slow"));
    free(text);
    free(slow);
    free(fast);
    store_close(st);
    remove_db(path);
}

/* The network model's formulas at points worked out by hand. */
static void test_network_model(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"run.world_size=8", "network.bandwidth_gbps=10",
                                                  "network.latency_us=2", NULL});
    net_model nm;
    net_model_init(&nm, sc);
    /* ring: 2*7*(2000 + 8e6/(8*10)) = 14 * 102000 */
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - 14.0 * 102000) < 1e-6);
    /* tree: 2*3*2000 + 2*8e6/10 */
    sc->algorithm = NET_TREE;
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - (12000 + 1.6e6)) < 1e-6);
    /* hierarchical ring, 2 nodes of 4: intra 2*3*(5000 + 8e6/(4*100)) + inter over 2
     * nodes of 2e6 bytes 2*1*(2000 + 2e6/(2*10)) */
    sc->algorithm = NET_RING;
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=4", err), 0);
    assert_int_equal(scenario_override(sc, "network.intra_bandwidth_gbps=100", err), 0);
    assert_int_equal(scenario_override(sc, "network.intra_latency_us=5", err), 0);
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - (6.0 * 25000 + 2.0 * 102000)) < 1e-6);
    /* one rank: nothing to send */
    assert_int_equal(scenario_override(sc, "run.world_size=1", err), 0);
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=0", err), 0);
    net_model_init(&nm, sc);
    assert_true(net_allreduce_ns(&nm, 8e6) == 0);
    /* presets fill the link unless it is set */
    scenario_defaults(sc);
    assert_int_equal(scenario_override(sc, "network.preset=ib-ndr400", err), 0);
    assert_true(fabs(sc->bandwidth_gbps - 46.0) < 1e-9);
    assert_true(fabs(sc->latency_us - 14.0) < 1e-9);
    assert_int_equal(scenario_override(sc, "network.intra_preset=nvlink4", err), 0);
    assert_true(fabs(sc->intra_bandwidth_gbps - 369.0) < 1e-9);
    scenario_defaults(sc);
    assert_int_equal(scenario_override(sc, "network.bandwidth_gbps=3", err), 0);
    assert_int_equal(scenario_override(sc, "network.preset=roce100", err), 0);
    assert_true(sc->bandwidth_gbps == 3.0);
    free(sc);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_ranks_by_hand),
        cmocka_unit_test(test_skewed_rank_by_hand),
        cmocka_unit_test(test_no_sync_and_rebuild_by_hand),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_phase_detail_keeps_the_figures),
        cmocka_unit_test(test_sweep_summary_names_the_best),
        cmocka_unit_test(test_network_model),
        cmocka_unit_test(test_failure_is_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
