/* store_internal.h — what the store's own files share: the handle's layout, the
 * schema steps, and the small SQLite helpers.  Nothing outside profiler/store*.c
 * includes it; the public contract is store.h.
 *
 * Files: store_schema.c (view SQL, schema, migrations, recognising a ddpprof file),
 * store_stats.c (a run's statistics, stored when it ends),
 * store_open.c (opening read-write or read-only, the handle's life), store.c (the
 * writes of a run), store_liveness.c (who wrote a run, and whether it still lives),
 * store_sqlite.c (the SQLite wrappers they all use), store_read_run.c,
 * store_read_run_row.c, store_read_layout.c, store_read_spans.c,
 * store_read_span_rows.c, store_read_stats.c and store_read_import.c (the read API:
 * runs and their rows, ranks and buckets, spans by iteration and whole, statistics,
 * an import's files and HTA figures), store_equivalence.c (table equivalence).
 * Every helper returns 0 or -1 with the reason in (err, errlen), like the public API.
 */
#ifndef DDPPROF_STORE_INTERNAL_H
#define DDPPROF_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "profiler/store.h"
#include "profiler/store_sqlite.h"
#include "profiler/store_stats.h"
#include "profiler/strtab.h"

/* 'ddpp' in PRAGMA application_id, so that `file` and ddpprof itself can tell a
 * results database from any other SQLite file.  Files of schema 1 carry 0. */
#define STORE_APPLICATION_ID 0x64647070


struct store {
    sqlite3 *db;
    bool readonly;
    sqlite3_stmt *begin, *commit, *rollback;
    sqlite3_stmt *ins_run, *ins_rank, *ins_param;
    sqlite3_stmt *del_bucket, *ins_bucket, *max_version, *upd_param_bucket;
    sqlite3_stmt *ins_span, *ins_name, *get_name;
    sqlite3_stmt *finish_run, *run_status;
    /* span_name's ids of the names this handle has written or looked up (value), so a
     * span costs one insert; forgotten whenever a transaction rolls back. */
    strtab names;
    /* Inside store_begin_bulk: the writes join its one transaction. */
    bool bulk;
    /* store_set_live_stats: run live_run's statistics as recorded (borrowed). */
    const struct stats_live *live;
    int64_t live_run;
};

/* What a file holds, judged from its schema alone (store_schema.c). */
typedef enum {
    STORE_FILE_EMPTY,   /* a valid SQLite file without any table: ours to fill */
    STORE_FILE_DDPPROF, /* a ddpprof database of `version` (maybe newer than ours) */
} store_file_kind;

/* Reads the schema (sqlite_master, meta, application_id) without writing anything;
 * -1 with err for a file that is not SQLite or holds someone else's tables. */
int store_inspect(sqlite3 *db, store_file_kind *kind, int *version, char *err, size_t errlen);
/* -1 with err when `version` is newer than this build's. */
int store_check_not_newer(int version, char *err, size_t errlen);
/* Brings the schema to STORE_SCHEMA_VERSION in one IMMEDIATE transaction. */
int store_migrate(sqlite3 *db, char *err, size_t errlen);

#endif
