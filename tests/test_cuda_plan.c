/* test_cuda_plan.c — the cuda backend's decisions that need no GPU: which GPU work each
 * op becomes (GEMMs, kernels, the NCCL call and its element type), the stretch of a slow
 * rank's GEMMs, the gradient kernel's values against gradgen.h, GPU placement and the
 * NCCL environment when ranks share a GPU, the launcher variables that give the local
 * rank, the watchdog's verdicts on fake comm-stream states, and CUDA-event times on the
 * run's clock (built only with the CUDA toolkit). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/cuda/cuda_plan.h"
#include "engine/gradgen.h"

static dev_op layer_op(int64_t m, int64_t n, int64_t k, double stretch)
{
    dev_op op;
    memset(&op, 0, sizeof op);
    snprintf(op.name, sizeof op.name, "fc1");
    op.kind = SPAN_BACKWARD;
    op.gemm.m = m;
    op.gemm.n = n;
    op.gemm.k = k;
    op.stretch = stretch;
    return op;
}

static void test_backward_with_gradients(void **state)
{
    (void)state;
    dev_op op = layer_op(64, 128, 256, 0);
    op.work = WORK_GRAD;
    op.u.grad.np = 2;
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_int_equal(p.gemm_m, 64);
    assert_int_equal(p.gemm_n, 128);
    assert_int_equal(p.gemm_k, 256);
    assert_int_equal(p.gemm_repeats, 1);
    assert_int_equal(p.gemm_tail_m, 0);
    assert_int_equal(p.grad_kernels, 2);
    assert_int_equal(p.coll, CUDA_COLL_NONE);
    assert_false(p.fail);
    assert_int_equal(p.spin_ns, 0);
}

static void test_model_compute_spins(void **state)
{
    (void)state;
    dev_op op = layer_op(0, 0, 0, 0);
    op.model_ns = 1234567;
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_int_equal(p.gemm_m, 0);
    assert_int_equal(p.spin_ns, 1234567);
}

static void test_copies_and_sgd(void **state)
{
    (void)state;
    float a[4], b[4];
    dev_op op = layer_op(0, 0, 0, 0);
    op.work = WORK_SCALE_COPY;
    op.u.copy.dst = a;
    op.u.copy.src = b;
    op.u.copy.n = 4;
    op.u.copy.scale = 0.25f;
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_true(p.scale_copy);
    /* In place with scale 1 is no work at all (a gradient that is a bucket view). */
    op.u.copy.src = a;
    op.u.copy.scale = 1.0f;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_false(p.scale_copy);
    op.u.copy.scale = 0.5f;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_true(p.scale_copy);

    dev_param params[3];
    dev_op sgd = layer_op(0, 0, 0, 0);
    sgd.work = WORK_SGD;
    sgd.u.sgd.params = params;
    sgd.u.sgd.n = 3;
    assert_int_equal(cuda_plan_op(&sgd, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_int_equal(p.sgd_kernels, 3);
}

static void test_collectives(void **state)
{
    (void)state;
    float buf[8];
    dev_op op;
    memset(&op, 0, sizeof op);
    snprintf(op.name, sizeof op.name, "bucket 0");
    op.work = WORK_ALLREDUCE;
    op.u.coll.buf = buf;
    op.u.coll.count = 8;
    op.u.coll.dtype = DEV_F32;
    op.u.coll.prescale = 1.0f;
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMM, &p, err, sizeof err), 0);
    assert_int_equal(p.coll, CUDA_COLL_ALLREDUCE);
    assert_int_equal(p.wire, CUDA_WIRE_F32);
    assert_false(p.convert);
    assert_int_equal(p.count, 8);
    /* NCCL runs no kernel for a one-rank allreduce: CUPTI would record nothing of it. */
    assert_true(cuda_plan_runs_no_kernel(&p, 1));
    assert_false(cuda_plan_runs_no_kernel(&p, 2));

    op.u.coll.dtype = DEV_BF16;
    op.u.coll.prescale = 0.25f;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMM, &p, err, sizeof err), 0);
    assert_int_equal(p.wire, CUDA_WIRE_BF16);
    assert_true(p.convert);
    assert_true(p.prescale == 0.25f);
    assert_false(cuda_plan_runs_no_kernel(&p, 1)); /* its conversion kernels are recorded */
    op.u.coll.dtype = DEV_F16;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMM, &p, err, sizeof err), 0);
    assert_int_equal(p.wire, CUDA_WIRE_F16);

    /* An fp32 allreduce that would need a separate scaling pass is refused. */
    op.u.coll.dtype = DEV_F32;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMM, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "prescale"));

    op.work = WORK_BROADCAST;
    op.u.coll.dtype = DEV_I32;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMM, &p, err, sizeof err), 0);
    assert_int_equal(p.coll, CUDA_COLL_BROADCAST);
    assert_int_equal(p.wire, CUDA_WIRE_I32);

    /* Streams keep to their work. */
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "compute stream"));
    dev_op gemm = layer_op(4, 4, 4, 0);
    assert_int_equal(cuda_plan_op(&gemm, DEV_STREAM_COMM, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "comm stream"));
}

