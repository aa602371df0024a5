/* test_equivalence.c — DDP on N ranks against one rank on the global batch, for real
 * (cpu backend, mlp, compute = real): the relations table `equivalence` must show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/launch/equivalence.h"
#include "tmp_store.h"

typedef struct {
    char variant[32];
    int world, nodes;
    double rel, ratio, replicas, overlap, colls;
} row;

static void base_scenario(scenario *sc)
{
    char err[SCENARIO_ERR];
    scenario_defaults(sc);
    const char *kv[][2] = {
        {"run.backend", "cpu"},      {"network.nodes", "2"},      {"network.gpus_per_node", "2"},
        {"run.iterations", "3"},     {"run.warmup", "1"},         {"run.equivalence", "true"},
        {"model.preset", "mlp"},     {"model.layers", "3"},       {"model.hidden", "32"},
        {"model.compute", "real"},   {"model.global_batch", "16"}, {"model.lr", "0.01"},
        {"ddp.bucket_cap_mb", "0.005"}, {"ddp.first_bucket_mb", "0.004"},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        assert_int_equal(scenario_set(sc, kv[i][0], kv[i][1], err, sizeof err), 0);
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
}

/* Runs the check and reads back its rows in run order. */
static int run_check(scenario *sc, row *rows, int max)
{
    char path[128], err[512];
    store *st = NULL;
    assert_int_equal(open_tmp_store(path, sizeof path, "ddpprof_equiv_", &st, err, sizeof err), 0);
    launch_options opt = {.record = true, .label = "equivalence"};
    int64_t group = -1;
    int rc = equivalence_run(sc, st, backend_find("cpu"), &opt, &group, err, sizeof err);
    if (rc != 0)
        print_error("equivalence_run: %s\n", err);
    assert_int_equal(rc, 0);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(store_db(st),
                                        "SELECT variant, world_size, COALESCE(nodes, 0), COALESCE(rel_to_update, 0),"
                                        " update_ratio, replica_max_diff, overlap_pct, collectives_per_step"
                                        " FROM equivalence WHERE group_id = ? ORDER BY run_id",
                                        -1, &s, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(s, 1, group);
    int n = 0;
    while (sqlite3_step(s) == SQLITE_ROW && n < max) {
        row *r = &rows[n++];
        snprintf(r->variant, sizeof r->variant, "%s", (const char *)sqlite3_column_text(s, 0));
        r->world = sqlite3_column_int(s, 1);
        r->nodes = sqlite3_column_int(s, 2);
        r->rel = sqlite3_column_double(s, 3);
        r->ratio = sqlite3_column_double(s, 4);
        r->replicas = sqlite3_column_double(s, 5);
        r->overlap = sqlite3_column_double(s, 6);
        r->colls = sqlite3_column_double(s, 7);
    }
    sqlite3_finalize(s);
    store_close(st);
    remove_db(path);
    return n;
}

static void test_mean_loss_equivalent(void **state)
{
    (void)state;
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    base_scenario(sc);
    assert_int_equal(sc->world_size, 4); /* 2 nodes x 2 GPUs */
    row rows[8];
    int n = run_check(sc, rows, 8);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].variant, "reference");
    assert_int_equal(rows[0].world, 1);
    assert_string_equal(rows[1].variant, "ddp");
    assert_int_equal(rows[1].world, 4);
    assert_int_equal(rows[1].nodes, 2);
    assert_string_equal(rows[2].variant, "hand-written");
    for (int i = 1; i < 3; i++) {
        assert_true(rows[i].rel <= EQUIVALENCE_ROUNDING); /* same weights at fp32 rounding */
        assert_true(fabs(rows[i].ratio - 1.0) < 1e-3);
        assert_true(rows[i].replicas == 0.0); /* every replica holds the same weights */
    }
    /* The hand-written sync sends one allreduce per parameter, after backward: none of
     * its communication overlaps computation. */
    assert_true(rows[2].colls == 6.0);
    assert_true(rows[2].colls > rows[1].colls);
    assert_true(rows[2].overlap == 0.0);
    scenario_free(sc);
    free(sc);
}

static void test_sum_loss_factor_n_and_fixes(void **state)
{
    (void)state;
    scenario *sc = calloc(1, sizeof *sc);
    char err[SCENARIO_ERR];
    assert_non_null(sc);
    base_scenario(sc);
    assert_int_equal(scenario_set(sc, "ddp.loss_reduction", "sum", err, sizeof err), 0);
    assert_int_equal(scenario_set(sc, "model.lr", "0.0005", err, sizeof err), 0);
    assert_int_equal(scenario_set(sc, "run.iterations", "1", err, sizeof err), 0);
    assert_int_equal(scenario_set(sc, "run.warmup", "0", err, sizeof err), 0);
    row rows[8];
    int n = run_check(sc, rows, 8);
    assert_int_equal(n, 5);
    /* Unscaled, each step moves the weights 1/N as far as the reference's. */
    for (int i = 1; i <= 2; i++) {
        assert_true(rows[i].rel > 0.5);
        assert_true(fabs(rows[i].ratio * 4 - 1.0) < 0.02);
    }
    assert_string_equal(rows[3].variant, "ddp, loss x N");
    assert_string_equal(rows[4].variant, "ddp, lr x N");
    for (int i = 3; i <= 4; i++) {
        assert_true(rows[i].rel <= EQUIVALENCE_ROUNDING);
        assert_true(fabs(rows[i].ratio - 1.0) < 1e-3);
    }
    scenario_free(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_loss_equivalent),
        cmocka_unit_test(test_sum_loss_factor_n_and_fixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
