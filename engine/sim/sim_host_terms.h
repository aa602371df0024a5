/* sim_host_terms.h — the [host] section applied by predict: what ranks that share one
 * host's cores and cache add to the ops' modelled times (late wake-ups from a deadline,
 * stalls, late starts and exits of the comm stream, the host's wake after a step).
 *
 * Contract: sim_host_terms_init() reads [host] once per rank (its cache_* values where
 * the host's memory fits in host.cache_mb); each draw below takes the rank's seeded
 * generator (timing_model's, shared with the jitter, so a prediction is repeatable) and
 * draws nothing while its terms are 0, so a scenario without [host] keeps every draw of
 * the device model.  The cpu backend pays these costs for real; a GPU user leaves [host]
 * at its defaults.  calibrate --from learns the terms (engine/predict/).
 */
#ifndef DDPPROF_SIM_HOST_TERMS_H
#define DDPPROF_SIM_HOST_TERMS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/cost/timing.h"
#include "engine/scenario/scenario.h"
#include "profiler/span.h"

typedef struct {
    uint64_t op_overhead_busy_ns; /* the hand-off of a compute op queued behind one its worker ran on its core */
    uint64_t op_wakeup_ns;   /* late wake-up of an op timed to a deadline ([host] op_wakeup_us) */
    double op_wakeup_sd_ns;  /* its spread from op to op ([host] op_wakeup_sd_us; 0: none) */
    double stall_fraction, stall_ns; /* the share of wake-ups that stall too, a stall's mean ([host]) */
    double backward_stall_fraction, backward_stall_ns; /* a backward's own ([host] backward_stall_*) */
    double gap_stall_fraction, gap_stall_ns; /* the hand-off's stalls ([host] op_gap_stall_*) */
    uint64_t comm_wakeup_ns; /* a forward or backward this much later when it ends inside a collective */
    double comm_launch_ns, comm_launch_sd_ns; /* the comm stream's late start after idling ([host]) */
    double comm_launch_per_op_ns; /* and more per op of the other ranks on a crowded host's cores ([host]) */
    double comm_launch_behind_ns; /* of those woken beside their compute's run of copies, the mean hold */
    double comm_exit_late_fraction, comm_exit_late_ns, comm_exit_late_sd_ns; /* late exits on a crowded host ([host]) */
    double compute_wake_late_fraction, compute_wake_late_ns, compute_wake_late_sd_ns; /* late compute wakes, likewise */
    double host_wake_ns, host_wake_sd_ns; /* the host's late start after a synchronize it waited in ([host]) */
    double host_wake_stall_fraction, host_wake_stall_ns; /* and its stalls */
    /* a bucket allreduce's stalls in cache, on a host with a core per rank and on a crowded
     * one (0 out of cache) */
    double allreduce_stall_fraction, allreduce_stall_ns, crowded_allreduce_stall_fraction, crowded_allreduce_stall_ns;
} sim_host_terms;

void sim_host_terms_init(sim_host_terms *h, const scenario *sc, bool fits_cache);
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
uint64_t sim_host_stream_op_ns(const sim_host_terms *h, timing_model *t, uint64_t model_ns, double work_bytes, span_kind kind);
/* A stall of the hand-off before a compute-stream op, for gap_stall_fraction of them
 * (an exponential draw of mean gap_stall_ns; 0 otherwise, and no draw while either is 0):
 * the stream's worker, idle between two ops, held off its core by the others. */
uint64_t sim_host_gap_stall_ns(const sim_host_terms *h, timing_model *t);
/* How late a comm stream that idled, waiting for the compute stream's event, starts what
 * follows it, and how late it wakes from a paced link's floor (comm_launch_ns, with
 * comm_launch_sd_ns a lognormal draw as the wake-ups are); beyond the dispatch cost. */
uint64_t sim_host_comm_launch_ns(const sim_host_terms *h, timing_model *t);
/* How long an idle comm stream woken beside its compute stream's run of ops on the host's
 * cores waits for that run before it finds a core elsewhere: an exponential draw of mean
 * [host] comm_launch_behind_us (0 and no draw while that is 0). */
uint64_t sim_host_comm_launch_behind_ns(const sim_host_terms *h, timing_model *t);
/* How late a rank waiting for a collective on a crowded host leaves it: 0, or for
 * comm_exit_late_fraction of the calls a lognormal draw of comm_exit_late_ns's mean and
 * comm_exit_late_sd_ns's deviation.  Draws nothing while the fraction or mean is 0. */
uint64_t sim_host_comm_exit_late_ns(const sim_host_terms *h, timing_model *t);
/* How late a compute stream that idled until its comm stream's event on a crowded host
 * starts what follows: likewise, of compute_wake_late_*. */
uint64_t sim_host_compute_wake_late_ns(const sim_host_terms *h, timing_model *t);
/* How late a host goes on after a synchronize it waited in: a lognormal draw of
 * host_wake_ns's mean and host_wake_sd_ns's deviation, and for host_wake_stall_fraction of
 * them an exponential stall of mean host_wake_stall_ns after it.  Draws nothing while the
 * terms are 0. */
uint64_t sim_host_wake_ns(const sim_host_terms *h, timing_model *t);
/* How much longer a bucket allreduce in cache lasts: for allreduce_stall_fraction of them
 * (crowded_allreduce_stall_fraction on a host whose ranks outnumber its cores) an
 * exponential stall of mean allreduce_stall_ns (crowded_allreduce_stall_ns), else 0.
 * Draws nothing while the pair is 0. */
uint64_t sim_host_allreduce_stall_ns(const sim_host_terms *h, timing_model *t, bool crowded);

#endif
