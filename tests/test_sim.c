/* test_sim.c — the sim backend, worked out by hand: 2 ranks, a custom model of two
 * 500,000-element parameters (two layers, each parameter 1-D, no buffers), a device of
 * 1 TFLOP/s at full efficiency and 4000 GB/s, batch 1, links of 1000 GB/s and 1 us.
 * So, for a rank of speed 1: forward of a layer 2*500000/1000 = 1000 ns, backward 2000
 * ns, a copy into or out of a bucket 2*4*500000/4000 = 1000 ns, the SGD step
 * 12*1e6/4000 = 3000 ns.  netmodel.c, durations rounded to the ns:
 *   ring allreduce of S bytes over 2 ranks 2*(1000 + S/2000): the whole model, 4 MB,
 *   6000; one parameter, 2 MB, 4000; the 8-byte parameter count 2000.008 -> 2000;
 *   broadcast of S bytes ceil(log2 2)*1000 + S/1000: the module states, 4 MB, 5000;
 *   the sizes and strides, 2 x 2 dims x 8 = 32 bytes, 1000.032 -> 1000; the rebuild's
 *   bucket indices, (2 + 1) int32 = 12 bytes, and bucket sizes, 2 int32 = 8 bytes,
 *   1000 each.
 * DDP's construction (ddp_collectives.c, from reducer_init) puts three collectives on
 * the comm stream before iteration 0, each recorded in iteration 0 and each waited for
 * by the host before it enqueues the next: the allgather of the parameter count
 * (recorded as an allreduce) [0, 2000], the broadcast of sizes and strides [2000,
 * 3000], the module states in one float32 chunk (4 MB < 250 MiB; no buffers, so no
 * int64 chunk and no broadcast of buffers before the forwards) [3000, 8000].  Collectives
 * take no compute, so skew does not move them; the first forward starts at 8000.  The
 * rebuild, before the forward after the first synchronised step, is two broadcasts the
 * host waits for in turn: the indices, from the last rank's arrival, then the sizes.
 * bucket_cap_mb = first_bucket_mb = 1 puts each parameter in a bucket of its own after
 * the rebuild (bucket 0 = the last layer's, by ready order).  Every span's start and
 * end, and the report's figures, follow from these; the expected tables below are
 * derived in the comments beside them. */
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

#include "reports/analysis.h"
#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "engine/workload/model_zoo.h"
#include "engine/cost/netmodel.h"
#include "engine/scenario/scenario.h"
#include "engine/sim/sim_contention.h"
#include "engine/sim/sim_host.h"
#include "profiler/store.h"
#include "reports/sweep_summary.h"
#include "engine/cost/timing.h"
#include "engine/sim/sim_host_terms.h"
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

static analysis_run *load(store *st, int64_t run)
{
    analysis_run *runs;
    size_t n;
    char err[256];
    if (analysis_load(st, run, &runs, &n, err, sizeof err) != 0)
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

/* DDP's construction on rank r (the file's comment): iteration 0's first spans. */
#define CONSTRUCTION(r)                                                                                      \
    {r, 0, "comm", "all_gather", "verify params: allgather count int64", 0, 2000},                           \
        {r, 0, "comm", "broadcast", "verify params: broadcast sizes and strides int64", 2000, 3000},        \
        {r, 0, "comm", "broadcast", "sync module states float32", 3000, 8000}

/* The rebuild before iteration `it`: the indices from the last arrival `at` until
 * `ready`, then the sizes, enqueued by every host at `ready`, 1000 more. */
#define REBUILD(r, it, at, ready)                                                                            \
    {r, it, "comm", "broadcast", "rebuild: bucket indices int32", at, ready},                               \
        {r, it, "comm", "broadcast", "rebuild: bucket sizes int32", ready, ready + 1000}

/* A synchronised step of equal ranks with one bucket holding the whole model (4 MB),
 * from t0 = its first forward: it is launched after the last copy_in (+8000) and takes
 * 6000; copies out in bucket order (param0, param1). */
#define ONE_BUCKET(r, it, t0, hs)                                                                            \
    {r, it, "host", "wait", "end of step", hs, t0 + 19000},                                                 \
        {r, it, "compute", "forward", "layer0", t0, t0 + 1000},                                              \
        {r, it, "compute", "forward", "layer1", t0 + 1000, t0 + 2000},                                       \
        {r, it, "compute", "backward", "layer1", t0 + 2000, t0 + 4000},                                      \
        {r, it, "compute", "copy_in", "param1", t0 + 4000, t0 + 5000},                                       \
        {r, it, "compute", "backward", "layer0", t0 + 5000, t0 + 7000},                                      \
        {r, it, "compute", "copy_in", "param0", t0 + 7000, t0 + 8000},                                       \
        {r, it, "comm", "allreduce", "bucket 0", t0 + 8000, t0 + 14000},                                     \
        {r, it, "compute", "copy_out", "param0", t0 + 14000, t0 + 15000},                                    \
        {r, it, "compute", "copy_out", "param1", t0 + 15000, t0 + 16000},                                    \
        {r, it, "compute", "optimizer", "sgd step", t0 + 16000, t0 + 19000}

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
    free(sc);
    store_close(st);
    remove_db(path);
}

