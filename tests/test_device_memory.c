/* test_device_memory.c — the DDP engine reaches device memory only through dev_copy and
 * dev_zero, as the cuda backend needs (its parameters, gradients and buckets are
 * cudaMalloc memory, which the host cannot touch).  Checked without a GPU: a device whose
 * memory is mapped PROT_NONE except inside its own copy and clear, so that any direct
 * host read or write of it kills the test with SIGSEGV, and whose ops must name its own
 * memory as their buffers.  Its ops move no data (a device that only runs them); the trainer runs construction, bucket rebuild, the used-map of
 * find_unused_parameters, and the sync hook that --verify uses, which must see the
 * gradients through a host copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/ddp/trainer.h"
#include "engine/device.h"
#include "engine/workload/model_zoo.h"
#include "profiler/recorder.h"

#define MAX_REGIONS 4096

typedef struct {
    device base;
    struct {
        void *p;
        size_t len;
    } region[MAX_REGIONS];
    int nregions;
    uint64_t tickets[DEV_STREAM_COUNT];
    int64_t copies, zeroes, copied_bytes;
    char error[64];
} guarded_device;

static void set_access(guarded_device *d, int prot)
{
    for (int i = 0; i < d->nregions; i++)
        assert_int_equal(mprotect(d->region[i].p, d->region[i].len, prot), 0);
}

/* Whether p lies in memory this device allocated. */
static bool owns(const guarded_device *d, const void *p)
{
    for (int i = 0; i < d->nregions; i++)
        if ((const char *)p >= (const char *)d->region[i].p &&
            (const char *)p < (const char *)d->region[i].p + d->region[i].len)
            return true;
    return false;
}

/* The buffers an op touches must be the device's (device.h): a GPU reduces and copies
 * its own memory only, whatever a host pointer would do on the cpu backend. */
static int g_enqueue(device *base, dev_stream s, const dev_op *op)
{
    guarded_device *d = (guarded_device *)base;
    if ((op->work == WORK_ALLREDUCE || op->work == WORK_BROADCAST) && op->u.coll.buf && !owns(d, op->u.coll.buf))
        fail_msg("%s: its collective's buffer is not device memory", op->name);
    if (op->work == WORK_SCALE_COPY && op->u.copy.n > 0 && (!owns(d, op->u.copy.dst) || !owns(d, op->u.copy.src)))
        fail_msg("%s: a copy between buffers that are not device memory", op->name);
    d->tickets[s]++;
    return 0;
}

static dev_event g_record(device *base, dev_stream s)
{
    return (dev_event){.stream = s, .ticket = ((guarded_device *)base)->tickets[s]};
}

static int g_wait(device *base, dev_stream s, dev_event ev)
{
    (void)base, (void)s, (void)ev;
    return 0;
}

static int g_synchronize(device *base, dev_stream s)
{
    (void)base, (void)s;
    return 0;
}

