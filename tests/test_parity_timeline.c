/* test_parity_timeline.c — ddpprof's DDP against PyTorch 1.13's, collective for
 * collective: tests/parity/ddp_probe.py runs PyTorch DDP (gloo, CPU processes) behind a
 * process group that logs every call, and this test runs ddpprof on the same model and
 * options, then compares the initial and rebuilt buckets (sizes and members) and, per
 * iteration, the sequence of collectives with their dtypes and bytes, and the DDP
 * logger's timestamps against PyTorch's own logger (check_logger).  Skipped when
 * /usr/bin/python3 has no torch (or no torchvision for ResNet-18). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "tmp_store.h"

#define PYTHON "/usr/bin/python3"
/* A hung PyTorch run fails the test instead of the suite. */
#define PYTHON_RUN "timeout 600 " PYTHON
#define ITERS 3

typedef struct {
    const char *probe_args;     /* for ddp_probe.py */
    const char *const *set;     /* ddpprof keys, NULL-terminated pairs */
} parity_case;

/* "op dtype bytes" of one ddpprof collective span. */
static void describe_span(const char *kind, const char *name, int64_t bytes, int bucket, const char *bucket_dtype,
                          char *out, size_t n)
{
    const char *op = kind, *dtype = "?";
    if (strncmp(name, "verify params: allgather", 24) == 0)
        op = "allgather";
    if (bucket >= 0) {
        dtype = bucket_dtype;
    } else {
        const char *sp = strrchr(name, ' ');
        dtype = sp ? sp + 1 : name;
    }
    snprintf(out, n, "%s %s %lld", op, dtype, (long long)bytes);
}

/* The probe's collectives of iteration `it` (construction folded into iteration 0). */
static char *probe_sequence(json_t *root, int it)
{
    strbuf s = STRBUF_INIT;
    json_t *phases = json_object_get(root, "phases");
    size_t i;
    json_t *ph;
    json_array_foreach(phases, i, ph)
    {
        const char *name = json_string_value(json_object_get(ph, "phase"));
        char want[32];
        snprintf(want, sizeof want, "iteration %d", it);
        if (strcmp(name, want) != 0 && !(it == 0 && strcmp(name, "construction") == 0))
            continue;
        size_t j;
        json_t *c;
        json_array_foreach(json_object_get(ph, "collectives"), j, c)
        {
            strbuf_addf(&s, "%s %s %lld\n", json_string_value(json_object_get(c, "op")),
                        json_string_value(json_object_get(c, "dtype")),
                        (long long)json_integer_value(json_object_get(c, "bytes")));
        }
    }
    assert_false(s.failed);
    return strbuf_detach(&s, NULL);
}

static char *ddpprof_sequence(sqlite3 *db, int64_t run, int it, const char *bucket_dtype)
{
    strbuf s = STRBUF_INIT;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT kind, name, bytes, COALESCE(bucket, -1) FROM span WHERE run_id = ?"
                                        " AND rank = 0 AND iter = ? AND seq IS NOT NULL ORDER BY seq",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, it);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char line[256];
        describe_span((const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                      sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3), bucket_dtype, line, sizeof line);
        strbuf_addf(&s, "%s\n", line);
    }
    sqlite3_finalize(st);
    assert_false(s.failed);
    return strbuf_detach(&s, NULL);
}

/* Bucket members of `version`, one bucket per line, as "i j k". */
static char *ddpprof_buckets(sqlite3 *db, int64_t run, int version)
{
    strbuf s = STRBUF_INIT;
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT params, nbytes FROM bucket WHERE run_id = ? AND version = ? ORDER BY idx", -1,
                           &st, NULL),
        SQLITE_OK);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, version);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (const char *p = (const char *)sqlite3_column_text(st, 0); *p; p++)
            strbuf_addch(&s, *p == ',' ? ' ' : *p);
        strbuf_addf(&s, " (%lld)\n", (long long)sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    assert_false(s.failed);
    return strbuf_detach(&s, NULL);
}

