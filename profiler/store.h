/* store.h — the SQLite results database: schema, views, and the writes of one run.
 *
 * Contract: one file holds many runs.  store_open() creates or upgrades the schema
 * (versioned in `meta`), sets WAL mode, and prepares the insert statements.  A run is
 * inserted with status 'running' (store_begin_run) and ends 'complete' or 'failed'
 * (store_finish_run); spans arrive in batches, each written in one transaction.
 * One writer per file: a store handle is used from one thread at a time.
 * Tables: meta, run, rank, param, bucket, span.  Views: collective, collective_arrival,
 * iteration_stats, ddp_logging (see store.c for their exact SQL; README states them).
 */
#ifndef DDPPROF_STORE_H
#define DDPPROF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "span.h"

#define STORE_SCHEMA_VERSION 1

typedef struct store store;

typedef struct {
    const char *name;
    const char *source;       /* scenario file path */
    const char *scenario_ini; /* effective scenario text */
    const char *backend;
    const char *model;
    int world_size;
    int iterations; /* measured */
    int warmup;
    int64_t total_params;
    double bucket_cap_mb;
    const double *rank_speed; /* world_size entries */
} store_run_info;

/* One bucket of an assignment; `params` lists parameter indices in bucket order. */
typedef struct {
    int64_t nbytes;
    int64_t size_limit;
    int nparams;
    const int *params;
} store_bucket;

/* Opens (creating if needed) the database at `path`. Returns 0 or -1 with err. */
int store_open(const char *path, store **out, char *err, size_t errlen);
void store_close(store *st);

int store_begin_run(store *st, const store_run_info *info, int64_t *run_id, char *err, size_t errlen);

/* Parameters in registration order: name, numel, shape text ("64x3x7x7"), layer name. */
int store_write_param(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                      const char *shape, const char *layer, char *err, size_t errlen);

/* Writes assignment `version` (0 = initial, 1 = rebuilt) and sets param.bucket
 * (the latest version's bucket of each parameter). */
int store_write_buckets(store *st, int64_t run_id, int version, const store_bucket *buckets,
                        int nbuckets, char *err, size_t errlen);

/* Writes n spans in one transaction. */
int store_write_spans(store *st, int64_t run_id, const span *spans, size_t n, char *err, size_t errlen);

/* Marks the run 'complete' (error == NULL) or 'failed' with the error text. */
int store_finish_run(store *st, int64_t run_id, const char *error, char *err, size_t errlen);

/* The underlying connection, for readers (reports) sharing the handle. */
struct sqlite3 *store_db(store *st);

/* Opens an existing database for reading only (reports): never creates or upgrades;
 * a file without the current schema is refused.  Returns 0 or -1 with err. */
int store_open_readonly(const char *path, store **out, char *err, size_t errlen);

/* store_write_param with an explicit byte size (store_write_param assumes fp32). */
int store_write_param_bytes(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                            int64_t bytes, const char *shape, const char *layer, char *err,
                            size_t errlen);

/* The SELECT behind view `view` ("collective", "collective_arrival", "iteration_stats",
 * "ddp_logging"), the same text the view was created from.  With one_run, every read
 * of a table is restricted to run_id = ?1: SQLite does not push `WHERE run_id = ?`
 * into the nested aggregates of these views, so readers of one run use this form
 * (e.g. "WITH s AS (<text>) SELECT ... FROM s").  NULL for an unknown view. */
const char *store_view_select(const char *view, bool one_run);

#endif