static void test_fail_launches_nothing(void **state)
{
    (void)state;
    dev_op op = layer_op(32, 32, 32, 0);
    op.work = WORK_FAIL;
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_true(p.fail);
    assert_int_equal(p.grad_kernels, 0);
    assert_int_equal(p.spin_ns, 0);
}

static void test_stretch(void **state)
{
    (void)state;
    int rep;
    int64_t tail;
    assert_int_equal(cuda_stretch_plan(1.0, 1000, &rep, &tail), 0);
    assert_int_equal(rep, 1);
    assert_int_equal(tail, 0);
    assert_int_equal(cuda_stretch_plan(NAN, 1000, &rep, &tail), 0);
    assert_int_equal(rep, 1);
    assert_int_equal(cuda_stretch_plan(2.5, 1000, &rep, &tail), 0);
    assert_int_equal(rep, 2);
    assert_int_equal(tail, 500);
    /* The rows run add up to stretch x m (to within one row). */
    for (double s = 1.0; s < 6.0; s += 0.37) {
        assert_int_equal(cuda_stretch_plan(s, 777, &rep, &tail), 0);
        double rows = (double)rep * 777 + (double)tail;
        assert_true(fabs(rows - s * 777) <= 0.5 + 1e-9);
        assert_true(tail < 777);
    }
    /* A tail that rounds to the whole GEMM becomes one more run. */
    assert_int_equal(cuda_stretch_plan(2.9999, 100, &rep, &tail), 0);
    assert_int_equal(rep, 3);
    assert_int_equal(tail, 0);
    assert_int_equal(cuda_stretch_plan(CUDA_MAX_GEMM_REPEATS + 1.0, 10, &rep, &tail), -1);

    dev_op op = layer_op(100, 8, 8, 1.5);
    cuda_op_plan p;
    char err[256];
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), 0);
    assert_int_equal(p.gemm_repeats, 1);
    assert_int_equal(p.gemm_tail_m, 50);
    op.stretch = 5000;
    assert_int_equal(cuda_plan_op(&op, DEV_STREAM_COMPUTE, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "stretch"));
}

/* The kernel computes (base + i % 11) % 64 - 32: the same values as gradgen.h. */
static void test_grad_base_matches_gradgen(void **state)
{
    (void)state;
    for (int rank = 0; rank < 5; rank++)
        for (int micro = 0; micro < 7; micro++)
            for (int p = 0; p < 9; p++)
                for (int64_t i = 0; i < 50; i += 3) {
                    int64_t base = cuda_grad_base(rank, micro, p);
                    float kernel = (float)((base + i % 11) % 64 - 32);
                    assert_true(kernel == gradgen_value(rank, micro, p, i));
                }
}

static const char *find_var(const cuda_placement *p, const char *name)
{
    for (int i = 0; i < p->nvars; i++)
        if (!strcmp(p->vars[i].name, name))
            return p->vars[i].value;
    return NULL;
}

