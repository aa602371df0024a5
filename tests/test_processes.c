/* test_processes.c — ranks as processes, end to end: `run.ranks = processes` (ddpprof
 * starts one process per rank and its parent writes), the same result as threads; a
 * rank killed with SIGKILL, a hung / exiting / failing rank, and SIGINT / SIGTERM to the
 * parent, each ending the run in bounded time with no process left behind; ranks
 * started by an outside launcher (a torchrun-shaped environment made here, a skewed
 * rank clock realigned by the coordinator, and the real mpirun and torchrun when they
 * are installed).  Uses the binary named by $DDPPROF and the scenarios in $SCENARIOS
 * (set by `make test`).  Every process started here has the test's temporary directory
 * on its command line (-o DIR/x.sqlite), which is how leftovers are found in /proc, and
 * is killed after a deadline so that no test can hang. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "test_slowdown.h"
#include <sqlite3.h>

extern char **environ;

/* Any single ddpprof run here takes a few seconds at most; this one is hung. */
#define RUN_DEADLINE_S 60.0

#define MAX_ARGS 64
#define MAX_ENV 2048

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Reads a whole /proc file (NUL-separated strings) into buf; returns its length or -1. */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n < len - 1) {
        ssize_t r = read(fd, buf + n, len - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The processes (other than this one) whose command line mentions `marker`: every
 * process a test starts names the test's temporary directory.  Returns how many; their
 * ids go to pids (up to max) and a description to desc. */
static int find_marked(const char *marker, pid_t *pids, int max, char *desc, size_t desclen)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    size_t dl = 0;
    if (desc && desclen)
        desc[0] = '\0';
    static char cmd[65536];
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0 || (pid_t)v == getpid())
            continue;
        ssize_t len = read_proc((pid_t)v, "cmdline", cmd, sizeof cmd);
        if (len <= 0)
            continue; /* gone, a kernel thread or a zombie */
        for (ssize_t i = 0; i < len; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        if (!strstr(cmd, marker))
            continue;
        if (pids && n < max)
            pids[n] = (pid_t)v;
        n++;
        if (desc && dl + 1 < desclen)
            dl += (size_t)snprintf(desc + dl, desclen - dl, "\n  pid %ld: %.200s", v, cmd);
    }
    closedir(d);
    return n;
}

