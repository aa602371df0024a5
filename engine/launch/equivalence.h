/* equivalence.h — is DDP on N ranks the same training as one rank on the global batch?
 *
 * Contract: equivalence_run() trains, from the same initial weights on the same global
 * batch (model.global_batch, or model.batch x world_size) for the scenario's steps:
 *   reference      world_size 1 (one rank holds the whole global batch)
 *   ddp            the scenario's N ranks (also when given as nodes x gpus_per_node)
 *   hand-written   N ranks, ddp.sync = manual (allreduce every gradient after backward,
 *                  then divide)
 *   and, with loss_reduction = sum, the two fixes: loss x N and lr x N.
 * Each training is a run of its own in the database; after each, every rank's final
 * weights are compared with the reference's: max |w - w_ref|, that difference relative
 * to the largest weight change of the reference (rel_to_update), the ratio of the
 * update norms |w - w0| / |w_ref - w0| (1 when equivalent, 1/N for an unscaled sum
 * loss), and the largest difference between replicas.  Rows go to table equivalence
 * (store.h), group_id = the reference's run id.  Returns 0 when every training
 * completed, 1 when one failed at run time, -1 when nothing could be recorded (err).
 */
#ifndef DDPPROF_EQUIVALENCE_H
#define DDPPROF_EQUIVALENCE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "engine/scenario/scenario.h"
#include "profiler/store.h"

/* Differences below this fraction of the reference's largest weight change are fp32
 * rounding (summation order of the per-rank partial gradients). */
#define EQUIVALENCE_ROUNDING 1e-4
/* ...or below this many fp32 ulps of the largest weight per step taken: a small update
 * (a low learning rate, a wide layer) makes the first bound stricter than fp32 is. */
#define EQUIVALENCE_ULPS_PER_STEP 16

int equivalence_run(const scenario *sc, store *st, const backend_ops *be, const launch_options *base,
                    int64_t *group_id, char *err, size_t errlen);

#endif
