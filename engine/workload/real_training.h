/* real_training.h — one rank's real training of the mlp preset, as trainer hooks.
 *
 * Contract: applies when model.compute = real and model.preset = mlp.  init() sets the
 * parameters to their seeded initial values (identical on every rank, as DDP's
 * construction broadcast makes them) and allocates the rank's activations for its
 * per-rank batch (dataset.h).  begin_step(step) loads the rank's samples of that step
 * (the host calls it while the streams are idle); forward_op() and backward_op() turn
 * a layer's timed op into the real work (mlp_math.h) on the parameters' current data
 * and gradient buffers.  The gradients the reducer then averages are the real ones.
 */
#ifndef DDPPROF_REAL_TRAINING_H
#define DDPPROF_REAL_TRAINING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/device.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"

typedef struct real_training real_training;

bool real_training_applies(const scenario *sc);
/* Returns 0 with *out set, or -1 with err (also when `stop`, which may be NULL, was set
 * while the weights were being initialised). */
int real_training_init(real_training **out, const scenario *sc, const model *m, int rank, int world,
                       dev_param *params, atomic_bool *stop, char *err, size_t errlen);
void real_training_free(real_training *rt);

/* The step's samples (the rank's share of the global batch) into the activations: a
 * large batch takes a good part of a second, so `stop` (may be NULL) is asked between
 * samples; -1 when it was set. */
int real_training_begin_step(real_training *rt, int step, atomic_bool *stop);
void real_training_forward_op(real_training *rt, dev_op *op, int layer, const dev_param *params);
void real_training_backward_op(real_training *rt, dev_op *op, int layer, const dev_param *params, bool accumulate);

/* Every parameter's initial value, flat in registration order (m->total_numel floats). */
void real_training_initial_weights(const scenario *sc, const model *m, float *flat);

/* The loss of the rank's last forward (as reduced and scaled). */
double real_training_loss(const real_training *rt);

#endif