static char *probe_buckets(json_t *root, const char *members, const char *sizes, const json_t *params)
{
    strbuf s = STRBUF_INIT;
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(root, members), i, b)
    {
        size_t j;
        json_t *idx;
        int64_t bytes = 0;
        json_array_foreach(b, j, idx)
        {
            strbuf_addf(&s, "%s%lld", j ? " " : "", (long long)json_integer_value(idx));
            bytes += 4 * json_integer_value(
                             json_object_get(json_array_get(params, (size_t)json_integer_value(idx)), "numel"));
        }
        if (sizes)
            bytes = json_integer_value(json_array_get(json_object_get(root, sizes), i));
        strbuf_addf(&s, " (%lld)\n", (long long)bytes);
    }
    assert_false(s.failed);
    return strbuf_detach(&s, NULL);
}

/* The end of a test that ran scenario sc's model m on the cpu backend into the store db
 * at dbpath: closes and removes the store, frees the model and the scenario. */
static void cpu_run_done(store *db, const char *dbpath, model *m, scenario *sc)
{
    store_close(db);
    remove_db(dbpath);
    model_free(m);
    scenario_free(sc);
    free(sc);
}

/* One figure (expr) of table's rows of rank 0 in iteration it; -1 where it is NULL. */
static int64_t rank0_figure(sqlite3 *db, const char *table, int64_t run, int it, const char *expr)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT COALESCE(%s, -1) FROM %s WHERE run_id = ? AND rank = 0 AND iter = ?", expr,
             table);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, it);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* One figure of ddpprof's ddp_logging row (rank 0, iteration it); -1 where NULL. */
static int64_t ddpprof_logging(sqlite3 *db, int64_t run, int it, const char *col)
{
    return rank0_figure(db, "ddp_logging", run, it, col);
}

/* A figure of rank 0's spans in iteration it; -1 where there is none. */
static int64_t ddpprof_spans(sqlite3 *db, int64_t run, int it, const char *expr)
{
    return rank0_figure(db, "span", run, it, expr);
}

/* PyTorch's call time of the first allreduce of iteration it whose dtype is (or, with
 * not, is not) int32: its used-parameter bitmap, or its bucket 0. */
static int64_t probe_call_ns(json_t *root, int it, bool bitmap)
{
    char want[32];
    snprintf(want, sizeof want, "iteration %d", it);
    size_t i, j;
    json_t *ph, *c;
    json_array_foreach(json_object_get(root, "phases"), i, ph)
    {
        if (strcmp(json_string_value(json_object_get(ph, "phase")), want) != 0)
            continue;
        json_array_foreach(json_object_get(ph, "collectives"), j, c)
        {
            if (strcmp(json_string_value(json_object_get(c, "op")), "allreduce") != 0)
                continue;
            if ((strcmp(json_string_value(json_object_get(c, "dtype")), "int32") == 0) == bitmap)
                return json_integer_value(json_object_get(c, "t_ns"));
        }
    }
    return -1;
}

/* The DDP logger's timestamps, PyTorch's (its own logger, read at the next forward)
 * against ddpprof's ddp_logging, iteration by iteration:
 *   - comm start is bucket 0's launch: PyTorch's logger takes it just before it calls
 *     bucket 0's allreduce (within 5 ms on a loaded machine, tens of µs measured; a
 *     comm hook's cast comes between, the hook calling the allreduce);
 *     ddpprof's is the point of the compute stream the comm stream waits on to start
 *     it, the end of bucket 0's last copy-in, and never after its allreduce starts;
 *   - static_graph's first iteration: the used-parameter bitmap is sent after the
 *     backward (PyTorch calls it after compute end; ddpprof's starts after the last
 *     backward span), compute end and comm start are taken together at the backward's
 *     end before the copies into the buckets, and the overlap is 0 (PyTorch's comm
 *     start comes a few ns after its compute end, so its overlap has no value and the
 *     field keeps its 0). */
