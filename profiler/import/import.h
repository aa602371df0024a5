/* import.h — `ddpprof import`: traces of a real job (PyTorch profiler JSON, one file per
 * rank; Nsight Systems SQLite exports) into one run of the results database, so that
 * every report, export and comparison works on it as on a recorded run.
 *
 * Contract: import_traces reads every file (a directory stands for the trace files in
 * it), tells the ranks apart (distributedInfo.rank, else --rank for a single file,
 * else the number that ends the file's name), maps the events onto spans (kernels,
 * copies and NCCL collectives on their device streams, DDP's phases, gloo's
 * collectives on CPU-only traces), matches collectives across ranks, puts the ranks'
 * clocks on one (the ends of matched collectives, where the files share none), and
 * writes the run, its spans, buckets, source files and statistics in one transaction:
 * the run appears whole or not at all.  IMPORT_BAD_INPUT means the input is at fault
 * (not a trace, truncated, inconsistent ranks, nothing to analyse, too large) and
 * err says which file and where; IMPORT_RUNTIME a failure of the machine or database.
 *
 * Ownership: import_traces() borrows st and o (its paths and name) for the call;
 * everything it reads the traces into is freed before it returns, whatever the outcome,
 * and *sum holds values only.
 */
#ifndef DDPPROF_IMPORT_H
#define DDPPROF_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

typedef struct {
    const char *const *paths;
    int npaths;
    const char *name;      /* the run's name; NULL: from the first file's */
    int rank;              /* --rank for a single file; -1 */
    size_t max_events;     /* 0: IMPORT_DEFAULT_MAX_EVENTS */
    int64_t max_file_bytes; /* of text per file, decompressed; 0: IMPORT_DEFAULT_MAX_FILE_BYTES */
} import_options;

/* ~80 bytes a retained event: about 2.5 GB at the limit. */
#define IMPORT_DEFAULT_MAX_EVENTS ((size_t)30 * 1000 * 1000)
#define IMPORT_DEFAULT_MAX_FILE_BYTES ((int64_t)8 << 30)

typedef enum { IMPORT_OK = 0, IMPORT_RUNTIME = 1, IMPORT_BAD_INPUT = 2 } import_status;

typedef struct {
    int64_t run_id;
    int world_size;
    int nranks; /* the ranks traced: world_size, or fewer */
    int iterations;
    size_t spans;
    char backend[32];
    char clock_sync[512];
} import_summary;

import_status import_traces(store *st, const import_options *o, import_summary *sum, char *err,
                            size_t errlen);

#endif
