/* test_parity.c — ddpprof's real training against PyTorch DDP (gloo, CPU processes) on
 * the same mlp, initial weights and data: the averaged gradients of the first step and
 * the weights after the last agree to 1e-6 of their largest magnitude (fp32).  Runs
 * tests/parity/mlp_ddp.py with /usr/bin/python3 (Debian's python3-torch); skipped when
 * torch is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/backend.h"
#include "engine/workload/dataset.h"
#include "engine/launch/launcher.h"
#include "engine/workload/real_training.h"
#include "tmp_store.h"

#define PYTHON "/usr/bin/python3"
/* A hung PyTorch run fails the test instead of the suite. */
#define PYTHON_RUN "timeout 600 " PYTHON

typedef struct {
    int64_t numel;
    float *grad0, *weights;
    int synced;
} capture;

static int capture_hook(void *user, int rank, int iter, int micro_first, int micro_last, const dev_param *params,
                        int nparams, char *err, size_t errlen)
{
    (void)iter, (void)micro_first, (void)micro_last, (void)err, (void)errlen;
    capture *c = user;
    if (rank != 0)
        return 0;
    float *g = c->grad0, *w = c->weights;
    for (int p = 0; p < nparams; p++) {
        if (c->synced == 0)
            memcpy(g, params[p].grad, (size_t)params[p].numel * sizeof *g);
        memcpy(w, params[p].data, (size_t)params[p].numel * sizeof *w);
        g += params[p].numel;
        w += params[p].numel;
    }
    c->synced++;
    return 0;
}

static void set(scenario *sc, const char *k, const char *v)
{
    char err[SCENARIO_ERR];
    if (scenario_set(sc, k, v, err, sizeof err) != 0)
        fail_msg("%s=%s: %s", k, v, err);
}

/* The initial weights, then every sample of the run in global order. */
static void write_data(const char *path, const scenario *sc, const model *m, int steps)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    float *w0 = malloc((size_t)m->total_numel * sizeof *w0);
    assert_non_null(w0);
    real_training_initial_weights(sc, m, w0);
    assert_int_equal(fwrite(w0, sizeof *w0, (size_t)m->total_numel, f), (size_t)m->total_numel);
    free(w0);
    int width = sc->hidden, ntarget = sc->loss == LOSS_FN_CROSS_ENTROPY ? 1 : width;
    float x[256], t[256];
    for (int64_t i = 0; i < (int64_t)steps * sc->global_batch; i++) {
        dataset_sample(sc->seed, width, sc->loss, i, x, t);
        assert_int_equal(fwrite(x, sizeof *x, (size_t)width, f), (size_t)width);
        assert_int_equal(fwrite(t, sizeof *t, (size_t)ntarget, f), (size_t)ntarget);
    }
    assert_int_equal(fclose(f), 0);
}

static double max_rel_diff(const float *a, const float *b, int64_t n)
{
    double diff = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)a[i] - b[i]));
        mag = fmax(mag, fabs((double)b[i]));
    }
    return mag > 0 ? diff / mag : diff;
}

/* join: "" for none, else the steps per rank ("3,1") and whether to divide by the ranks
 * still training. */
