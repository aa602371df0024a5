/* test_collectives.c — the cpu communicator's contract under aborts: a rank whose
 * collective fails gets its buffer back only when no peer reads it any more (the
 * rank unmaps it the moment the call returns, so a late reader would crash the test),
 * the failure names the collective, sleeps to a modelled deadline wake on an abort,
 * and a healthy allreduce still sums exactly — among threads, and among processes
 * sharing a mapping. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include <cmocka.h>

#include "engine/cpu/cpu_collectives.h"

#define WORLD 3
/* Large enough that the reduce-scatter takes milliseconds, so aborts land inside it. */
#define COUNT (8 << 20)

typedef struct {
    cpu_comm *comm;
    int rank;
    float *buf;
    int rc;
    char err[512];
    int64_t returned_ns;
} rank_call;

static float *map_buffer(int rank)
{
    float *b = mmap(NULL, (size_t)COUNT * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                    0);
    assert_true(b != MAP_FAILED);
    for (int64_t i = 0; i < COUNT; i++)
        b[i] = (float)(rank + 1);
    return b;
}

static void *call_allreduce(void *arg)
{
    rank_call *c = arg;
    cpu_coll_info info = {.seq = 7, .iter = 2, .bucket = 1, .name = "bucket 1"};
    int64_t arrival;
    c->rc = cpu_allreduce(c->comm, c->rank, c->buf, COUNT, DEV_F32, 1.0f, &info, &arrival, c->err, sizeof c->err);
    c->returned_ns = cpu_clock_ns();
    /* What the engine does after a failure: the bucket goes.  Unmapping makes any
     * later read by a peer a crash rather than a silent use-after-free. */
    if (c->rc != 0) {
        munmap(c->buf, (size_t)COUNT * sizeof(float));
        c->buf = NULL;
    }
    return NULL;
}

static void run_world(cpu_comm *comm, rank_call *calls, int64_t abort_after_ns)
{
    pthread_t th[WORLD];
    for (int r = 0; r < WORLD; r++) {
        calls[r] = (rank_call){.comm = comm, .rank = r, .buf = map_buffer(r)};
    }
    for (int r = 0; r < WORLD; r++)
        assert_int_equal(pthread_create(&th[r], NULL, call_allreduce, &calls[r]), 0);
    if (abort_after_ns >= 0) {
        struct timespec ts = {0, (long)abort_after_ns};
        nanosleep(&ts, NULL);
        cpu_comm_abort(comm, "rank 1: backward failed (injected)");
    }
    for (int r = 0; r < WORLD; r++)
        assert_int_equal(pthread_join(th[r], NULL), 0);
}

static cpu_comm *make_comm(double timeout_s)
{
    cpu_link_model link = {0};
    cpu_comm *c = NULL;
    assert_int_equal(cpu_comm_create(WORLD, timeout_s, &link, &c), 0);
    return c;
}

static void test_healthy_allreduce_sums_exactly(void **state)
{
    (void)state;
    cpu_comm *comm = make_comm(10.0);
    rank_call calls[WORLD];
    run_world(comm, calls, -1);
    for (int r = 0; r < WORLD; r++) {
        assert_int_equal(calls[r].rc, 0);
        for (int64_t i = 0; i < COUNT; i += 4099)
            assert_true(calls[r].buf[i] == 6.0f);
        munmap(calls[r].buf, (size_t)COUNT * sizeof(float));
    }
    cpu_comm_destroy(comm);
}

/* Aborts at many moments across the collective: before arrival, during the
 * reduce-scatter, during the all-gather, after the end.  Every rank either completes
 * with the exact sum or fails with the abort reason, and no rank's unmapped buffer is
 * ever read (the process would crash). */
static void test_abort_at_any_moment_never_reads_a_returned_buffer(void **state)
{
    (void)state;
    int failed = 0, completed = 0;
    for (int trial = 0; trial < 40; trial++) {
        cpu_comm *comm = make_comm(10.0);
        rank_call calls[WORLD];
        run_world(comm, calls, (int64_t)trial * 1000000 / 2);
        for (int r = 0; r < WORLD; r++) {
            if (calls[r].rc == 0) {
                completed++;
                assert_true(calls[r].buf[COUNT - 1] == 6.0f);
                munmap(calls[r].buf, (size_t)COUNT * sizeof(float));
            } else {
                failed++;
                assert_non_null(strstr(calls[r].err, "injected"));
            }
        }
        cpu_comm_destroy(comm);
    }
    /* The sweep of abort moments must have hit both outcomes, or it tested nothing. */
    assert_true(failed > 0);
    print_message("aborts: %d rank calls failed, %d completed\n", failed, completed);
}

