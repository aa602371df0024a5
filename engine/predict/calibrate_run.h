/* calibrate_run.h — the model's per-op terms learned from a measured run instead of
 * probes: what each op cost while everything else of the run ran beside it (the other
 * ranks' allreduce sums, copies and wake-ups on the same cores), which probes run alone
 * do not see.
 *
 * Contract: calib_run_fit() reads the spans of one or more runs (run_span, any order)
 * and gives:
 *   op_wakeup_us   mean of (duration - model) over forward spans that carry a model (a
 *                  forward on the cpu backend has no work: it sleeps to its modelled
 *                  deadline, so the excess is the late wake-up); not below 0;
 *   op_wakeup_sd_us the standard deviation of that excess (with a mean above 0);
 *   op_stall_fraction, op_stall_us  when at least 3 forwards exceed the median excess
 *                  by more than 10 median absolute deviations: their share, and their
 *                  mean beyond op_wakeup_us, which the two above then leave out (so the
 *                  mean excess is op_wakeup_us + fraction x op_stall_us);
 *   backward_stall_fraction, backward_stall_us  the same stalls of the backwards that
 *                  sleep, outside collectives (calibrate_wakeup.h);
 *   op_overhead_busy_us  mean idle time on a rank's compute stream after a copy or
 *                  optimizer step, before the next op of the iteration (the last copy in
 *                  aside, after which the stream waits for the last allreduce): the
 *                  hand-off of a worker that ran the op before on its core, no sleep;
 *   op_overhead_us median idle time between two consecutive forwards of one rank and
 *                  iteration (all of an iteration's forwards are enqueued at once, so the
 *                  gap is the stream's hand-off alone);
 *   op_gap_stall_fraction, op_gap_stall_us  those gaps' stalls (calibrate_wakeup.h);
 *   host_wake_us, host_wake_sd_us, host_wake_stall_fraction, host_wake_stall_us  how late
 *                  a rank's next iteration starts after its last compute op, beyond
 *                  op_overhead_us (calibrate_wakeup.h); in cache apart, as cache_host_wake_*
 *                  (and the comm_launch terms below as cache_comm_launch_*: a small
 *                  model's compute runs of copies are microseconds, not milliseconds);
 *   mem_bw_gbps, copy_out_gbps, optimizer_gbps, grad_write_gbps  the bandwidths of the
 *                  copies into and out of the buckets, the SGD steps and the gradient
 *                  writes (calibrate_memory.h; a gradient write of at least 1 MiB);
 *   cache          with cache_mb > 0, when some runs' memory (run_span.host_bytes) fits
 *                  in it and some does not: from the runs that fit, the same four
 *                  bandwidths (a gradient write of at least 64 KiB: a small model's
 *                  layers; a small model on the cpu backend copies out of the caches,
 *                  2-4x as fast), cache_allreduce_factor, the median of their bucket
 *                  allreduces' times (alone on the host, as the table's) over the table's
 *                  at their size, the stalls beyond it (cache_allreduce_stall_* on a
 *                  host with a core per rank, cache_allreduce_crowded_stall_* on one its
 *                  ranks outnumber: calibrate_table.h), and cache_op_wakeup_us, cache_op_wakeup_sd_us,
 *                  cache_op_stall_fraction, cache_op_stall_us, their forwards' wake-ups
 *                  and stalls learned as op_wakeup_us and the others are (sub-microsecond
 *                  sleeps on a host the copies barely load: about 85 us and 2 % stalls on
 *                  the machine of the shipped figures, against 120 us and 7 % out of
 *                  cache); they teach nothing else, and every other term comes from the
 *                  runs that do not fit;
 *   comm_slowdown, comm_wakeup_us  how forwards and backwards suffer from their rank's
 *                  collectives (from the last rank's arrival to the end): over the ops
 *                  with time inside one, their time beyond the model (model +
 *                  op_wakeup_us; a backward at least its gradient write at grad_write_gbps, or
 *                  mem_bw_gbps where that is not learned: such a backward never sleeps, so never wakes late)
 *                  fitted by least squares as a x (time inside) + w x (1 if the modelled
 *                  end falls inside); the op progresses at 1/(1+s) of its speed inside
 *                  with s = a / (1 - a), and wakes w later; neither below 0;
 *   comm_launch_us, comm_launch_sd_us, comm_launch_per_op_us  how late an idle comm
 *                  stream starts a bucket's allreduce once the bucket is ready, and how
 *                  much later per op of the other ranks on a crowded host's cores, and
 *                  comm_launch_behind_us, how long those woken beside their own
 *                  compute's run of copies wait for it (calibrate_launch.h);
 *   comm_exit_late_fraction, comm_exit_late_us, comm_exit_late_sd_us  how many of the
 *                  ranks waiting for a bucket allreduce on a host of fewer cores than
 *                  ranks leave it late, and by how much (calibrate_exit.h);
 *   allreduce      per bucket allreduce seen by every rank: the time from the last
 *                  rank's arrival to the last end, and the median of those per (world
 *                  size, bytes), as calibration samples; with host_cores > 0 to the first
 *                  end (the late exits are a term of their own), and the collective's
 *                  time alone on the host: its sums share the cores with the copies and
 *                  steps (calibrate_share.h), so each rank's part got its core time over
 *                  it, and alone it would get min(1, host_cores / world) of a core.
 * Each figure says how many spans it came from (0: not learned, value left 0).  It
 * returns -1 with err only when nothing at all could be learned.
 */
