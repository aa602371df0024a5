/* trace_model.h — what an importer reads out of a foreign trace, before it becomes a
 * run: per rank, the events that matter (host ops, launches, kernels, copies), each a
 * fixed-size record with its name interned, on the file's own clock.
 *
 * Contract: a reader (kineto_json.c, nsys_sqlite.c) fills one trace_rank per rank it
 * finds in a file: events in any order, times in ns on that file's clock (abs_clock
 * says whether it is the wall clock, i.e. comparable across files), everything else
 * -1 where the trace does not say it.  trace_rank_push refuses to grow past the
 * caller's event budget (trace_limits), which is what bounds an import's memory: a
 * record is ~80 bytes whatever the JSON text of the event was.  import_job.c turns
 * the ranks into one run.
 */
#ifndef DDPPROF_TRACE_MODEL_H
#define DDPPROF_TRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/strtab.h"

typedef enum {
    TEV_CPU = 0, /* a host op or annotation on a CPU thread (ProfilerStep#N included) */
    TEV_RUNTIME, /* a CUDA runtime or driver call: launches device work (correlation) */
    TEV_KERNEL,
    TEV_MEMCPY,
    TEV_MEMSET,
} tev_type;

/* An event as a reader gives it. */
typedef struct {
    int64_t ts_ns, dur_ns;
    int64_t tid;         /* host events: the thread; device events: the stream */
    int64_t correlation; /* launch <-> device work; -1 */
    int64_t bytes;       /* copy size, or a collective's message size; -1 */
    int64_t seq;         /* a collective's sequence number in its process group; -1 */
    int32_t name;        /* index into trace_rank.names */
    int32_t pg;          /* process group name (names index); -1 */
    int32_t coll;        /* collective name the trace gives in args (names index); -1 */
    int32_t device;      /* device events: the GPU; -1 */
    uint8_t type;        /* tev_type */
    int8_t kind;         /* host events: -1, classified by name (event_names.h); else the
                          * span_kind the reader knows it to be (a phase, or a collective) */
} tev_in;

/* What few events have (copies, collectives), kept apart so that the many do not pay. */
typedef struct {
    int64_t bytes, seq;
    int32_t pg, coll;
} tev_info;

/* An event as kept: 48 bytes, the fields of tev_in but those of tev_info, which `info`
 * indexes (-1: none; see tev_extra). */
typedef struct {
    int64_t ts_ns, dur_ns, tid, correlation;
    int32_t name, info, device;
    uint8_t type;
    int8_t kind;
} tev;

/* How much an import may hold: events over all ranks, and bytes of text per file. */
typedef struct {
    size_t max_events;
    int64_t max_file_bytes; /* decompressed */
    size_t *events_used;    /* shared by the ranks of one import */
} trace_limits;

typedef struct {
    const char *path; /* the file it came from (not owned) */
    int file_idx;
    const char *format; /* "kineto-json", "pytorch-legacy-json", "nsys-sqlite" */
    int rank;           /* -1: not said by the trace */
    const char *rank_from; /* "distributedInfo", "NVTX", ... or NULL */
    int world_size;     /* -1: not said */
    int pg_count;       /* distributedInfo.pg_count: the job's process groups; -1: not said */
    bool abs_clock;     /* times are wall-clock ns since the epoch */
    int64_t base_ns;    /* added to every ts when the trace's times are relative to it */
    char label[64];     /* what tells this rank apart inside its file ("pid 1234"), or "" */
    strtab names;
    tev *ev;
    size_t nev, cap;
    tev_info *info;
    size_t ninfo, capinfo;
    const trace_limits *limits;
} trace_rank;

void trace_rank_init(trace_rank *r, const char *path, int file_idx, const char *format,
                     const trace_limits *limits);
void trace_rank_free(trace_rank *r);
/* Appends an event; -1 with err when the import's event budget is spent or memory is out. */
int trace_rank_push(trace_rank *r, const tev_in *e, char *err, size_t errlen);
/* An event's copy size and collective arguments (all -1 when it has none). */
static inline tev_info tev_extra(const trace_rank *r, const tev *e)
{
    if (e->info >= 0)
        return r->info[e->info];
    return (tev_info){-1, -1, -1, -1};
}
/* Frees the events (not the names) once a rank's spans are made. */
void trace_rank_drop_events(trace_rank *r);
/* Interns a name; -1 when out of memory. */
int32_t trace_rank_name(trace_rank *r, const char *s, size_t len);

#endif