static void test_missing_rank_is_named_with_the_collective(void **state)
{
    (void)state;
    cpu_link_model link = {0};
    cpu_comm *comm = NULL;
    assert_int_equal(cpu_comm_create(2, 0.2, &link, &comm), 0);
    float buf[4] = {1, 2, 3, 4};
    cpu_coll_info info = {.seq = 3, .iter = 1, .bucket = 0, .name = "bucket 0"};
    int64_t arrival;
    char err[512];
    assert_int_equal(cpu_allreduce(comm, 0, buf, 4, DEV_F32, 1.0f, &info, &arrival, err, sizeof err), -1);
    assert_non_null(strstr(err, "collective seq 3"));
    assert_non_null(strstr(err, "rank 1 did not reach"));
    assert_true(cpu_comm_aborted(comm));
    cpu_comm_destroy(comm);
}

typedef struct {
    cpu_comm *comm;
    int rc;
    int64_t woke_ns;
} sleeper;

static void *sleep_long(void *arg)
{
    sleeper *s = arg;
    s->rc = cpu_comm_sleep_until(s->comm, cpu_clock_ns() + 30 * 1000000000LL);
    s->woke_ns = cpu_clock_ns();
    return NULL;
}

static void test_sleep_to_a_deadline_wakes_on_abort(void **state)
{
    (void)state;
    cpu_comm *comm = make_comm(10.0);
    sleeper s = {.comm = comm};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sleep_long, &s), 0);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    int64_t t_abort = cpu_clock_ns();
    cpu_comm_abort(comm, "interrupted by a signal");
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(s.rc, -1);
    /* A 30 s sleep ended within half a second of the abort. */
    assert_true(s.woke_ns - t_abort < 500000000LL);
    int64_t t0 = cpu_clock_ns();
    cpu_comm *fresh = make_comm(10.0);
    assert_int_equal(cpu_comm_sleep_until(fresh, t0 + 20000000), 0);
    assert_true(cpu_clock_ns() >= t0 + 20000000);
    cpu_comm_destroy(fresh);
    cpu_comm_destroy(comm);
}

/* Ranks as processes: each child attaches to the shared communicator by its path, and
 * exits 0 only if its allreduce gave the exact sum (or, for the missing-rank case, if
 * it failed naming the absent rank). */
static int child_allreduce(const char *path, int rank, int world, bool expect_missing)
{
    cpu_comm *c = NULL;
    char err[512];
    if (cpu_comm_attach(path, world, &c, err, sizeof err) != 0)
        return 10;
    enum { N = 100000 };
    float *buf = malloc(N * sizeof *buf);
    if (!buf)
        return 11;
    for (int i = 0; i < N; i++)
        buf[i] = (float)(rank + 1) * (float)(i % 5);
    cpu_coll_info info = {.seq = 0, .iter = 0, .bucket = 0, .name = "bucket 0"};
    int64_t arrival;
    int rc = cpu_allreduce(c, rank, buf, N, DEV_F32, 1.0f, &info, &arrival, err, sizeof err);
    int out = 0;
    if (expect_missing)
        out = rc == -1 && strstr(err, "rank 2 did not reach") ? 0 : 12;
    else
        for (int i = 0; i < N && out == 0; i++)
            if (rc != 0 || buf[i] != (float)(world * (world + 1) / 2) * (float)(i % 5))
                out = 13;
    free(buf);
    cpu_comm_destroy(c);
    return out;
}

static void run_process_world(int world, int absent, double timeout_s)
{
    cpu_link_model link = {0};
    cpu_comm *c = NULL;
    char err[512];
    assert_int_equal(cpu_comm_create_shared(world, timeout_s, &link, 100000 * sizeof(float), &c, err, sizeof err), 0);
    pid_t pids[8];
    for (int r = 0; r < world; r++) {
        pids[r] = fork();
        assert_true(pids[r] >= 0);
        if (pids[r] == 0)
            _exit(r == absent ? 0 : child_allreduce(cpu_comm_path(c), r, world, absent >= 0));
    }
    for (int r = 0; r < world; r++) {
        int status;
        assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    char path[256];
    snprintf(path, sizeof path, "%s", cpu_comm_path(c));
    cpu_comm_destroy(c);
    /* Nothing is left behind in /dev/shm or /tmp. */
    assert_int_equal(access(path, F_OK), -1);
}

static void test_processes_allreduce_exactly(void **state)
{
    (void)state;
    run_process_world(4, -1, 10.0);
}

static void test_processes_name_a_missing_rank(void **state)
{
    (void)state;
    run_process_world(3, 2, 0.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_allreduce_sums_exactly),
        cmocka_unit_test(test_abort_at_any_moment_never_reads_a_returned_buffer),
        cmocka_unit_test(test_missing_rank_is_named_with_the_collective),
        cmocka_unit_test(test_sleep_to_a_deadline_wakes_on_abort),
        cmocka_unit_test(test_processes_allreduce_exactly),
        cmocka_unit_test(test_processes_name_a_missing_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
