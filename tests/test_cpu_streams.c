/* test_cpu_streams.c — the cpu backend's stream workers: each rank's comm stream runs
 * below its compute stream (niceness 10 against the process's 0), so that the ranks'
 * allreduce sums take the cores only where compute leaves them, as NCCL beside a GPU's
 * compute kernels does not hold them up. */
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

#include "backend.h"
#include "nvtx_ranges.h"
#include "recorder.h"
#include "scenario.h"

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
    assert_int_equal(scenario_override(sc, "run.world_size=2", err), 0);
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
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comm_streams_run_below_compute),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
