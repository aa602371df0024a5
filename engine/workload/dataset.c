/* dataset.c — seeded samples, initial weights and DistributedSampler's split (dataset.h). */
#include "engine/workload/dataset.h"

#include <math.h>

/* Streams: data inputs, data targets, then one per parameter. */
#define STREAM_INPUT 1u
#define STREAM_TARGET 2u
#define STREAM_PARAM 1000u

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index)
{
    return splitmix64(splitmix64(seed ^ (stream * 0xD1B54A32D192ED03ull)) + index);
}

float dataset_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    int32_t k = (int32_t)(draw(seed, stream, index) >> 40); /* 24 bits */
    return (float)(k - (1 << 23)) * (1.0f / (float)(1 << 23));
}

void dataset_sample(uint64_t seed, int width, loss_fn_kind loss, int64_t index, float *x, float *target)
{
    for (int i = 0; i < width; i++)
        x[i] = dataset_uniform(seed, STREAM_INPUT, (uint64_t)index * (uint64_t)width + (uint64_t)i);
    if (loss == LOSS_FN_CROSS_ENTROPY) {
        target[0] = (float)(draw(seed, STREAM_TARGET, (uint64_t)index) % (uint64_t)width);
        return;
    }
    for (int i = 0; i < width; i++)
        target[i] = dataset_uniform(seed, STREAM_TARGET, (uint64_t)index * (uint64_t)width + (uint64_t)i);
}

int64_t dataset_index(int step, int rank, int world, int per_rank_batch, int j)
{
    int64_t global = (int64_t)world * per_rank_batch;
    return (int64_t)step * global + rank + (int64_t)world * j;
}

int dataset_per_rank_batch(const scenario *sc)
{
    return sc->global_batch > 0 ? sc->global_batch / sc->world_size : sc->batch;
}

float dataset_init_weight(uint64_t seed, int p, int64_t i, int64_t fan_in)
{
    float bound = (float)(1.0 / sqrt((double)fan_in));
    return dataset_uniform(seed, STREAM_PARAM + (uint64_t)p, (uint64_t)i) * bound;
}
