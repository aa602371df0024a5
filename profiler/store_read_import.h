/* store_read_import.h — what an imported run brings beside its spans, read back: the
 * files it was read from (table source_file) and Holistic Trace Analysis's figures of
 * each rank (table hta_stat).
 *
 * Contract: both tables are schema 5's; a file without them reads as holding no rows.
 * Every function returns 0, or -1 with "what: SQLite's message" in (err, errlen); a
 * callback's nonzero return stops the iteration and is returned as it is (the callback
 * fills err itself).  A row handed to a callback, its strings included, is borrowed
 * for the call.
 */
#ifndef DDPPROF_STORE_READ_IMPORT_H
#define DDPPROF_STORE_READ_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/hta_figures.h"
#include "profiler/store.h"

/* Calls fn for each file run `run_id` was imported from, in the order given (idx);
 * the row's rank is -1 where the table has none. */
typedef int (*store_source_file_fn)(const store_source_file *f, void *ctx);
int store_each_source_file(store *st, int64_t run_id, store_source_file_fn fn, void *ctx, char *err, size_t errlen);

/* Calls fn for each rank's HTA figures of run `run_id`, ascending rank. */
typedef int (*store_hta_stat_fn)(const store_hta_stat *h, void *ctx);
int store_each_hta_stat(store *st, int64_t run_id, store_hta_stat_fn fn, void *ctx, char *err, size_t errlen);

#endif