static int64_t g_now(device *base)
{
    (void)base;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *g_error(device *base) { return ((guarded_device *)base)->error; }

static void *g_alloc(device *base, size_t bytes)
{
    guarded_device *d = (guarded_device *)base;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (bytes + page - 1) / page * page;
    if (d->nregions == MAX_REGIONS)
        return NULL;
    void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* zeroed */
    if (p == MAP_FAILED)
        return NULL;
    d->region[d->nregions].p = p;
    d->region[d->nregions++].len = len;
    return p;
}

static void g_release(device *base, void *p)
{
    guarded_device *d = (guarded_device *)base;
    for (int i = 0; i < d->nregions; i++)
        if (d->region[i].p == p) {
            munmap(p, d->region[i].len);
            d->region[i] = d->region[--d->nregions];
            return;
        }
    fail_msg("release of memory this device did not allocate");
}

static int g_copy(device *base, void *dst, const void *src, size_t bytes)
{
    guarded_device *d = (guarded_device *)base;
    set_access(d, PROT_READ | PROT_WRITE);
    memmove(dst, src, bytes);
    set_access(d, PROT_NONE);
    d->copies++;
    d->copied_bytes += (int64_t)bytes;
    return 0;
}

static int g_zero(device *base, void *p, size_t bytes)
{
    guarded_device *d = (guarded_device *)base;
    set_access(d, PROT_READ | PROT_WRITE);
    memset(p, 0, bytes);
    set_access(d, PROT_NONE);
    d->zeroes++;
    return 0;
}

static const device_ops guarded_ops = {
    .enqueue = g_enqueue, .record = g_record, .wait = g_wait,     .synchronize = g_synchronize, .now_ns = g_now,
    .error = g_error,     .alloc = g_alloc,   .release = g_release, .copy = g_copy,           .zero = g_zero,
};

typedef struct {
    int calls;
    double sum;
} hook_seen;

/* Reads every value it is given, as --verify's check does. */
static int read_all(void *user, int rank, int iter, int micro_first, int micro_last, const dev_param *params,
                    int nparams, char *err, size_t errlen)
{
    (void)rank, (void)iter, (void)micro_first, (void)micro_last, (void)err, (void)errlen;
    hook_seen *h = user;
    h->calls++;
    for (int p = 0; p < nparams; p++)
        for (int64_t i = 0; i < params[p].numel; i++)
            h->sum += params[p].data[i] + params[p].grad[i];
    return 0;
}

static int discard(void *user, const span *spans, size_t n, char *err, size_t errlen)
{
    (void)user, (void)spans, (void)n, (void)err, (void)errlen;
    return 0;
}

static void train(const char *const *settings, int nsettings, hook_seen *seen, guarded_device *d)
{
    scenario *sc = calloc(1, sizeof *sc);
    assert_non_null(sc);
    scenario_defaults(sc);
    char why[SCENARIO_ERR];
    for (int i = 0; i < nsettings; i += 2)
        if (scenario_set(sc, settings[i], settings[i + 1], why, sizeof why) != 0)
            fail_msg("%s: %s", settings[i], why);
    model m;
    char err[512];
    if (model_build(sc, &m, err, sizeof err) != 0)
        fail_msg("model: %s", err);
    recorder *rec;
    assert_int_equal(recorder_create_sink(discard, NULL, 1, &rec), 0);
    assert_int_equal(recorder_start(rec), 0);
    *d = (guarded_device){.base = {.ops = &guarded_ops, .rank = 0, .world_size = 1}};
    atomic_bool stop = false;
    trainer_args a = {.sc = sc, .m = &m, .dev = &d->base, .host_ring = recorder_ring(rec, 0),
                      .stop_requested = &stop, .on_sync = read_all, .on_sync_user = seen};
    if (trainer_run(&a, err, sizeof err) != 0)
        fail_msg("trainer: %s", err);
    trainer_result_free(&a);
    assert_int_equal(recorder_stop(rec, err, sizeof err), 0);
    recorder_destroy(rec);
    model_free(&m);
    scenario_free(sc);
    free(sc);
}

static void test_ddp_touches_device_memory_only_by_copies(void **state)
{
    (void)state;
    static const char *const settings[] = {"run.world_size", "1",        "run.iterations",        "3",
                                           "run.warmup",     "1",        "model.preset",          "resnet18",
                                           "model.compute",  "model",    "ddp.find_unused_parameters", "true"};
    hook_seen seen = {0};
    guarded_device d;
    train(settings, sizeof settings / sizeof settings[0], &seen, &d);
    /* Every synchronised step handed the hook a host copy it could read. */
    assert_int_equal(seen.calls, 4);
    /* The parameters were initialised by copies (never zero: 0.01 * ((p + i) % 13)). */
    assert_true(seen.sum > 0);
    assert_true(d.copies > 0 && d.zeroes > 0);
    /* Everything allocated was given back. */
    assert_int_equal(d.nregions, 0);
}

/* DDP's join (a rank out of data shadows the others' allreduces) reduces one float a
 * step: through device memory too. */
static void test_join_reduces_through_device_memory(void **state)
{
    (void)state;
    static const char *const settings[] = {"run.world_size", "1",     "run.iterations", "3",
                                           "run.warmup",     "1",     "model.preset",   "mlp",
                                           "model.compute",  "model", "ddp.join",       "true"};
    hook_seen seen = {0};
    guarded_device d;
    train(settings, sizeof settings / sizeof settings[0], &seen, &d);
    assert_true(seen.calls > 0);
    assert_int_equal(d.nregions, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ddp_touches_device_memory_only_by_copies),
        cmocka_unit_test(test_join_reduces_through_device_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
