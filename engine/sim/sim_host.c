/* sim_host.c — the cores of one host shared by its ranks' memory-bound ops (sim_host.h). */
#include "engine/sim/sim_host.h"

#include "engine/device.h"
#include "engine/cost/timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Work left below this (ns of a core) at the end computed for it is rounding: the op is
 * done.  Every op not done has more, so each step of run_ops moves time on. */
#define DONE_LEFT_NS 1e-3
#define ROUNDING_NS 1e-6

int sim_host_init(sim_host *h, double cores, double sum_weight, int members)
{
    *h = (sim_host){.cores = cores, .sum_weight = sum_weight, .members = members, .now_ns = INT64_MIN};
    h->jobs = calloc((size_t)(members > 0 ? members : 1), sizeof *h->jobs);
    h->taken = calloc((size_t)(members > 0 ? members : 1), sizeof *h->taken);
    if (!h->jobs || !h->taken) {
        sim_host_free(h);
        return -1;
    }
    return 0;
}

void sim_host_free(sim_host *h)
{
    free(h->jobs);
    free(h->taken);
    *h = (sim_host){0};
}

/* Whether member m is a rank's comm stream: its jobs are parts of allreduce sums, or
 * copies of their results, shared out at [host] comm_core_weight. */
static bool sums_member(int m)
{
    return m % DEV_STREAM_COUNT == DEV_STREAM_COMM;
}

/* The shares of a core of the jobs running at t, counting member `plus`'s job among them
 * whether it runs yet or not (-1: none). */
static timing_shares shares_at(const sim_host *h, const sim_host_job *jobs, int64_t t, int plus)
{
    int ops = 0, sums = 0;
    for (int m = 0; m < h->members; m++) {
        const sim_host_job *j = &jobs[m];
        if (m == plus || !j->pending || j->done || j->start_ns > t)
            continue;
        sums += sums_member(m);
        ops += !sums_member(m);
    }
    if (plus >= 0) {
        sums += sums_member(plus);
        ops += !sums_member(plus);
    }
    return timing_core_shares(h->cores, ops, sums, h->sum_weight);
}

static double job_rate(timing_shares sh, int m)
{
    return sums_member(m) ? sh.sum : sh.op;
}

/* Runs the ops of `jobs` (the host's, or a copy) from *now on, to `until`, or to the
 * first end when `stop_at_first`; marks the ops that end done with their end.  Returns
 * the first end met (INT64_MAX: none). */
static int64_t run_ops(const sim_host *h, sim_host_job *jobs, int64_t *now, int64_t until, bool stop_at_first)
{
    int64_t t = *now, first_end = INT64_MAX;
    while (t < until) {
        timing_shares sh = shares_at(h, jobs, t, -1);
        int running = 0;
        int64_t next_start = INT64_MAX, end = INT64_MAX;
        for (int m = 0; m < h->members; m++) {
            const sim_host_job *j = &jobs[m];
            if (!j->pending || j->done)
                continue;
            if (j->start_ns > t) {
                next_start = j->start_ns < next_start ? j->start_ns : next_start;
                continue;
            }
            running++;
            int64_t e = t + (int64_t)ceil(j->left_ns / job_rate(sh, m) - ROUNDING_NS);
            end = e < end ? e : end;
        }
        if (running == 0 && next_start == INT64_MAX)
            break;
        int64_t next = end < next_start ? end : next_start;
        next = next < until ? next : until;
        for (int m = 0; running > 0 && m < h->members; m++) {
            sim_host_job *j = &jobs[m];
            if (!j->pending || j->done || j->start_ns > t)
                continue;
            j->left_ns -= job_rate(sh, m) * (double)(next - t);
            if (next == end && j->left_ns <= DONE_LEFT_NS) {
                j->done = true;
                j->end_ns = end;
                first_end = end;
            }
        }
        t = next;
        if (stop_at_first && first_end != INT64_MAX)
            break;
    }
    *now = t;
    return first_end;
}

