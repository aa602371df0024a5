/* timing.h — modelled durations of one rank's operations.
 *
 * Contract: durations come from the [device] section (peak FLOP/s × efficiency, memory
 * bandwidth), the rank's speed factor and a per-rank random jitter (seeded from
 * [run] seed and the rank, so a run is repeatable).  A timing_model is owned by its
 * rank's host thread.
 */
#ifndef DDPPROF_TIMING_H
#define DDPPROF_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "profiler/span.h"

typedef struct {
    double flops_per_ns; /* achieved, this rank */
    double bytes_per_ns; /* memory bandwidth (a rank's speed is its compute's) */
    double copy_out_bytes_per_ns, optimizer_bytes_per_ns; /* those ops' own */
    double grad_write_bytes_per_ns; /* a backward's gradient write */
    uint64_t op_overhead_ns; /* dispatch cost of one stream op ([device] op_overhead_us) */
    double comm_slowdown;    /* timed ops at 1/(1+this) speed while the comm stream is busy ([device]) */
    double speed;            /* the rank's speed factor (scales measured layer times) */
    double comm_scale;       /* other collectives' time at this world size over theirs measured */
    double jitter;
    double batch;
    uint64_t rng;
    bool has_spare; /* the second normal of the last Box-Muller draw */
    double spare;
} timing_model;

void timing_init(timing_model *t, const scenario *sc, int rank);
/* The rank's seeded generator: a uniform draw in (0, 1), and a standard normal one (for
 * the draws of engine/sim/sim_host_terms.h, which share it). */
double timing_uniform01(timing_model *t);
double timing_standard_normal(timing_model *t);
/* The random state timing_init starts rank `rank` from with `seed`. */
uint64_t timing_rank_seed(uint64_t seed, int rank);
/* The memory the copies and steps of a host's ranks touch: each rank's parameters,
 * gradients and buckets, 12 bytes per parameter of `total_numel`, times the ranks of a
 * host. */
double timing_host_memory_bytes(const scenario *sc, int64_t total_numel);
/* Whether that fits in the host's last-level cache ([host] cache_mb; false while 0). */
bool timing_fits_cache(const scenario *sc, int64_t total_numel);
/* The kinds of memory-bound op that share a host's cores ([host] host_cores): the
 * copies into and out of the buckets and the optimizer step; predict times them so and
 * calibrate --from learns their bandwidths so.  A backward bound by its gradient write
 * shares them too (sim_on_host_cores, calib_host_shared): that takes its duration, not
 * its kind alone. */
bool timing_on_host_cores(span_kind kind);
/* The work of a backward's gradient write of `work_bytes` (read + write), in ns of one core. */
uint64_t timing_write_ns(const timing_model *t, double work_bytes);
/* The bytes a backward's gradient write of `bytes` moves, in units of a plain write's:
 * accumulating (no_sync) it reads them too.  (On the cpu backend, whose plain write is a
 * memcpy that reads each line before writing it, an accumulating backward moved about as
 * fast as a plain one; 1 instead of 2 moved no_sync's predicted step by 0.2 %.) */
double timing_write_bytes(double bytes, bool accumulate);
/* The shares of a core that each of `ops` copies and steps and each of `sums` ranks' parts
 * of allreduce sums running on a host of `cores` cores get: a core each while they fit,
 * else the cores shared out in proportion to weights 1 and `sum_weight` ([host]
 * comm_core_weight), none above one core.  Alone, `sums` parts get min(1, cores / sums)
 * whatever the weight. */
typedef struct {
    double op, sum;
} timing_shares;
timing_shares timing_core_shares(double cores, int ops, int sums, double sum_weight);
/* Copies, optimizer steps and gradient writes at the [host] cache_*_gbps bandwidths (each
 * where it is set), for a rank whose host's memory fits in the cache; the other cache_*
 * terms are sim_host_terms.h's. */
void timing_use_cache(timing_model *t, const scenario *sc);
/* Forward of `layer` for the rank's batch: its FLOPs at the achieved rate, or its measured
 * time (model.layer_forward_us) over the rank's speed, but for the part other collectives
 * took (model.forward_comm_us), which scales with the world size instead. */
uint64_t timing_forward_ns(timing_model *t, const model_layer *layer);
/* Backward: twice the forward FLOPs (input and weight gradients), or its measured time. */
uint64_t timing_backward_ns(timing_model *t, const model_layer *layer);
/* A memory-bound op of `kind` moving `bytes` (read plus write): copies out of the
 * buckets and the optimizer step at their own bandwidth where [device] gives one. */
uint64_t timing_memory_ns(timing_model *t, span_kind kind, double bytes);
/* Whether such an op sleeps to its modelled deadline (its work ends before it): only an
 * op that sleeps wakes late, inside a collective or not. */
/* A deadline this close after the op's start has passed by the time a worker would go to
 * sleep (the cpu backend checks the clock under its communicator's lock first).  Measured
 * over thirty runs of resnet18_buckets, forwards modelled at 25 ns or less never slept
 * (under 20 us each) and those at 231 ns or more always did (80-150 us, the wake-up), as
 * did nvtx_small's at 107 ns. */
#define TIMING_SLEEP_MIN_NS 50
bool timing_op_sleeps(const timing_model *t, uint64_t model_ns, double work_bytes);
/* A compute worker that starts its next op on the host's cores within this of an event
 * went straight on from the op before it: the hand-off of a worker that does not sleep
 * (op_overhead_busy_us, 13-30 us learned) and not a wake-up (80-130 us). */
#define TIMING_GOES_ON_NS 50000

#endif
