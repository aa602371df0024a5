/* sim_host_terms.c — the [host] section applied: late wake-ups, stalls and late starts
 * of ranks that share one host's cores, drawn from the rank's seeded generator
 * (contract in sim_host_terms.h). */
#include "engine/sim/sim_host_terms.h"

#include <math.h>

/* The backwards' stalls: their own where the scenario gives them, else the forwards'
 * (h's, in cache or out of it). */
static void set_backward_stalls(sim_host_terms *h, const scenario *sc)
{
    bool own = sc->backward_stall_fraction > 0 || sc->backward_stall_us > 0;
    h->backward_stall_fraction = own ? sc->backward_stall_fraction : h->stall_fraction;
    h->backward_stall_ns = own ? sc->backward_stall_us * 1e3 : h->stall_ns;
}

void sim_host_terms_init(sim_host_terms *h, const scenario *sc, bool fits_cache)
{
    double busy_us = sc->op_overhead_busy_us < 0 ? sc->op_overhead_us : sc->op_overhead_busy_us;
    h->op_overhead_busy_ns = (uint64_t)(busy_us * 1e3 + 0.5);
    h->op_wakeup_ns = (uint64_t)(sc->op_wakeup_us * 1e3 + 0.5);
    h->op_wakeup_sd_ns = sc->op_wakeup_sd_us * 1e3;
    h->stall_fraction = sc->op_stall_fraction;
    h->stall_ns = sc->op_stall_us * 1e3;
    set_backward_stalls(h, sc);
    h->gap_stall_fraction = sc->op_gap_stall_fraction;
    h->gap_stall_ns = sc->op_gap_stall_us * 1e3;
    h->comm_wakeup_ns = (uint64_t)(sc->comm_wakeup_us * 1e3 + 0.5);
    h->comm_launch_ns = sc->comm_launch_us * 1e3;
    h->comm_launch_sd_ns = sc->comm_launch_sd_us * 1e3;
    h->comm_launch_per_op_ns = sc->comm_launch_per_op_us * 1e3;
    h->comm_launch_behind_ns = sc->comm_launch_behind_us * 1e3;
    h->comm_exit_late_fraction = sc->comm_exit_late_fraction;
    h->comm_exit_late_ns = sc->comm_exit_late_us * 1e3;
    h->comm_exit_late_sd_ns = sc->comm_exit_late_sd_us * 1e3;
    h->compute_wake_late_fraction = sc->compute_wake_late_fraction;
    h->compute_wake_late_ns = sc->compute_wake_late_us * 1e3;
    h->compute_wake_late_sd_ns = sc->compute_wake_late_sd_us * 1e3;
    h->host_wake_ns = sc->host_wake_us * 1e3;
    h->host_wake_sd_ns = sc->host_wake_sd_us * 1e3;
    h->host_wake_stall_fraction = sc->host_wake_stall_fraction;
    h->host_wake_stall_ns = sc->host_wake_stall_us * 1e3;
    h->allreduce_stall_fraction = h->allreduce_stall_ns = 0;
    h->crowded_allreduce_stall_fraction = h->crowded_allreduce_stall_ns = 0;
    if (!fits_cache)
        return;
    /* Where the host's memory fits in its cache: the cache_* terms, each where it is set. */
    if (sc->cache_op_wakeup_us >= 0)
        h->op_wakeup_ns = (uint64_t)(sc->cache_op_wakeup_us * 1e3 + 0.5);
    if (sc->cache_op_wakeup_sd_us >= 0)
        h->op_wakeup_sd_ns = sc->cache_op_wakeup_sd_us * 1e3;
    if (sc->cache_op_stall_fraction >= 0)
        h->stall_fraction = sc->cache_op_stall_fraction;
    if (sc->cache_op_stall_us >= 0)
        h->stall_ns = sc->cache_op_stall_us * 1e3;
    if (sc->cache_host_wake_us >= 0)
        h->host_wake_ns = sc->cache_host_wake_us * 1e3;
    if (sc->cache_host_wake_sd_us >= 0)
        h->host_wake_sd_ns = sc->cache_host_wake_sd_us * 1e3;
    if (sc->cache_host_wake_stall_fraction >= 0)
        h->host_wake_stall_fraction = sc->cache_host_wake_stall_fraction;
    if (sc->cache_host_wake_stall_us >= 0)
        h->host_wake_stall_ns = sc->cache_host_wake_stall_us * 1e3;
    if (sc->cache_comm_launch_us >= 0)
        h->comm_launch_ns = sc->cache_comm_launch_us * 1e3;
    if (sc->cache_comm_launch_sd_us >= 0)
        h->comm_launch_sd_ns = sc->cache_comm_launch_sd_us * 1e3;
    if (sc->cache_comm_launch_per_op_us >= 0)
        h->comm_launch_per_op_ns = sc->cache_comm_launch_per_op_us * 1e3;
    if (sc->cache_comm_launch_behind_us >= 0)
        h->comm_launch_behind_ns = sc->cache_comm_launch_behind_us * 1e3;
    h->allreduce_stall_fraction = sc->cache_allreduce_stall_fraction;
    h->allreduce_stall_ns = sc->cache_allreduce_stall_us * 1e3;
    h->crowded_allreduce_stall_fraction = sc->cache_allreduce_crowded_stall_fraction;
    h->crowded_allreduce_stall_ns = sc->cache_allreduce_crowded_stall_us * 1e3;
    set_backward_stalls(h, sc);
}

