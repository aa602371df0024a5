/* rank_process.h — this process is one rank of a run whose ranks are processes.
 *
 * Contract: rank_process_run() joins the run's coordinator at master_addr:master_port
 * (as rendezvous rank rank + 1), learns the run id, the shared world and the clock
 * origin, and its own clock offset; runs its rank (launch_threads.h) in the shared world
 * with every span put on the run's clock and streamed to the coordinator as it is
 * recorded; then says it is done (with its span count; rank 0 first sends its rebuilt
 * bucket assignment) or that it failed, with the reason.  An abort by any process, an
 * interrupt or the coordinator going away stops it.  clock_skew_ns shifts this
 * process's clock as the rendezvous and the spans see it (tests: the offset measured
 * must cancel it).  res gets the run id, completion and error.  Returns 0 when the rank
 * completed, 1 when it failed, -1 when it could not take part (err says why).
 */
#ifndef DDPPROF_RANK_PROCESS_H
#define DDPPROF_RANK_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"

typedef struct {
    const scenario *sc;
    const model *m;
    const launch_options *opt;
    const backend_ops *be;
    int rank;
    const char *master_addr;
    int master_port;
    int64_t clock_skew_ns;
} rank_process_args;

int rank_process_run(const rank_process_args *a, launch_result *res, char *err, size_t errlen);

#endif
