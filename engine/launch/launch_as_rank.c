/* launch_as_rank.c — one rank of a run in this process, and under an outside
 * launcher rank 0's coordinator beside it (see launch_as_rank.h). */
#include "common/textcopy.h"
#include "engine/launch/launch_as_rank.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch/coordinator.h"
#include "engine/launch/rank_process.h"

static void *serve_main(void *arg)
{
    coordinator_serve(arg, NULL, 0);
    return NULL;
}

/* Test hook: DDPPROF_CLOCK_SKEW_NS shifts this rank's clock, to show it realigned. */
static int64_t clock_skew(void)
{
    const char *s = getenv("DDPPROF_CLOCK_SKEW_NS");
    return s ? strtoll(s, NULL, 10) : 0;
}

/* torchrun's agent hosts its own store on MASTER_PORT and says so to its workers; the
 * coordinator then takes the next port, the same on every rank. */
static int coordinator_port_of(const launch_env *env)
{
    const char *agent_store = getenv("TORCHELASTIC_USE_AGENT_STORE");
    bool taken = env->kind == LAUNCH_TORCHRUN && agent_store && !strcmp(agent_store, "True");
    return taken && env->master_port < 65535 ? env->master_port + 1 : env->master_port;
}

int launch_as_rank(const scenario *sc, const model *m, const launch_env *env, bool host_coordinator, store *st,
                   const backend_ops *be, const launch_options *opt, launch_result *res, char *err, size_t errlen)
{
    rank_process_args ra = {.sc = sc,
                            .m = m,
                            .opt = opt,
                            .be = be,
                            .rank = env->rank,
                            .master_addr = env->master_addr,
                            .master_port = coordinator_port_of(env),
                            .clock_skew_ns = clock_skew()};
    if (!host_coordinator || env->rank != 0)
        return rank_process_run(&ra, res, err, errlen);

    coordinator *c = NULL;
    coordinator_args ca = {.sc = sc, .m = m, .st = st, .opt = opt, .be = be, .bind_addr = NULL,
                           .port = coordinator_port_of(env)};
    if (coordinator_open(&ca, &c, err, errlen) != 0)
        return -1;
    pthread_t th;
    int prc = pthread_create(&th, NULL, serve_main, c);
    if (prc != 0) {
        char why[128];
        snprintf(why, sizeof why, "cannot start the coordinator's thread: %s", strerror(prc));
        coordinator_fail(c, why);
        return coordinator_close(c, res, err, errlen);
    }
    launch_result mine;
    char rank_err[512];
    if (rank_process_run(&ra, &mine, rank_err, sizeof rank_err) < 0) {
        char why[600];
        snprintf(why, sizeof why, "rank 0: %s", rank_err);
        coordinator_fail(c, why);
    }
    if (pthread_join(th, NULL) != 0)
        coordinator_fail(c, "cannot join the coordinator's thread");
    return coordinator_close(c, res, err, errlen);
}
