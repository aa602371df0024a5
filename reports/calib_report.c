/* calib_report.c — the fits, the residual tables and the scenario fragment of a
 * calibration (calib_report.h). */
#include "reports/calib_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "engine/predict/calibrate_exit.h"
#include "engine/predict/calibrate_memory.h"
#include "engine/predict/calibrate_weight.h"

static int fit_copies(const calib_data *d, calib_copy_kind kind, double *gbps, char *err, size_t errlen)
{
    copy_sample s[2 * CALIB_MAX_POINTS];
    size_t n = 0;
    for (size_t i = 0; i < d->ncp; i++)
        if (d->cp[i].kind == kind)
            s[n++] = (copy_sample){.moved = 2 * d->cp[i].bytes, .us = d->cp[i].us};
    double rms_unused;
    return fit_memcpy(s, n, gbps, &rms_unused, err, errlen);
}

int calib_fit_all(const calib_data *d, calib_fit *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    if (fit_ring(d->ar, d->nar, &f->ring, err, errlen) != 0)
        return -1;
    if (d->dispatch_measured) {
        /* A timer that fires early can make the excess a hair negative: no op is
         * faster than its model. */
        f->op_overhead_us = d->dispatch_us > 0 ? d->dispatch_us : 0;
        double wake = d->timed_dispatch_us - f->op_overhead_us;
        f->op_wakeup_us = wake > 0 ? wake : 0;
        f->have_dispatch = true;
    }
    if (!d->copies_measured)
        return 0;
    if (fit_copies(d, CALIB_COPY_IN, &f->copy_in_gbps, err, errlen) != 0 ||
        fit_copies(d, CALIB_COPY_OUT, &f->copy_out_gbps, err, errlen) != 0)
        return -1;
    /* The model has one memory bandwidth for both copies, and every synchronised step
     * copies each gradient in and out once: the harmonic mean keeps the pair's time. */
    f->mem_bw_gbps = 2.0 / (1.0 / f->copy_in_gbps + 1.0 / f->copy_out_gbps);
    double sum2 = 0;
    for (size_t i = 0; i < d->ncp; i++) {
        double m = calib_copy_model_us(f->mem_bw_gbps, d->cp[i].bytes);
        sum2 += (m - d->cp[i].us) * (m - d->cp[i].us) / (d->cp[i].us * d->cp[i].us);
    }
    f->copy_rms_rel = d->ncp ? sqrt(sum2 / (double)d->ncp) : 0;
    f->have_copy = true;
    return 0;
}

double calib_copy_model_us(double gbps, int64_t bytes) { return 2.0 * (double)bytes / (gbps * 1e3); }

