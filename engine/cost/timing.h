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
    uint64_t op_overhead_busy_ns; /* that of a compute op queued behind one its worker ran on its core */
    uint64_t op_wakeup_ns;   /* late wake-up of an op timed to a deadline ([device] op_wakeup_us) */
    double op_wakeup_sd_ns;  /* its spread from op to op ([device] op_wakeup_sd_us; 0: none) */
    double stall_fraction, stall_ns; /* the share of wake-ups that stall too, a stall's mean ([device]) */
    double backward_stall_fraction, backward_stall_ns; /* a backward's own ([device] backward_stall_*) */
    double gap_stall_fraction, gap_stall_ns; /* the hand-off's stalls ([device] op_gap_stall_*) */
    double comm_slowdown;    /* timed ops at 1/(1+this) speed while the comm stream is busy ([device]) */
    uint64_t comm_wakeup_ns; /* and this much later when they end inside a collective ([device]) */
    double comm_launch_ns, comm_launch_sd_ns; /* the comm stream's late start after idling ([device]) */
    double comm_launch_per_op_ns; /* and more per op of the other ranks on a crowded host's cores ([device]) */
    double comm_launch_behind_ns; /* of those woken beside their compute's run of copies, the mean hold */
    double comm_exit_late_fraction, comm_exit_late_ns, comm_exit_late_sd_ns; /* late exits on a crowded host ([device]) */
    double compute_wake_late_fraction, compute_wake_late_ns, compute_wake_late_sd_ns; /* late compute wakes, likewise */
    double host_wake_ns, host_wake_sd_ns; /* the host's late start after a synchronize it waited in ([device]) */
    double host_wake_stall_fraction, host_wake_stall_ns; /* and its stalls */
    /* a bucket allreduce's stalls in cache, on a host with a core per rank and on a crowded
     * one (0 out of cache: timing_use_cache sets them) */
    double allreduce_stall_fraction, allreduce_stall_ns, crowded_allreduce_stall_fraction, crowded_allreduce_stall_ns;
    double jitter;
    double batch;
    uint64_t rng;
    bool has_spare; /* the second normal of the last Box-Muller draw */
    double spare;
} timing_model;

void timing_init(timing_model *t, const scenario *sc, int rank);
/* The random state timing_init starts rank `rank` from with `seed`. */
uint64_t timing_rank_seed(uint64_t seed, int rank);
/* The memory the copies and steps of a host's ranks touch: each rank's parameters,
 * gradients and buckets, 12 bytes per parameter of `total_numel`, times the ranks of a
 * host. */
double timing_host_memory_bytes(const scenario *sc, int64_t total_numel);
/* Whether that fits in the host's last-level cache ([device] cache_mb; false while 0). */
bool timing_fits_cache(const scenario *sc, int64_t total_numel);
/* The kinds of memory-bound op that share a host's cores ([device] host_cores): the
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
 * else the cores shared out in proportion to weights 1 and `sum_weight` ([device]
 * comm_core_weight), none above one core.  Alone, `sums` parts get min(1, cores / sums)
 * whatever the weight. */
typedef struct {
    double op, sum;
} timing_shares;
timing_shares timing_core_shares(double cores, int ops, int sums, double sum_weight);
/* Copies, optimizer steps and gradient writes at the [device] cache_*_gbps bandwidths,
 * wake-ups and stalls of cache_op_wakeup_us, cache_op_wakeup_sd_us,
 * cache_op_stall_fraction and cache_op_stall_us, the host's of cache_host_wake_* and the
 * comm stream's late starts of cache_comm_launch_* (each where it is set), and the
 * bucket allreduces' stalls of cache_allreduce_*stall_*: for a rank whose host's memory
 * fits in the cache. */
void timing_use_cache(timing_model *t, const scenario *sc);
/* Forward of `layer` for the rank's batch. */
uint64_t timing_forward_ns(timing_model *t, const model_layer *layer);
/* Backward: twice the forward FLOPs (input and weight gradients). */
uint64_t timing_backward_ns(timing_model *t, const model_layer *layer);
/* A memory-bound op of `kind` moving `bytes` (read plus write): copies out of the
 * buckets and the optimizer step at their own bandwidth where [device] gives one. */
