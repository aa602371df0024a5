/* store_read_import.c — an imported run's source files and HTA figures read back
 * (store_read_import.h). */
#include "profiler/store_read_import.h"

#include <stdbool.h>

#include "profiler/store_internal.h"

/* Whether table `name` exists (a file older than schema 5 lacks the import's). */
static int has_table(store *st, const char *name, bool *yes, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *yes = false;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &s, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the schema");
    }
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_fail(st->db, err, errlen, "reading the schema");
}

/* Prepares sql with ?1 bound to the run, when table `table` exists (*s NULL when not). */
static int prepare_if_table(store *st, const char *table, const char *sql, int64_t run_id, sqlite3_stmt **s,
                            const char *what, char *err, size_t errlen)
{
    *s = NULL;
    bool yes;
    if (has_table(st, table, &yes, err, errlen) != 0)
        return -1;
    if (!yes)
        return 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK || sqlite3_bind_int64(*s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(*s);
        *s = NULL;
        return store_db_fail(st->db, err, errlen, what);
    }
    return 0;
}

int store_each_source_file(store *st, int64_t run_id, store_source_file_fn fn, void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (prepare_if_table(st, "source_file",
                         "SELECT idx, path, bytes, sha256, format, rank, rank_from FROM source_file WHERE run_id = ?1"
                         " ORDER BY idx",
                         run_id, &s, "reading source files", err, errlen) != 0)
        return -1;
    if (!s)
        return 0;
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_source_file f = {
            .idx = sqlite3_column_int(s, 0),
            .path = (const char *)sqlite3_column_text(s, 1),
            .bytes = sqlite3_column_int64(s, 2),
            .sha256 = (const char *)sqlite3_column_text(s, 3),
            .format = (const char *)sqlite3_column_text(s, 4),
            .rank = sqlite3_column_type(s, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 5),
            .rank_from = (const char *)sqlite3_column_text(s, 6),
        };
        if ((ret = fn(&f, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading source files");
    sqlite3_finalize(s);
    return ret;
}

int store_each_hta_stat(store *st, int64_t run_id, store_hta_stat_fn fn, void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (prepare_if_table(st, "hta_stat",
                         "SELECT rank, steps, kernel_us, idle_us, compute_us, non_compute_us, comm_us, comm_overlap_us"
                         " FROM hta_stat WHERE run_id = ?1 ORDER BY rank",
                         run_id, &s, "reading hta_stat", err, errlen) != 0)
        return -1;
    if (!s)
        return 0;
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_hta_stat h = {
            .rank = sqlite3_column_int(s, 0),
            .steps = (const char *)sqlite3_column_text(s, 1),
            .kernel_us = sqlite3_column_int64(s, 2),
            .idle_us = sqlite3_column_int64(s, 3),
            .compute_us = sqlite3_column_int64(s, 4),
            .non_compute_us = sqlite3_column_int64(s, 5),
            .comm_us = sqlite3_column_int64(s, 6),
            .comm_overlap_us = sqlite3_column_int64(s, 7),
        };
        if ((ret = fn(&h, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading hta_stat");
    sqlite3_finalize(s);
    return ret;
}
