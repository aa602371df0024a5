/* store_read_run.h — reading runs back from the store: which runs a file holds, what one
 * run is (its header), the runs recorded from an id on, and one consistent snapshot for a
 * reader that reads many times.
 *
 * Contract: every function takes a store opened by store_open or store_open_readonly and
 * returns 0, or -1 with "what: SQLite's message" in (err, errlen); a callback's nonzero
 * return stops the iteration and is returned as it is (the callback fills err itself).
 * Strings handed to a callback are borrowed for the call; a filled store_run_header owns
 * its strings until store_run_header_free.
 */
#ifndef DDPPROF_STORE_READ_RUN_H
#define DDPPROF_STORE_READ_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

/* How many runs the file holds and their lowest and highest ids (both 0 when it holds none). */
typedef struct {
    int64_t count, min_id, max_id;
} store_run_ids;
int store_read_run_ids(store *st, store_run_ids *ids, char *err, size_t errlen);

/* The ids of every run the file holds, ascending, into a malloc'ed array the caller
 * frees (*ids NULL and *n 0 when it holds none, or on failure). */
int store_read_run_id_list(store *st, int64_t **ids, size_t *n, char *err, size_t errlen);

/* Whether run `run_id` is in the file. */
int store_run_exists(store *st, int64_t run_id, bool *exists, char *err, size_t errlen);

/* What a run is, from table run. */
typedef struct {
    int64_t id;
    char *name;           /* malloc'ed; never NULL once read */
    char *backend;        /* malloc'ed; NULL: not recorded */
    char *scenario;       /* the effective scenario text, malloc'ed; NULL: none or empty (an import) */
    int world_size;
    int warmup;
    double bucket_cap_mb; /* NAN: not recorded (an imported run's NULL) */
} store_run_header;

/* Fills *h with run `run_id`; *found false (and *h empty) when there is no such run.
 * Free with store_run_header_free, found or not. */
int store_read_run(store *st, int64_t run_id, store_run_header *h, bool *found, char *err, size_t errlen);
/* The same for the run of the highest id; *found false when the file holds no run. */
int store_read_last_run(store *st, store_run_header *h, bool *found, char *err, size_t errlen);
void store_run_header_free(store_run_header *h);

/* Calls fn for every run of id >= first_id, ascending, with its recorded overrides (the
 * JSON object store_set_run_provenance wrote; NULL: none).  Needs schema 7 or later. */
typedef int (*store_run_overrides_fn)(int64_t run_id, const char *overrides, void *ctx);
int store_each_run_from(store *st, int64_t first_id, store_run_overrides_fn fn, void *ctx, char *err,
                        size_t errlen);

/* Calls fn for each complete run of every sweep that has more than one complete run,
 * ordered by sweep then id: `sweep` the id of the sweep's first run.  A file older than
 * schema 7 (no run.sweep) has none. */
typedef int (*store_sweep_point_fn)(int64_t sweep, int64_t run_id, void *ctx);
int store_each_sweep_point(store *st, store_sweep_point_fn fn, void *ctx, char *err, size_t errlen);

/* One read transaction, so that every read until store_end_read sees the same state of
 * the file (a writer may be adding runs meanwhile).  store_end_read ends it if one is
 * open (a read has nothing to lose, so it commits). */
int store_begin_read(store *st, char *err, size_t errlen);
int store_end_read(store *st, char *err, size_t errlen);
/* store_begin_read unless a transaction is open already (the caller's own, which
 * already gives one state of the file): *began says whether it began one, for the
 * caller to end with store_end_read, and only then. */
int store_begin_read_unless_open(store *st, bool *began, char *err, size_t errlen);

#endif
