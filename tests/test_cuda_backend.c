/* test_cuda_backend.c — the cuda backend's table on a machine without a GPU (built only
 * with the CUDA toolkit; skipped where a GPU is present): it refuses with the reason, it
 * wants one rank per process, a coordinator's world is an NCCL id while a rank's world is
 * refused outside ranks as processes, devices are refused in the coordinator, no
 * placement note is made without GPUs, `bench allreduce --backend cuda` fails at once
 * with exit status 1 and says why, and cuBLAS (loaded, not linked) is found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "engine/backend.h"
#include "engine/cuda/cuda_blas.h"
#include "engine/cuda/nccl_id.h"
#include "harness.h"

static const backend_ops *cuda_or_skip(void)
{
    const backend_ops *be = backend_find("cuda");
    assert_non_null(be);
    char why[256];
    if (be->available(why, sizeof why)) {
        print_message("a GPU is here (%s): the no-GPU checks do not apply\n", why);
        skip();
    }
    return be;
}

static void test_refuses_without_gpu(void **state)
{
    (void)state;
    const backend_ops *be = cuda_or_skip();
    char why[256] = "";
    assert_int_equal(be->available(why, sizeof why), 0);
    assert_non_null(strstr(why, "no CUDA GPU here"));
    assert_true(be->one_rank_per_process);
    /* auto passes over it, naming it. */
    char passed[512];
    const backend_ops *chosen = backend_auto(passed, sizeof passed);
    assert_non_null(chosen);
    assert_string_equal(chosen->name, "cpu");
    assert_non_null(strstr(passed, "cuda: no CUDA GPU here"));
}

static void test_worlds(void **state)
{
    (void)state;
    const backend_ops *be = cuda_or_skip();
    scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.world_size = 2;
    sc.timeout_s = 5;
    char err[512];
    backend_world *w = NULL;
    /* Ranks as threads of one process: refused, saying what to do. */
    backend_world_args threads = {.sc = &sc};
    assert_int_equal(be->world_create(&threads, &w, err, sizeof err), -1);
    assert_null(w);
    assert_non_null(strstr(err, "ranks = processes"));
    /* The coordinator's world is an NCCL id as text, and makes no devices. */
    backend_world_args coord = {.sc = &sc, .create_shared = true};
    assert_int_equal(be->world_create(&coord, &w, err, sizeof err), 0);
    const char *handle = be->world_handle(w);
    ncclUniqueId id;
    assert_int_equal(nccl_id_parse(handle, &id, err, sizeof err), 0);
    assert_null(be->device_create(w, 0, err, sizeof err));
    assert_non_null(strstr(err, "rank processes"));
    /* Its abort is remembered with the first reason. */
    char why[256];
    assert_int_equal(be->world_aborted(w, why, sizeof why), 0);
    be->world_abort(w, "rank 1: injected");
    be->world_abort(w, "second reason");
    assert_int_equal(be->world_aborted(w, why, sizeof why), 1);
    assert_string_equal(why, "rank 1: injected");
    /* A rank's world from that handle; its device needs the GPU that is not here. */
    backend_world *rw = NULL;
    backend_world_args rank = {.sc = &sc, .attach_to = handle, .first_rank = 1};
    assert_int_equal(be->world_create(&rank, &rw, err, sizeof err), 0);
    err[0] = '\0';
    assert_null(be->device_create(rw, 1, err, sizeof err));
    assert_non_null(strstr(err, "rank 1"));
    print_message("device refused here: %s\n", err);
    be->world_destroy(rw);
    /* A malformed handle is refused. */
    backend_world_args bad = {.sc = &sc, .attach_to = "/dev/shm/not-an-id"};
    assert_int_equal(be->world_create(&bad, &rw, err, sizeof err), -1);
    be->world_destroy(w);
    /* No GPUs: nothing to note about sharing them. */
    char note[200];
    assert_non_null(be->placement_note);
    sc.world_size = 4;
    assert_int_equal(be->placement_note(&sc, note, sizeof note), 0);
}

