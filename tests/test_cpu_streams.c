/* test_cpu_streams.c — the cpu backend's stream workers: each rank's comm stream runs
 * below its compute stream (niceness 10 against the process's 0), so that the ranks'
 * allreduce sums take the cores only where compute leaves them, as NCCL beside a GPU's
 * compute kernels does not hold them up; a stream waiting on the other is woken when its
 * event is reached, not at every op before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/backend.h"
#include "engine/cpu/cpu_device.h"
#include "profiler/nvtx_ranges.h"
#include "profiler/recorder.h"
#include "engine/scenario/scenario.h"

/* Threads of this process by niceness (from /proc/self/task/<tid>/stat: the 17th field
 * after the command's closing parenthesis). */
static void count_threads(int *at_zero, int *at_ten, int *others)
{
    *at_zero = *at_ten = *others = 0;
    DIR *dir = opendir("/proc/self/task");
    assert_non_null(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread has just ended */
        size_t n = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[n] = '\0';
        char *p = strrchr(line, ')');
        assert_non_null(p);
        int nice = 0, field = 2;
        for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " "))
            if (++field == 19) {
                nice = atoi(tok);
                break;
            }
        assert_int_equal(field, 19);
        if (nice == 0)
            (*at_zero)++;
        else if (nice == 10)
            (*at_ten)++;
        else
            (*others)++;
    }
    closedir(dir);
}

static void test_comm_streams_run_below_compute(void **state)
{
    (void)state;
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char err[SCENARIO_ERR];
    assert_int_equal(scenario_override(sc, "run.world_size=2", err, sizeof err), 0);
    const backend_ops *be = backend_find("cpu");
    assert_non_null(be);
    recorder *rec;
    assert_int_equal(recorder_create(NULL, 0, 2 * BACKEND_RINGS_PER_RANK, &rec), 0);
    assert_int_equal(recorder_start(rec), 0);
    /* As a run does: NVTX initialised once before any stream worker names its thread. */
    prof_nvtx nvtx;
    prof_nvtx_init(&nvtx);
    backend_world_args wa = {.sc = sc, .rec = rec, .nvtx = &nvtx};
    backend_world *w;
    if (be->world_create(&wa, &w, err, sizeof err) != 0)
        fail_msg("%s", err);

    int zero0, ten0, others0;
    count_threads(&zero0, &ten0, &others0);
    assert_int_equal(ten0, 0);
    device *dev[2];
    for (int r = 0; r < 2; r++) {
        dev[r] = be->device_create(w, r, err, sizeof err);
        if (!dev[r])
            fail_msg("%s", err);
    }
    /* Each device starts a compute and a comm worker; a worker lowers itself as it
     * starts, so wait (at most 5 s) for both comm workers to have done so. */
    int zero, ten, others;
    for (int tries = 0; tries < 500; tries++) {
        count_threads(&zero, &ten, &others);
        if (ten == 2)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    assert_int_equal(ten, 2);
    assert_int_equal(zero, zero0 + 2); /* the compute workers keep the process's niceness */
    assert_int_equal(others, others0);

    for (int r = 0; r < 2; r++)
        be->device_destroy(dev[r]);
    be->world_destroy(w);
    assert_int_equal(recorder_stop(rec, err, sizeof err), 0);
    recorder_destroy(rec);
    prof_nvtx_destroy(&nvtx);
    scenario_free(sc);
    free(sc);
}

/* One rank's world on the cpu backend, for tests that drive its streams by hand. */
typedef struct {
    scenario *sc;
    recorder *rec;
    prof_nvtx nvtx;
    const backend_ops *be;
    backend_world *w;
} one_rank_world;

static void world_open(one_rank_world *o)
{
    char err[SCENARIO_ERR];
    o->sc = calloc(1, sizeof *o->sc);
    assert_non_null(o->sc);
    scenario_defaults(o->sc);
    assert_int_equal(scenario_override(o->sc, "run.world_size=1", err, sizeof err), 0);
    o->be = backend_find("cpu");
    assert_non_null(o->be);
    assert_int_equal(recorder_create(NULL, 0, BACKEND_RINGS_PER_RANK, &o->rec), 0);
    assert_int_equal(recorder_start(o->rec), 0);
    prof_nvtx_init(&o->nvtx);
    backend_world_args wa = {.sc = o->sc, .rec = o->rec, .nvtx = &o->nvtx};
    if (o->be->world_create(&wa, &o->w, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void world_close(one_rank_world *o)
{
    char err[256];
    o->be->world_destroy(o->w);
    assert_int_equal(recorder_stop(o->rec, err, sizeof err), 0);
    recorder_destroy(o->rec);
    prof_nvtx_destroy(&o->nvtx);
    scenario_free(o->sc);
    free(o->sc);
}

static void test_waiters_woken_once_per_event(void **state)
{
    (void)state;
    one_rank_world o;
    world_open(&o);
    char err[256];
    device *dev = o.be->device_create(o.w, 0, err, sizeof err);
    if (!dev)
        fail_msg("%s", err);
    enum { NOPS = 40, OP_NS = 300000 };
    /* The comm stream waits for the compute stream's 40th op, then a synchronize waits
     * for the comm stream: as a bucket's allreduce waits for its last backward. */
    for (int i = 0; i < NOPS; i++) {
        dev_op op = {.kind = SPAN_FORWARD, .iter = 0, .layer = i, .bucket = -1, .seq = -1, .model_ns = OP_NS};
        snprintf(op.name, sizeof op.name, "op %d", i);
        assert_int_equal(dev_enqueue(dev, DEV_STREAM_COMPUTE, &op), 0);
    }
    dev_event ev = dev_record(dev, DEV_STREAM_COMPUTE);
    int64_t t0 = dev_now_ns(dev);
    assert_int_equal(dev_wait(dev, DEV_STREAM_COMM, ev), 0);
    assert_int_equal(dev_synchronize(dev, DEV_STREAM_COMM), 0);
    /* The wait ended after the compute stream's last op, not at its first. */
    assert_true(dev_now_ns(dev) - t0 >= (int64_t)(NOPS - 1) * OP_NS);
    /* 40 completions woke the waiting comm worker once (none if it came to its wait
     * after the 40th): a broadcast per completion would count 40. */
    uint64_t woken = cpu_device_waiter_wakeups(dev, DEV_STREAM_COMPUTE);
    assert_true(woken <= 1);
    /* A synchronize on an idle stream wakes no one; one on work, once. */
    assert_int_equal(dev_synchronize(dev, DEV_STREAM_COMPUTE), 0);
    assert_int_equal(cpu_device_waiter_wakeups(dev, DEV_STREAM_COMPUTE), woken);
    o.be->device_destroy(dev);
    world_close(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_streams_run_below_compute),
        cmocka_unit_test(test_waiters_woken_once_per_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