/* DDP's construction when every op and collective waits 500 ns for its stream's
 * worker (op_overhead_us = 0.5): the allgather arrives at 500, ends 2500; the host then
 * enqueues the broadcast (arrives 3000, ends 4000), then the module states (arrives
 * 4500, ends 9500). */
#define CONSTRUCTION_GAP(r)                                                                                  \
    {r, 0, "comm", "all_gather", "verify params: allgather count int64", 500, 2500},                         \
        {r, 0, "comm", "broadcast", "verify params: broadcast sizes and strides int64", 3000, 4000},        \
        {r, 0, "comm", "broadcast", "sync module states float32", 4500, 9500}

/* The one iteration of test_op_overhead_by_hand and test_comm_launch_by_hand, with the
 * bucket's allreduce and what follows it `late` ns later. */
#define GAP_STEP(r, late)                                                                                    \
    {r, 0, "host", "wait", "end of step", 9500, 34500 + (late)},                                            \
        {r, 0, "compute", "forward", "layer0", 10000, 11250},                                                \
        {r, 0, "compute", "forward", "layer1", 11750, 13000},                                                \
        {r, 0, "compute", "backward", "layer1", 13500, 15750},                                               \
        {r, 0, "compute", "copy_in", "param1", 16250, 17250},                                                \
        {r, 0, "compute", "backward", "layer0", 17750, 20000},                                               \
        {r, 0, "compute", "copy_in", "param0", 20500, 21500},                                                \
        {r, 0, "comm", "allreduce", "bucket 0", 22000 + (late), 28000 + (late)},                             \
        {r, 0, "compute", "copy_out", "param0", 28500 + (late), 29500 + (late)},                             \
        {r, 0, "compute", "copy_out", "param1", 30000 + (late), 31000 + (late)},                             \
        {r, 0, "compute", "optimizer", "sgd step", 31500 + (late), 34500 + (late)}

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
    assert_int_equal(scenario_override(sc, "host.op_overhead_busy_us=0.1", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_comm_launch_us=0.25", err), 0);
    const want_span in_cache[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 250),
        GAP_STEP(1, 250),
    };
    expect_spans(db, run_sim(st, sc), in_cache, sizeof in_cache / sizeof in_cache[0]);
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err), 0);

    const char *paced[] = {"run.iterations=3", "network.pace=true", "network.algorithm=measured",
                           "network.measured_ranks=2,2", "network.measured_bytes=1000000,4000000",
                           "network.measured_us=1,1", NULL};
    for (int i = 0; paced[i]; i++)
        assert_int_equal(scenario_override(sc, paced[i], err), 0);
    int64_t runs[2];
    runs[0] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "network.pace=false", err), 0);
    assert_int_equal(scenario_override(sc, "network.algorithm=ring", err), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.host_cores=4", err), 0);
    int64_t roomy = run_sim(st, sc);
    int launches, beside_ops;
    idle_launches(store_db(st), crowded, 3000, &launches, &beside_ops);
    assert_true(launches >= 8);
    assert_true(beside_ops >= 1);
    idle_launches(store_db(st), roomy, 0, &launches, &beside_ops);
    assert_true(launches >= 8);
    free(sc);
    store_close(st);
    remove_db(path);
}

/* The time of one span of run `run` (its start, or with `end` its end), by rank,
 * iteration, kind and, for a collective, bucket or, for an op, name. */
