/* sim_internal.h — the sim backend's world and devices (internal to engine/sim/).
 *
 * A rank's device keeps, per stream, the queue of entries not yet timed.  Entries are
 * timed as early as their dependencies allow (dataflow order, not time order: with no
 * contention but a stream's own order, the two give the same times), so most ops are
 * timed the moment they are enqueued.  A stream stops at a wait on an event of the other
 * stream not yet reached, and at a collective not every rank has arrived at; with
 * [device] comm_slowdown or [host] comm_wakeup_us, a forward or backward also waits until the
 * collective ahead of it on its comm stream is timed, since it runs slower inside it
 * (sim_contention.h).  With [host] host_cores, a copy or optimizer step shares its
 * host's cores with the others running (sim_host.h), and so does each rank's copy of a
 * bucket allreduce's result out of the staging area (ranks as processes), which ends its
 * collective, or with [host] comm_on_host_cores each rank's part of the sums: such an
 * op's end is known, and its stream goes on, only when nothing else
 * can move and the host runs to it (sim_world_finish_host_ops).  On a host of fewer cores than ranks, a rank waiting for a bucket allreduce
 * may leave it late ([host] comm_exit_late_*): its comm worker queues for cores the
 * ranks already out hold with their copies and steps.  With [host]
 * comm_launch_behind_us, an idle comm stream woken while its compute stream goes
 * straight on with ops on the host's cores waits for that run to end, or for a drawn
 * hold, whichever is first: it stops at its wait until the compute stream, advancing,
 * has run past the hold or finds its head is no such op any more, and starts then.
 * Behind a blocked compute stream, a copy out that would be timed straight after the one
 * before it, end to start, is folded into it (record.detail = phase, no shared host, no
 * contention: sim_device.c says when that is exact), so that a rank's hundreds of copies
 * out waiting for its last bucket are one entry, not one each on every rank at once.
 * The world keeps one record per collective (by seq); the last rank to arrive completes it and puts every rank on the
 * worklist, which the scheduler (sim_backend.c) drains between fibers.
 * Collectives with buffers (the small ones whose result the host reads: join's counts,
 * the rebuilt bucket order) carry their data at completion, before any host can see the
 * end: a broadcast the root's, an allreduce the sum (float32, int32).
 */
#ifndef DDPPROF_SIM_INTERNAL_H
#define DDPPROF_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/backend.h"
#include "engine/device.h"
#include "engine/cost/netmodel.h"
#include "engine/sim/sim_contention.h"
#include "engine/sim/sim_fiber.h"
#include "engine/sim/sim_host.h"
#include "engine/cost/timing.h"
#include "engine/sim/sim_host_terms.h"

typedef enum { SIM_OP = 0, SIM_WAIT, SIM_COLL } sim_entry_type;

typedef struct {
    uint8_t type;  /* sim_entry_type */
    uint8_t kind;  /* span_kind */
    uint8_t work;  /* dev_work of a collective */
    union {
        uint8_t dtype;  /* collectives: dev_dtype of the buffer */
        uint8_t sleeps; /* forwards and backwards: sleeps to its modelled deadline (timing_op_sleeps) */
    };
    int32_t iter, layer, bucket;
    int64_t seq, bytes;
    int64_t enq_ns;  /* host time of the enqueue: nothing starts before it */
    uint64_t dur_ns; /* ops */
    union {
        uint64_t ticket; /* waits: the other stream's event */
        float prescale;  /* allreduces: each rank's float32 values times this before the sum */
    };
    void *buf;       /* collectives: the rank's buffer (NULL: traffic only) */
    union {
        int64_t count;    /* collectives: elements of buf */
        int64_t write_ns; /* a backward that sleeps: its gradient write's work, in ns of one core */
    };
    union {
        int32_t root;   /* broadcasts: the rank that sends */
        int32_t merged; /* copies out: the ops folded into this one after it (sim_device.c) */
    };
    uint32_t name_off; /* into the stream's name arena (record.detail = op, or a collective of no bucket) */
} sim_entry;
/* Queues hold an entry per op not yet timed, on thousands of ranks: every byte shows. */
_Static_assert(sizeof(sim_entry) <= 80, "a sim_entry grew past 80 bytes");

/* A recorded event of a stream: its time once the stream has completed `ticket` entries. */
typedef struct {
    uint64_t ticket;
    int64_t at_ns; /* -1 until reached */
} sim_mark;

/* One merged span being extended (record.detail = phase). */
typedef struct {
    bool open;
    span s;
} sim_phase;

typedef struct {
    sim_entry *q;
    size_t head, count, cap;
    char *names;
    size_t names_len, names_cap;
    uint64_t enqueued, completed;
    int64_t free_ns; /* end of the last completed entry */
    uint8_t last_kind; /* span_kind of the last completed op or collective */
    bool arrived;    /* the head collective's arrival is registered */
    bool hosted;     /* the head op is submitted to the host's shared cores */
    bool worker_busy; /* its last op ran on a core to its end (a copy, a step): no sleep before the next */
    bool stall_drawn; /* the head op's hand-off stall is drawn (stall_ns), its end not known yet */
    int64_t stall_ns;
    int64_t hosted_start_ns;
    int64_t arrival_ns;
    /* The comm stream's start behind an event, drawn once: launch_at_ns, and whether it
     * waits for the compute stream's run of ops on the host's cores to end, or until
     * launch_cap_ns, whichever is first (then launch_at_ns moves there, if later, and
     * launch_behind clears). */
    bool launch_drawn, launch_behind;
    int64_t launch_at_ns, launch_cap_ns;
    sim_mark *marks;
    size_t marks_head, marks_count, marks_cap, marks_reached;
    sim_phase phase;
    span_ring *ring;
} sim_stream;