static void check_join_case(const char *loss, const char *reduction, const char *loss_scale, const char *hook,
                            const char *join, bool by_ranks_training)
{
    if (access(PYTHON, X_OK) != 0)
        skip();
    const int world = 2, steps = 3;
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    set(sc, "run.backend", "cpu");
    set(sc, "run.world_size", "2");
    set(sc, "run.iterations", "3");
    set(sc, "run.warmup", "0");
    set(sc, "model.preset", "mlp");
    set(sc, "model.layers", "3");
    set(sc, "model.hidden", "32");
    set(sc, "model.compute", "real");
    set(sc, "model.global_batch", "16");
    set(sc, "model.loss", loss);
    set(sc, "model.lr", "0.01");
    set(sc, "model.loss_scale", loss_scale);
    set(sc, "ddp.loss_reduction", reduction);
    set(sc, "ddp.bucket_cap_mb", "0.005");
    set(sc, "ddp.comm_hook", hook);
    char extra[128] = "";
    if (join[0]) {
        set(sc, "ddp.join", "true");
        set(sc, "skew.rank_steps", join);
        set(sc, "ddp.divide_by_initial_world_size", by_ranks_training ? "false" : "true");
        snprintf(extra, sizeof extra, " --rank-steps %s%s", join, by_ranks_training ? " --divide-by-ranks-training" : "");
    }
    char err[512];
    assert_int_equal(scenario_validate(sc, err, sizeof err), 0);
    model m;
    assert_int_equal(model_build(sc, &m, err, sizeof err), 0);

    char dir[] = "/tmp/ddpprof_parity_XXXXXX", data[128], out[128], cmd[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(data, sizeof data, "%s/data.f32", dir);
    snprintf(out, sizeof out, "%s/torch.f32", dir);
    write_data(data, sc, &m, steps);

    capture c = {.numel = m.total_numel};
    c.grad0 = calloc((size_t)m.total_numel, sizeof(float));
    c.weights = calloc((size_t)m.total_numel, sizeof(float));
    assert_non_null(c.grad0);
    assert_non_null(c.weights);
    launch_options opt = {.record = false, .label = "parity", .on_sync = capture_hook, .on_sync_user = &c};
    launch_result res;
    char dbpath[128];
    store *db = NULL;
    assert_int_equal(open_tmp_store(dbpath, sizeof dbpath, "ddpprof_parity_", &db, err, sizeof err), 0);
    int rc = launch_run(sc, &m, db, backend_find("cpu"), &opt, &res, err, sizeof err);
    store_close(db);
    remove_db(dbpath);
    assert_int_equal(rc, 0);
    assert_int_equal(c.synced, join[0] ? atoi(join) : steps);

    const char *pdir = getenv("PARITY_DIR") ? getenv("PARITY_DIR") : "tests/parity";
    snprintf(cmd, sizeof cmd,
             PYTHON_RUN " %s/mlp_ddp.py --world %d --layers 3 --width 32 --per-rank-batch %d --steps %d --loss %s"
                    " --reduction %s --loss-scale %s --lr 0.01 --bucket-cap-mb 0.005 --hook %s --data %s --out %s%s",
             pdir, world, 16 / world, steps, loss, reduction, loss_scale, hook, data, out, extra);
    int st = system(cmd);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        free(c.grad0), free(c.weights), model_free(&m), scenario_free(sc), free(sc);
        skip();
    }
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    float *torch_out = malloc(2 * (size_t)m.total_numel * sizeof(float));
    assert_non_null(torch_out);
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    assert_int_equal(fread(torch_out, sizeof(float), 2 * (size_t)m.total_numel, f), 2 * (size_t)m.total_numel);
    fclose(f);
    double dg = max_rel_diff(c.grad0, torch_out, m.total_numel);
    double dw = max_rel_diff(c.weights, torch_out + m.total_numel, m.total_numel);
    print_message("%s %s x%s hook %s: averaged gradients %.3g, weights after %d steps %.3g (relative)\n", loss,
                  reduction, loss_scale, hook, dg, steps, dw);
    assert_true(dg <= 1e-6);
    assert_true(dw <= 1e-6);
    unlink(data);
    unlink(out);
    rmdir(dir);
    free(torch_out);
    free(c.grad0);
    free(c.weights);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void check_case(const char *loss, const char *reduction, const char *loss_scale, const char *hook)
{
    check_join_case(loss, reduction, loss_scale, hook, "", false);
}

/* Uneven inputs: rank 1 has one step of data, rank 0 three; rank 0's final weights. */
static void test_join_initial_world(void **state) { (void)state; check_join_case("mse", "mean", "1", "none", "3,1", false); }
static void test_join_ranks_training(void **state) { (void)state; check_join_case("mse", "mean", "1", "none", "3,1", true); }

static void test_mse_mean(void **state) { (void)state; check_case("mse", "mean", "1", "none"); }
static void test_ce_sum_loss_scaled(void **state) { (void)state; check_case("cross_entropy", "sum", "2", "none"); }
/* PyTorch's fp16 hook: cast, divide in 16 bits, sum, back to fp32.  (Its bf16 hook
 * needs CUDA 11 and NCCL 2.10: PyTorch refuses it on gloo, so it has no CPU reference.) */
static void test_fp16_hook(void **state) { (void)state; check_case("mse", "mean", "1", "fp16"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mse_mean),
        cmocka_unit_test(test_ce_sum_loss_scaled),
        cmocka_unit_test(test_fp16_hook),
        cmocka_unit_test(test_join_initial_world),
        cmocka_unit_test(test_join_ranks_training),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