static int submit(sim_host *h, int member, int64_t start_ns, uint64_t work_ns, bool counted)
{
    if (member < 0 || member >= h->members || h->jobs[member].pending)
        return -1;
    sim_host_job *j = &h->jobs[member];
    *j = (sim_host_job){.pending = true, .start_ns = start_ns, .left_ns = (double)work_ns, .counted = counted};
    if (work_ns == 0) {
        j->done = true;
        j->end_ns = start_ns;
        return 0;
    }
    /* Too late to slow the ops that ended since it started (sim_host.h): it catches up
     * at the share it would have had beside those running now. */
    if (start_ns < h->now_ns) {
        double rate = job_rate(shares_at(h, h->jobs, h->now_ns, member), member);
        double behind = rate * (double)(h->now_ns - start_ns);
        if (behind + DONE_LEFT_NS >= j->left_ns) {
            j->done = true;
            j->end_ns = start_ns + (int64_t)ceil(j->left_ns / rate - ROUNDING_NS);
        } else {
            j->left_ns -= behind;
        }
    }
    return 0;
}

int sim_host_submit(sim_host *h, int member, int64_t start_ns, uint64_t work_ns)
{
    return submit(h, member, start_ns, work_ns, true);
}

int sim_host_submit_write(sim_host *h, int member, int64_t start_ns, uint64_t work_ns)
{
    return submit(h, member, start_ns, work_ns, false);
}

bool sim_host_take_end(sim_host *h, int member, int64_t *end_ns)
{
    sim_host_job *j = &h->jobs[member];
    if (!j->pending || !j->done)
        return false;
    *end_ns = j->end_ns;
    h->taken[member] = (sim_host_interval){j->start_ns, j->end_ns, j->counted};
    *j = (sim_host_job){0};
    return true;
}

int64_t sim_host_next_end(const sim_host *h, sim_host_job *scratch)
{
    int64_t first = INT64_MAX;
    for (int m = 0; m < h->members; m++)
        if (h->jobs[m].pending && h->jobs[m].done && h->jobs[m].end_ns > h->now_ns && h->jobs[m].end_ns < first)
            first = h->jobs[m].end_ns;
    if (first != INT64_MAX)
        return first;
    memcpy(scratch, h->jobs, (size_t)h->members * sizeof *scratch);
    int64_t t = h->now_ns;
    return run_ops(h, scratch, &t, INT64_MAX, true);
}

void sim_host_finish_until(sim_host *h, int64_t t_ns)
{
    if (t_ns > h->now_ns)
        run_ops(h, h->jobs, &h->now_ns, t_ns, false);
}

int64_t sim_host_drain_end(const sim_host *h, const double *more_work, sim_host_job *scratch)
{
    memcpy(scratch, h->jobs, (size_t)h->members * sizeof *scratch);
    int64_t last = INT64_MIN;
    for (int m = 0; m < h->members; m++) {
        if (scratch[m].pending && !scratch[m].done)
            scratch[m].left_ns += more_work[m];
        else if (scratch[m].pending && scratch[m].end_ns > last)
            last = scratch[m].end_ns;
    }
    int64_t t = h->now_ns;
    for (int64_t end; (end = run_ops(h, scratch, &t, INT64_MAX, true)) != INT64_MAX;)
        last = end > last ? end : last;
    return last;
}

int64_t sim_host_member_end(const sim_host *h, int member, sim_host_job *scratch)
{
    if (member < 0 || member >= h->members || !h->jobs[member].pending)
        return INT64_MIN;
    if (h->jobs[member].done)
        return h->jobs[member].end_ns;
    memcpy(scratch, h->jobs, (size_t)h->members * sizeof *scratch);
    int64_t t = h->now_ns;
    while (!scratch[member].done)
        if (run_ops(h, scratch, &t, INT64_MAX, true) == INT64_MAX)
            return INT64_MIN;
    return scratch[member].end_ns;
}

int sim_host_ops_running_at(const sim_host *h, int64_t t_ns, int except)
{
    int running = 0;
    for (int m = 0; m < h->members; m++) {
        if (m == except || sums_member(m))
            continue;
        const sim_host_job *j = &h->jobs[m];
        bool pending = j->pending && j->counted && j->start_ns <= t_ns && (!j->done || j->end_ns > t_ns);
        bool taken = h->taken[m].counted && h->taken[m].start_ns <= t_ns && h->taken[m].end_ns > t_ns;
        running += pending || taken;
    }
    return running;
}
