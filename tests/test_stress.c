/* test_stress.c — runs that abort at random moments never crash and never lose the run.
 *
 * Each trial runs the ddpprof binary ($DDPPROF) on a short scenario with a random
 * [fault] (none, hang, exit, error, on a random rank and iteration) and, in most trials,
 * a SIGINT or SIGTERM at a random moment.  Every trial must end by itself within a
 * bound (no hang), exit 0 or 1 (never a signal, never a sanitizer report), and leave a
 * database whose run is `complete` or `failed` with a reason — `interrupted` when the
 * signal came first — never `running`.  STRESS_RUNS (default 40) and STRESS_SEED
 * choose the trials; `make stress` runs hundreds.  The seed is printed so a failure
 * can be replayed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "tmp_store.h" /* remove_db */
#include "test_slowdown.h"
#include <sqlite3.h>

extern char **environ;

/* A trial that has not ended this long after its start is hung (STRESS_TRIAL_LIMIT_S
 * raises it for sanitizer builds, which run several times slower). */
#define TRIAL_LIMIT_S trial_limit_s()
/* The plain build must end within a second of a signal; sanitizer builds get their
 * slowdown's multiple (ASan alone takes a good part of a second to free a large run's
 * memory). */
#define SIGNAL_GRACE_S (1.0 * test_slowdown())

static double trial_limit_s(void)
{
    const char *v = getenv("STRESS_TRIAL_LIMIT_S");
    return v && atof(v) > 0 ? atof(v) : 30.0;
}