static int64_t span_time(sqlite3 *db, int64_t run, int rank, int iter, const char *kind, int bucket, const char *name,
                         bool end)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT start_ns, end_ns FROM span WHERE run_id = ? AND rank = ? AND iter = ? "
                                        "AND kind = ? AND (bucket = ? OR name = ?)",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    sqlite3_bind_int(q, 2, rank);
    sqlite3_bind_int(q, 3, iter);
    sqlite3_bind_text(q, 4, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 5, bucket);
    sqlite3_bind_text(q, 6, name ? name : "", -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int64_t t = sqlite3_column_int64(q, end ? 1 : 0);
    assert_int_equal(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    return t;
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
    assert_int_equal(scenario_override(sc, "host.comm_launch_behind_us=1000000", err), 0);
    int64_t behind_run = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.comm_launch_behind_us=1", err), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.host_cores=1", err), 0);
    int64_t shared = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(span_time(db, own, r, 0, "backward", -1, "layer1", false), 13500);
        assert_int_equal(span_time(db, own, r, 0, "backward", -1, "layer1", true), 15750);
        assert_int_equal(span_time(db, shared, r, 0, "backward", -1, "layer1", false), 13500);
        assert_int_equal(span_time(db, shared, r, 0, "backward", -1, "layer1", true), 16000);
    }
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}), 0);
    run = run_sim(st, sc);
    for (int r = 0; r < 2; r++) {
        const want_span shared[] = {
            {r, 0, "compute", "backward", "layer1", 13500, 21500},
            {r, 0, "compute", "copy_in", "param1", 22000, 38000},
        };
        expect_some_spans(store_db(st), run, shared, sizeof shared / sizeof shared[0]);
    }
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}), 0);
    run = run_sim(st, sc);
    expect_spans(store_db(st), run, want, sizeof want / sizeof want[0]);
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
}

