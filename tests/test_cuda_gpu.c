/* test_cuda_gpu.c — the cuda backend on a GPU (built with the CUDA toolkit; every test
 * is skipped, saying so, where no GPU is present): CUPTI's kernel times, put on the run's
 * clock by the measured offset, agree with CUDA events around the same kernels and last at
 * least the spin kernel's floor; ddpprof runs baseline.ini on the GPU with --verify at
 * world_size 1 and 2 (sharing the GPU when there is one, which the report then says); and a
 * hung rank is named by the watchdog within timeout_s, the run failing with exit 1 and its
 * spans kept.  Uses $DDPPROF and $SCENARIOS (set by `make test`). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <sqlite3.h>

#include "engine/cuda/cuda_device.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/cupti_collect.h"
#include "harness.h"

static int gpus(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

static void skip_without_gpu(void)
{
    if (gpus() == 0) {
        print_message("no CUDA GPU here: skipped\n");
        skip();
    }
}

#define MAX_SPANS 64

typedef struct {
    span spans[MAX_SPANS];
    int n;
} captured;

static void capture(void *user, const span *sp)
{
    captured *c = user;
    if (c->n < MAX_SPANS)
        c->spans[c->n++] = *sp;
}

#define CHECK(call) assert_int_equal((int)(call), 0)

static void test_cupti_clock_against_events(void **state)
{
    (void)state;
    skip_without_gpu();
    CHECK(cudaSetDevice(0));
    cudaStream_t s;
    cudaEvent_t anchor, before, after;
    uint64_t *stamp;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&anchor));
    CHECK(cudaEventCreate(&before));
    CHECK(cudaEventCreate(&after));
    CHECK(cudaMalloc((void **)&stamp, sizeof *stamp));
    captured got = {.n = 0};
    cupti_collect_config cfg = {.rank = 0, .t0_ns = 0, .host_clock_ns = cuda_host_clock_ns, .emit = capture,
                                .emit_user = &got};
    cupti_collect *c = NULL;
    char why[512];
    int rc = cupti_collect_start(&cfg, &c, why, sizeof why);
    if (rc == 1) {
        print_message("CUPTI not available here (%s): skipped\n", why);
        skip();
    }
    assert_int_equal(rc, 0);

    /* The anchor: completed between two host readings. */
    int64_t h0 = cuda_host_clock_ns();
    CHECK(cudaEventRecord(anchor, s));
    CHECK(cudaEventSynchronize(anchor));
    int64_t h1 = cuda_host_clock_ns();
    int64_t anchor_host = h0 + (h1 - h0) / 2;

    const uint64_t floor_ns = 2000000;
    span op = {.rank = 0, .iter = 0, .stream = STREAM_COMPUTE, .kind = SPAN_FORWARD, .layer = 0, .bucket = -1,
               .seq = -1};
    snprintf(op.name, sizeof op.name, "spin 2 ms");
    CHECK(cupti_collect_push(c, &op, why, sizeof why));
    CHECK(cudaEventRecord(before, s));
    CHECK(cuda_k_stamp(s, stamp));
    CHECK(cuda_k_spin_until(s, stamp, floor_ns));
    CHECK(cudaEventRecord(after, s));
    CHECK(cupti_collect_pop(c, why, sizeof why));
    CHECK(cudaStreamSynchronize(s));
    cupti_decode_stats st;
    int64_t outside = 0;
    cupti_collect_stop(c, &st, &outside);

    float ms_before, ms_after;
    CHECK(cudaEventElapsedTime(&ms_before, anchor, before));
    CHECK(cudaEventElapsedTime(&ms_after, anchor, after));
    int64_t ev_start = anchor_host + (int64_t)llround(ms_before * 1e6);
    int64_t ev_end = anchor_host + (int64_t)llround(ms_after * 1e6);

    int64_t k_start = INT64_MAX, k_end = INT64_MIN;
    int mine = 0;
    for (int i = 0; i < got.n; i++)
        if (!strcmp(got.spans[i].name, op.name)) {
            mine++;
            if (got.spans[i].start_ns < k_start)
                k_start = got.spans[i].start_ns;
            if (got.spans[i].end_ns > k_end)
                k_end = got.spans[i].end_ns;
        }
    print_message("CUPTI: %d spans of the op (of %d), kernels %lld..%lld ns; events %lld..%lld ns; start "
                  "diff %lld ns, end diff %lld ns, anchor bracket %lld ns, dropped %lld\n",
                  mine, got.n, (long long)k_start, (long long)k_end, (long long)ev_start, (long long)ev_end,
                  (long long)(k_start - ev_start), (long long)(k_end - ev_end), (long long)(h1 - h0),
                  (long long)st.dropped);
    /* The stamp and the spin kernel, both tied to the op by its external id. */
    assert_int_equal(mine, 2);
    assert_int_equal(st.dropped, 0);
    /* The op lasted at least its floor on the GPU's own clock. */
    assert_true(k_end - k_start >= (int64_t)floor_ns - 1000);
    /* Kernels lie within the events around them, to the clocks' combined uncertainty. */
    int64_t tol = 100000 + (h1 - h0);
    assert_true(llabs(k_start - ev_start) < tol);
    assert_true(llabs(k_end - ev_end) < tol);
    CHECK(cudaFree(stamp));
    CHECK(cudaEventDestroy(anchor));
    CHECK(cudaEventDestroy(before));
    CHECK(cudaEventDestroy(after));
    CHECK(cudaStreamDestroy(s));
}

