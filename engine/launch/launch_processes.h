/* launch_processes.h — a run whose ranks are processes that ddpprof starts itself.
 *
 * Contract: launch_processes() opens the run's coordinator on 127.0.0.1 (a free port),
 * starts world_size processes of this program (opt->self_argv, found through
 * /proc/self/exe) with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
 * LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) plus DDPPROF_COORDINATOR=1 (a coordinator
 * already listens: join it) and DDPPROF_SWEEP_POINT, lets the coordinator gather and
 * watch them (coordinator.h), and reaps every one of them before it returns: no
 * process is left behind, a straggler is killed.  Returns as launch_run() does.
 */
#ifndef DDPPROF_LAUNCH_PROCESSES_H
#define DDPPROF_LAUNCH_PROCESSES_H

#include "engine/backend.h"
#include "engine/launch/launcher.h"

int launch_processes(const scenario *sc, const model *m, store *st, const backend_ops *be, const launch_options *opt,
                     launch_result *res, char *err, size_t errlen);

#endif