static int64_t span_differences(sqlite3 *db, int64_t a, int64_t b, int64_t *count);

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
    free(sc);
    sc = hand_scenario(NULL);
    timing_init(&t, sc, 0);
    sim_host_terms_init(&h, sc, false);
    assert_true(sim_host_gap_stall_ns(&h, &t) == 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

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
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err), 0);
    const want_span out_of_cache[] = {
        CONSTRUCTION_GAP(0),
        CONSTRUCTION_GAP(1),
        GAP_STEP(0, 0),
        GAP_STEP(1, 0),
    };
    expect_spans(db, run_sim(st, sc), out_of_cache, sizeof out_of_cache / sizeof out_of_cache[0]);
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "device.grad_write_gbps=0", (char[SCENARIO_ERR]){0}), 0);
    int64_t sleeping = run_sim(st, sc);
    int64_t n, exact, inside;
    backward_durations(store_db(st), bound, 2500, &n, &exact, &inside);
    assert_int_equal(n, 2 * 2 * 3); /* 2 ranks x 2 layers x 3 iterations */
    assert_int_equal(exact, n);
    assert_true(inside > 0);
    backward_durations(store_db(st), sleeping, 2500, &n, &exact, &inside);
    assert_true(exact > 0 && exact < n);
    assert_int_equal(inside, exact);
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "network.gpus_per_node=0", err), 0);
    assert_int_equal(scenario_host_ranks(sc), 8);
    assert_false(timing_fits_cache(sc, 1000000));
    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err), 0);
    assert_false(timing_fits_cache(sc, 1));
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
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}), 0);
    int64_t out_of_cache = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", (char[SCENARIO_ERR]){0}), 0);
    assert_int_equal(scenario_override(sc, "host.cache_op_wakeup_us=-1", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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

    assert_int_equal(scenario_override(sc, "host.host_wake_us=2", err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 2500 && hi == 2500 && host_lo == 2000 && host_hi == 2000);

    assert_int_equal(scenario_override(sc, "host.host_wake_stall_fraction=1", err), 0);
    assert_int_equal(scenario_override(sc, "host.host_wake_stall_us=1", err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo > 2500 && spread);

    assert_int_equal(scenario_override(sc, "host.host_wake_stall_fraction=0", err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_mb=32", err), 0);
    assert_int_equal(scenario_override(sc, "host.cache_host_wake_us=1", err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 1500 && hi == 1500 && host_lo == 1000 && host_hi == 1000);

    assert_int_equal(scenario_override(sc, "host.cache_mb=0", err), 0);
    assert_int_equal(scenario_override(sc, "ddp.no_sync_every=2", err), 0);
    turnarounds(db, run_sim(st, sc), &lo, &hi, &spread, &host_lo, &host_hi);
    assert_true(lo == 500 && hi == 2500 && host_lo == 0 && host_hi == 2000);
    free(sc);
    store_close(st);
    remove_db(path);
}

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
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

/* The same scenario and seed give the same span table (every column but run_id), with
 * jitter, lognormal per-rank speeds and a fraction of slow ranks in play; another seed
 * gives another. */
/* Spans of run a not in run b plus those of b not in a (every column but ids); the
 * span count of run a in *count. */
static int64_t span_differences(sqlite3 *db, int64_t a, int64_t b, int64_t *count)
{
    const char *cols = "rank, iter, stream, kind, name, layer, bucket, seq, bytes, start_ns, end_ns";
    char sql[1024];
    snprintf(sql, sizeof sql,
             "select (select count(*) from span where run_id = ?1), "
             "(select count(*) from (select %s from span where run_id = ?1 except select %s from span where "
             "run_id = ?2)) + (select count(*) from (select %s from span where run_id = ?2 except select %s "
             "from span where run_id = ?1))",
             cols, cols, cols, cols);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    sqlite3_bind_int64(q, 1, a);
    sqlite3_bind_int64(q, 2, b);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    *count = sqlite3_column_int64(q, 0);
    int64_t differ = sqlite3_column_int64(q, 1);
    sqlite3_finalize(q);
    return differ;
}

static void check_deterministic(const char *const extra[])
{
    char path[64], err[256];
    store *st;
    assert_int_equal(open_tmp_store(path, sizeof path, "simdet", &st, err, sizeof err), 0);
    scenario *sc = hand_scenario(extra);
    int64_t a = run_sim(st, sc), b = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "run.seed=2", (char[SCENARIO_ERR]){0}), 0);
    int64_t c = run_sim(st, sc);
    sqlite3 *db = store_db(st);
    int64_t count;
    assert_int_equal(span_differences(db, a, b, &count), 0);
    assert_true(count > 1000);
    assert_true(span_differences(db, a, c, &count) > 0);
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.noise_seed=1", err), 0); /* run.seed is 1 */
    assert_int_equal(span_differences(db, base, run_sim(st, sc), &count), 0);
    assert_true(count > 500);
    assert_int_equal(scenario_override(sc, "host.noise_seed=2", err), 0);
    int64_t two = run_sim(st, sc);
    assert_true(span_differences(db, base, two, &count) > count / 2);

    assert_int_equal(scenario_override(sc, "host.op_wakeup_sd_us=0", err), 0);
    int64_t fixed2 = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.noise_seed=3", err), 0);
    assert_int_equal(span_differences(db, fixed2, run_sim(st, sc), &count), 0);
    assert_int_equal(scenario_override(sc, "run.seed=3", err), 0);
    assert_true(span_differences(db, fixed2, run_sim(st, sc), &count) > count / 2);
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}), 0);
    int64_t one = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
}

/* On a shared host each rank as a process copies a bucket allreduce's result out of the
 * staging area on the host's cores (2 MB read and written at 4000 GB/s: 1000 ns of a
 * core each).  With a core each the copies end with the sum, so every bucket allreduce
 * takes as long from its last arrival to its end as with ranks as threads (which sum in
 * place: no copy).  With one core for four ranks the four copies share it: each
 * allreduce takes at least the three other copies' time longer (3000 ns for the buckets
 * of 2 MB after the rebuild, exactly: nothing else runs then), and the ranks, whose
 * copies started together, leave it together.  A paced link holds each allreduce to
 * 2 x 3 x (1 us + 2 MB / (4 x 1000 GB/s)) = 9000 ns, the unpaced link's time here; with
 * the sum measured at 1 us the four copies (4000 ns on one core) are done before that
 * floor, which alone sets the end. */
typedef struct {
    int n;
    int64_t seq[64], time_ns[64], spread_ns[64];
} allreduce_times;

static void bucket_allreduce_times(sqlite3 *db, int64_t run, allreduce_times *t)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "select seq, min(end_ns) - max(start_ns), max(end_ns) - min(end_ns) from span "
                                        "where run_id = ?1 and kind = 'allreduce' and bucket >= 0 group by seq "
                                        "order by seq",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, run);
    t->n = 0;
    while (sqlite3_step(q) == SQLITE_ROW && t->n < 64) {
        t->seq[t->n] = sqlite3_column_int64(q, 0);
        t->time_ns[t->n] = sqlite3_column_int64(q, 1);
        t->spread_ns[t->n] = sqlite3_column_int64(q, 2);
        t->n++;
    }
    sqlite3_finalize(q);
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
    assert_int_equal(scenario_override(sc, "host.host_cores=4", (char[SCENARIO_ERR]){0}), 0);
    int64_t four = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "run.ranks=threads", (char[SCENARIO_ERR]){0}), 0);
    int64_t threads = run_sim(st, sc);
    const char *paced[] = {"run.ranks=processes", "host.host_cores=1", "network.pace=true",
                           "network.algorithm=measured", "network.measured_ranks=4,4",
                           "network.measured_bytes=1000000,4000000", "network.measured_us=1,1", NULL};
    for (int i = 0; paced[i]; i++)
        assert_int_equal(scenario_override(sc, paced[i], (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.comm_on_host_cores=true", (char[SCENARIO_ERR]){0}), 0);
    int64_t one = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}), 0);
    int64_t two = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=1", (char[SCENARIO_ERR]){0}), 0);
    assert_int_equal(scenario_override(sc, "device.comm_slowdown=0.1", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.cache_mb=16", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.comm_exit_late_us=1000000", (char[SCENARIO_ERR]){0}), 0);
    runs[1] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "host.compute_wake_late_us=1000000", (char[SCENARIO_ERR]){0}), 0);
    runs[1] = run_sim(st, sc);
    assert_int_equal(scenario_override(sc, "host.host_cores=2", (char[SCENARIO_ERR]){0}), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    assert_int_equal(scenario_override(sc, "record.detail=phase", serr), 0);
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
    free(sc);
    store_close(st);
    remove_db(path);
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
    free(twin);
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
    assert_int_equal(scenario_override(sc, "host.op_wakeup_sd_us=0", err), 0);
    timing_init(&a, sc, 1);
    sim_host_terms_init(&ha, sc, false);
    for (int i = 0; i < 100; i++)
        assert_true(sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_FORWARD) == 101000);
    assert_true(sim_host_stream_op_ns(&ha, &a, 1000, 0, SPAN_COPY_IN) == 1000);
    free(sc);
}

