/* launch_processes.c — starts the rank processes, has the coordinator watch them,
 * reaps them (see launch_processes.h). */
#include "engine/launch/launch_processes.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/launch/coordinator.h"

extern char **environ;

/* environ without the variables set here, plus ours; `extra` is NULL-terminated. */
static char **child_env(char *const *extra, int nextra)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + (size_t)nextra + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool ours = false;
        for (int j = 0; j < nextra && !ours; j++) {
            size_t name = (size_t)(strchr(extra[j], '=') - extra[j]);
            ours = !strncmp(environ[i], extra[j], name + 1);
        }
        if (!ours)
            env[k++] = environ[i];
    }
    for (int j = 0; j < nextra; j++)
        env[k++] = extra[j];
    env[k] = NULL;
    return env;
}

static int spawn_rank(const launch_options *opt, int rank, int world, int port, pid_t *pid, char *err, size_t errlen)
{
    char v[8][64];
    snprintf(v[0], sizeof v[0], "RANK=%d", rank);
    snprintf(v[1], sizeof v[1], "WORLD_SIZE=%d", world);
    snprintf(v[2], sizeof v[2], "LOCAL_RANK=%d", rank);
    snprintf(v[3], sizeof v[3], "LOCAL_WORLD_SIZE=%d", world);
    snprintf(v[4], sizeof v[4], "MASTER_ADDR=127.0.0.1");
    snprintf(v[5], sizeof v[5], "MASTER_PORT=%d", port);
    snprintf(v[6], sizeof v[6], "DDPPROF_COORDINATOR=1");
    snprintf(v[7], sizeof v[7], "DDPPROF_SWEEP_POINT=%d", opt->sweep_point);
    char *extra[8];
    for (int i = 0; i < 8; i++)
        extra[i] = v[i];
    char **env = child_env(extra, 8);
    if (!env) {
        snprintf(err, errlen, "out of memory starting rank %d", rank);
        return -1;
    }
    int rc = posix_spawn(pid, "/proc/self/exe", NULL, NULL, opt->self_argv, env);
    free(env);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start rank %d's process: %s", rank, strerror(rc));
        return -1;
    }
    return 0;
}

/* Waits for every child; after `grace` seconds the rest are killed. */
static void reap(pid_t *pids, int n, double grace)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int left = 0;
    for (int i = 0; i < n; i++)
        left += pids[i] > 0;
    bool killed = false;
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            if (pids[i] <= 0)
                continue;
            pid_t w = waitpid(pids[i], NULL, WNOHANG);
            if (w == pids[i] || (w < 0 && errno == ECHILD)) {
                pids[i] = 0;
                left--;
            }
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
        if (!killed && el > grace) {
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], SIGKILL);
            killed = true;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

int launch_processes(const scenario *sc, const model *m, store *st, const backend_ops *be, const launch_options *opt,
                     launch_result *res, char *err, size_t errlen)
{
    coordinator *c = NULL;
    coordinator_args ca = {.sc = sc, .m = m, .st = st, .opt = opt, .be = be, .bind_addr = "127.0.0.1", .port = 0};
    if (coordinator_open(&ca, &c, err, errlen) != 0)
        return -1;
    int world = sc->world_size;
    pid_t *pids = calloc((size_t)world, sizeof *pids);
    int started = 0;
    char why[512] = "";
    if (!pids)
        snprintf(why, sizeof why, "out of memory");
    for (int r = 0; pids && r < world; r++) {
        if (spawn_rank(opt, r, world, coordinator_port(c), &pids[r], why, sizeof why) != 0)
            break;
        started++;
    }
    if (started == world)
        coordinator_serve(c, pids, world);
    else
        coordinator_fail(c, why);
    if (pids)
        reap(pids, started, sc->timeout_s + 5.0);
    free(pids);
    return coordinator_close(c, res, err, errlen);
}
