/* timing.c — modelled op durations with per-rank speed and seeded jitter. */
#include "engine/cost/timing.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return ((double)(splitmix64(s) >> 11) + 0.5) / 9007199254740992.0; }

double timing_uniform01(timing_model *t) { return uniform01(&t->rng); }

/* N(0,1) by Box-Muller, which gives two independent normals: the second serves the
 * next call. */
double timing_standard_normal(timing_model *t)
{
    if (t->has_spare) {
        t->has_spare = false;
        return t->spare;
    }
    double r = sqrt(-2.0 * log(uniform01(&t->rng))), a = 2.0 * M_PI * uniform01(&t->rng);
    t->spare = r * sin(a);
    t->has_spare = true;
    return r * cos(a);
}

/* Multiplicative jitter: 1 + jitter·N(0,1), floored so a duration never collapses to
 * nothing. */
static double jitter_factor(timing_model *t)
{
    if (t->jitter <= 0)
        return 1.0;
    double f = 1.0 + t->jitter * timing_standard_normal(t);
    return f < 0.05 ? 0.05 : f;
}

uint64_t timing_rank_seed(uint64_t seed, int rank)
{
    return seed * 0x100000001b3ULL + (uint64_t)rank * 0x9e3779b97f4a7c15ULL + 1;
}

void timing_init(timing_model *t, const scenario *sc, int rank)
{
    double speed = scenario_rank_speed(sc, rank);
    t->flops_per_ns = sc->peak_tflops * 1e3 * sc->efficiency * speed;
    t->speed = speed;
    /* Collectives other than DDP's move their bytes in (n-1)/n steps (all_to_all,
     * all_gather, reduce_scatter): that, at this world size over at theirs. */
    int n0 = sc->comm_ranks > 0 ? sc->comm_ranks : sc->world_size;
    double at = sc->world_size > 1 ? (sc->world_size - 1.0) / sc->world_size : 0.0;
    t->comm_scale = n0 > 1 ? at / ((n0 - 1.0) / n0) : 1.0;
    /* A rank's speed is its compute's (skew.slowdown: "the slow ranks' compute takes this
     * many times longer"): its copies and optimizer step move bytes at the memory's
     * bandwidth, as the cpu and cuda backends' real copies do whatever the skew. */
    t->bytes_per_ns = sc->mem_bw_gbps;
    t->copy_out_bytes_per_ns = sc->copy_out_gbps > 0 ? sc->copy_out_gbps : sc->mem_bw_gbps;
    t->optimizer_bytes_per_ns = sc->optimizer_gbps > 0 ? sc->optimizer_gbps : sc->mem_bw_gbps;
    t->grad_write_bytes_per_ns = sc->grad_write_gbps > 0 ? sc->grad_write_gbps : sc->mem_bw_gbps;
    t->op_overhead_ns = (uint64_t)(sc->op_overhead_us * 1e3 + 0.5);
    t->comm_slowdown = sc->comm_slowdown;
    t->jitter = sc->jitter;
    t->batch = sc->batch;
    t->has_spare = false;
    t->spare = 0;
    t->rng = timing_rank_seed(sc->seed, rank);
}

/* Bytes per parameter a rank keeps in memory that its copies and steps touch: the
 * parameter, its gradient and its place in a bucket, fp32 each. */
#define CACHED_BYTES_PER_PARAM 12.0

double timing_host_memory_bytes(const scenario *sc, int64_t total_numel)
{
    return CACHED_BYTES_PER_PARAM * (double)total_numel * scenario_host_ranks(sc);
}

bool timing_fits_cache(const scenario *sc, int64_t total_numel)
{
    return sc->cache_mb > 0 && timing_host_memory_bytes(sc, total_numel) <= sc->cache_mb * 1048576.0;
}

void timing_use_cache(timing_model *t, const scenario *sc)
{
    if (sc->cache_copy_in_gbps > 0)
        t->bytes_per_ns = sc->cache_copy_in_gbps;
    if (sc->cache_copy_out_gbps > 0)
        t->copy_out_bytes_per_ns = sc->cache_copy_out_gbps;
    if (sc->cache_optimizer_gbps > 0)
        t->optimizer_bytes_per_ns = sc->cache_optimizer_gbps;
    if (sc->cache_grad_write_gbps > 0)
        t->grad_write_bytes_per_ns = sc->cache_grad_write_gbps;
}

uint64_t timing_forward_ns(timing_model *t, const model_layer *layer)
{
    if (layer->fwd_measured)
        return (uint64_t)(((layer->fwd_ns_measured - layer->fwd_comm_ns) / t->speed +
                           layer->fwd_comm_ns * t->comm_scale) *
                          jitter_factor(t));
    return (uint64_t)(layer->fwd_flops * t->batch / t->flops_per_ns * jitter_factor(t));
}

uint64_t timing_backward_ns(timing_model *t, const model_layer *layer)
{
    if (layer->bwd_measured)
        return (uint64_t)(((layer->bwd_ns_measured - layer->bwd_comm_ns) / t->speed +
                           layer->bwd_comm_ns * t->comm_scale) *
                          jitter_factor(t));
    return (uint64_t)(2.0 * layer->fwd_flops * t->batch / t->flops_per_ns * jitter_factor(t));
}

uint64_t timing_memory_ns(timing_model *t, span_kind kind, double bytes)
{
    double bw = kind == SPAN_COPY_OUT ? t->copy_out_bytes_per_ns
                : kind == SPAN_OPTIMIZER ? t->optimizer_bytes_per_ns
                                         : t->bytes_per_ns;
    return (uint64_t)(bytes / bw * jitter_factor(t));
}

uint64_t timing_write_ns(const timing_model *t, double work_bytes)
{
    return work_bytes > 0 ? (uint64_t)(work_bytes / t->grad_write_bytes_per_ns) : 0;
}

double timing_write_bytes(double bytes, bool accumulate)
{
    return bytes * (accumulate ? 2.0 : 1.0);
}

bool timing_on_host_cores(span_kind kind)
{
    return kind == SPAN_COPY_IN || kind == SPAN_COPY_OUT || kind == SPAN_OPTIMIZER;
}

timing_shares timing_core_shares(double cores, int ops, int sums, double sum_weight)
{
    if (ops + sums <= cores)
        return (timing_shares){1.0, 1.0};
    double per_weight = cores / ((double)ops + sum_weight * (double)sums);
    /* Water-filling: a class whose proportional share tops a core runs on a core each,
     * and the other class shares what is left. */
    if (ops > 0 && per_weight >= 1.0)
        return (timing_shares){1.0, ((double)cores - ops) / sums};
    if (sums > 0 && per_weight * sum_weight >= 1.0)
        return (timing_shares){((double)cores - sums) / ops, 1.0};
    return (timing_shares){fmin(1.0, per_weight), fmin(1.0, per_weight * sum_weight)};
}

bool timing_op_sleeps(const timing_model *t, uint64_t model_ns, double work_bytes)
{
    return timing_write_ns(t, work_bytes) + TIMING_SLEEP_MIN_NS <= model_ns;
}