/* Whether an event of probability `fraction` happens this time, for an event of size
 * `size` (no draw at all while either is 0, so a model without it keeps its draws). */
static bool happens(timing_model *t, double fraction, double size)
{
    return fraction > 0 && size > 0 && timing_uniform01(t) < fraction;
}

/* An exponential draw of mean `mean_ns`. */
static uint64_t exponential_ns(timing_model *t, double mean_ns)
{
    return (uint64_t)(-mean_ns * log(timing_uniform01(t)) + 0.5);
}

/* A stall after a wake-up, for `fraction` of them: exponential of mean `mean_ns`. */
static uint64_t stall_ns(timing_model *t, double fraction, double mean_ns)
{
    return happens(t, fraction, mean_ns) ? exponential_ns(t, mean_ns) : 0;
}

/* A late wake-up of mean m and standard deviation s: a lognormal draw (wake-ups are
 * never early and now and then very late), or m itself without a spread. */
static uint64_t lognormal_ns(timing_model *t, double m, double s)
{
    if (m <= 0 || s <= 0)
        return m > 0 ? (uint64_t)(m + 0.5) : 0;
    double var = log(1.0 + s * s / (m * m));
    return (uint64_t)(exp(log(m) - 0.5 * var + sqrt(var) * timing_standard_normal(t)) + 0.5);
}

/* One wake-up of a timed op, and now and then a stall after it (a backward's own). */
static uint64_t wakeup_ns(const sim_host_terms *h, timing_model *t, span_kind kind)
{
    uint64_t wake = lognormal_ns(t, (double)h->op_wakeup_ns, h->op_wakeup_sd_ns);
    return wake + (kind == SPAN_BACKWARD ? stall_ns(t, h->backward_stall_fraction, h->backward_stall_ns)
                                         : stall_ns(t, h->stall_fraction, h->stall_ns));
}

uint64_t sim_host_gap_stall_ns(const sim_host_terms *h, timing_model *t)
{
    return stall_ns(t, h->gap_stall_fraction, h->gap_stall_ns);
}

uint64_t sim_host_comm_launch_ns(const sim_host_terms *h, timing_model *t)
{
    return lognormal_ns(t, h->comm_launch_ns, h->comm_launch_sd_ns);
}

uint64_t sim_host_comm_launch_behind_ns(const sim_host_terms *h, timing_model *t)
{
    return h->comm_launch_behind_ns > 0 ? exponential_ns(t, h->comm_launch_behind_ns) : 0;
}

uint64_t sim_host_comm_exit_late_ns(const sim_host_terms *h, timing_model *t)
{
    if (!happens(t, h->comm_exit_late_fraction, h->comm_exit_late_ns))
        return 0;
    return lognormal_ns(t, h->comm_exit_late_ns, h->comm_exit_late_sd_ns);
}

uint64_t sim_host_compute_wake_late_ns(const sim_host_terms *h, timing_model *t)
{
    if (!happens(t, h->compute_wake_late_fraction, h->compute_wake_late_ns))
        return 0;
    return lognormal_ns(t, h->compute_wake_late_ns, h->compute_wake_late_sd_ns);
}

uint64_t sim_host_wake_ns(const sim_host_terms *h, timing_model *t)
{
    uint64_t wake = lognormal_ns(t, h->host_wake_ns, h->host_wake_sd_ns);
    return wake + stall_ns(t, h->host_wake_stall_fraction, h->host_wake_stall_ns);
}

uint64_t sim_host_allreduce_stall_ns(const sim_host_terms *h, timing_model *t, bool crowded)
{
    return crowded ? stall_ns(t, h->crowded_allreduce_stall_fraction, h->crowded_allreduce_stall_ns)
                   : stall_ns(t, h->allreduce_stall_fraction, h->allreduce_stall_ns);
}

uint64_t sim_host_stream_op_ns(const sim_host_terms *h, timing_model *t, uint64_t model_ns, double work_bytes, span_kind kind)
{
    if (!timing_op_sleeps(t, model_ns, work_bytes)) { /* the work outlasts the model, or the deadline is too
                                                          * near to sleep to: no wake-up */
        uint64_t work = timing_write_ns(t, work_bytes);
        return work > model_ns ? work : model_ns;
    }
    bool timed = kind == SPAN_FORWARD || kind == SPAN_BACKWARD;
    return model_ns + (timed ? wakeup_ns(h, t, kind) : 0);
}
