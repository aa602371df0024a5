/* store_read_run_row.h — every column of one row of table run, as a report shows a run:
 * what was run and how it ended, where it came from, and what an import or a sweep adds.
 *
 * Contract: store_read_run_row fills *row from run `run_id`; *found false (and *row
 * empty) when there is no such run.  A column the file's schema lacks (an older file:
 * run.ranks is schema 3's, clock_sync and notes schema 5's, overrides, verified and
 * sweep schema 7's) reads as NULL.  Text columns are malloc'ed copies, NULL for SQL
 * NULL ("" stays ""), owned by *row until store_run_row_free, which the caller calls
 * found or not.  Returns 0, or -1 with "what: SQLite's message" in (err, errlen).
 */
#ifndef DDPPROF_STORE_READ_RUN_ROW_H
#define DDPPROF_STORE_READ_RUN_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

typedef struct {
    int64_t id;
    char *name, *status, *error;   /* status: 'running' | 'complete' | 'failed', as stored */
    char *backend, *model;
    char *source;                  /* the scenario file's path */
    char *scenario;                /* the effective scenario text */
    char *started_at, *finished_at;
    char *placement;               /* run.ranks: how the ranks were run */
    char *clock_sync, *notes;      /* an imported run's */
    char *overrides;               /* the command line's settings and sweep point, JSON */
    int world_size, iterations, warmup;
    int64_t total_params;
    double bucket_cap_mb;          /* NAN: NULL (an imported run) */
    int verified;                  /* -1: NULL (not asked), else 0 or 1 */
    int64_t sweep;                 /* the sweep's first run; -1: NULL (none) */
} store_run_row;

int store_read_run_row(store *st, int64_t run_id, store_run_row *row, bool *found, char *err, size_t errlen);
void store_run_row_free(store_run_row *row);

#endif
