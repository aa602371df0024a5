/* cli_calibrate_from.c — `ddpprof calibrate --from DB --run ID [--run ID ...]`: the
 * model's per-op terms and allreduce times learned from measured runs (what each op
 * cost with the whole run beside it), printed and written as a fragment to include.
 *
 * Contract: exit 0 with FILE written; 2 for a database or run that is not there, or runs
 * with nothing to learn from; 1 when reading or writing fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/calib_from_run.h"
#include "reports/calib_report.h"
#include "engine/predict/calibrate_memory.h"
#include "engine/predict/calibrate_weight.h"
#include "src/cli.h"
#include "profiler/store.h"

/* A line per bandwidth learned (`prefix` before each name). */
static void print_bandwidths(const calib_bandwidths *b, const char *prefix)
{
    const char *name[4] = {"mem_bw", "copy_out", "optimizer", "grad_write"};
    const char *what[4] = {"copies into the buckets, read + write bytes over time", "copies out of the buckets",
                           "SGD steps: parameter and gradient read, parameter written",
                           "backwards bound by their gradient write outside collectives, bytes written over time, median"};
    const double gbps[4] = {b->copy_in_gbps, b->copy_out_gbps, b->optimizer_gbps, b->grad_write_gbps};
    const size_t spans[4] = {b->ncopy_in, b->ncopy_out, b->noptimizer, b->ngrad_write};
    for (int k = 0; k < 4; k++)
        if (spans[k])
            printf("%s%-11s %10.3f GB/s (%s; %zu spans)\n", prefix, name[k], gbps[k], what[k], spans[k]);
}

/* What each compute op cost beyond its model: wake-ups, stalls, the idle between ops. */
static void print_op_costs(const calib_run_costs *c)
{
    printf("# learned from %zu forward spans, %zu gaps between forwards, %zu copy / SGD spans, %zu bucket allreduces\n",
           c->nforward, c->ngaps, c->memory.ncopy_in + c->memory.ncopy_out + c->memory.noptimizer, c->ncollectives);
    if (c->nforward)
        printf("op_wakeup   %10.3f us  (forwards beyond their model, mean; standard deviation %.3f us)\n",
               c->op_wakeup_us, c->op_wakeup_sd_us);
    if (c->op_stall_fraction > 0)
        printf("op_stall    %10.3f us  (%.3f %% of the forwards beyond the body of wake-ups, their mean beyond it)\n",
               c->op_stall_us, 100.0 * c->op_stall_fraction);
    if (c->op_gap_stall_fraction > 0)
        printf("gap_stall   %10.3f us  (%.3f %% of the gaps between forwards beyond their median by over 10 deviations, their mean beyond it)\n",
               c->op_gap_stall_us, 100.0 * c->op_gap_stall_fraction);
    if (c->nhost_wake && c->host_wake_us > 0)
        printf("host_wake   %10.3f us  (a rank's next iteration after its last compute op, beyond op_overhead, mean of %zu;\n"
               "                        standard deviation %.3f us; %.2f %% of them stall, %.3f us more on average)\n",
               c->host_wake_us, c->nhost_wake, c->host_wake_sd_us, 100.0 * c->host_wake_stall_fraction,
               c->host_wake_stall_us);
    if (c->backward_stall_fraction > 0)
        printf("bwd_stall   %10.3f us  (%.3f %% of the %zu backwards that sleep, outside collectives, likewise)\n",
               c->backward_stall_us, 100.0 * c->backward_stall_fraction, c->nbackward);
    if (c->ngaps)
        printf("op_overhead %10.3f us  (idle between consecutive forwards, median)\n", c->op_overhead_us);
    if (c->nbusy_gaps)
        printf("op_overhead_busy %5.3f us  (idle after a copy or step before the next op, no sleep between, mean of %zu)\n",
               c->op_overhead_busy_us, c->nbusy_gaps);
}

/* The bandwidths, and how the ranks shared the host's cores. */
static void print_host_sharing(const calib_run_costs *c)
{
    print_bandwidths(&c->memory, "");
    if (c->host_cores > 0 && calib_bandwidths_spans(&c->memory) > c->memory.ngrad_write)
        printf("host_cores  %10g      (copies, SGD steps, gradient writes and allreduce sums of a run's ranks shared these\n"
               "                        cores: each bandwidth is one op's on one core, the allreduce table each collective's\n"
               "                        time alone; the write before a backward sleeps counted at grad_write)\n",
               c->host_cores);
    if (c->host_cores > 0 && c->nweighted > 0)
        printf(c->comm_core_weight == CALIB_WEIGHT_PRIOR
                   ? "comm_weight %10.4f  (the sums' weight beside a copy or step on the cores: the comm workers' scheduler\n"
                     "                        weight at niceness 10, 110 / 1024; no other makes the %zu bucket allreduces\n"
                     "                        that met other work agree 2 %% better on their times alone)\n"
                   : "comm_weight %10.4f  (the sums' weight beside a copy or step on the cores: the one at which the %zu bucket\n"
                     "                        allreduces that met other work agree best on their times alone, the sleeping\n"
                     "                        backwards' writes, whose ends no span shows, left out)\n",
               c->comm_core_weight, c->nweighted);
}

