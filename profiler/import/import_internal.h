/* import_internal.h — what the importer's files share: a source file as read, and one
 * rank's spans as rank_spans.c derives them, before the job puts the ranks together
 * (import_job.c).  Nothing outside profiler/import/ includes it.
 */
#ifndef DDPPROF_IMPORT_INTERNAL_H
#define DDPPROF_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/import/import.h"
#include "profiler/import/trace_model.h"

/* A file given (or found in a directory given), once read. */
typedef struct {
    char *path;
    const char *format;
    int64_t bytes;
    char sha256[65];
    int nranks_in_file;
} import_file;

/* One span of one rank, on its file's clock; names index the rank's string table. */
typedef struct {
    int64_t start, end;
    int64_t launch;    /* when the host asked for it (a device op's launch); else start */
    int64_t bytes;     /* -1 */
    int64_t dev_stream;
    int64_t coll_seq;  /* the trace's per-group sequence number; -1 */
    int64_t seq;       /* the run's collective number, once matched; -1 */
    int32_t name;
    int32_t iter;
    int32_t launch_iter; /* the step that launched it (HTA's), whatever period it ran in */
    int32_t bucket;    /* -1 */
    int32_t pg;        /* names index; -1 */
    int32_t ordinal;   /* comm: its place among its group's collectives in its iteration */
    uint8_t stream, kind, on_device;
    uint8_t hta;       /* hta_class, device spans */
    uint8_t launched;  /* a device span whose launch the trace holds (HTA keeps only those) */
} pspan;

/* A bucket as DDP's reducer launched it in one iteration. */
typedef struct {
    int64_t bytes; /* -1: the trace does not say */
    int nparams;
} ddp_bucket;

/* One rank once analysed (rank_spans.c). */
typedef struct {
    trace_rank *tr;
    pspan *sp;
    size_t nsp, cap;
    /* steps: ProfilerStep#N, by start */
    int64_t *step_n, *step_start, *step_end;
    size_t nsteps;
    bool has_device;   /* kernels, copies */
    /* Device ops launched before the trace's first recorded launch (in the profiler's
     * warm-up, whose host events are not kept): in no traced iteration, left out. */
    size_t launched_before;
    bool has_comm;
    /* DDP's buckets: the first iteration that launched any, and the last one. */
    ddp_bucket *first_buckets, *last_buckets;
    int nfirst, nlast;
    /* clock */
    int64_t offset;       /* added to every time to put the rank on the run's clock */
    int64_t uncertainty;  /* -1: unknown */
    int matched;          /* collectives the offset was computed from */
    const char *clock_how;
} rank_result;

/* Analyses one rank: steps, host-op nesting, launches, phases, spans, DDP's buckets.
 * device_job: some rank of the job has device events (then gloo ops are not the
 * communication, and host ops are not the compute).  0, or -1 with err (memory). */
int rank_spans_build(rank_result *rr, trace_rank *tr, bool device_job, char *err, size_t errlen);
void rank_result_free(rank_result *rr);
/* Appends a span to rr, every field 0 but those whose "none" is -1; NULL with err when
 * memory is out.  The pointer lives until the next append. */
pspan *rank_span_new(rank_result *rr, char *err, size_t errlen);

/* Reads the files (directories expanded) into ranks: IMPORT_OK, or a status with err. */
import_status import_read_files(const import_options *o, import_file **files, int *nfiles,
                                trace_rank ***ranks, int *nranks, trace_limits *lim, char *err,
                                size_t errlen);
void import_files_free(import_file *files, int nfiles, trace_rank **ranks, int nranks);

#endif