uint64_t timing_memory_ns(timing_model *t, span_kind kind, double bytes);
/* How long a virtual-time stream op of `kind` and modelled length `model_ns` lasts, as
 * a real stream runs it: its own work first (`work_bytes` written and read at the
 * rank's gradient write bandwidth: the gradients a backward writes), then, if the model
 * is longer, a sleep to the modelled deadline and, for a forward or backward (whose
 * model is FLOPs), the wake-up after it.  The result is at least the roofline
 * max(model, memory time).  With op_wakeup_sd_ns the wake-up is a seeded lognormal draw
 * per op of mean op_wakeup_ns and that standard deviation, so equal ranks drift apart as
 * real ones do and a collective waits for the last of them; with stall_fraction, that
 * share of wake-ups is followed by a stall, an exponential draw of mean stall_ns (a
 * backward's: backward_stall_fraction, backward_stall_ns).  The dispatch cost
 * (op_overhead_ns) is not in it: a real stream pays it before the op starts, as idle
 * time between ops, and the sim puts it there.  Backends that run ops for real pay these
 * costs themselves and use model_ns as is. */
uint64_t timing_stream_op_ns(timing_model *t, uint64_t model_ns, double work_bytes, span_kind kind);
/* A stall of the hand-off before a compute-stream op, for gap_stall_fraction of them
 * (an exponential draw of mean gap_stall_ns; 0 otherwise, and no draw while either is 0):
 * the stream's worker, idle between two ops, held off its core by the others. */
uint64_t timing_gap_stall_ns(timing_model *t);
/* Whether such an op sleeps to its modelled deadline (its work ends before it): only an
 * op that sleeps wakes late, inside a collective or not. */
/* A deadline this close after the op's start has passed by the time a worker would go to
 * sleep (the cpu backend checks the clock under its communicator's lock first).  Measured
 * over thirty runs of resnet18_buckets, forwards modelled at 25 ns or less never slept
 * (under 20 us each) and those at 231 ns or more always did (80-150 us, the wake-up), as
 * did nvtx_small's at 107 ns. */
#define TIMING_SLEEP_MIN_NS 50
bool timing_op_sleeps(const timing_model *t, uint64_t model_ns, double work_bytes);
/* How late a comm stream that idled, waiting for the compute stream's event, starts what
 * follows it, and how late it wakes from a paced link's floor (comm_launch_ns, with
 * comm_launch_sd_ns a lognormal draw as the wake-ups are); beyond the dispatch cost. */
uint64_t timing_comm_launch_ns(timing_model *t);
/* How long an idle comm stream woken beside its compute stream's run of ops on the host's
 * cores waits for that run before it finds a core elsewhere: an exponential draw of mean
 * [device] comm_launch_behind_us (0 and no draw while that is 0). */
uint64_t timing_comm_launch_behind_ns(timing_model *t);
/* A compute worker that starts its next op on the host's cores within this of an event
 * went straight on from the op before it: the hand-off of a worker that does not sleep
 * (op_overhead_busy_us, 13-30 us learned) and not a wake-up (80-130 us). */
#define TIMING_GOES_ON_NS 50000
/* How late a rank waiting for a collective on a crowded host leaves it: 0, or for
 * comm_exit_late_fraction of the calls a lognormal draw of comm_exit_late_ns's mean and
 * comm_exit_late_sd_ns's deviation.  Draws nothing while the fraction or mean is 0. */
uint64_t timing_comm_exit_late_ns(timing_model *t);
/* How late a compute stream that idled until its comm stream's event on a crowded host
 * starts what follows: likewise, of compute_wake_late_*. */
uint64_t timing_compute_wake_late_ns(timing_model *t);
/* How late a host goes on after a synchronize it waited in: a lognormal draw of
 * host_wake_ns's mean and host_wake_sd_ns's deviation, and for host_wake_stall_fraction of
 * them an exponential stall of mean host_wake_stall_ns after it.  Draws nothing while the
 * terms are 0. */
uint64_t timing_host_wake_ns(timing_model *t);
/* How much longer a bucket allreduce in cache lasts: for allreduce_stall_fraction of them
 * (crowded_allreduce_stall_fraction on a host whose ranks outnumber its cores) an
 * exponential stall of mean allreduce_stall_ns (crowded_allreduce_stall_ns), else 0.
 * Draws nothing while the pair is 0. */
uint64_t timing_allreduce_stall_ns(timing_model *t, bool crowded);

#endif
