/* cpu_collectives.h — collectives among the ranks of one machine (threads or processes).
 *
 * Contract: every rank calls the same collectives in the same order (DDP's in-order
 * launch guarantees it).  A collective starts on a rank when that rank calls it (its
 * arrival, returned to the caller) and returns once every rank has arrived and the data
 * has moved: allreduce is a reduce-scatter then all-gather over shared memory (each
 * rank sums its own chunk of everyone's buffer, in rank order, so every rank ends with
 * bit-identical results), optionally held to a modelled link time.  Waiting is bounded:
 * a rank missing for longer than the timeout, or an abort (a rank died), makes every
 * waiting rank return -1 with the same message naming the missing ranks.
 */
#ifndef DDPPROF_CPU_COLLECTIVES_H
#define DDPPROF_CPU_COLLECTIVES_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/device.h"
#include "engine/cost/netmodel.h"

typedef struct cpu_comm cpu_comm;

/* pace: hold each allreduce to at least the network model's alpha-beta time
 * (netmodel.h: ring or tree, flat or hierarchical), from the last arrival. */
typedef struct {
    net_model net;
    bool pace;
} cpu_link_model;

/* Ranks as threads of this process: the state in ordinary memory. */
int cpu_comm_create(int world_size, double timeout_s, const cpu_link_model *link, cpu_comm **out);
/* Ranks as processes of one machine: the state and one staging area of stage_bytes per
 * rank in a shared file mapping (under /dev/shm, else /tmp) whose path,
 * cpu_comm_path(), the other processes open with cpu_comm_attach().  The creator should
 * cpu_comm_unlink() it once every rank has attached, so that nothing is left behind
 * whatever happens later; the mapping lives on until the last process unmaps it. */
int cpu_comm_create_shared(int world_size, double timeout_s, const cpu_link_model *link, size_t stage_bytes,
                           cpu_comm **out, char *err, size_t errlen);
const char *cpu_comm_path(const cpu_comm *c);
int cpu_comm_attach(const char *path, int world_size, cpu_comm **out, char *err, size_t errlen);
void cpu_comm_unlink(cpu_comm *c);
/* Frees this process's view (and, for threads, the state). */
void cpu_comm_destroy(cpu_comm *c);

/* Describes what a collective is, for error messages ("seq 12, iter 3, bucket 2"). */
typedef struct {
    int64_t seq;
    int iter;
    int bucket;
    const char *name;
} cpu_coll_info;

/* In-place SUM allreduce of `count` elements of `dtype` at `buf`.  For F16/BF16 the
 * fp32 buffer is compressed (after multiplying by prescale), reduced in 16 bits and
 * decompressed, as DDP's fp16/bf16 comm hooks do.  *arrival_ns receives the arrival
 * time.  Returns 0, or -1 with the failure in err. */
int cpu_allreduce(cpu_comm *c, int rank, void *buf, int64_t count, dev_dtype dtype, float prescale,
                  const cpu_coll_info *info, int64_t *arrival_ns, char *err, size_t errlen);

/* Broadcast of `count` int32 from rank 0 into every rank's buf. */
int cpu_broadcast_i32(cpu_comm *c, int rank, int root, int32_t *buf, int64_t count, const cpu_coll_info *info,
                      int64_t *arrival_ns, char *err, size_t errlen);

/* Fails every current and future collective with `why` (first reason wins). */
void cpu_comm_abort(cpu_comm *c, const char *why);
bool cpu_comm_aborted(cpu_comm *c);
/* Copies the abort reason (empty when not aborted). */
void cpu_comm_abort_reason(cpu_comm *c, char *out, size_t outlen);

/* Sleeps until CLOCK_MONOTONIC reaches deadline_ns, or until the communicator is
 * aborted (then at once).  Returns 0 at the deadline, -1 when aborted. */
int cpu_comm_sleep_until(cpu_comm *c, int64_t deadline_ns);

/* CLOCK_MONOTONIC in ns. */
int64_t cpu_clock_ns(void);
/* Sleeps until CLOCK_MONOTONIC reaches deadline_ns. */
void cpu_sleep_until(int64_t deadline_ns);

#endif