/* Kills every process of this test still running and reaps this process's children. */
static void kill_everything(void)
{
    pid_t pids[256];
    for (int round = 0; round < 20; round++) {
        int n = find_marked(scratch_dir(), pids, 256, NULL, 0);
        for (int i = 0; i < n && i < 256; i++)
            kill(pids[i], SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (n == 0)
            break;
        sleep_s(0.05);
    }
    double until = now_s() + 2.0;
    while (now_s() < until) {
        pid_t w = waitpid(-1, NULL, WNOHANG);
        if (w < 0)
            break; /* ECHILD: none left */
        if (w == 0)
            sleep_s(0.01);
    }
}

/* No process of the run may be left once its launcher has returned. */
static void assert_nothing_left(const char *when)
{
    char desc[4096];
    int n = 0;
    /* /proc may lag a reaped process by a moment; a real leftover stays. */
    for (int i = 0; i < 15; i++) {
        n = find_marked(scratch_dir(), NULL, 0, desc, sizeof desc);
        if (n == 0)
            return;
        sleep_s(0.02);
    }
    kill_everything();
    fail_msg("%s: %d process(es) of the run left behind:%s", when, n, desc);
}

/* The environment a process of this test gets: this one's, without any launcher's
 * variables (the test may itself run under one), plus `extra` (NULL-terminated). */
static void make_env(char **envp, const char *const *extra)
{
    static const char *const drop[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "GROUP_RANK=",
                                       "ROLE_RANK=", "MASTER_ADDR=", "MASTER_PORT=", "DDPPROF_COORDINATOR=",
                                       "DDPPROF_SWEEP_POINT=", "DDPPROF_CLOCK_SKEW_NS=", "OMPI_COMM_WORLD_",
                                       "PMIX_", "SLURM_", "TORCHELASTIC_", NULL};
    int n = 0;
    for (char **e = environ; *e && n < MAX_ENV - 32; e++) {
        bool keep = true;
        for (int i = 0; drop[i]; i++)
            if (!strncmp(*e, drop[i], strlen(drop[i])))
                keep = false;
        if (keep)
            envp[n++] = *e;
    }
    for (int i = 0; extra && extra[i] && n < MAX_ENV - 1; i++)
        envp[n++] = (char *)extra[i];
    envp[n] = NULL;
}

typedef struct {
    pid_t pid;
    double t0;
    bool done;
    int status; /* the raw wait status once done */
    char err_path[320];
    char err[16384];
} proc;

/* Starts argv (argv[0] is the program's path) with the test's environment plus extra;
 * stdin from /dev/null, stdout to /dev/null, stderr to DIR/<tag>.err. */
static void proc_start(proc *p, const char *const *argv, const char *const *extra_env, const char *tag)
{
    memset(p, 0, sizeof *p);
    static char *envp[MAX_ENV];
    make_env(envp, extra_env);
    char name[64];
    snprintf(name, sizeof name, "%s.err", tag);
    scratch_path(p->err_path, sizeof p->err_path, name);
    posix_spawn_file_actions_t fa;
    assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
    assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, p->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
    p->t0 = now_s();
    int rc = posix_spawnp(&p->pid, argv[0], &fa, NULL, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        fail_msg("cannot start %s: %s", argv[0], strerror(rc));
}

/* Waits for p until the absolute time `until`; true when it has ended. */
static bool proc_wait_until(proc *p, double until)
{
    while (!p->done) {
        pid_t w = waitpid(p->pid, &p->status, WNOHANG);
        if (w == p->pid) {
            p->done = true;
            slurp_into(p->err_path, p->err, sizeof p->err);
            break;
        }
        if (w < 0 && errno != EINTR)
            fail_msg("waitpid(%d): %s", (int)p->pid, strerror(errno));
        if (now_s() >= until)
            return false;
        sleep_s(0.005);
    }
    return true;
}

/* The exit code of an ended process; a death by signal fails the test. */
static int proc_code(const proc *p)
{
    assert_true(p->done);
    if (!WIFEXITED(p->status))
        fail_msg("process %d died of signal %d\n%s", (int)p->pid, WTERMSIG(p->status), p->err);
    return WEXITSTATUS(p->status);
}

/* Waits for p up to `limit_s` after `since`; a process still running then is hung:
 * everything is killed and the test fails saying `what`. */
static void proc_finish(proc *p, double since, double limit_s, const char *what)
{
    if (proc_wait_until(p, since + limit_s))
        return;
    char desc[4096];
    int n = find_marked(scratch_dir(), NULL, 0, desc, sizeof desc);
    kill_everything();
    slurp_into(p->err_path, p->err, sizeof p->err);
    fail_msg("%s: still running %.1f s later (%d processes of the run:%s)\nstderr: %s", what, limit_s, n, desc,
             p->err);
}

/* argv for `$DDPPROF run $SCENARIOS/<ini> -o <db> -q <overrides...> [more...]`. */
typedef struct {
    const char *v[MAX_ARGS];
    char ini[512];
    int n;
} args;

static void ddpprof_args(args *a, const char *ini, const char *db, const char *const *overrides)
{
    const char *bin = getenv("DDPPROF"), *scenarios = getenv("SCENARIOS");
    assert_non_null(bin);
    assert_non_null(scenarios);
    memset(a, 0, sizeof *a);
    snprintf(a->ini, sizeof a->ini, "%s/%s", scenarios, ini);
    a->v[a->n++] = bin;
    a->v[a->n++] = "run";
    a->v[a->n++] = a->ini;
    a->v[a->n++] = "-o";
    a->v[a->n++] = db;
    a->v[a->n++] = "-q";
    for (int i = 0; overrides && overrides[i] && a->n < MAX_ARGS - 4; i++) {
        a->v[a->n++] = "-s";
        a->v[a->n++] = overrides[i];
    }
    a->v[a->n] = NULL;
}

static void args_add(args *a, const char *s)
{
    assert_true(a->n < MAX_ARGS - 1);
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

/* Runs ddpprof to its end (bounded) and returns its exit code; stderr lands in p->err. */
static int ddpprof_proc(proc *p, args *a, const char *const *extra_env, const char *tag)
{
    proc_start(p, a->v, extra_env, tag);
    proc_finish(p, p->t0, RUN_DEADLINE_S, tag);
    return proc_code(p);
}

/* --- the database ------------------------------------------------------------------ */

/* The spans stored so far while the writer is still running; -1 when not readable yet. */
static int64_t spans_so_far(const char *path)
{
    if (access(path, F_OK) != 0)
        return -1;
    sqlite3 *h = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 100);
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(h, "SELECT count(*) FROM span", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
            v = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
    }
    sqlite3_close(h);
    return v;
}

/* Waits until the running p has stored at least `want` spans in db; returns the count. */
static int64_t wait_for_spans(proc *p, const char *db, int64_t want)
{
    double until = now_s() + RUN_DEADLINE_S;
    for (;;) {
        int64_t n = spans_so_far(db);
        if (n >= want)
            return n;
        if (proc_wait_until(p, now_s()))
            fail_msg("the run ended before it stored %lld spans (exit status %d)\n%s", (long long)want,
                     p->status, p->err);
        if (now_s() > until) {
            kill_everything();
            fail_msg("no %lld spans stored within %.0f s (%lld so far)", (long long)want, RUN_DEADLINE_S,
                     (long long)n);
        }
        sleep_s(0.01);
    }
}

/* The status and error of the database's last run. */
static void last_run(const char *db, char *status, size_t slen, char *error, size_t elen)
{
    db_text(db, "SELECT status FROM run ORDER BY id DESC LIMIT 1", status, slen);
    db_text(db, "SELECT coalesce(error, '') FROM run ORDER BY id DESC LIMIT 1", error, elen);
}

static void assert_contains(const char *hay, const char *needle, const char *what)
{
    if (!strstr(hay, needle))
        fail_msg("%s lacks '%s': %s", what, needle, hay);
}

/* --- processes ---------------------------------------------------------------------- */

/* The children of `parent` whose environment holds `var` (e.g. "RANK=1"). */
static pid_t child_with_env(pid_t parent, const char *var)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    pid_t found = -1;
    static char buf[262144];
    struct dirent *e;
    while (found < 0 && (e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0)
            continue;
        char st[1024];
        if (read_proc((pid_t)v, "stat", st, sizeof st) <= 0)
            continue;
        /* pid (comm) state ppid ...: comm may hold anything, so parse after the last ')'. */
        const char *rp = strrchr(st, ')');
        char state;
        int ppid;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2 || ppid != (int)parent || state == 'Z')
            continue;
        ssize_t len = read_proc((pid_t)v, "environ", buf, sizeof buf);
        for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
            if (!strcmp(buf + i, var))
                found = (pid_t)v;
    }
    closedir(d);
    return found;
}

