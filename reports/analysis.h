/* analysis.h — the figures of a ddpprof report, computed from a results database.
 *
 * Contract: analysis_load() reads one run (or every run) from the statistics stored
 * when it ended (schema 4: iteration_stat, collective_stat, bucket_ready_stat), or,
 * for a run without them (still running, abandoned, an older file), through the
 * store's views (store_view_select, restricted to the run) — the same figures
 * either way, read through profiler/store_read_stats.h — and fills plain structs; formatters
 * (report_text.c, report_json.c) only print them.  Durations are milliseconds, sizes
 * bytes.  A figure that is undefined (no spans to measure it: no allreduce for an
 * overlap percentage, no copy_in span for a bucket's ready time) is NAN.
 *
 * Which iterations count: "measured" iterations are those with iter >= run.warmup
 * (iterations are numbered from 0).  Every figure is over measured iterations only;
 * a run that recorded none (e.g. failed during warm-up) uses all its iterations and
 * says so (all_iterations).
 *
 * Figures (DESIGN.md "Analysis definitions", computed per rank-iteration by the
 * iteration_stats view):
 *   step time: per iteration the slowest rank's step; mean/min/max over iterations.
 *   per rank, means per iteration: compute C, comm M, exposed comm, wait; overlap % =
 *   100 * sum(overlap) / sum(comm); attribution of the rank's own step: compute,
 *   exposed transfer = exposed - min(exposed, wait), exposed wait = min(exposed,
 *   wait), other = step - compute - exposed.
 *   per bucket of the latest assignment: ready = end of the bucket's last copy_in span
 *   on a rank-iteration, after that rank-iteration's step start (first forward);
 *   launch delay = that rank's arrival at the bucket's allreduce - ready; both averaged
 *   over rank-iterations.  Arrival skew = last - first arrival and transfer = end -
 *   last arrival, averaged over the bucket's collectives (undefined, NAN, where the run
 *   holds some of its ranks only: the last arrival is then unknown, and a traced
 *   rank's allreduce holds its wait for the others); busbw = bytes * 2(n-1)/n /
 *   transfer (nccl-tests' bus bandwidth, GB/s = 1e9 B/s; 0 when n == 1) of each
 *   collective, as the store's collective view computes it, averaged over them.
 */
#ifndef DDPPROF_ANALYSIS_H
#define DDPPROF_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

typedef struct {
    int rank;
    double speed;   /* speed factor from the rank table; NAN if the rank is missing there */
    bool spans;     /* its spans are stored (schema 8 rank.spans; a run of more than 64 ranks
                     * keeps those of chosen ranks only, every rank's statistics) */
    int iterations; /* rank-iterations averaged over */
    double step_ms; /* this rank's own step */
    double compute_ms;
    double comm_ms;
    double overlap_pct; /* NAN when the rank had no communication */
    double exposed_comm_ms;
    double wait_ms;
    /* attribution of the step; the four add up to step_ms */
    double attr_compute_ms;
    double attr_exposed_transfer_ms;
    double attr_exposed_wait_ms;
    double attr_other_ms;
    /* Holistic Trace Analysis's figures of the rank (table hta_stat, HTA's definitions:
     * its selection of device ops, whole µs), NAN where none were computed (a CPU-only
     * trace, a file older than schema 5): communication kernels under computation
     * kernels, % of communication; idle, computation and the rest, % of the span from
     * the first device op's start to the last one's end. */
    double comm_overlap_pct, idle_pct, compute_pct, non_compute_pct;
} analysis_rank;

/* A file an imported run was read from (table source_file). */
typedef struct {
    char *path, *sha256, *format, *rank_from;
    int64_t bytes;
    int rank; /* -1: several or none */
} analysis_source;

typedef struct {
    int idx;
    int64_t bytes;   /* the assignment's size; the collectives' mean if not in the table */
    int nparams;     /* 0 if the bucket is not in the bucket table */
    int collectives; /* allreduces of this bucket the timings average over */
    int ready_samples; /* rank-iterations with a copy_in span for the bucket */
    double ready_ms;
    double launch_delay_ms;
    double arrival_skew_ms;
    double transfer_ms;
    double busbw_gbps;
} analysis_bucket;