typedef struct {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    /* splitmix64: good enough to scatter trial parameters, and reproducible. */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int rng_below(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    char args[40][96];
    int nargs;
    int signal;       /* 0: none */
    double signal_at; /* seconds after the start */
    bool fault;
} trial;

static void add_arg(trial *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_arg(trial *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->args[t->nargs++], sizeof t->args[0], fmt, ap);
    va_end(ap);
}

static void make_trial(rng *r, const char *scenarios, const char *db, trial *t)
{
    memset(t, 0, sizeof *t);
    add_arg(t, "run");
    add_arg(t, "%s/baseline.ini", scenarios);
    add_arg(t, "-o");
    add_arg(t, "%s", db);
    add_arg(t, "-q");
    int world = 2 + rng_below(r, 3);
    add_arg(t, "-s");
    add_arg(t, "run.world_size=%d", world);
    add_arg(t, "-s");
    add_arg(t, "run.iterations=4");
    add_arg(t, "-s");
    add_arg(t, "run.warmup=1");
    add_arg(t, "-s");
    add_arg(t, "run.timeout_s=1");
    /* ResNet-18's large buckets keep collectives in their data phase for a while, where
     * an abort used to free a bucket under a peer's feet; the MLP is quick. */
    bool big = rng_below(r, 2);
    add_arg(t, "-s");
    add_arg(t, "model.preset=%s", big ? "resnet18" : "mlp");
    if (big) {
        add_arg(t, "-s");
        add_arg(t, "model.batch=8");
        add_arg(t, "-s");
        add_arg(t, "device.preset=h100");
    }
    static const char *const hooks[] = {"none", "none", "fp16", "bf16"};
    add_arg(t, "-s");
    add_arg(t, "ddp.comm_hook=%s", hooks[rng_below(r, 4)]);
    static const char *const modes[] = {"none", "hang", "exit", "error"};
    int mode = rng_below(r, 4);
    if (mode != 0) {
        t->fault = true;
        add_arg(t, "-s");
        add_arg(t, "fault.mode=%s", modes[mode]);
        add_arg(t, "-s");
        add_arg(t, "fault.rank=%d", rng_below(r, world));
        add_arg(t, "-s");
        add_arg(t, "fault.iter=%d", rng_below(r, 5));
    }
    /* Three trials in four are interrupted, at any moment of a run's life. */
    if (rng_below(r, 4) != 0) {
        t->signal = rng_below(r, 2) ? SIGINT : SIGTERM;
        t->signal_at = (double)rng_below(r, big ? 1500 : 600) / 1000.0;
    }
}

static void describe(const trial *t, char *out, size_t n)
{
    size_t len = 0;
    for (int i = 0; i < t->nargs && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s ", t->args[i]);
    if (t->signal && len < n)
        snprintf(out + len, n - len, "(signal %d at %.3f s)", t->signal, t->signal_at);
}

typedef struct {
    int status;
    double ended_after_signal_s;
    char err[4096];
} outcome;

static void run_trial(const char *bin, const trial *t, const char *err_path, outcome *o)
{
    char what[2048];
    describe(t, what, sizeof what);
    const char *argv[48];
    int n = 0;
    argv[n++] = bin;
    for (int i = 0; i < t->nargs; i++)
        argv[n++] = t->args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
    /* SIGINT and SIGTERM at their defaults in the child whatever this process inherited:
     * a shell without job control starts a background job with SIGINT ignored, and a
     * signal that reached the run before it installed its handler was then lost (the
     * run went on to its end, 12 s under TSan) instead of ending it. */
    posix_spawnattr_t attr;
    sigset_t defaults;
    assert_int_equal(posix_spawnattr_init(&attr), 0);
    assert_int_equal(sigemptyset(&defaults), 0);
    assert_int_equal(sigaddset(&defaults, SIGINT), 0);
    assert_int_equal(sigaddset(&defaults, SIGTERM), 0);
    assert_int_equal(posix_spawnattr_setsigdefault(&attr, &defaults), 0);
    assert_int_equal(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF), 0);
    pid_t pid;
    double t0 = now_s();
    assert_int_equal(posix_spawn(&pid, bin, &fa, &attr, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    bool signalled = false;
    double signal_time = 0;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        assert_true(w >= 0 || errno == EINTR);
        if (w == pid)
            break;
        double el = now_s() - t0;
        if (t->signal && !signalled && el >= t->signal_at) {
            kill(pid, t->signal);
            signalled = true;
            signal_time = now_s();
        }
        if (el > TRIAL_LIMIT_S) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("trial hung: still running after %.0f s: %s", TRIAL_LIMIT_S, what);
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    o->status = status;
    o->ended_after_signal_s = signalled ? now_s() - signal_time : 0.0;
    slurp_into(err_path, o->err, sizeof o->err);
}

/* The database's last run: its status and error. */
static void last_run(const char *db, char *status, size_t slen, char *error, size_t elen)
{
    sqlite3 *h = NULL;
    status[0] = error[0] = '\0';
    if (access(db, F_OK) != 0)
        return;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(h, "SELECT status, coalesce(error, '') FROM run ORDER BY id DESC LIMIT 1", -1, &q, NULL),
        SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW) {
        snprintf(status, slen, "%s", (const char *)sqlite3_column_text(q, 0));
        snprintf(error, elen, "%s", (const char *)sqlite3_column_text(q, 1));
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
}

static void test_random_aborts(void **state)
{
    (void)state;
    const char *bin = getenv("DDPPROF"), *scenarios = getenv("SCENARIOS");
    assert_non_null(bin);
    assert_non_null(scenarios);
    int runs = getenv("STRESS_RUNS") ? atoi(getenv("STRESS_RUNS")) : 40;
    uint64_t seed = getenv("STRESS_SEED") ? strtoull(getenv("STRESS_SEED"), NULL, 10) : (uint64_t)time(NULL);
    print_message("stress: %d runs, STRESS_SEED=%llu\n", runs, (unsigned long long)seed);
    char dir[] = "/tmp/ddpprof-stressXXXXXX";
    assert_non_null(mkdtemp(dir));
    char db[128], err_path[128];
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    rng r = {seed};
    int counts[4] = {0}; /* complete, failed by fault, interrupted, failed otherwise */
    double worst_signal_latency = 0;
    double t_begin = now_s();
    for (int i = 0; i < runs; i++) {
        trial t;
        snprintf(db, sizeof db, "%s/run%d.sqlite", dir, i);
        make_trial(&r, scenarios, db, &t);
        char what[2048];
        describe(&t, what, sizeof what);
        outcome o;
        run_trial(bin, &t, err_path, &o);
        char status[32], error[1024];
        last_run(db, status, sizeof status, error, sizeof error);
        /* A signal that lands before main() has installed its handlers ends the process
         * the default way; that is fine as long as nothing was written yet. */
        if (WIFSIGNALED(o.status) && WTERMSIG(o.status) == t.signal && !status[0] && !o.err[0])
            continue;
        if (!WIFEXITED(o.status))
            fail_msg("trial %d died of signal %d: %s\n%s", i, WTERMSIG(o.status), what, o.err);
        int code = WEXITSTATUS(o.status);
        if (code != 0 && code != 1)
            fail_msg("trial %d exited %d: %s\n%s", i, code, what, o.err);
        if (strstr(o.err, "Sanitizer") || strstr(o.err, "runtime error"))
            fail_msg("trial %d: sanitizer report: %s\n%s", i, what, o.err);
        /* A signal before the run row was written leaves no run; otherwise it must end. */
        if (status[0]) {
            if (strcmp(status, "complete") != 0 && strcmp(status, "failed") != 0)
                fail_msg("trial %d left the run '%s': %s\n%s", i, status, what, o.err);
            if (!strcmp(status, "failed") && !error[0])
                fail_msg("trial %d: failed run without a reason: %s", i, what);
            if ((code == 0) != !strcmp(status, "complete"))
                fail_msg("trial %d: exit %d but the run is %s: %s", i, code, status, what);
        } else if (!t.signal) {
            fail_msg("trial %d wrote no run: %s\n%s", i, what, o.err);
        }
        if (!strcmp(status, "complete"))
            counts[0]++;
        else if (strstr(error, "interrupted"))
            counts[2]++;
        else if (strstr(error, "injected") || strstr(error, "did not reach") || strstr(error, "hung") ||
                 strstr(error, "exited"))
            counts[1]++;
        else if (status[0])
            fail_msg("trial %d failed for an unexpected reason '%s': %s", i, error, what);
        if (t.signal && o.ended_after_signal_s > worst_signal_latency)
            worst_signal_latency = o.ended_after_signal_s;
        if (t.signal && o.ended_after_signal_s > SIGNAL_GRACE_S)
            fail_msg("trial %d took %.2f s to end after its signal: %s", i, o.ended_after_signal_s, what);
        remove_db(db); /* and its WAL files */
    }
    unlink(err_path);
    rmdir(dir);
    print_message("stress: %d runs in %.1f s: %d complete, %d failed by their fault, %d interrupted; slowest end "
                  "after a signal %.3f s\n",
                  runs, now_s() - t_begin, counts[0], counts[1], counts[2], worst_signal_latency);
    /* Both kinds of abort must actually have happened, or this tested little. */
    if (runs >= 20) {
        assert_true(counts[1] > 0);
        assert_true(counts[2] > 0);
    }
}

/* One long phase, interrupted in its middle: the run must end within the grace and be
 * recorded as interrupted. */
static void interrupt_long_phase(const char *const *overrides, double signal_at)
{
    const char *bin = getenv("DDPPROF"), *scenarios = getenv("SCENARIOS");
    assert_non_null(bin);
    assert_non_null(scenarios);
    char dir[] = "/tmp/ddpprof-phaseXXXXXX";
    assert_non_null(mkdtemp(dir));
    trial t;
    memset(&t, 0, sizeof t);
    char db[128], err_path[128];
    snprintf(db, sizeof db, "%s/run.sqlite", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    add_arg(&t, "run");
    add_arg(&t, "%s/baseline.ini", scenarios);
    add_arg(&t, "-o");
    add_arg(&t, "%s", db);
    add_arg(&t, "-q");
    for (int i = 0; overrides[i]; i++) {
        add_arg(&t, "-s");
        add_arg(&t, "%s", overrides[i]);
    }
    t.signal = SIGINT;
    t.signal_at = signal_at;
    outcome o;
    run_trial(bin, &t, err_path, &o);
    assert_true(WIFEXITED(o.status));
    assert_int_equal(WEXITSTATUS(o.status), 1);
    char status[32], error[1024];
    last_run(db, status, sizeof status, error, sizeof error);
    assert_string_equal(status, "failed");
    assert_non_null(strstr(error, "interrupted"));
    print_message("ended %.3f s after SIGINT: %s\n", o.ended_after_signal_s, error);
    assert_true(o.ended_after_signal_s < SIGNAL_GRACE_S);
    remove_db(db); /* and its WAL files */
    unlink(err_path);
    rmdir(dir);
}

/* compute = real: one backward GEMM of 4096x2 x 4096 x 4096 is about 0.27 TFLOP (seconds
 * on 2 cores), with about 0.75 GB per rank to release at the end. */
static void test_interrupt_inside_a_long_gemm(void **state)
{
    (void)state;
    const char *const o[] = {"run.world_size=2", "model.preset=mlp", "model.layers=2", "model.hidden=4096",
                             "model.batch=4096", "model.compute=real", NULL};
    interrupt_long_phase(o, 1.5);
}

/* A paced allreduce of ResNet-18's 45 MB at 1 MB/s lasts most of a minute. */
static void test_interrupt_inside_a_paced_collective(void **state)
{
    (void)state;
    const char *const o[] = {"run.world_size=2", "network.pace=true", "network.bandwidth_gbps=0.001",
                             "run.timeout_s=600", NULL};
    interrupt_long_phase(o, 2.0);
}

/* A modelled kernel on a very slow device lasts seconds. */
static void test_interrupt_inside_a_modelled_kernel(void **state)
{
    (void)state;
    const char *const o[] = {"run.world_size=2", "device.preset=custom", "device.peak_tflops=0.001", "device.mem_bw_gbps=0.01", NULL};
    interrupt_long_phase(o, 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interrupt_inside_a_long_gemm),
        cmocka_unit_test(test_interrupt_inside_a_paced_collective),
        cmocka_unit_test(test_interrupt_inside_a_modelled_kernel),
        cmocka_unit_test(test_random_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