/* A TCP port free right now on 127.0.0.1 (bound to port 0, read back, closed). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Is `prog` an executable on PATH?  Its path goes to out. */
static bool on_path(const char *prog, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(out, len, "%.*s/%s", (int)n, path, prog);
        if (n && access(out, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

/* --- fixtures ----------------------------------------------------------------------- */

static int group_teardown(void **state)
{
    kill_everything();
    return scratch_group_teardown(state);
}

/* After each test, pass or fail: nothing of it keeps running. */
static int test_teardown(void **state)
{
    (void)state;
    kill_everything();
    return 0;
}

/* --- the tests ---------------------------------------------------------------------- */

static const char *const small[] = {"run.world_size=3", "model.preset=mlp", "run.iterations=4", "run.warmup=1",
                                    NULL};

/* One process per rank gives the run that threads give: the same spans per rank and
 * kind, the same bucket assignments (initial and rebuilt), every rank's clock measured. */
static void test_processes_match_threads(void **state)
{
    (void)state;
    char tdb[320], pdb[320], vdb[320];
    scratch_path(tdb, sizeof tdb, "threads.sqlite");
    scratch_path(pdb, sizeof pdb, "processes.sqlite");
    scratch_path(vdb, sizeof vdb, "verify.sqlite");
    proc p;
    args a;
    ddpprof_args(&a, "baseline.ini", tdb, small);
    args_add(&a, "-s");
    args_add(&a, "run.ranks=threads");
    if (ddpprof_proc(&p, &a, NULL, "threads") != 0)
        fail_msg("threads run failed: %s", p.err);
    ddpprof_args(&a, "baseline.ini", pdb, small);
    args_add(&a, "-s");
    args_add(&a, "run.ranks=processes");
    if (ddpprof_proc(&p, &a, NULL, "processes") != 0)
        fail_msg("processes run failed: %s", p.err);
    assert_nothing_left("after a processes run");

    char status[32], error[1024];
    const char *dbs[] = {tdb, pdb};
    for (int i = 0; i < 2; i++) {
        last_run(dbs[i], status, sizeof status, error, sizeof error);
        assert_string_equal(status, "complete");
        assert_int_equal(db_int(dbs[i], "SELECT count(*) FROM run"), 1);
        assert_int_equal(db_int(dbs[i], "SELECT count(DISTINCT rank) FROM span"), 3);
    }
    char ranks[64];
    db_text(pdb, "SELECT ranks FROM run", ranks, sizeof ranks);
    assert_string_equal(ranks, "processes");

    static char tspans[8192], pspans[8192], tbk[16384], pbk[16384];
    const char *spans_sql = "SELECT group_concat(rank || ':' || kind || ':' || n, ',') FROM "
                            "(SELECT rank, kind, count(*) AS n FROM span GROUP BY rank, kind ORDER BY rank, kind)";
    db_text(tdb, spans_sql, tspans, sizeof tspans);
    db_text(pdb, spans_sql, pspans, sizeof pspans);
    assert_true(strlen(tspans) > 0);
    if (strcmp(tspans, pspans))
        fail_msg("spans per rank and kind differ:\n threads:   %s\n processes: %s", tspans, pspans);
    const char *bk_sql = "SELECT group_concat(version || '/' || idx || '/' || nbytes || '/' || nparams || '/' || "
                         "coalesce(size_limit, '-') || '/' || params, ';') FROM "
                         "(SELECT * FROM bucket ORDER BY version, idx)";
    db_text(tdb, bk_sql, tbk, sizeof tbk);
    db_text(pdb, bk_sql, pbk, sizeof pbk);
    if (strcmp(tbk, pbk))
        fail_msg("buckets differ:\n threads:   %s\n processes: %s", tbk, pbk);
    assert_int_equal(db_int(pdb, "SELECT count(DISTINCT version) FROM bucket WHERE version IN (0, 1)"), 2);

    /* Every rank's clock offset was measured, to better than 5 ms. */
    assert_int_equal(db_int(pdb, "SELECT count(*) FROM rank"), 3);
    assert_int_equal(db_int(pdb, "SELECT count(*) FROM rank WHERE clock_offset_ns IS NOT NULL AND "
                                 "clock_uncertainty_ns IS NOT NULL AND clock_uncertainty_ns >= 0 AND "
                                 "clock_uncertainty_ns < 5000000"),
                     3);

    ddpprof_args(&a, "baseline.ini", vdb, small);
    args_add(&a, "-s");
    args_add(&a, "run.ranks=processes");
    args_add(&a, "--verify");
    if (ddpprof_proc(&p, &a, NULL, "verify") != 0)
        fail_msg("--verify with processes failed: %s", p.err);
    last_run(vdb, status, sizeof status, error, sizeof error);
    assert_string_equal(status, "complete");
    assert_nothing_left("after a --verify processes run");
}

/* A collective timeout far beyond the bounds below (and long enough for three rank
 * processes to start on a loaded machine: under TSan one took over 2 s to reach the first
 * collective): a killed rank and a signal end the run without it. */
static const char *const longer[] = {"run.world_size=3", "model.preset=resnet18", "device.preset=h100",
                                     "model.batch=8",    "run.iterations=20",     "run.ranks=processes",
                                     "run.timeout_s=60", NULL};

/* A rank process killed outright: named with its signal, the rest stopped and reaped,
 * what was recorded before kept. */
static void test_rank_killed(void **state)
{
    (void)state;
    char db[320];
    scratch_path(db, sizeof db, "killed.sqlite");
    proc p;
    args a;
    ddpprof_args(&a, "baseline.ini", db, longer);
    proc_start(&p, a.v, NULL, "killed");
    int64_t before = wait_for_spans(&p, db, 3000);
    pid_t victim = -1;
    double until = now_s() + 10;
    while ((victim = child_with_env(p.pid, "RANK=1")) < 0 && now_s() < until && !proc_wait_until(&p, now_s()))
        sleep_s(0.01);
    if (victim < 0) {
        kill_everything();
        fail_msg("no child process of ddpprof (pid %d) has RANK=1 in its environment", (int)p.pid);
    }
    assert_int_equal(kill(victim, SIGKILL), 0);
    double killed_at = now_s();
    /* The others, inside a collective with it, are killed after the coordinator's 2 s of
     * grace (DEAD_PEER_GRACE_S), not held to the 60 s timeout. */
    proc_finish(&p, killed_at, (2.0 + 3.0) * test_slowdown(), "ddpprof after its rank 1 was killed with SIGKILL");
    print_message("ended %.3f s after rank 1 (pid %d) was killed, %lld spans stored before\n", now_s() - killed_at,
                  (int)victim, (long long)before);
    assert_int_equal(proc_code(&p), 1);
    assert_nothing_left("after a rank was killed");
    char status[32], error[1024];
    last_run(db, status, sizeof status, error, sizeof error);
    assert_string_equal(status, "failed");
    assert_contains(error, "rank 1", "the run's error");
    assert_contains(error, "signal 9", "the run's error");
    assert_contains(p.err, "rank 1", "stderr");
    assert_true(db_int(db, "SELECT count(*) FROM span") >= before);
}

/* [fault] hang / exit / error on one rank process: detected within run.timeout_s, the
 * rank named, no process left. */
static void test_faults(void **state)
{
    (void)state;
    static const struct {
        const char *mode, *rank, *want;
    } cases[] = {
        {"fault.mode=hang", "fault.rank=1", "rank 1"},
        {"fault.mode=exit", "fault.rank=2", "rank 2"},
        {"fault.mode=error", "fault.rank=0", "rank 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char db[320], tag[32];
        snprintf(tag, sizeof tag, "fault%zu", i);
        snprintf(db, sizeof db, "%s/%s.sqlite", scratch_dir(), tag);
        const char *const ov[] = {"run.world_size=3", "model.preset=mlp", "run.iterations=4", "run.warmup=1",
                                  "run.ranks=processes", "run.timeout_s=1", cases[i].mode, cases[i].rank,
                                  "fault.iter=1", NULL};
        proc p;
        args a;
        ddpprof_args(&a, "baseline.ini", db, ov);
        proc_start(&p, a.v, NULL, tag);
        /* A clean run of this takes about a second: timeout_s plus a few is the bound. */
        proc_finish(&p, p.t0, (1.0 + 5.0) * test_slowdown(), cases[i].mode);
        print_message("%s: ended after %.3f s\n", cases[i].mode, now_s() - p.t0);
        assert_int_equal(proc_code(&p), 1);
        assert_nothing_left(cases[i].mode);
        char status[32], error[1024];
        last_run(db, status, sizeof status, error, sizeof error);
        assert_string_equal(status, "failed");
        assert_contains(error, cases[i].want, cases[i].mode);
        assert_contains(p.err, cases[i].want, "stderr");
    }
}

/* SIGINT or SIGTERM to the parent: it ends within 2 s, the run is marked interrupted,
 * the rank processes are gone. */
static void test_signals(void **state)
{
    (void)state;
    const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        char db[320], tag[32];
        snprintf(tag, sizeof tag, "signal%d", sigs[i]);
        snprintf(db, sizeof db, "%s/%s.sqlite", scratch_dir(), tag);
        proc p;
        args a;
        ddpprof_args(&a, "baseline.ini", db, longer);
        proc_start(&p, a.v, NULL, tag);
        wait_for_spans(&p, db, 300);
        assert_int_equal(kill(p.pid, sigs[i]), 0);
        double sent = now_s();
        proc_finish(&p, sent, 2.0, sigs[i] == SIGINT ? "ddpprof after SIGINT" : "ddpprof after SIGTERM");
        print_message("signal %d: ended %.3f s after it\n", sigs[i], now_s() - sent);
        assert_int_equal(proc_code(&p), 1);
        assert_nothing_left(sigs[i] == SIGINT ? "after SIGINT" : "after SIGTERM");
        char status[32], error[1024];
        last_run(db, status, sizeof status, error, sizeof error);
        assert_string_equal(status, "failed");
        assert_contains(error, "interrupted", "the run's error");
    }
}

/* Starts `world` ranks as torchrun would (RANK, WORLD_SIZE, LOCAL_*, MASTER_*), rank
 * `skew_rank` with DDPPROF_CLOCK_SKEW_NS=skew_ns (none when skew_rank < 0), and waits
 * for them all. */
static void torchrun_shaped(proc *ps, int world, const char *db, const char *const *overrides, int skew_rank,
                            const char *skew_ns)
{
    int port = free_port();
    static char vars[8][6][64];
    for (int r = 0; r < world; r++) {
        snprintf(vars[r][0], sizeof vars[r][0], "RANK=%d", r);
        snprintf(vars[r][1], sizeof vars[r][1], "WORLD_SIZE=%d", world);
        snprintf(vars[r][2], sizeof vars[r][2], "LOCAL_RANK=%d", r);
        snprintf(vars[r][3], sizeof vars[r][3], "LOCAL_WORLD_SIZE=%d", world);
        snprintf(vars[r][4], sizeof vars[r][4], "MASTER_PORT=%d", port);
        snprintf(vars[r][5], sizeof vars[r][5], "DDPPROF_CLOCK_SKEW_NS=%s", r == skew_rank ? skew_ns : "0");
        const char *env[] = {vars[r][0], vars[r][1], vars[r][2],         vars[r][3],
                             vars[r][4], vars[r][5], "MASTER_ADDR=127.0.0.1", NULL};
        args a;
        ddpprof_args(&a, "baseline.ini", db, overrides);
        char tag[32];
        snprintf(tag, sizeof tag, "torchrun-rank%d", r);
        proc_start(&ps[r], a.v, env, tag);
    }
    for (int r = 0; r < world; r++)
        proc_finish(&ps[r], ps[0].t0, RUN_DEADLINE_S, "a rank under a torchrun-shaped environment");
    assert_nothing_left("after torchrun-shaped ranks");
}

static void assert_whole_run(const char *db, int world)
{
    char status[32], error[1024], ranks[64];
    assert_int_equal(db_int(db, "SELECT count(*) FROM run"), 1);
    last_run(db, status, sizeof status, error, sizeof error);
    if (strcmp(status, "complete"))
        fail_msg("run is '%s': %s", status, error);
    db_text(db, "SELECT ranks FROM run", ranks, sizeof ranks);
    assert_string_equal(ranks, "processes");
    assert_int_equal(db_int(db, "SELECT world_size FROM run"), world);
    assert_int_equal(db_int(db, "SELECT count(DISTINCT rank) FROM span"), world);
    /* Every rank has its forward, backward and allreduce spans. */
    assert_int_equal(db_int(db, "SELECT count(*) FROM (SELECT rank FROM span GROUP BY rank HAVING "
                                "sum(kind = 'forward') > 0 AND sum(kind = 'backward') > 0 AND "
                                "sum(kind = 'allreduce') > 0)"),
                     world);
    assert_int_equal(db_int(db, "SELECT count(*) FROM rank WHERE clock_offset_ns IS NOT NULL"), world);
}

/* Ranks started by an outside launcher: rank 0 hosts the coordinator on MASTER_PORT and
 * writes the whole run; a launcher whose world disagrees with the scenario is refused. */
static void test_torchrun_environment(void **state)
{
    (void)state;
    char db[320];
    scratch_path(db, sizeof db, "torchrun.sqlite");
    proc ps[3];
    torchrun_shaped(ps, 3, db, small, -1, NULL);
    for (int r = 0; r < 3; r++)
        if (proc_code(&ps[r]) != 0)
            fail_msg("rank %d exited %d: %s", r, proc_code(&ps[r]), ps[r].err);
    assert_whole_run(db, 3);

    char bad[320];
    scratch_path(bad, sizeof bad, "mismatch.sqlite");
    int port = free_port();
    char pv[32];
    snprintf(pv, sizeof pv, "MASTER_PORT=%d", port);
    proc q[2];
    for (int r = 0; r < 2; r++) {
        const char *env[] = {r ? "RANK=1" : "RANK=0", "WORLD_SIZE=2", r ? "LOCAL_RANK=1" : "LOCAL_RANK=0",
                             "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", pv, NULL};
        args a;
        ddpprof_args(&a, "baseline.ini", bad, small); /* run.world_size=3 */
        proc_start(&q[r], a.v, env, r ? "mismatch1" : "mismatch0");
    }
    for (int r = 0; r < 2; r++) {
        proc_finish(&q[r], q[0].t0, 20.0, "a rank whose WORLD_SIZE disagrees with run.world_size");
        if (proc_code(&q[r]) != 2)
            fail_msg("rank %d exited %d, not 2: %s", r, proc_code(&q[r]), q[r].err);
        assert_contains(q[r].err, "world_size", "stderr");
        assert_contains(q[r].err, "WORLD_SIZE", "stderr");
    }
    assert_int_not_equal(access(bad, F_OK), 0); /* nothing was written */
    assert_nothing_left("after a world size mismatch");
}

/* Rank 2's clock 5 s ahead: the coordinator measures the offset and puts its spans
 * back on the run's clock. */
static void test_clock_skew_realigned(void **state)
{
    (void)state;
    char db[320];
    scratch_path(db, sizeof db, "skew.sqlite");
    proc ps[3];
    torchrun_shaped(ps, 3, db, small, 2, "5000000000");
    for (int r = 0; r < 3; r++)
        if (proc_code(&ps[r]) != 0)
            fail_msg("rank %d exited %d: %s", r, proc_code(&ps[r]), ps[r].err);
    assert_whole_run(db, 3);
    int64_t off[3], unc[3];
    for (int r = 0; r < 3; r++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT clock_offset_ns FROM rank WHERE rank = %d", r);
        off[r] = db_int(db, sql);
        snprintf(sql, sizeof sql, "SELECT clock_uncertainty_ns FROM rank WHERE rank = %d", r);
        unc[r] = db_int(db, sql);
    }
    print_message("clock offsets: %lld, %lld, %lld ns (uncertainty %lld, %lld, %lld ns)\n", (long long)off[0],
                  (long long)off[1], (long long)off[2], (long long)unc[0], (long long)unc[1], (long long)unc[2]);
    assert_true(llabs(off[0]) < 5000000);
    assert_true(llabs(off[1]) < 5000000);
    assert_true(llabs(off[2] - 5000000000LL) < 5000000);
    int64_t f0 = db_int(db, "SELECT min(start_ns) FROM span WHERE rank = 0 AND kind = 'forward'");
    int64_t f2 = db_int(db, "SELECT min(start_ns) FROM span WHERE rank = 2 AND kind = 'forward'");
    print_message("first forward: rank 0 at %lld ns, rank 2 at %lld ns\n", (long long)f0, (long long)f2);
    assert_true(llabs(f2 - f0) < 200000000);
}

/* Open MPI's mpirun starting two ranks: OMPI_COMM_WORLD_* tell each its rank. */
static void test_real_mpirun(void **state)
{
    (void)state;
    char mpirun[512];
    if (!on_path("mpirun", mpirun, sizeof mpirun) && geteuid() == 0 && on_path("apt-get", mpirun, sizeof mpirun)) {
        print_message("mpirun is not installed: installing Debian's openmpi-bin\n");
        const char *const argv[] = {"sh", "-c",
                                    "export DEBIAN_FRONTEND=noninteractive; "
                                    "apt-get -q -y --no-install-recommends install openmpi-bin || "
                                    "{ apt-get -q update && apt-get -q -y --no-install-recommends install "
                                    "openmpi-bin; }",
                                    NULL};
        proc p;
        proc_start(&p, argv, NULL, "apt-get");
        if (!proc_wait_until(&p, p.t0 + 300)) {
            kill(p.pid, SIGKILL);
            waitpid(p.pid, NULL, 0);
        }
    }
    if (!on_path("mpirun", mpirun, sizeof mpirun)) {
        print_message("skipped: mpirun is not on PATH and could not be installed (Debian: apt-get install "
                      "openmpi-bin, as root)\n");
        skip();
    }
    char db[320], port[48];
    scratch_path(db, sizeof db, "mpirun.sqlite");
    snprintf(port, sizeof port, "MASTER_PORT=%d", free_port());
    const char *const ov[] = {"run.world_size=2", "model.preset=mlp", "run.iterations=3", "run.warmup=1", NULL};
    args inner;
    ddpprof_args(&inner, "baseline.ini", db, ov);
    const char *argv[MAX_ARGS + 8];
    int n = 0;
    argv[n++] = mpirun;
    argv[n++] = "--allow-run-as-root";
    argv[n++] = "--oversubscribe";
    argv[n++] = "-np";
    argv[n++] = "2";
    argv[n++] = "-x";
    argv[n++] = port;
    for (int i = 0; inner.v[i]; i++)
        argv[n++] = inner.v[i];
    argv[n] = NULL;
    proc p;
    proc_start(&p, argv, NULL, "mpirun");
    proc_finish(&p, p.t0, RUN_DEADLINE_S, "mpirun -np 2 ddpprof run");
    if (proc_code(&p) != 0)
        fail_msg("mpirun exited %d: %s", proc_code(&p), p.err);
    assert_nothing_left("after mpirun");
    assert_whole_run(db, 2);
}

/* PyTorch's own launcher, when Debian's python3-torch is installed.  Its static
 * rendezvous: the agent's own store holds --master_port, so the coordinator must take the
 * next one (TORCHELASTIC_USE_AGENT_STORE).  --redirects 2 --tee 2: torch 1.13's default
 * of 0 trips over Python 3.11's IntFlag iteration (Std.from_str("0") gives None). */
static void test_real_torchrun(void **state)
{
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0) {
        print_message("skipped: no /usr/bin/python3, so no torchrun\n");
        skip();
    }
    const char *const probe[] = {"/usr/bin/python3", "-c", "import torch.distributed.run", NULL};
    proc p;
    proc_start(&p, probe, NULL, "torch-probe");
    proc_finish(&p, p.t0, 60.0, "python3 -c 'import torch.distributed.run'");
    if (proc_code(&p) != 0) {
        print_message("skipped: torch.distributed.run is not importable by /usr/bin/python3 (Debian's "
                      "python3-torch is not installed)\n");
        skip();
    }
    char db[320];
    scratch_path(db, sizeof db, "torchrun-real.sqlite");
    const char *const ov[] = {"run.world_size=2", "model.preset=mlp", "run.iterations=3", "run.warmup=1", NULL};
    args inner;
    ddpprof_args(&inner, "baseline.ini", db, ov);
    const char *argv[MAX_ARGS + 8];
    int n = 0;
    argv[n++] = "/usr/bin/python3";
    argv[n++] = "-m";
    argv[n++] = "torch.distributed.run";
    char master[32];
    snprintf(master, sizeof master, "--master_port=%d", free_port());
    argv[n++] = master;
    argv[n++] = "--nnodes=1";
    argv[n++] = "--redirects";
    argv[n++] = "2";
    argv[n++] = "--tee";
    argv[n++] = "2";
    argv[n++] = "--nproc_per_node=2";
    argv[n++] = "--no_python";
    for (int i = 0; inner.v[i]; i++)
        argv[n++] = inner.v[i];
    argv[n] = NULL;
    proc_start(&p, argv, NULL, "torchrun");
    proc_finish(&p, p.t0, RUN_DEADLINE_S, "torchrun --nproc_per_node=2 ddpprof run");
    if (proc_code(&p) != 0)
        fail_msg("torchrun exited %d: %s", proc_code(&p), p.err);
    assert_nothing_left("after torchrun");
    assert_whole_run(db, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_processes_match_threads, test_teardown),
        cmocka_unit_test_teardown(test_rank_killed, test_teardown),
        cmocka_unit_test_teardown(test_faults, test_teardown),
        cmocka_unit_test_teardown(test_signals, test_teardown),
        cmocka_unit_test_teardown(test_torchrun_environment, test_teardown),
        cmocka_unit_test_teardown(test_clock_skew_realigned, test_teardown),
        cmocka_unit_test_teardown(test_real_mpirun, test_teardown),
        cmocka_unit_test_teardown(test_real_torchrun, test_teardown),
    };
    return cmocka_run_group_tests(tests, scratch_group_setup, group_teardown);
}
