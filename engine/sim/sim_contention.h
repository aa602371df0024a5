/* sim_contention.h — a rank's compute slowed by its own communication.
 *
 * While a rank's comm stream moves data, its forwards and backwards run slower: NCCL's
 * kernels take SMs and memory bandwidth from the compute kernels beside them, and on
 * the cpu backend the ranks' allreduce sums take the cores that a sleeping op needs to
 * wake up on time.  [device] comm_slowdown = s says how much: inside a busy interval a
 * timed op progresses at 1/(1+s) of its speed, outside it at full speed; and
 * comm_wakeup_us delays the end of one that falls inside a busy interval (a sleeping
 * op wakes to find the cores taken).
 *
 * Contract: a sim_busy holds one rank's comm-busy intervals in time order, without
 * overlap (a stream runs one collective at a time); sim_busy_note() appends one,
 * sim_busy_end() gives the end of an op of `dur_ns` starting at `start_ns`, and drops
 * intervals that end before `start_ns` (ops of one stream are timed in start order).
 * Returns -1 from sim_busy_note() only when out of memory.
 */
#ifndef DDPPROF_SIM_CONTENTION_H
#define DDPPROF_SIM_CONTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t from_ns, to_ns;
} sim_interval;

typedef struct {
    sim_interval *v;
    size_t head, count, cap;
} sim_busy;

int sim_busy_note(sim_busy *b, int64_t from_ns, int64_t to_ns);
int64_t sim_busy_end(sim_busy *b, int64_t start_ns, uint64_t dur_ns, double slowdown);
/* Whether `t_ns` falls inside one of the intervals (after its start, up to its end). */
bool sim_busy_covers(const sim_busy *b, int64_t t_ns);
void sim_busy_free(sim_busy *b);

#endif