static void test_placement(void **state)
{
    (void)state;
    cuda_placement p;
    char err[256];
    /* Enough GPUs: one each, nothing to set. */
    assert_int_equal(cuda_place_rank(3, 3, 4, 8, &p, err, sizeof err), 0);
    assert_int_equal(p.device, 3);
    assert_false(p.shared);
    assert_int_equal(p.ranks_on_device, 1);
    assert_int_equal(p.nvars, 0);
    /* Four ranks on one GPU: all on GPU 0, each its own NCCL host over loopback. */
    const char *hosts[4];
    for (int r = 0; r < 4; r++) {
        assert_int_equal(cuda_place_rank(r, r, 4, 1, &p, err, sizeof err), 0);
        assert_int_equal(p.device, 0);
        assert_true(p.shared);
        assert_int_equal(p.ranks_on_device, 4);
        assert_string_equal(find_var(&p, "NCCL_NET"), "Socket");
        assert_string_equal(find_var(&p, "NCCL_SOCKET_IFNAME"), "lo");
        assert_non_null(find_var(&p, "NCCL_P2P_DISABLE"));
        assert_non_null(find_var(&p, "NCCL_SHM_DISABLE"));
        static char keep[4][64];
        snprintf(keep[r], sizeof keep[r], "%s", find_var(&p, "NCCL_HOSTID"));
        hosts[r] = keep[r];
        for (int i = 0; i < p.nvars; i++)
            if (!strcmp(p.vars[i].name, "NCCL_HOSTID"))
                assert_true(p.vars[i].overwrite); /* a common id is what NCCL refuses */
    }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++)
            assert_string_not_equal(hosts[a], hosts[b]);
    /* Five ranks on two GPUs: GPU 0 takes ranks 0, 2, 4; GPU 1 ranks 1, 3. */
    assert_int_equal(cuda_place_rank(4, 4, 5, 2, &p, err, sizeof err), 0);
    assert_int_equal(p.device, 0);
    assert_int_equal(p.ranks_on_device, 3);
    assert_int_equal(cuda_place_rank(3, 3, 5, 2, &p, err, sizeof err), 0);
    assert_int_equal(p.device, 1);
    assert_int_equal(p.ranks_on_device, 2);
    assert_true(p.shared);
    /* No GPU, or a local rank outside the node: refused with the reason. */
    assert_int_equal(cuda_place_rank(0, 0, 1, 0, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA GPU"));
    assert_int_equal(cuda_place_rank(2, 5, 4, 1, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "local rank 5 of 4"));
}

static const char *fake_env_values[8][2];

static const char *fake_get(const char *name)
{
    for (int i = 0; i < 8 && fake_env_values[i][0]; i++)
        if (!strcmp(fake_env_values[i][0], name))
            return fake_env_values[i][1];
    return NULL;
}

static void set_fake_env(const char *const pairs[][2], int n)
{
    memset(fake_env_values, 0, sizeof fake_env_values);
    for (int i = 0; i < n; i++) {
        fake_env_values[i][0] = pairs[i][0];
        fake_env_values[i][1] = pairs[i][1];
    }
}

static void test_local_ranks(void **state)
{
    (void)state;
    int lr, lw;
    set_fake_env(NULL, 0);
    cuda_local_ranks(fake_get, 5, 8, &lr, &lw);
    assert_int_equal(lr, 5);
    assert_int_equal(lw, 8);
    const char *const torchrun[][2] = {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}};
    set_fake_env(torchrun, 2);
    cuda_local_ranks(fake_get, 5, 8, &lr, &lw);
    assert_int_equal(lr, 1);
    assert_int_equal(lw, 4);
    const char *const slurm[][2] = {{"SLURM_LOCALID", "2"}, {"SLURM_NTASKS_PER_NODE", "3"}};
    set_fake_env(slurm, 2);
    cuda_local_ranks(fake_get, 7, 9, &lr, &lw);
    assert_int_equal(lr, 2);
    assert_int_equal(lw, 3);
    /* Half a pair, or nonsense, is not believed. */
    const char *const bad[][2] = {{"LOCAL_RANK", "x1"}, {"LOCAL_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}};
    set_fake_env(bad, 3);
    cuda_local_ranks(fake_get, 5, 8, &lr, &lw);
    assert_int_equal(lr, 5);
    assert_int_equal(lw, 8);
}

static void test_watchdog(void **state)
{
    (void)state;
    char why[512];
    cuda_watch_input in = {.rank = 2, .timeout_s = 5.0, .now_ns = 100000000000LL, .seq = -1, .bucket = -1, .iter = -1};
    /* Idle comm stream, no NCCL error. */
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_OK);
    /* A collective reached 4 s ago: still within the timeout. */
    in.coll_started = true;
    in.coll_started_ns = in.now_ns - 4000000000LL;
    in.seq = 17;
    in.bucket = 3;
    in.iter = 4;
    in.name = "bucket 3";
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_OK);
    /* NCCL still working on it is not an error. */
    in.nccl_async = 7;
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_OK);
    in.nccl_async = 0;
    /* 6 s: past the timeout; the message names the rank and the collective. */
    in.coll_started_ns = in.now_ns - 6000000000LL;
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_TIMEOUT);
    assert_non_null(strstr(why, "rank 2"));
    assert_non_null(strstr(why, "seq 17"));
    assert_non_null(strstr(why, "bucket 3"));
    assert_non_null(strstr(why, "did not complete within 5 s"));
    /* A collective that the stream has not reached yet never times out (compute is slow). */
    in.coll_started = false;
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_OK);
    /* An NCCL error wins at once, with NCCL's text. */
    in.coll_started = true;
    in.coll_started_ns = in.now_ns;
    in.nccl_async = 6; /* ncclRemoteError */
    in.nccl_text = "remote process exited or there was a network error";
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_NCCL_ERROR);
    assert_non_null(strstr(why, "rank 2: NCCL error during collective seq 17"));
    assert_non_null(strstr(why, "network error"));
    /* timeout_s 0: no timeout, only errors. */
    in.nccl_async = 0;
    in.timeout_s = 0;
    in.coll_started_ns = 0;
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_OK);
    /* A non-bucket collective (the rebuild's broadcast) says so without a bucket. */
    in.timeout_s = 1;
    in.bucket = -1;
    in.name = "rebuild buckets";
    assert_int_equal(cuda_watch_decide(&in, why, sizeof why), CUDA_WATCH_TIMEOUT);
    assert_null(strstr(why, "bucket -1"));
    assert_non_null(strstr(why, "rebuild buckets"));
}

static void test_event_clock(void **state)
{
    (void)state;
    /* Anchor completed at host 5 s; the run began at host 2 s; an event 1.5 ms later is
     * at 3.0015 s of the run. */
    assert_int_equal(cuda_event_run_ns(5000000000LL, 2000000000LL, 1.5), 3001500000LL);
    assert_int_equal(cuda_event_run_ns(5000000000LL, 2000000000LL, 0.0), 3000000000LL);
    /* Sub-microsecond parts of CUDA's float milliseconds are kept, rounded to ns. */
    assert_int_equal(cuda_event_run_ns(1000, 0, 0.0005), 1500);
    /* Later events are later on the run's clock. */
    assert_true(cuda_event_run_ns(7, 3, 2.0) > cuda_event_run_ns(7, 3, 1.999));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backward_with_gradients), cmocka_unit_test(test_model_compute_spins),
        cmocka_unit_test(test_copies_and_sgd),         cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_fail_launches_nothing),  cmocka_unit_test(test_stretch),
        cmocka_unit_test(test_grad_base_matches_gradgen), cmocka_unit_test(test_placement),
        cmocka_unit_test(test_local_ranks),            cmocka_unit_test(test_watchdog),
        cmocka_unit_test(test_event_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
