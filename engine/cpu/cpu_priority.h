/* cpu_priority.h — the priority of the cpu backend's comm stream workers, and the share of
 * a core it gives them beside a compute worker.
 *
 * Contract: a comm stream's worker runs at niceness CPU_COMM_STREAM_NICE, its rank's
 * compute worker at the process's (0); cpu_device.c says why.  Linux's scheduler (CFS)
 * shares a contended core in proportion to its threads' weights, 1024 at niceness 0 and
 * 110 at niceness 10 (sched_prio_to_weight in the kernel's kernel/sched/core.c, about
 * 1.25x less per step), so beside a compute worker a comm worker runs
 * CPU_COMM_CFS_WEIGHT as fast: the prior of the sums' weight that calibrate --from
 * learns ([host] comm_core_weight).
 *
 * Ownership: two constants; nothing here allocates.
 */
#ifndef DDPPROF_CPU_PRIORITY_H
#define DDPPROF_CPU_PRIORITY_H

#define CPU_COMM_STREAM_NICE 10
#define CPU_COMM_CFS_WEIGHT (110.0 / 1024.0)

#endif