void calib_print(FILE *out, const calib_plan *p, const calib_data *d, const calib_fit *f)
{
    fprintf(out,
            "# ddpprof calibrate: %s backend, in-place SUM allreduce (fp32); each point the median of %d timings of "
            "%d iterations after %d warm-up\n",
            p->be->name, p->repeats, p->iters, p->warmup);
    fprintf(out, "# model: t(S, n) = 2(n-1)*alpha + 2(n-1)/n * S / B   (least squares on the relative residual)\n");
    fprintf(out, "%5s  %12s  %12s  %12s  %12s  %9s\n", "ranks", "size (B)", "measured us", "model us", "resid us",
            "resid %");
    for (size_t i = 0; i < d->nar; i++) {
        const ring_sample *s = &d->ar[i];
        double m = ring_model_us(f->ring.alpha_us, f->ring.bandwidth_gbps, s->bytes, s->ranks);
        fprintf(out, "%5d  %12lld  %12.1f  %12.1f  %+12.1f  %+8.1f%%\n", s->ranks, (long long)s->bytes, s->us, m,
                m - s->us, 100.0 * (m - s->us) / s->us);
    }
    fprintf(out, "fit: alpha = %.3f us, B = %.3f GB/s (1e9 B/s)%s; RMS relative error %.1f%%, worst %.1f%% over %zu "
                 "measurements\n",
            f->ring.alpha_us, f->ring.bandwidth_gbps,
            f->ring.alpha_clamped ? " (alpha clamped at 0: the best fit was negative)" : "", 100.0 * f->ring.rms_rel,
            100.0 * f->ring.max_abs_rel, f->ring.n);
    for (size_t i = 0; i < p->nranks; i++) {
        ring_fit w;
        char err[256];
        if (fit_ring_world(d->ar, d->nar, p->ranks[i], &w, err, sizeof err) == 0)
            fprintf(out, "  %2d ranks alone: alpha = %.3f us, B = %.3f GB/s, RMS relative error %.1f%%\n", p->ranks[i],
                    w.alpha_us, w.bandwidth_gbps, 100.0 * w.rms_rel);
    }
    if (f->have_dispatch)
        fprintf(out, "\n# dispatch: %d ranks at once, each running %d ops of 0 us (%.1f us beyond the model), "
                     "then of %d us (%.1f us beyond) on its compute stream\n"
                     "fit: op_overhead = %.3f us per op, op_wakeup = %.3f us more per op timed to a deadline\n",
                d->dispatchers, CALIB_DISPATCH_OPS, d->dispatch_us, CALIB_DISPATCH_MODEL_NS / 1000,
                d->timed_dispatch_us, f->op_overhead_us, f->op_wakeup_us);
    if (!d->copies_measured) {
        fprintf(out, "copies not measured: %s\n", d->copies_skipped);
        return;
    }
    fprintf(out, "\n# bucket copies (the reducer's copy-in x 1/world and copy-out), bandwidth counts read + write\n");
    fprintf(out, "%-8s  %7s  %12s  %12s  %12s  %12s  %9s\n", "copy", "copiers", "size (B)", "measured us", "model us",
            "resid us", "resid %");
    for (size_t i = 0; i < d->ncp; i++) {
        const calib_copy *c = &d->cp[i];
        double m = calib_copy_model_us(f->mem_bw_gbps, c->bytes);
        fprintf(out, "%-8s  %7d  %12lld  %12.1f  %12.1f  %+12.1f  %+8.1f%%\n",
                c->kind == CALIB_COPY_IN ? "copy-in" : "copy-out", c->copiers, (long long)c->bytes, c->us, m,
                m - c->us, 100.0 * (m - c->us) / c->us);
    }
    fprintf(out, "fit: mem_bw = %.3f GB/s per rank, the harmonic mean of copy-in alone (%.3f) and copy-out alone (%.3f); "
                 "RMS relative error %.1f%%\n",
            f->mem_bw_gbps, f->copy_in_gbps, f->copy_out_gbps, 100.0 * f->copy_rms_rel);
}

/* network.measured_*: three lists, one entry per measurement, in measurement order. */
/* Entry i of a list: ", " between entries, a new indented line every 8 (a scenario
 * line holds at most 198 characters; an indented line continues the list). */
static const char *list_sep(size_t i) { return i == 0 ? " " : i % 8 == 0 ? ",\n    " : ", "; }

/* network.measured_*: three lists, one entry per measurement, in measurement order. */
/* A comment of any length as lines of at most COMMENT_WIDTH characters (a scenario
 * file's lines have a limit), broken between words. */
#define COMMENT_WIDTH 96