typedef struct sim_world sim_world;

typedef struct {
    device base;
    sim_world *w;
    sim_stream streams[DEV_STREAM_COUNT];
    timing_model timing; /* for ops that carry a GEMM shape instead of a duration */
    sim_host_terms host_terms; /* [host]: this rank's wake-ups, stalls, late starts, drawn from timing's generator */
    sim_busy comm_busy;  /* the comm stream's collectives still ahead of the compute stream */
    sim_host *host;      /* cores shared with the other ranks of its host ([host] host_cores; NULL: none) */
    int host_member;     /* this rank's index among them (its streams are members index x 2 + stream) */
    int64_t staged_seq, staged_end_ns; /* on a shared host: its end of that bucket allreduce */
    int64_t late_seq, late_ns; /* on a crowded host: how late it may leave that bucket allreduce */
    int64_t host_ns;
    int blocked_on; /* stream the host waits for in synchronize, -1 when not waiting */
    bool in_worklist;
    bool failed;
    char error[512];
} sim_device;

typedef struct {
    int64_t bytes;
    int arrived;
    int64_t last_arrival_ns;
    int64_t end_ns; /* -1 until complete */
    int64_t data_ns; /* allreduces: when the sum is there, before a paced link's floor */
    uint8_t work;
    bool late_exits; /* some ranks drew a late exit: the others wait for the first rank out */
    bool first_out;  /* the first rank (sim_collective_first) has timed its end */
    bool hosted;     /* its sums run on the host's cores (each rank's end is its part's: staged_end_ns) */
    int32_t root; /* broadcasts: the sending rank, as the first arrival named it */
} sim_collective;

struct sim_world {
    const scenario *sc;
    recorder *rec;
    int world_size;
    record_detail detail;
    net_model net;
    sim_device **devs; /* by rank, set by device_create */
    sim_collective *colls;
    int64_t ncolls, colls_cap;
    int *worklist; /* ranks whose streams may advance: a ring of world_size (each rank once) */
    int work_head, nwork;
    int *runnable; /* ranks whose host can go on */
    int nrunnable;
    bool aborted;
    char abort_reason[512];
    int span_rings;
    sim_host *hosts; /* [host] host_cores > 0: one per host of host_ranks ranks; NULL otherwise */
    int nhosts, host_ranks;
    sim_host_job *host_scratch; /* a host's members' worth, for looking ahead */
    double *host_more_work;     /* per member of a host */
    bool fits_cache; /* the memory of a host's ranks fits in [host] cache_mb (timing_fits_cache) */
    sim_fiber *running; /* the fiber the scheduler is running now */
};

/* The seed of the draws of the machine's noise: [host] noise_seed, or run.seed. */
static inline uint64_t sim_noise_seed(const sim_world *w)
{
    return w->sc->noise_seed ? w->sc->noise_seed : w->sc->seed;
}

/* A bucket's allreduce (gradients), not the small collectives whose result the host
 * reads (join's counts, the rebuilt bucket order). */
static inline bool sim_bucket_allreduce(const sim_entry *e)
{
    return e->work == WORK_ALLREDUCE && e->bucket >= 0 && e->bytes > 0;
}

/* Whether op `e` is memory work on its host's shared cores throughout: a copy or step,
 * or a backward bound by its gradient write (it never sleeps: the write holds a core
 * throughout, as a copy does; one that sleeps to its deadline holds one only while it
 * writes, write_ns, and is timed to its deadline). */
static inline bool sim_on_host_cores(const sim_entry *e)
{
    if (e->type != SIM_OP)
        return false;
    if (timing_on_host_cores((span_kind)e->kind))
        return true;
    return e->kind == SPAN_BACKWARD && e->work == WORK_GRAD && !e->sleeps;
}

/* Whether rank d's host has fewer cores than ranks: a woken thread may queue for one. */
static inline bool sim_device_crowded(const sim_device *d)
{
    return d->host && d->host->members / DEV_STREAM_COUNT > d->host->cores;
}

/* The rank of collective `seq` out first on a crowded host, whom the late exits wait
 * for (sim_collective.c): it turns from collective to collective, as the rank a real
 * scheduler runs first does. */
int sim_collective_first(const sim_world *w, int64_t seq);
/* Called by the first rank out of a collective with late exits once it has timed its
 * end: puts the other ranks back on the worklist, those that leave late last. */
void sim_collective_first_out(sim_world *w, sim_collective *c, int64_t seq);
/* Registers rank d's arrival at collective e at time `at`; true when it was the last,
 * which completes it (sim_collective.c); false too when the world aborted. */
bool sim_collective_arrive(sim_device *d, const sim_entry *e, int64_t at);
/* Advances both streams of `d` as far as their dependencies allow. */
void sim_device_advance(sim_device *d);
/* True when the host of `d` waits in synchronize and may go on now. */
bool sim_device_host_ready(const sim_device *d);
/* Puts rank on the world's work list (once) to run when the scheduler next looks
 * (sim_world.c). */
void sim_world_push_work(sim_world *w, int rank);
/* Marks the world aborted with `why` (the first reason wins) and wakes every rank so
 * that each sees it (sim_world.c). */
void sim_world_abort(sim_world *w, const char *why);
/* When nothing else can move: runs the hosts' shared ops to the earliest end of all and
 * puts the ranks whose op ended on the worklist.  false when no op is pending. */
bool sim_world_finish_host_ops(sim_world *w);
/* Closes the merged phase spans still open (record.detail = phase). */
void sim_device_flush(sim_device *d);

device *sim_device_create(sim_world *w, int rank, char *err, size_t errlen);
void sim_device_destroy(device *d);
span_ring *sim_device_host_ring(device *d);

#endif