/* algorithm = measured: the points of this world size, log-log between neighbours
 * (with network.pace, never below the link's alpha-beta time)
 * (1000 B: 10 us, 100000 B: 1000 us, so 10000 B: sqrt(10 * 1000) = 100 us), the
 * smallest time below them, proportional above (200000 B: 2000 us); a repeated size is
 * averaged; another world size, and broadcasts, keep the ring. */
static void test_measured_network(void **state)
{
    (void)state;
    scenario *sc = hand_scenario((const char *[]){"run.world_size=4", "network.bandwidth_gbps=10",
                                                  "network.latency_us=2", "network.algorithm=measured",
                                                  "network.measured_ranks=2,4,4,4,4",
                                                  "network.measured_bytes=1000,100000,1000,4000,4000",
                                                  "network.measured_us=7,1000,10,30,50", NULL});
    net_model nm;
    net_model_init(&nm, sc);
    assert_true(net_uses_measurements(&nm));
    assert_true(fabs(net_allreduce_ns(&nm, 1000) - 10000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 4) - 10000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 4000) - 40000) < 1e-6);
    /* between 4000 (40 us) and 100000 (1000 us): 20000 B is log(5)/log(25) = 1/2 of the way */
    assert_true(fabs(net_allreduce_ns(&nm, 20000) - sqrt(40000.0 * 1e6)) < 1e-3);
    assert_true(fabs(net_allreduce_ns(&nm, 200000) - 2e6) < 1e-6);
    /* broadcasts: the ring's tree of latency + bytes / bandwidth, 2*2000 + 8e6/10 */
    assert_true(fabs(net_broadcast_ns(&nm, 8e6) - (4000 + 8e5)) < 1e-6);
    char err[SCENARIO_ERR];
    /* pace: at least the link's ring, 2*3*(2000 + S/(4*10)): 12150 ns for 1000 B (above
     * the measured 10 us), 27000 ns for 100000 B (below the measured 1000 us) */
    assert_int_equal(scenario_override(sc, "network.pace=true", err), 0);
    net_model_init(&nm, sc);
    assert_true(fabs(net_allreduce_ns(&nm, 1000) - 12150) < 1e-6);
    assert_true(fabs(net_link_allreduce_ns(&nm, 100000) - 27000) < 1e-6);
    assert_true(fabs(net_allreduce_ns(&nm, 100000) - 1e6) < 1e-6);
    assert_int_equal(scenario_override(sc, "network.pace=false", err), 0);
    assert_int_equal(scenario_override(sc, "run.world_size=8", err), 0);
    net_model_init(&nm, sc);
    assert_false(net_uses_measurements(&nm));
    assert_true(fabs(net_allreduce_ns(&nm, 8e6) - 14.0 * 102000) < 1e-6);
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

