/* cpu_comm_internal.h — the communicator's state, shared by cpu_comm.c (its life:
 * creation in process memory or in a shared mapping, abort, sleeps) and
 * cpu_collectives.c (the collectives over it).  Not for use outside engine/cpu/.
 *
 * With ranks as threads the state is ordinary memory and each slot points at its
 * rank's own buffer.  With ranks as processes the state sits at the start of a shared
 * mapping (process-shared, robust mutex and conditions) followed by one staging area
 * per rank (waits are futexes, see cpu_comm.c): a rank copies its buffer in on arrival and back out at the end, and slots
 * hold nothing process-specific. */
#ifndef DDPPROF_CPU_COMM_INTERNAL_H
#define DDPPROF_CPU_COMM_INTERNAL_H

#include <pthread.h>
#include <time.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cpu/cpu_collectives.h"

#define CPU_COMM_MAX_WORLD 64
#define CPU_COMM_MAGIC 0x44445043u /* "DDPC" */

typedef struct {
    uint32_t magic;
    int world;
    double timeout_s;
    cpu_link_model link;
    bool processes;
    size_t stage_bytes; /* processes: bytes of each rank's staging area */

    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic uint32_t epoch; /* processes: bumped by every notification (futex word) */
    uint64_t generation;
    int arrived;
    bool present[CPU_COMM_MAX_WORLD];
    /* Set once, under mu; read without it (cpu_comm_aborted(), cpu_comm_sleep_until()):
     * each op of every compute stream asks, and must not queue for mu behind the comm
     * workers.  abort_word (futex: 0, then 1 on the abort) wakes the sleeps. */
    _Atomic bool aborted;
    _Atomic uint32_t abort_word;
    char why[512];
    /* Participants of the current collective still inside its data phase (reading
     * each other's slots): see the ownership note in cpu_collectives.c. */
    int lent;

    /* Each rank's slot for the collective in progress: written before the arrival
     * barrier, read by the others only until the exit barrier. */
    struct {
        void *buf;      /* threads: the rank's buffer */
        uint16_t *half; /* threads: its 16-bit copy (comm hooks) */
        int64_t count;
        int64_t seq;
        int64_t arrival_ns;
        int dtype;
    } slot[CPU_COMM_MAX_WORLD];
} cpu_comm_state;

struct cpu_comm {
    cpu_comm_state *st;
    char *stage; /* processes: this process's view of the staging areas */
    size_t map_len;
    char path[256]; /* processes, creator: the mapping's file, unlinked on destroy */
};

/* Locks the state; a process that died holding the lock aborts the world. */
void cpu_comm_lock(cpu_comm *c);
void cpu_comm_unlock(cpu_comm *c);
/* With the lock held: wakes every waiter of cv (between processes: of anything). */
void cpu_comm_notify(cpu_comm *c, pthread_cond_t *cv);
/* With the lock held: waits on cv (until deadline unless NULL); a dead lock owner
 * aborts the world.  Returns ETIMEDOUT at the deadline, else 0. */
int cpu_comm_wait(cpu_comm *c, pthread_cond_t *cv, const struct timespec *deadline);
/* With the lock held: records the first abort reason and wakes every waiter. */
void cpu_comm_abort_locked(cpu_comm *c, const char *why);

#endif