/* The terms learned apart from runs whose memory fits in the cache. */
static void print_cache_costs(const calib_run_costs *c)
{
    if (calib_bandwidths_spans(&c->cache) == 0)
        return;
    printf("in cache    (runs whose ranks' memory fits in the host's %g MiB cache, learned apart)\n", c->cache_mb);
    print_bandwidths(&c->cache, "  ");
    if (c->ncache_collectives)
        printf("  allreduce x%7.3f    (bucket allreduces' times over the table's at their size, median of %zu)\n",
               c->cache_allreduce_factor, c->ncache_collectives);
    if (c->ncache_uncrowded)
        printf("  allreduce stalls %.2f %% of %zu, %.3f us beyond the body on average (a core per rank)\n",
               100.0 * c->cache_allreduce_stall_fraction, c->ncache_uncrowded, c->cache_allreduce_stall_us);
    if (c->ncache_crowded)
        printf("  allreduce stalls %.2f %% of %zu, %.3f us beyond the body on average (more ranks than cores)\n",
               100.0 * c->cache_allreduce_crowded_stall_fraction, c->ncache_crowded,
               c->cache_allreduce_crowded_stall_us);
    if (c->ncache_forward)
        printf("  op_wakeup   %10.3f us  (forwards beyond their model, mean of %zu; standard deviation %.3f us;\n"
               "                          %.2f %% of them stall, %.3f us more on average)\n",
               c->cache_op_wakeup_us, c->ncache_forward, c->cache_op_wakeup_sd_us, 100.0 * c->cache_op_stall_fraction,
               c->cache_op_stall_us);
    if (c->ncache_host_wake)
        printf("  host_wake   %10.3f us  (next iteration after the last compute op, mean of %zu; standard deviation\n"
               "                          %.3f us; %.2f %% of them stall, %.3f us more on average)\n",
               c->cache_host_wake_us, c->ncache_host_wake, c->cache_host_wake_sd_us,
               100.0 * c->cache_host_wake_stall_fraction, c->cache_host_wake_stall_us);
    if (c->ncache_launch)
        printf("  comm_launch %10.3f us  (%zu launches of an idle comm stream, beyond op_overhead; standard deviation\n"
               "                          %.3f us; %.3f us per op of others on a crowded host; %zu woken beside\n"
               "                          their compute's run of copies, held %.3f us on average)\n",
               c->cache_comm_launch_us, c->ncache_launch, c->cache_comm_launch_sd_us,
               c->cache_comm_launch_per_op_us, c->ncache_launch_goes_on, c->cache_comm_launch_behind_us);
}

/* The collectives' effect on compute and their launch and exit on a crowded host. */
static void print_comm_costs(const calib_run_costs *c)
{
    if (c->ncontended)
        printf("comm_slowdown %8.3f    (%zu forwards and backwards inside their rank's collectives: 1/(1+this) of "
               "their speed,\n              and %.3f us later when their end falls inside one)\n",
               c->comm_slowdown, c->ncontended, c->comm_wakeup_us);
    if (c->nlaunch)
        printf("comm_launch %10.3f us  (%zu bucket allreduces an idle comm stream started late, beyond op_overhead, "
               "with no other rank's\n              copy, step or write on a crowded host's cores; standard deviation "
               "%.3f us)\n"
               "  per op    %10.3f us  (later for each such op running when the bucket was ready: %zu of them met some)\n",
               c->comm_launch_us, c->nlaunch, c->comm_launch_sd_us, c->comm_launch_per_op_us, c->nlaunch_beside_ops);
    if (c->nlaunch_goes_on)
        printf("  behind    %10.3f us  (%zu woken while their compute went straight on with copies or writes: the mean\n"
               "                        wait for a core elsewhere, exponential; %zu started only once that run had ended)\n",
               c->comm_launch_behind_us, c->nlaunch_goes_on, c->nlaunch_behind);
    if (c->comm_exit_late_fraction > 0)
        printf("comm_exit   %10.3f us  (%.1f %% of %zu ranks waiting for a bucket allreduce on a crowded host left late, mean;"
               " standard deviation %.3f us)\n",
               c->comm_exit_late_us, 100.0 * c->comm_exit_late_fraction, c->nexit, c->comm_exit_late_sd_us);
    if (c->compute_wake_late_fraction > 0)
        printf("compute_wake %9.3f us  (%.1f %% of %zu ranks idle until the last bucket allreduce on a crowded host went"
               " on late, mean;\n              standard deviation %.3f us)\n",
               c->compute_wake_late_us, 100.0 * c->compute_wake_late_fraction, c->nwake, c->compute_wake_late_sd_us);
}