/* ddpprof run SCENARIO --backend cuda -o DB EXTRA..., bounded; its stdout and stderr in
 * DB.out / DB.err.  Returns the exit status (-1: did not exit). */
static int run_cuda(const char *scenario, const char *db, const char *extra)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "timeout -k 5 300 '%s' run '%s/%s' --backend cuda -o '%s' %s >'%s.out' 2>'%s.err'",
             getenv("DDPPROF"), getenv("SCENARIOS"), scenario, db, extra, db, db);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int64_t count_spans(const char *db, const char *where)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM span WHERE %s", where);
    return db_int(db, sql);
}

static void test_runs_with_verify(void **state)
{
    (void)state;
    skip_without_gpu();
    int ngpus = gpus();
    for (int ws = 1; ws <= 2; ws++) {
        char db[320], extra[256], path[340], out[16384], err[16384];
        snprintf(db, sizeof db, "%s/verify-%d.sqlite", scratch_dir(), ws);
        snprintf(extra, sizeof extra, "--verify -s run.world_size=%d -s run.iterations=3 -s run.warmup=1", ws);
        int rc = run_cuda("baseline.ini", db, extra);
        snprintf(path, sizeof path, "%s.out", db);
        slurp_into(path, out, sizeof out);
        snprintf(path, sizeof path, "%s.err", db);
        slurp_into(path, err, sizeof err);
        if (rc != 0)
            print_message("world_size %d: exit %d\n%s\n%s\n", ws, rc, out, err);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "backend     cuda"));
        assert_true(count_spans(db, "stream = 'compute'") > 0);
        assert_true(count_spans(db, "kind = 'allreduce'") > 0);
        if (ws > ngpus)
            assert_non_null(strstr(out, "share"));
    }
}

static void test_hung_rank_named(void **state)
{
    (void)state;
    skip_without_gpu();
    char db[320], path[340], out[16384], err[16384];
    snprintf(db, sizeof db, "%s/hung.sqlite", scratch_dir());
    int rc = run_cuda("baseline.ini", db,
                      "-s run.world_size=2 -s run.iterations=4 -s run.warmup=1 -s fault.rank=1 -s fault.iter=2 "
                      "-s fault.mode=hang -s run.timeout_s=5");
    snprintf(path, sizeof path, "%s.out", db);
    slurp_into(path, out, sizeof out);
    snprintf(path, sizeof path, "%s.err", db);
    slurp_into(path, err, sizeof err);
    print_message("hung rank: exit %d\n%s\n", rc, err);
    assert_int_equal(rc, 1);
    assert_true(strstr(err, "did not complete within") || strstr(out, "did not complete within") ||
                strstr(err, "hung"));
    assert_true(count_spans(db, "1") > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cupti_clock_against_events),
        cmocka_unit_test(test_runs_with_verify),
        cmocka_unit_test(test_hung_rank_named),
    };
    return cmocka_run_group_tests(tests, scratch_group_setup, scratch_group_teardown);
}