static void add_comment(strbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_comment(strbuf *t, const char *fmt, ...)
{
    strbuf words = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&words, fmt, ap);
    va_end(ap);
    if (words.failed) {
        t->failed = true; /* the comment would be incomplete: so is the text */
        strbuf_release(&words);
        return;
    }
    const char *p = words.buf;
    while (*p) {
        size_t room = COMMENT_WIDTH - 2, n = strlen(p);
        if (n > room) {
            n = room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0) /* one word longer than a line: cut it */
                n = room;
        }
        strbuf_addf(t, "; %.*s\n", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
    strbuf_release(&words);
}

static void add_measurements(strbuf *t, const ring_sample *ar, size_t nar)
{
    strbuf_addf(t, "measured_ranks =");
    for (size_t i = 0; i < nar; i++)
        strbuf_addf(t, "%s%d", list_sep(i), ar[i].ranks);
    strbuf_addf(t, "\nmeasured_bytes =");
    for (size_t i = 0; i < nar; i++)
        strbuf_addf(t, "%s%lld", list_sep(i), (long long)ar[i].bytes);
    strbuf_addf(t, "\nmeasured_us =");
    for (size_t i = 0; i < nar; i++)
        strbuf_addf(t, "%s%.1f", list_sep(i), ar[i].us);
    strbuf_addf(t, "\n");
}

char *calib_ini_text(const calib_plan *p, const calib_data *d, const calib_fit *f, const char *about)
{
    strbuf t = STRBUF_INIT;
    add_comment(&t, "written by ddpprof calibrate: %s", about);
    strbuf_addf(&t, "; in-place SUM allreduce on the %s backend, %zu measurements (ranks", p->be->name, d->nar);
    for (size_t i = 0; i < p->nranks; i++)
        strbuf_addf(&t, "%s%d", i ? "," : " ", p->ranks[i]);
    strbuf_addf(&t, "; %lld to %lld bytes)\n", (long long)p->sizes[0], (long long)p->sizes[p->nsizes - 1]);
    strbuf_addf(&t, "; ring fit t = 2(n-1)*latency + 2(n-1)/n * S / bandwidth: RMS relative error %.1f%%, worst "
                    "%.1f%%\n",
                100.0 * f->ring.rms_rel, 100.0 * f->ring.max_abs_rel);
    for (size_t i = 0; i < p->nranks; i++) {
        ring_fit w;
        char err[256];
        if (fit_ring_world(d->ar, d->nar, p->ranks[i], &w, err, sizeof err) == 0)
            strbuf_addf(&t, ";   %d ranks alone: latency %.4f us, bandwidth %.4f GB/s (RMS relative error %.1f%%)\n",
                        p->ranks[i], w.alpha_us, w.bandwidth_gbps, 100.0 * w.rms_rel);
    }
    /* The measurements themselves are the model at the world sizes measured: the ring fit
     * misses some of them by tens of percent (caches, cores shared by the ranks); the fit
     * stays for other world sizes and for broadcasts. */
    bool table = d->nar > 0 && d->nar <= SCENARIO_MAX_MEASURED;
    if (table)
        strbuf_addf(&t, "; allreduce times: interpolated between these measurements at the world sizes measured, the "
                        "ring fit\n; at any other world size and for broadcasts\n");
    strbuf_addf(&t, "[network]\nalgorithm = %s\nlatency_us = %.4f\nbandwidth_gbps = %.4f\n",
                table ? "measured" : "ring", f->ring.alpha_us, f->ring.bandwidth_gbps);
    if (table)
        add_measurements(&t, d->ar, d->nar);
    if (f->have_copy) {
        strbuf_addf(&t, "\n; the reducer's bucket copies, %d copiers at once, read + write counted: copy-in %.2f GB/s, "
                        "copy-out %.2f GB/s\n",
                    d->ncp ? d->cp[0].copiers : 0, f->copy_in_gbps, f->copy_out_gbps);
        strbuf_addf(&t, "[device]\nmem_bw_gbps = %.4f\n", f->mem_bw_gbps);
    }
    if (f->have_dispatch) {
        strbuf_addf(&t, "\n"
                        "; each compute-stream op beyond its model, %d ranks at once: the hand-off (ops of 0 us), and "
                        "the wake-up of an op timed to a deadline (ops of %d us)\n",
                    d->dispatchers, CALIB_DISPATCH_MODEL_NS / 1000);
        strbuf_addf(&t, "%sop_overhead_us = %.4f\n\n[host]\nop_wakeup_us = %.4f\n", f->have_copy ? "" : "[device]\n",
                    f->op_overhead_us, f->op_wakeup_us);
    }
    return strbuf_detach(&t, NULL); /* NULL when out of memory */
}

/* What each bandwidth of calib_bandwidths is, and its [device] key out of and in cache. */
static const struct {
    const char *what, *key, *cache_key;
} bandwidth_keys[4] = {
    {"copies into the buckets, read + write bytes over their time", "mem_bw_gbps", "cache_copy_in_gbps"},
    {"copies out of the buckets, likewise", "copy_out_gbps", "cache_copy_out_gbps"},
    {"SGD steps, parameter and gradient read, parameter written", "optimizer_gbps", "cache_optimizer_gbps"},
    {"backwards bound by their gradient write outside collectives, the median of bytes written over time",
     "grad_write_gbps", "cache_grad_write_gbps"},
};

/* A key per bandwidth learned, under its keys out of cache or in it. */
static void add_bandwidths(strbuf *t, const calib_bandwidths *b, bool in_cache)
{
    const double gbps[4] = {b->copy_in_gbps, b->copy_out_gbps, b->optimizer_gbps, b->grad_write_gbps};
    const size_t spans[4] = {b->ncopy_in, b->ncopy_out, b->noptimizer, b->ngrad_write};
    for (int k = 0; k < 4; k++)
        if (spans[k])
            strbuf_addf(t, "; %s%s (%zu spans)\n%s = %.4f\n",
                        in_cache ? "in cache: " : "", bandwidth_keys[k].what, spans[k],
                        in_cache ? bandwidth_keys[k].cache_key : bandwidth_keys[k].key, gbps[k]);
}

/* [network]: the bucket allreduces' measured table, and the ring fit (NULL: none). */
static void add_network(strbuf *t, const calib_run_costs *c, const ring_fit *ring)
{
    if (c->nar == 0)
        return;
    strbuf_addf(t, "; %zu bucket allreduces, from the last rank's arrival to the end, the median per size;\n"
                   "; allreduce times interpolated between them at the world sizes seen%s\n",
               c->ncollectives, ring ? ", the ring fit elsewhere and for broadcasts" : "");
    strbuf_addf(t, "[network]\nalgorithm = measured\n");
    if (ring)
        strbuf_addf(t, "latency_us = %.4f\nbandwidth_gbps = %.4f\n", ring->alpha_us, ring->bandwidth_gbps);
    add_measurements(t, c->ar, c->nar);
}

/* [device]: what a GPU user would set too (bandwidths, the hand-off, compute slowed by
 * communication); its header only when something is under it. */
static void add_device(strbuf *t, const calib_run_costs *c)
{
    if (calib_bandwidths_spans(&c->memory) || c->ngaps || c->ncontended)
        strbuf_addf(t, "\n[device]\n");
    add_bandwidths(t, &c->memory, false);
    if (c->ngaps)
        strbuf_addf(t, "; idle time between consecutive forwards, the median of %zu\nop_overhead_us = %.4f\n",
                   c->ngaps, c->op_overhead_us);
    if (c->ncontended)
        strbuf_addf(t, "; forwards and backwards inside their rank's collectives: time beyond the model fitted to the "
                       "time inside (%zu spans)\ncomm_slowdown = %.4f\n",
                   c->ncontended, c->comm_slowdown);
}

/* [host]: the cores the runs' ranks shared, and the collectives' part in them. */
static void add_host_cores(strbuf *h, const calib_run_costs *c)
{
    if (c->host_cores > 0 && calib_bandwidths_spans(&c->memory) > c->memory.ngrad_write)
        strbuf_addf(h, "; the cores the runs' ranks shared: the bandwidths above are one op's on one core, shared "
                       "out\n; (with the write that begins each backward that sleeps, at grad_write_gbps)\n"
                       "host_cores = %g\n",
                   c->host_cores);
    if (c->host_cores > 0 && c->nar > 0)
        strbuf_addf(h, "; the bucket allreduces' sums shared them too: the measured table is each collective's time "
                       "alone\ncomm_on_host_cores = true\n");
    if (c->host_cores > 0 && c->nar > 0 && c->nweighted > 0)
        strbuf_addf(h,
                   c->comm_core_weight == CALIB_WEIGHT_PRIOR
                       ? "; the sums' weight beside the copies and steps on the cores: the comm workers' "
                         "scheduler weight at\n"
                         "; niceness 10 (110 / 1024); no other makes the %zu bucket allreduces that met other work "
                         "agree 2 %%\n"
                         "; better on their times alone\ncomm_core_weight = %.4f\n"
                       : "; the sums' weight beside the copies and steps on the cores: the one at which the %zu "
                         "bucket allreduces\n"
                         "; that met other work agree best on their times alone (the sleeping backwards' writes "
                         "left out)\n"
                         "comm_core_weight = %.4f\n",
                   c->nweighted, c->comm_core_weight);
}

/* [host]: the terms of runs whose ranks' memory fits in the last-level cache, learned
 * apart. */
static void add_host_cache(strbuf *h, const calib_run_costs *c)
{
    if (calib_bandwidths_spans(&c->cache) == 0)
        return;
    strbuf_addf(h, "; runs whose ranks' memory (12 bytes per parameter, each rank of a host) fits in the host's "
                   "last-level cache, learned apart\ncache_mb = %g\n",
               c->cache_mb);
    add_bandwidths(h, &c->cache, true);
    if (c->ncache_collectives)
        strbuf_addf(h, "; in cache: bucket allreduces' times over the table's at their size, the median of %zu\n"
                       "cache_allreduce_factor = %.4f\n",
                   c->ncache_collectives, c->cache_allreduce_factor);
    if (c->ncache_uncrowded)
        strbuf_addf(h, "; in cache, with a core per rank: those that stalled beyond it, their share of %zu and "
                       "mean\ncache_allreduce_stall_fraction = %.6f\ncache_allreduce_stall_us = %.4f\n",
                   c->ncache_uncrowded, c->cache_allreduce_stall_fraction, c->cache_allreduce_stall_us);
    if (c->ncache_crowded)
        strbuf_addf(h, "; in cache, with more ranks than cores: likewise, of %zu\n"
                       "cache_allreduce_crowded_stall_fraction = %.6f\ncache_allreduce_crowded_stall_us = %.4f\n",
                   c->ncache_crowded, c->cache_allreduce_crowded_stall_fraction,
                   c->cache_allreduce_crowded_stall_us);
    if (c->ncache_forward)
        strbuf_addf(h, "; in cache: forwards beyond their model, the mean of %zu and its standard deviation, and "
                       "their stalls\ncache_op_wakeup_us = %.4f\ncache_op_wakeup_sd_us = %.4f\n"
                       "cache_op_stall_fraction = %.6f\ncache_op_stall_us = %.4f\n",
                   c->ncache_forward, c->cache_op_wakeup_us, c->cache_op_wakeup_sd_us, c->cache_op_stall_fraction,
                   c->cache_op_stall_us);
    if (c->ncache_host_wake)
        strbuf_addf(h, "; in cache: a rank's next iteration after its last compute op, beyond op_overhead_us, "
                       "likewise (%zu)\ncache_host_wake_us = %.4f\ncache_host_wake_sd_us = %.4f\n"
                       "cache_host_wake_stall_fraction = %.6f\ncache_host_wake_stall_us = %.4f\n",
                   c->ncache_host_wake, c->cache_host_wake_us, c->cache_host_wake_sd_us,
                   c->cache_host_wake_stall_fraction, c->cache_host_wake_stall_us);
    if (c->ncache_launch)
        strbuf_addf(h, "; in cache: bucket allreduces an idle comm stream started late (%zu), likewise, and the "
                       "hold of\n"
                       "; those woken beside their compute's run of copies or writes (%zu; 0 where none)\n"
                       "cache_comm_launch_us = %.4f\ncache_comm_launch_sd_us = %.4f\n"
                       "cache_comm_launch_per_op_us = %.4f\ncache_comm_launch_behind_us = %.4f\n",
                   c->ncache_launch, c->ncache_launch_goes_on, c->cache_comm_launch_us, c->cache_comm_launch_sd_us,
                   c->cache_comm_launch_per_op_us, c->cache_comm_launch_behind_us);
}

/* [host]: the compute ops' hand-offs, wake-ups and stalls. */
static void add_host_op_terms(strbuf *h, const calib_run_costs *c)
{
    if (c->nbusy_gaps)
        strbuf_addf(h, "; idle time after a copy or step, before the next op queued (no sleep between), the mean of "
                       "%zu\nop_overhead_busy_us = %.4f\n",
                   c->nbusy_gaps, c->op_overhead_busy_us);
    if (c->nforward)
        strbuf_addf(h, "; forwards beyond their model, the mean of %zu and its standard deviation\n"
                       "op_wakeup_us = %.4f\nop_wakeup_sd_us = %.4f\n",
                   c->nforward, c->op_wakeup_us, c->op_wakeup_sd_us);
    if (c->op_stall_fraction > 0)
        strbuf_addf(h, "; stalls: forwards beyond the median excess by over 10 median absolute deviations, their "
                       "share and mean beyond op_wakeup_us\nop_stall_fraction = %.6f\nop_stall_us = %.4f\n",
                   c->op_stall_fraction, c->op_stall_us);
    if (c->op_gap_stall_fraction > 0)
        strbuf_addf(h, "; stalls of the hand-off: gaps between forwards beyond their median by over 10 median "
                       "absolute deviations, their share and mean beyond it\nop_gap_stall_fraction = %.6f\n"
                       "op_gap_stall_us = %.4f\n",
                   c->op_gap_stall_fraction, c->op_gap_stall_us);
    if (c->nhost_wake && c->host_wake_us > 0)
        strbuf_addf(h, "; a rank's next iteration after its last compute op (its host woken from the step's "
                       "synchronize), beyond op_overhead_us:\n"
                       "; the mean of %zu and its standard deviation, and the stalls beyond the median by over 10 "
                       "median absolute deviations\nhost_wake_us = %.4f\nhost_wake_sd_us = %.4f\n"
                       "host_wake_stall_fraction = %.6f\nhost_wake_stall_us = %.4f\n",
                   c->nhost_wake, c->host_wake_us, c->host_wake_sd_us, c->host_wake_stall_fraction,
                   c->host_wake_stall_us);
    if (c->backward_stall_fraction > 0)
        strbuf_addf(h, "; stalls of the %zu backwards that sleep, outside collectives, likewise\n"
                       "backward_stall_fraction = %.6f\nbackward_stall_us = %.4f\n",
                   c->nbackward, c->backward_stall_fraction, c->backward_stall_us);
}

/* [host]: the collectives' wake-ups, late starts and late exits beside the compute. */
static void add_host_comm_terms(strbuf *h, const calib_run_costs *c)
{
    if (c->ncontended)
        strbuf_addf(h, "; forwards and backwards inside their rank's collectives: their late wake-up beside "
                       "comm_slowdown (%zu spans)\ncomm_wakeup_us = %.4f\n",
                   c->ncontended, c->comm_wakeup_us);
    if (c->nlaunch)
        strbuf_addf(h, "; bucket allreduces whose comm stream idled until the bucket was ready (%zu): their late "
                       "start beyond op_overhead_us,\n"
                       "; fitted as this plus comm_launch_per_op_us per copy, step or write of the other ranks "
                       "running on a crowded host\n; (%zu launches met some), and the residuals' standard deviation\n"
                       "comm_launch_us = %.4f\ncomm_launch_sd_us = %.4f\ncomm_launch_per_op_us = %.4f\n",
                   c->nlaunch, c->nlaunch_beside_ops, c->comm_launch_us, c->comm_launch_sd_us,
                   c->comm_launch_per_op_us);
    if (c->nlaunch_goes_on)
        strbuf_addf(h, "; of those, the ones whose compute stream went straight on with copies or writes (%zu): the "
                       "mean wait\n"
                       "; for a core elsewhere, exponential, where %zu started only once that run had ended (out of "
                       "the fit above)\ncomm_launch_behind_us = %.4f\n",
                   c->nlaunch_goes_on, c->nlaunch_behind, c->comm_launch_behind_us);
    if (c->comm_exit_late_fraction > 0)
        strbuf_addf(h, "; ranks waiting for a bucket allreduce on a host of fewer cores than ranks, the first out "
                       "aside: the share that left over %.1f ms after it (of %zu), their mean and standard deviation\n"
                       "comm_exit_late_fraction = %.6f\ncomm_exit_late_us = %.4f\ncomm_exit_late_sd_us = %.4f\n",
                   CALIB_EXIT_LATE_NS / 1e6, c->nexit, c->comm_exit_late_fraction, c->comm_exit_late_us,
                   c->comm_exit_late_sd_us);
    if (c->compute_wake_late_fraction > 0)
        strbuf_addf(h, "; ranks idle until the last bucket allreduce on a host of fewer cores than ranks: the share "
                       "whose compute went on over %.1f ms after its end (of %zu), their mean and standard deviation\n"
                       "compute_wake_late_fraction = %.6f\ncompute_wake_late_us = %.4f\n"
                       "compute_wake_late_sd_us = %.4f\n",
                   CALIB_EXIT_LATE_NS / 1e6, c->nwake, c->compute_wake_late_fraction, c->compute_wake_late_us,
                   c->compute_wake_late_sd_us);
}

char *calib_run_ini_text(const calib_run_costs *c, const ring_fit *ring, const char *about)
{
    strbuf t = STRBUF_INIT;
    add_comment(&t, "written by ddpprof calibrate --from: learned from %s", about);
    add_network(&t, c, ring);
    /* [host]: the terms of ranks sharing this host's cores, after [device]. */
    add_device(&t, c);
    strbuf h = STRBUF_INIT;
    add_host_cores(&h, c);
    add_host_cache(&h, c);
    add_host_op_terms(&h, c);
    add_host_comm_terms(&h, c);
    if (h.failed)
        t.failed = true; /* the [host] section would be incomplete: so is the text */
    else if (h.len > 0)
        strbuf_addf(&t, "\n[host]\n%s", h.buf);
    strbuf_release(&h);
    return strbuf_detach(&t, NULL); /* NULL when out of memory */
}