#ifndef DDPPROF_CALIBRATE_RUN_H
#define DDPPROF_CALIBRATE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/predict/fit_ring.h"
#include "profiler/span.h"

typedef struct {
    int64_t run;   /* spans of different runs are never paired */
    int world;     /* the run's world size */
    int rank, iter;
    uint8_t stream; /* span_stream */
    uint8_t kind;   /* span_kind */
    int bucket;
    int64_t seq, bytes;
    int64_t start_ns, end_ns;
    double model_ns; /* forwards and backwards: the modelled duration (0: unknown) */
    double write_bytes; /* backwards: the bytes their gradient write moves (read too where it accumulates) */
    double host_bytes; /* the run's memory on a host: 12 bytes per parameter x its ranks (timing_fits_cache) */
} run_span;

#define CALIB_RUN_MAX_SAMPLES 256

/* Bandwidths of the memory-bound ops, GB/s, and the spans behind each (calibrate_memory.h). */
typedef struct {
    double copy_in_gbps, copy_out_gbps, optimizer_gbps, grad_write_gbps;
    size_t ncopy_in, ncopy_out, noptimizer, ngrad_write;
} calib_bandwidths;

typedef struct {
    double op_wakeup_us, op_wakeup_sd_us, op_stall_fraction, op_stall_us, op_overhead_us, comm_slowdown,
        comm_wakeup_us, comm_launch_us, comm_launch_sd_us, comm_exit_late_fraction, comm_exit_late_us,
        comm_exit_late_sd_us, backward_stall_fraction, backward_stall_us, op_gap_stall_fraction, op_gap_stall_us,
        compute_wake_late_fraction, compute_wake_late_us, compute_wake_late_sd_us, op_overhead_busy_us,
        comm_launch_per_op_us, comm_launch_behind_us, host_wake_us, host_wake_sd_us, host_wake_stall_fraction,
        host_wake_stall_us;
    calib_bandwidths memory; /* the copies', SGD steps' and gradient writes' (copy_in_gbps: [device] mem_bw_gbps) */
    double host_cores; /* the cores the bandwidths were shared out over (0: not shared) */
    double comm_core_weight; /* the sums' weight beside the copies and steps on them (1: alike) */
    size_t nweighted;        /* the bucket allreduces behind it */
    double cache_mb;   /* the host's last-level cache (0: none) */
    calib_bandwidths cache; /* learned from the runs whose memory fits in it, when others do not */
    double cache_allreduce_factor; /* their bucket allreduces' times over the table's, the median (0: none) */
    size_t ncache_collectives;
    double cache_allreduce_stall_fraction, cache_allreduce_stall_us; /* their stalls beyond the median, a core per rank */
    double cache_allreduce_crowded_stall_fraction, cache_allreduce_crowded_stall_us; /* and on a crowded host */
    size_t ncache_uncrowded, ncache_crowded; /* the collectives behind each pair */
    double cache_op_wakeup_us, cache_op_wakeup_sd_us, cache_op_stall_fraction, cache_op_stall_us; /* their forwards' */
    size_t ncache_forward; /* the forwards behind those (0: not learned) */
    double cache_host_wake_us, cache_host_wake_sd_us, cache_host_wake_stall_fraction, cache_host_wake_stall_us;
    size_t ncache_host_wake; /* the gaps behind those (0: not learned) */
    double cache_comm_launch_us, cache_comm_launch_sd_us, cache_comm_launch_per_op_us, cache_comm_launch_behind_us;
    size_t ncache_launch, ncache_launch_goes_on; /* the launches behind those (0: not learned) */
    size_t nforward, nbackward, ngaps, nbusy_gaps, ncontended, nlaunch, nexit, nwake, nhost_wake; /* behind each figure */
    size_t nlaunch_beside_ops; /* of nlaunch, those on a crowded host with others' ops running */
    size_t nlaunch_goes_on;    /* of nlaunch, those whose compute went straight on with ops on the cores */
    size_t nlaunch_behind;     /* of those, the ones that started only once that run had ended */
    ring_sample ar[CALIB_RUN_MAX_SAMPLES];
    size_t nar;
    size_t ncollectives; /* bucket allreduces behind the samples */
} calib_run_costs;

/* Sorts `s` in place. */
int calib_run_fit(run_span *s, size_t n, double host_cores, double cache_mb, calib_run_costs *out, char *err,
                  size_t errlen);

#endif
