/* sim_host.h — the cores of one host, shared by the memory-bound ops of its ranks.
 *
 * On the cpu backend every rank of a run runs on one machine: its copies into and
 * out of the buckets and its optimizer step are real memory work on the same few cores,
 * and after the last allreduce every rank copies out and steps at once.  [device]
 * host_cores = C says how many cores a host has; a memory-bound op needs its modelled
 * duration of one core's time, and runs on at most one core.  The sim times ops in
 * dataflow order, not time order, so a host keeps how many cores the ops already timed
 * use over time, and a new op takes what is left: min(1, C - used) of a core at each
 * moment, waiting while none is.  That conserves the work (the last op of a phase ends
 * when C cores would have finished it all) but gives the cores first to the rank timed
 * first, where a real scheduler shares them: which rank finishes first is the model's
 * order, how long the phase lasts is the cores'.
 *
 * Contract: sim_host_init() sets the cores (> 0) and the number of members (ranks).
 * sim_host_place() times an op of member `m` starting at `start_ns` that needs `work_ns`
 * of one core, records its use and returns its end in *end_ns; a member's starts never
 * decrease (a stream's ops are timed in order), which lets the host forget what lies
 * before every member's last start.  Returns -1 only when out of memory.
 * sim_host_busy_until() tells when the work placed so far is all done.
 */
#ifndef DDPPROF_SIM_HOST_H
#define DDPPROF_SIM_HOST_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t at_ns; /* the use below holds from here to the next step (the last: 0 from here on) */
    double used;   /* cores in use */
} sim_host_step;

typedef struct {
    double cores;
    sim_host_step *steps;
    size_t count, cap;
    int64_t *last_start; /* per member */
    int members;
    int placed; /* since the last look for what to forget */
} sim_host;

int sim_host_init(sim_host *h, double cores, int members);
int sim_host_place(sim_host *h, int member, int64_t start_ns, uint64_t work_ns, int64_t *end_ns);
/* The time from which the ops placed so far leave every core free (INT64_MIN: none
 * placed yet). */
int64_t sim_host_busy_until(const sim_host *h);
void sim_host_free(sim_host *h);

#endif
