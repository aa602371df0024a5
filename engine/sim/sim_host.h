/* sim_host.h — the cores of one host, shared by the memory-bound ops of its ranks.
 *
 * On the cpu backend every rank of a run runs on one machine: its copies into and out of
 * the buckets, its copies of a bucket allreduce's result out of the staging area (ranks
 * as processes), its part of a bucket allreduce's sums ([host] comm_on_host_cores),
 * the gradient writes of its backwards (the whole op where the write outlasts its model,
 * the write alone before a backward sleeps out the rest), and its optimizer step are
 * real memory work on the same few cores, and
 * after the last allreduce every rank copies out and steps at once.  [host] host_cores
 * = C says how many cores a host has.  The ops share them as a kernel's scheduler shares
 * cores among runnable threads: with k ops running, each progresses at min(1, C / k) of
 * a core (processor sharing); when some are a comm stream's (parts of sums, copies out
 * of the staging area), at the shares of timing_core_shares(): the cores shared out in
 * proportion to weights 1 and [host] comm_core_weight, none above a core.  That
 * conserves the cores (C cores' worth of work a second, never more) and lets an op that
 * starts while the cores are busy progress at once, at its share, as `calibrate --from`
 * assumes when it learns the bandwidths.
 *
 * Under sharing an op's end depends on every op that starts before it ends, and the sim
 * times streams in dataflow order, not time order.  So an op is submitted, and its end is
 * known only when the world has nothing else to time: then the host runs its ops to the
 * earliest end of all the hosts' (sim_host_next_end, sim_host_finish_until), and what that
 * end lets move starts no earlier, with one exception: a forward or backward that waited
 * to learn when its comm stream is busy may lead to an op that starts before the time the
 * host ran to.  Such an op catches up at the share it would have had beside the ops
 * running at that time, and the ops that ended meanwhile keep their ends.
 *
 * Contract: sim_host_init() sets the cores (> 0), the comm streams' weight (> 0) and the
 * number of members (a rank's streams: rank index x 2 + stream).  A member submits one op
 * at a time (sim_host_submit: -1 when it has one pending, or out of range);
 * sim_host_take_end() gives the op's end once it is done (false before) and frees the
 * member for the next.
 * `scratch` arguments hold `members` jobs.
 */
#ifndef DDPPROF_SIM_HOST_H
#define DDPPROF_SIM_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A member's op, submitted and not yet taken back. */
typedef struct {
    bool pending, done;
    int64_t start_ns, end_ns; /* end_ns: once done */
    double left_ns;           /* work still to do, in ns of one core */
    bool counted;             /* among the ops running (sim_host_ops_running_at) */
} sim_host_job;

/* When a member's last op taken back ran. */
typedef struct {
    int64_t start_ns, end_ns;
    bool counted;
} sim_host_interval;

typedef struct {
    double cores;
    double sum_weight; /* [host] comm_core_weight: a comm stream's job beside a copy or step */
    sim_host_job *jobs; /* per member */
    sim_host_interval *taken; /* per member: its last op taken back (start = end: none) */
    int members;
    int64_t now_ns; /* the ops are run up to here */
} sim_host;

int sim_host_init(sim_host *h, double cores, double sum_weight, int members);
void sim_host_free(sim_host *h);
int sim_host_submit(sim_host *h, int member, int64_t start_ns, uint64_t work_ns);
/* The same for a sleeping backward's gradient write: shared as any op, but not counted
 * among the ops running, as calibrate --from sees no span of it. */
int sim_host_submit_write(sim_host *h, int member, int64_t start_ns, uint64_t work_ns);
bool sim_host_take_end(sim_host *h, int member, int64_t *end_ns);
/* The earliest end of the ops pending, if none else started (INT64_MAX: none pending).
 * An op done by the time the host ran to is not counted: its stream has been woken for
 * it and waits on something else (a rank whose sums are still running, say), and the host
 * goes on to the next end rather than stop there for ever. */
int64_t sim_host_next_end(const sim_host *h, sim_host_job *scratch);
/* Runs the ops up to t_ns: those that end by then are done. */
void sim_host_finish_until(sim_host *h, int64_t t_ns);
/* When the ops pending would all be done, each member's taking `more_work[m]` ns of one
 * core longer (the ops queued behind it), if no other op started: INT64_MIN when none is
 * pending. */
int64_t sim_host_drain_end(const sim_host *h, const double *more_work, sim_host_job *scratch);
/* When `member`'s op would end if no other op started: an op that starts can only slow
 * it, so it ends no earlier (INT64_MIN: none pending). */
int64_t sim_host_member_end(const sim_host *h, int member, sim_host_job *scratch);
/* How many ops of members not a comm stream's (copies, steps, write-bound backwards) but
 * member `except`'s ran at t_ns: pending ones, and each member's last taken back (a rank timed
 * ahead of t_ns). */
int sim_host_ops_running_at(const sim_host *h, int64_t t_ns, int except);

#endif