/* Each bucket allreduce size measured, beside the ring fit when there is one. */
static void print_allreduce_table(const calib_run_costs *c, const ring_fit *ring)
{
    if (c->nar == 0)
        return;
    printf("%5s  %12s  %12s%s\n", "ranks", "size (B)", "measured us", ring ? "      ring us    resid %" : "");
    for (size_t i = 0; i < c->nar; i++) {
        printf("%5d  %12lld  %12.1f", c->ar[i].ranks, (long long)c->ar[i].bytes, c->ar[i].us);
        if (ring) {
            double m = ring_model_us(ring->alpha_us, ring->bandwidth_gbps, c->ar[i].bytes, c->ar[i].ranks);
            printf("  %11.1f  %+8.1f%%", m, 100.0 * (m - c->ar[i].us) / c->ar[i].us);
        }
        printf("\n");
    }
    if (ring)
        printf("ring fit: alpha = %.3f us, B = %.3f GB/s; RMS relative error %.1f%%\n", ring->alpha_us,
               ring->bandwidth_gbps, 100.0 * ring->rms_rel);
}

static void print_costs(const calib_run_costs *c, const ring_fit *ring)
{
    print_op_costs(c);
    print_host_sharing(c);
    print_cache_costs(c);
    print_comm_costs(c);
    print_allreduce_table(c, ring);
}

/* The ring over every world size seen, or over the one world size alone; false when
 * the sizes cannot determine it (one bucket size). */
static bool fit_samples(const calib_run_costs *c, ring_fit *ring)
{
    char err[256];
    if (c->nar == 0)
        return false;
    if (fit_ring(c->ar, c->nar, ring, err, sizeof err) == 0)
        return true;
    return fit_ring_world(c->ar, c->nar, c->ar[0].ranks, ring, err, sizeof err) == 0;
}

int cli_calibrate_from(const char *db_path, const int64_t *runs, int nruns, double host_cores, double cache_mb,
                       const char *out)
{
    if (access(db_path, R_OK) != 0) {
        int e = errno;
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, e == ENOENT ? "no such database" : strerror(e));
        return e == ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
    }
    store *st = NULL;
    char err[512], about[16384]; /* the runs named: a thousand ids fit, beyond them the list is cut */
    if (store_open_readonly(db_path, &st, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: %s: %s\n", db_path, err);
        return EXIT_RUNTIME;
    }
    calib_run_costs *c = malloc(sizeof *c);
    int rc = EXIT_OK;
    if (!c) {
        fprintf(stderr, "ddpprof: out of memory\n");
        rc = EXIT_RUNTIME;
    } else if (calib_from_runs(st, runs, nruns, host_cores, cache_mb, c, about, sizeof about, err, sizeof err) != 0) {
        fprintf(stderr, "ddpprof: calibrate --from %s: %s\n", db_path, err);
        rc = EXIT_USAGE;
    }
    store_close(st);
    if (rc == EXIT_OK && cache_mb < 0 && c->host_cores > 0 && c->cache_mb <= 0)
        fprintf(stderr, "ddpprof: note: this machine's kernel lists no last-level cache "
                        "(/sys/devices/system/cpu/cpu0/cache), so no bandwidths in cache are learned: a "
                        "small model is predicted at the large ones' speed; --cache-mb N says the cache\n");
    if (rc == EXIT_OK) {
        ring_fit ring;
        bool have_ring = fit_samples(c, &ring);
        print_costs(c, have_ring ? &ring : NULL);
        char *ini = calib_run_ini_text(c, have_ring ? &ring : NULL, about);
        if (!ini || cli_write_text(out, ini) != 0)
            rc = EXIT_RUNTIME;
        else
            printf("wrote %s (learned from %s): include it with `include = %s`\n", out, about, out);
        free(ini);
    }
    free(c);
    return rc;
}