/* Collectives through the sim's devices directly (device.h), 3 ranks: a broadcast for
 * which each rank names roots[rank] as the root (the root's buffer holds 100..103, the
 * others' -1), then two SUM allreduces: int32 {rank, 1} and float32 rank + 0.5. */
typedef struct {
    const backend_ops *be;
    backend_world *w;
    int roots[3];
    int32_t buf[3][4];
    int32_t isum[3][2];
    float fsum[3];
    int rc[3];
    char err[3][256];
} bcast_case;

static int allreduce(device *d, int64_t seq, void *buf, int64_t count, dev_dtype dtype)
{
    dev_op op = {.kind = SPAN_ALLREDUCE, .iter = 0, .layer = -1, .bucket = -1, .seq = seq, .bytes = count * 4,
                 .work = WORK_ALLREDUCE};
    snprintf(op.name, sizeof op.name, "test allreduce");
    op.u.coll.buf = buf;
    op.u.coll.count = count;
    op.u.coll.dtype = dtype;
    op.u.coll.prescale = 1.0f;
    return dev_enqueue(d, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(d, DEV_STREAM_COMM) != 0 ? -1 : 0;
}

static void bcast_rank(void *user, int rank)
{
    bcast_case *c = user;
    device *d = c->be->device_create(c->w, rank, c->err[rank], sizeof c->err[rank]);
    if (!d) {
        c->rc[rank] = -1;
        return;
    }
    int root = c->roots[rank];
    for (int k = 0; k < 4; k++)
        c->buf[rank][k] = rank == root ? 100 + k : -1;
    dev_op op = {.kind = SPAN_BROADCAST, .iter = 0, .layer = -1, .bucket = -1, .seq = 0, .bytes = 16,
                 .work = WORK_BROADCAST};
    snprintf(op.name, sizeof op.name, "test broadcast int32");
    op.u.coll.buf = c->buf[rank];
    op.u.coll.count = 4;
    op.u.coll.dtype = DEV_I32;
    op.u.coll.prescale = 1.0f;
    op.u.coll.root = root;
    c->rc[rank] = dev_enqueue(d, DEV_STREAM_COMM, &op) != 0 || dev_synchronize(d, DEV_STREAM_COMM) != 0 ? -1 : 0;
    if (c->rc[rank] != 0)
        snprintf(c->err[rank], sizeof c->err[rank], "%s", dev_error(d));
    /* The root may reuse its buffer once its host sees the broadcast end (as DDP's
     * scratch buffer is): the others must have their copy by then. */
    if (rank == root)
        memset(c->buf[rank], 0, sizeof c->buf[rank]);
    c->isum[rank][0] = rank;
    c->isum[rank][1] = 1;
    c->fsum[rank] = (float)rank + 0.5f;
    if (c->rc[rank] == 0 &&
        (allreduce(d, 1, c->isum[rank], 2, DEV_I32) != 0 || allreduce(d, 2, &c->fsum[rank], 1, DEV_F32) != 0)) {
        c->rc[rank] = -1;
        snprintf(c->err[rank], sizeof c->err[rank], "%s", dev_error(d));
    }
    c->be->device_destroy(d);
}

static void run_bcast(bcast_case *c)
{
    scenario *sc = hand_scenario((const char *[]){"run.world_size=3", NULL});
    c->be = backend_find("sim");
    assert_non_null(c->be);
    recorder *rec;
    assert_int_equal(recorder_create(NULL, 0, c->be->span_rings, &rec), 0);
    assert_int_equal(recorder_start(rec), 0);
    backend_world_args wa = {.sc = sc, .rec = rec};
    char err[256];
    if (c->be->world_create(&wa, &c->w, err, sizeof err) != 0)
        fail_msg("%s", err);
    c->be->run_ranks(c->w, 3, bcast_rank, NULL, c);
    c->be->world_destroy(c->w);
    assert_int_equal(recorder_stop(rec, err, sizeof err), 0);
    recorder_destroy(rec);
    free(sc);
}

/* The root's data reach every other rank whichever rank is the root (join broadcasts
 * from the last rank still training), even a root that arrives last and reuses its
 * buffer at once; ranks that name different roots fail the collective.  Allreduces
 * with buffers leave the sum in each (join reads its counts): {0+1+2, 3} and 4.5. */
static void test_collectives_carry_data(void **state)
{
    (void)state;
    for (int root = 0; root < 3; root++) {
        bcast_case c = {.roots = {root, root, root}};
        run_bcast(&c);
        for (int r = 0; r < 3; r++) {
            if (c.rc[r] != 0)
                fail_msg("rank %d: %s", r, c.err[r]);
            assert_int_equal(c.isum[r][0], 3);
            assert_int_equal(c.isum[r][1], 3);
            assert_true(c.fsum[r] == 4.5f);
            if (r == root)
                continue;
            for (int k = 0; k < 4; k++)
                assert_int_equal(c.buf[r][k], 100 + k);
        }
    }
    bcast_case c = {.roots = {1, 1, 2}};
    run_bcast(&c);
    int failed = 0;
    for (int r = 0; r < 3; r++) {
        if (c.rc[r] == 0)
            continue;
        failed++;
        assert_non_null(strstr(c.err[r], "names rank 2 its root where the ranks before it named 1"));
    }
    assert_int_equal(failed, 3);
    bcast_case out = {.roots = {3, 3, 3}};
    run_bcast(&out);
    for (int r = 0; r < 3; r++) {
        assert_int_equal(out.rc[r], -1);
        assert_non_null(strstr(out.err[r], "outside the world of 3"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_ranks_by_hand),
        cmocka_unit_test(test_skewed_rank_by_hand),
        cmocka_unit_test(test_op_overhead_by_hand),
        cmocka_unit_test(test_comm_launch_by_hand),
        cmocka_unit_test(test_cache_allreduce_stall_by_hand),
        cmocka_unit_test(test_comm_launch_per_op_by_hand),
        cmocka_unit_test(test_comm_launch_behind_by_hand),
        cmocka_unit_test(test_memory_bound_backward_by_hand),
        cmocka_unit_test(test_sleeping_write_by_hand),
        cmocka_unit_test(test_measured_network),
        cmocka_unit_test(test_wakeup_spread),
        cmocka_unit_test(test_noise_seed_draws_the_noise_alone),
        cmocka_unit_test(test_wakeup_stalls),
        cmocka_unit_test(test_backward_stalls),
        cmocka_unit_test(test_gap_stalls),
        cmocka_unit_test(test_comm_slowdown_by_hand),
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
        cmocka_unit_test(test_cache_allreduce_by_hand),
        cmocka_unit_test(test_compute_wake_by_hand),
        cmocka_unit_test(test_bandwidth_per_kind_by_hand),
        cmocka_unit_test(test_cache_bandwidths_by_hand),
        cmocka_unit_test(test_cache_wakeups_by_hand),
        cmocka_unit_test(test_host_wake_by_hand),
        cmocka_unit_test(test_cache_fit_per_host),
        cmocka_unit_test(test_comm_wakeup_by_hand),
        cmocka_unit_test(test_grad_write_never_wakes_by_hand),
        cmocka_unit_test(test_no_sync_and_rebuild_by_hand),
        cmocka_unit_test(test_join_by_hand),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_phase_detail_keeps_the_figures),
        cmocka_unit_test(test_sweep_summary_names_the_best),
        cmocka_unit_test(test_network_model),
        cmocka_unit_test(test_failure_is_recorded),
        cmocka_unit_test(test_collectives_carry_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
