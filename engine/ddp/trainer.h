/* trainer.h — one rank's training loop (the host thread of the stream program).
 *
 * Contract: runs warm-up plus measured iterations: forward (one op per layer), backward
 * (one op per layer, last layer first, each producing its parameters' gradients, then
 * handing them to the reducer), the reducer's finalisation, the optimizer step, then
 * the host waits for the compute stream (a host `wait` span).  With no_sync_every = k,
 * only every k-th step synchronises and steps the optimizer; the others accumulate.
 * A [fault] for this rank is enacted at its iteration.  Returns 0, or -1 with err.
 */
#ifndef DDPPROF_TRAINER_H
#define DDPPROF_TRAINER_H

#include <stdatomic.h>

#include "engine/device.h"
#include "engine/workload/model_zoo.h"
#include "profiler/recorder.h"
#include "engine/ddp/param_tables.h"
#include "engine/ddp/reducer.h"
#include "engine/scenario/scenario.h"

/* Called on the host after each synchronised step, streams idle: `params` hold the
 * averaged gradients.  Returns 0, or -1 with err to fail the run. */
typedef int (*trainer_sync_hook)(void *user, int rank, int iter, int micro_first, int micro_last,
                                 const dev_param *params, int nparams, char *err, size_t errlen);

typedef struct {
    const scenario *sc;
    const model *m;
    device *dev;
    span_ring *host_ring;
    atomic_int *progress;        /* iterations completed by this rank (may be NULL) */
    atomic_bool *stop_requested; /* set by the launcher when the run is aborted */
    /* Called once when this rank fails, before it drains its streams, so the other
     * ranks stop waiting for it. */
    void (*abort_run)(void *user, const char *why);
    void *abort_user;
    trainer_sync_hook on_sync;
    void *on_sync_user;
    /* The world's shared per-parameter tables (param_tables.h), or NULL; used only on a
     * device without buffers. */
    param_tables *shared;
    /* Whether to hand out the bucket assignments below: the launcher reads one rank's, and
     * a copy kept by every finished rank of a large world adds up. */
    bool keep_assignments;
    /* Out: the bucket assignments (owned by the trainer until trainer_result_free). */
    bucket_assignment initial, rebuilt;
    int rebuilt_valid;
} trainer_args;

int trainer_run(trainer_args *a, char *err, size_t errlen);
/* Whether iteration `iter`'s backwards add to the gradients rather than write them: with
 * no_sync_every = k, all but the first of each k steps. */
bool trainer_accumulates(const scenario *sc, int iter);
void trainer_result_free(trainer_args *a);

#endif