static void test_bench_refuses(void **state)
{
    (void)state;
    const backend_ops *be = cuda_or_skip();
    double us = -1;
    char err[512];
    assert_int_equal(be->bench_allreduce(2, 1 << 20, 3, 1, &us, err, sizeof err), -1);
    assert_non_null(strstr(err, "no CUDA GPU"));
    assert_true(us == -1);
    const char *bin = getenv("DDPPROF");
    if (!bin)
        skip();
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    assert_int_equal(ddpprof_cmd(r, "bench", "allreduce", "--backend", "cuda", "--sizes", "1M", NULL), 0);
    assert_int_equal(r->status, 1);
    free(r);
}

/* cuBLAS is loaded by a rank, not linked: the library and the four calls are found
 * (no GPU needed to load it), and unloading is safe twice. */
static void test_cublas_loads(void **state)
{
    (void)state;
    cuda_blas b;
    char err[512] = "";
    int rc = cuda_blas_load(&b, err, sizeof err);
    if (rc != 0)
        print_message("%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(b.create);
    assert_non_null(b.destroy);
    assert_non_null(b.set_stream);
    assert_non_null(b.sgemm);
    assert_string_not_equal(cuda_blas_status(&b, CUBLAS_STATUS_NOT_INITIALIZED), "cuBLAS error");
    cuda_blas_unload(&b);
    assert_null(b.lib);
    cuda_blas_unload(&b);
    assert_string_equal(cuda_blas_status(&b, CUBLAS_STATUS_NOT_INITIALIZED), "cuBLAS error");
}

/* A run whose ranks shared a GPU says so in its record (run.ranks), and the reports show
 * it: the text report under the backend line, the JSON report as "placement".  The record
 * is written here as the coordinator writes it, on a cpu run (no GPU needed). */
static void test_report_says_ranks_share_a_gpu(void **state)
{
    (void)state;
    const char *bin = getenv("DDPPROF"), *scen = getenv("SCENARIOS");
    if (!bin || !scen)
        skip();
    char dir[64];
    assert_int_equal(tmpdir_make(dir, sizeof dir, "ddpprof-test-cuda-share-"), 0);
    char db[128], ini[512];
    snprintf(db, sizeof db, "%s/share.sqlite", dir);
    snprintf(ini, sizeof ini, "%s/baseline.ini", scen);
    cmd_result *r = malloc(sizeof *r);
    assert_non_null(r);
    assert_int_equal(ddpprof_cmd(r, "run", ini, "--backend", "cpu", "-o", db, "-q", "-s", "run.world_size=2", "-s",
                                 "run.iterations=1", "-s", "run.warmup=0", "-s", "model.preset=mlp", "-s",
                                 "run.ranks=processes", NULL),
                     0);
    assert_int_equal(r->status, 0);
    /* Plain "processes" says nothing worth a line. */
    assert_int_equal(ddpprof_cmd(r, "report", db, NULL), 0);
    assert_int_equal(r->status, 0);
    assert_null(strstr(r->out, "  ranks       "));
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    const char *note = "processes; 2 ranks share 1 GPU (up to 2 a GPU): they time-slice it, NCCL over loopback sockets";
    char sql[512];
    snprintf(sql, sizeof sql, "UPDATE run SET ranks = '%s'", note);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(ddpprof_cmd(r, "report", db, NULL), 0);
    assert_int_equal(r->status, 0);
    char want[300];
    snprintf(want, sizeof want, "  ranks       %s\n", note);
    assert_non_null(strstr(r->out, want));
    assert_int_equal(ddpprof_cmd(r, "report", db, "--json", NULL), 0);
    assert_int_equal(r->status, 0);
    snprintf(want, sizeof want, "\"placement\": \"%s\"", note);
    assert_non_null(strstr(r->out, want));
    free(r);
    assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuses_without_gpu),
        cmocka_unit_test(test_worlds),
        cmocka_unit_test(test_bench_refuses),
        cmocka_unit_test(test_cublas_loads),
        cmocka_unit_test(test_report_says_ranks_share_a_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
