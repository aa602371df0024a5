/* dataset.h — the seeded synthetic data of real training and its split over ranks.
 *
 * Contract: every value is a pure function of (seed, stream, index), so any rank, any
 * world size and a test in another language can regenerate it: dataset_uniform() is
 * k / 2^23 - 1 for a 24-bit k drawn with splitmix64, exact in fp32, in [-1, 1).
 * Sample i of the data set has `width` inputs and either `width` regression targets
 * (mse) or one class in [0, width) (cross_entropy).  The split is DistributedSampler's
 * with shuffle = False: the global order is 0, 1, 2, ...; step s covers the global batch
 * [s*G, (s+1)*G) and rank r of N takes its elements r, r+N, r+2N, ... (G = N x per-rank
 * batch), so the union over ranks of one step is exactly the world-size-1 batch.
 * Initial weights are nn.Linear's default distribution, U(-1/sqrt(in), 1/sqrt(in)) for
 * weight and bias, drawn from streams of their own: the same on every rank, as DDP's
 * construction broadcast of rank 0's state makes them.
 */
#ifndef DDPPROF_DATASET_H
#define DDPPROF_DATASET_H

#include <stdint.h>

#include "engine/scenario/scenario.h"

float dataset_uniform(uint64_t seed, uint64_t stream, uint64_t index);

/* x[width]; target[width] for mse, target[0] = class (as a float) for cross_entropy. */
void dataset_sample(uint64_t seed, int width, loss_fn_kind loss, int64_t index, float *x, float *target);

/* Index of element j of rank `rank`'s batch at `step` (DistributedSampler, shuffle off). */
int64_t dataset_index(int step, int rank, int world, int per_rank_batch, int j);

/* Samples per rank per step: global_batch / world_size when global_batch is set, else batch. */
int dataset_per_rank_batch(const scenario *sc);

/* Initial value of element i of parameter p of a layer with `fan_in` inputs. */
float dataset_init_weight(uint64_t seed, int p, int64_t i, int64_t fan_in);

#endif
