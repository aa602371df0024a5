/* sim_by_hand.h — what the sim backend's tests (tests/test_sim_*.c) share: hand_scenario
 * below and its helpers (run_sim, a scenario run on the sim backend and recorded, serves
 * test_span_ranks.c too).  The sim backend, worked out by hand: 2 ranks, a custom model of
 * two 500,000-element parameters (two layers, each parameter 1-D, no buffers), a device of
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
 * end, and the report's figures, follow from these; the expected tables (here and in the
 * tests) are derived in the comments beside them. */
#ifndef DDPPROF_TESTS_SIM_BY_HAND_H
#define DDPPROF_TESTS_SIM_BY_HAND_H

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

static inline scenario *hand_scenario(const char *const extra[])
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
        if (scenario_override(sc, base[i], err, sizeof err) != 0)
            fail_msg("%s", err);
    for (int i = 0; extra && extra[i]; i++)
        if (scenario_override(sc, extra[i], err, sizeof err) != 0)
            fail_msg("%s", err);
    if (scenario_validate(sc, err, sizeof err) != 0)
        fail_msg("%s", err);
    return sc;
}

/* Runs sc on the sim backend, recording into st; the run's id (a failure fails the test). */
static inline int64_t run_sim(store *st, const scenario *sc)
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

static inline int by_position(const void *pa, const void *pb)
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
static inline void expect_spans(sqlite3 *db, int64_t run, const want_span *want_in, size_t nwant)
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

static inline analysis_run *load(store *st, int64_t run)
{
    analysis_run *runs;
    size_t n;
    char err[256];
    if (analysis_load(st, run, &runs, &n, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(n, 1);
    return runs;
}

/* The end of a test that ran scenario sc (hand_scenario's) in the store at path: frees
 * sc, closes the store and removes its file. */
static inline void hand_done(scenario *sc, store *st, const char *path)
{
    scenario_free(sc);
    free(sc);
    store_close(st);
    remove_db(path);
}

#define NS_TO_MS(x) ((double)(x) / 1e6)

static inline void assert_ms(double got, int64_t want_ns)
{
    if (!(fabs(got - NS_TO_MS(want_ns)) < 1e-9))
        fail_msg("%.9f ms, expected %lld ns", got, (long long)want_ns);
}

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

/* The time of one span of run `run` (its start, or with `end` its end), by rank,
 * iteration, kind and, for a collective, bucket or, for an op, name. */
static inline int64_t span_time(sqlite3 *db, int64_t run, int rank, int iter, const char *kind, int bucket, const char *name,
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

/* Spans of run a not in run b plus those of b not in a (every column but ids); the
 * span count of run a in *count. */
static inline int64_t span_differences(sqlite3 *db, int64_t a, int64_t b, int64_t *count)
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

static inline void bucket_allreduce_times(sqlite3 *db, int64_t run, allreduce_times *t)
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

#endif