static void check_logger(json_t *root, sqlite3 *db, int64_t run, bool static_graph, bool hook)
{
    json_t *per = json_object_get(root, "logging_per_iter");
    assert_int_equal((int)json_array_size(per), ITERS);
    for (int it = 0; it < ITERS; it++) {
        json_t *l = json_array_get(per, (size_t)it);
        int64_t t_cs = json_integer_value(json_object_get(l, "backward_comm_time_start"));
        int64_t t_ce = json_integer_value(json_object_get(l, "backward_compute_time_end"));
        int64_t t_b0 = probe_call_ns(root, it, false);
        int64_t cs = ddpprof_logging(db, run, it, "backward_comm_time_start");
        int64_t ce = ddpprof_logging(db, run, it, "backward_compute_time_end");
        int64_t overlap = ddpprof_logging(db, run, it, "backward_compute_comm_overlap_time");
        int64_t b0_start = ddpprof_spans(db, run, it, "MIN(start_ns) FILTER (WHERE kind = 'allreduce' AND bucket = 0)");
        print_message("iteration %d: PyTorch comm start %+.3f ms from bucket 0's call, ddpprof %+.3f ms from bucket 0's"
                      " allreduce start\n",
                      it, (double)(t_cs - t_b0) / 1e6, (double)(cs - b0_start) / 1e6);
        if (static_graph && it == 0) {
            int64_t t_map = probe_call_ns(root, it, true);
            assert_true(t_map >= t_ce);
            assert_true(t_cs >= t_ce && t_cs - t_ce < 1000000);
            assert_true(t_b0 >= t_ce);
            assert_int_equal(json_integer_value(json_object_get(l, "backward_compute_comm_overlap_time")), 0);
            int64_t bwd_end = ddpprof_spans(db, run, it, "MAX(end_ns) FILTER (WHERE kind = 'backward')");
            int64_t map_start = ddpprof_spans(db, run, it, "MIN(start_ns) FILTER (WHERE name = 'local_used_map int32')");
            assert_true(map_start >= bwd_end);
            assert_int_equal(ce, bwd_end);
            assert_int_equal(cs, bwd_end);
            assert_int_equal(overlap, 0);
            assert_true(ddpprof_spans(db, run, it, "MIN(start_ns) FILTER (WHERE kind = 'copy_in')") >= ce);
            continue;
        }
        /* A comm hook casts and divides the bucket between the two (ms, the first time). */
        assert_true(t_b0 >= t_cs && (hook || t_b0 - t_cs < 5000000));
        int64_t launch = ddpprof_spans(db, run, it, "MAX(end_ns) FILTER (WHERE kind = 'copy_in' AND bucket = 0)");
        assert_int_equal(cs, launch);
        assert_true(b0_start >= cs);
        assert_true(overlap >= 0);
    }
}