typedef struct {
    int64_t id;
    /* status: the file's 'complete' | 'failed' | 'running', except that a run whose
     * writer is gone is 'abandoned' (store_run_liveness); status_detail says who the
     * writer of a running or abandoned run is and what became of it, else NULL. */
    char *name, *status, *status_detail, *error, *backend, *model, *source, *started_at,
        *finished_at;
    char *placement; /* where the ranks ran (run.ranks: "processes; 4 ranks share 1 GPU ..."), or NULL */
    int world_size;
    bool phase_spans; /* record.detail = phase: one compute span per phase, no bucket readiness */
    int64_t total_params;
    int iterations_planned; /* from the scenario */
    int warmup_planned;
    double bucket_cap_mb;
    int iterations_measured; /* distinct iterations recorded */
    int iterations_warmup;
    bool all_iterations; /* no measured iteration recorded: figures include warm-up */
    int buckets_initial;  /* buckets in assignment version 0 */
    int buckets_rebuilt;  /* in version 1 (0: not rebuilt) */
    int bucket_version;   /* version shown in buckets[]; -1 if the run wrote none */
    int steps;            /* iterations the step statistics are over */
    double step_ms_mean, step_ms_min, step_ms_max; /* NAN when steps == 0 */
    /* The counted iteration whose job step is closest to the median job step (the
     * lowest such iteration on a tie); -1 when steps == 0.  The timeline shows it. */
    int representative_iter;
    bool stored_stats; /* read from the statistics stored at the run's end, not the views */
    size_t nranks;
    analysis_rank *ranks;
    size_t ranks_with_spans; /* ranks whose spans are stored: nranks unless some were not */
    size_t nbuckets;
    analysis_bucket *buckets;
    /* Which device ops HTA's figures count (the lowest rank's selection), or NULL. */
    char *hta_steps;
    /* Imported runs: how the ranks' clocks were put on one, remarks on the source (one a
     * line), and the files; NULL / 0 for recorded runs. */
    char *clock_sync, *notes;
    /* Imported runs: the host's ProfilerStep#N ranges (profiler_step spans), shown beside
     * the step (the job's period on the device timeline); NAN / 0 where none. */
    double host_step_ms_mean;
    int host_steps;
    /* What was run (schema 7; NULL / -1 in older files): the command line's settings and
     * sweep point as JSON text; --verify's verdict (-1 not asked, 1 every synchronised
     * step checked and exact, 0 not); the first run of the sweep the run is a point of.
     * scenario: the effective scenario text (every key's value). */
    char *overrides, *scenario;
    int verified;
    int64_t sweep;
    size_t nsources;
    analysis_source *sources;
    /* The ranks the others wait for (ascending), every one of them: the ranks whose wait
     * is within a quarter of the spread (most - least wait) of the least wait, when the
     * other ranks' mean wait per iteration (straggler_others_wait_ms, the same wait_ms) is
     * at least 1 % of the step and four times the most any of them waits.  nstragglers 0
     * (and straggler_rank -1) when no rank stands out; straggler_rank is the first. */
    int *stragglers;
    size_t nstragglers;
    int straggler_rank;
    double straggler_others_wait_ms;
} analysis_run;

/* Loads run `run_id`, or every run (ascending id) when run_id is -1, into a
 * malloc'ed array.  Returns 0, or -1 with err: "no run with id N", "no runs in DB",
 * or the SQLite message. */
int analysis_load(store *st, int64_t run_id, analysis_run **runs, size_t *nruns, char *err, size_t errlen);

void analysis_free(analysis_run *runs, size_t nruns);

/* Which ranks of its world a run holds, where it holds some only (an imported trace of
 * a few ranks of a job): "ranks 0, 1 of 128" ("rank 0 of 8"; a long list ends "...,
 * 37 ranks of 128") into buf; "" when it holds every rank.  Returns buf. */
char *analysis_ranks_held(const analysis_run *r, char *buf, size_t n);
/* Whether the run holds fewer ranks than its world (an imported subset). */
bool analysis_is_subset(const analysis_run *r);

/* DDP's overlap of a run: the mean over ranks of each rank's overlap_pct; NAN when no
 * rank communicated. */
double analysis_mean_overlap_pct(const analysis_run *r);

/* The stragglers as a reader meets them: "rank 5", "ranks 2, 3", or beyond eight the
 * first eight and "... (N ranks)"; "" when there are none.  Always NUL-terminated. */
void analysis_stragglers_text(const analysis_run *r, char *buf, size_t n);

#endif
