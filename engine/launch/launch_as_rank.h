/* launch_as_rank.h — this process is one rank, started by a launcher (torchrun, srun,
 * mpirun) or by ddpprof itself.
 *
 * Contract: launch_as_rank() runs this process's rank of one run (rank_process.h).
 * When a launcher other than ddpprof started the ranks (`host_coordinator`), rank 0 also
 * hosts the run's coordinator (coordinator.h) in a thread, listening on every interface
 * at master_port (master_port + 1 under torchrun when its agent's own store holds
 * master_port, as TORCHELASTIC_USE_AGENT_STORE=True says): it records the run into `st` (rank 0 only) and gathers every rank's
 * spans, so rank 0's res describes the whole run.  Other ranks' res describe their own
 * part.  Returns as launch_run() does.
 */
#ifndef DDPPROF_LAUNCH_AS_RANK_H
#define DDPPROF_LAUNCH_AS_RANK_H

#include <stdbool.h>

#include "engine/backend.h"
#include "engine/launch/launch_env.h"
#include "engine/launch/launcher.h"

int launch_as_rank(const scenario *sc, const model *m, const launch_env *env, bool host_coordinator, store *st,
                   const backend_ops *be, const launch_options *opt, launch_result *res, char *err, size_t errlen);

#endif