static void check(const parity_case *pc, const char *bucket_dtype)
{
    if (access(PYTHON, X_OK) != 0)
        skip();
    char dir[] = "/tmp/ddpprof_timeline_XXXXXX", out[128], cmd[1024], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/probe.json", dir);
    const char *pdir = getenv("PARITY_DIR") ? getenv("PARITY_DIR") : "tests/parity";
    char params_file[160];
    snprintf(params_file, sizeof params_file, "%s/params.txt", dir);
    snprintf(cmd, sizeof cmd, PYTHON_RUN " %s/ddp_probe.py --world 2 --iters %d %s --params-file %s --out %s", pdir,
             ITERS, pc->probe_args, params_file, out);
    int st = system(cmd);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        rmdir(dir);
        skip();
    }
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    json_error_t jerr;
    json_t *root = json_load_file(out, 0, &jerr);
    assert_non_null(root);
    unlink(out);

    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    const char *base[] = {"run.backend", "cpu", "run.world_size", "2", "run.iterations", "3", "run.warmup", "0",
                          "model.batch", "1", "device.preset", "custom", "device.peak_tflops", "1000",
                          "device.mem_bw_gbps", "100000", "network.bandwidth_gbps", "1000", NULL};
    for (int i = 0; base[i]; i += 2)
        assert_int_equal(scenario_set(sc, base[i], base[i + 1], err, sizeof err), 0);
    for (int i = 0; pc->set[i]; i += 2)
        if (scenario_set(sc, pc->set[i], pc->set[i + 1], err, sizeof err) != 0)
            fail_msg("%s: %s", pc->set[i], err);
    /* A custom model: PyTorch's own module, written as a parameter-list file. */
    if (strcmp(sc->preset, "custom") == 0)
        assert_int_equal(scenario_set(sc, "model.params_file", params_file, err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    model m;
    if (model_build(sc, &m, err, sizeof err) != 0)
        fail_msg("%s", err);
    unlink(params_file);
    rmdir(dir);
    char dbpath[128];
    store *db = NULL;
    assert_int_equal(open_tmp_store(dbpath, sizeof dbpath, "ddpprof_timeline_", &db, err, sizeof err), 0);
    launch_options opt = {.record = true, .label = "parity"};
    launch_result res;
    assert_int_equal(launch_run(sc, &m, db, backend_find("cpu"), &opt, &res, err, sizeof err), 0);
    sqlite3 *s = store_db(db);

    json_t *params = json_object_get(root, "params");
    assert_int_equal((int)json_array_size(params), m.nparams);
    char *want = probe_buckets(root, "initial_buckets", NULL, params), *got = ddpprof_buckets(s, res.run_id, 0);
    assert_string_equal(got, want);
    free(want), free(got);
    want = probe_buckets(root, "rebuilt_per_bucket_param_indices", "rebuilt_bucket_sizes", params);
    got = ddpprof_buckets(s, res.run_id, 1);
    if (strstr(pc->probe_args, "--find-unused") && !strstr(pc->probe_args, "--static-graph"))
        assert_string_equal(got, ""); /* never rebuilt */
    else
        assert_string_equal(got, want);
    free(want), free(got);
    for (int it = 0; it < ITERS; it++) {
        want = probe_sequence(root, it);
        got = ddpprof_sequence(s, res.run_id, it, bucket_dtype);
        if (strcmp(want, got) != 0)
            fail_msg("iteration %d: PyTorch\n%sddpprof\n%s", it, want, got);
        free(want), free(got);
    }
    check_logger(root, s, res.run_id, strstr(pc->probe_args, "--static-graph") != NULL,
                 strstr(pc->probe_args, "--hook") != NULL);
    json_decref(root);
    cpu_run_done(db, dbpath, &m, sc);
}

/* Uneven inputs under join(): each rank's whole sequence of collectives (the joined
 * ranks' shadows included), ranks 0 (trains every step) and 1 (joins first). */
static void test_mlp_join(void **state)
{
    (void)state;
    if (access(PYTHON, X_OK) != 0)
        skip();
    char dir[] = "/tmp/ddpprof_join_XXXXXX", out[128], cmd[1024], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/probe.json", dir);
    const char *pdir = getenv("PARITY_DIR") ? getenv("PARITY_DIR") : "tests/parity";
    snprintf(cmd, sizeof cmd,
             PYTHON_RUN " %s/ddp_probe.py --world 3 --layers 2 --width 16 --rank-steps 4,2,3 --out %s 2>/dev/null", pdir,
             out);
    int st = system(cmd);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        skip();
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    const char *kv[] = {"run.backend", "cpu", "run.world_size", "3", "run.iterations", "4", "run.warmup", "0",
                        "model.preset", "mlp", "model.layers", "2", "model.hidden", "16", "model.batch", "2",
                        "ddp.join", "true", "skew.rank_steps", "4, 2, 3", NULL};
    for (int i = 0; kv[i]; i += 2)
        assert_int_equal(scenario_set(sc, kv[i], kv[i + 1], err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    model m;
    assert_int_equal(model_build(sc, &m, err, sizeof err), 0);
    char dbpath[128];
    store *db = NULL;
    assert_int_equal(open_tmp_store(dbpath, sizeof dbpath, "ddpprof_join_", &db, err, sizeof err), 0);
    launch_options opt = {.record = true, .label = "join"};
    launch_result res;
    assert_int_equal(launch_run(sc, &m, db, backend_find("cpu"), &opt, &res, err, sizeof err), 0);
    for (int rank = 0; rank < 2; rank++) {
        char path[160];
        snprintf(path, sizeof path, "%s.rank%d", out, rank);
        json_error_t jerr;
        json_t *list = json_load_file(path, 0, &jerr);
        assert_non_null(list);
        unlink(path);
        strbuf want = STRBUF_INIT, got = STRBUF_INIT;
        size_t i;
        json_t *c;
        json_array_foreach(list, i, c)
        {
            strbuf_addf(&want, "%s %s %lld\n", json_string_value(json_object_get(c, "op")),
                        json_string_value(json_object_get(c, "dtype")),
                        (long long)json_integer_value(json_object_get(c, "bytes")));
        }
        json_decref(list);
        sqlite3_stmt *q = NULL;
        assert_int_equal(sqlite3_prepare_v2(store_db(db),
                                            "SELECT kind, name, bytes, COALESCE(bucket, -1) FROM span WHERE run_id = ?"
                                            " AND rank = ? AND seq IS NOT NULL ORDER BY seq",
                                            -1, &q, NULL),
                         SQLITE_OK);
        sqlite3_bind_int64(q, 1, res.run_id);
        sqlite3_bind_int(q, 2, rank);
        while (sqlite3_step(q) == SQLITE_ROW) {
            char line[256];
            describe_span((const char *)sqlite3_column_text(q, 0), (const char *)sqlite3_column_text(q, 1),
                          sqlite3_column_int64(q, 2), sqlite3_column_int(q, 3), "float32", line, sizeof line);
            strbuf_addf(&got, "%s\n", line);
        }
        sqlite3_finalize(q);
        assert_false(want.failed || got.failed);
        if (strcmp(want.buf, got.buf) != 0)
            fail_msg("rank %d: PyTorch\n%sddpprof\n%s", rank, want.buf, got.buf);
        strbuf_release(&want);
        strbuf_release(&got);
    }
    unlink(out);
    rmdir(dir);
    cpu_run_done(db, dbpath, &m, sc);
}

static const char *const mlp_keys[] = {"model.preset", "mlp", "model.layers", "3", "model.hidden", "32", NULL};

static void test_resnet18(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset", "resnet18", NULL};
    parity_case pc = {"--model resnet18 --batch 2", keys};
    check(&pc, "float32");
}

static void test_mlp_static_graph(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset", "mlp", "model.layers", "3", "model.hidden", "32", "ddp.static_graph", "true",
                          NULL};
    parity_case pc = {"--model mlp --static-graph", keys};
    check(&pc, "float32");
}

static void test_mlp_find_unused(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset",   "mlp",  "model.layers", "3", "model.hidden", "512",
                          "ddp.find_unused_parameters", "true", "ddp.bucket_cap_mb", "1", NULL};
    parity_case pc = {"--model mlp --width 512 --bucket-cap-mb 1 --find-unused", keys};
    check(&pc, "float32");
}

static void test_mlp_fp16_hook(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset", "mlp", "model.layers", "3", "model.hidden", "512", "ddp.comm_hook", "fp16",
                          "ddp.bucket_cap_mb", "1", NULL};
    parity_case pc = {"--model mlp --width 512 --bucket-cap-mb 1 --hook fp16", keys};
    check(&pc, "float16");
    (void)mlp_keys;
}

/* The same models described by hand (model.preset = custom, the parameter-list file
 * the probe writes from PyTorch's module): shapes, buffers and autograd's ready order
 * give PyTorch's construction broadcasts, buffer broadcasts and rebuilt buckets. */
static void test_custom_mlp_bn(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset", "custom", "ddp.bucket_cap_mb", "0.005", NULL};
    parity_case pc = {"--model mlp_bn --batch 2 --bucket-cap-mb 0.005", keys};
    check(&pc, "float32");
}

static void test_custom_resnet18(void **state)
{
    (void)state;
    const char *keys[] = {"model.preset", "custom", NULL};
    parity_case pc = {"--model resnet18 --batch 2", keys};
    check(&pc, "float32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_mlp_bn),
        cmocka_unit_test(test_custom_resnet18),
        cmocka_unit_test(test_mlp_static_graph),
        cmocka_unit_test(test_mlp_find_unused),
        cmocka_unit_test(test_mlp_fp16_hook),
        cmocka_unit_test(test_mlp_join),
        cmocka_unit_test(test_resnet18),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
