/* store_read_run.c — runs read back: ids, one run's header, runs from an id on, a read
 * transaction (store_read_run.h). */
#include "profiler/store_read_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

int store_read_run_ids(store *st, store_run_ids *ids, char *err, size_t errlen)
{
    memset(ids, 0, sizeof *ids);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT COUNT(*), COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM run", -1, &s,
                           NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "listing runs");
    }
    ids->count = sqlite3_column_int64(s, 0);
    ids->min_id = sqlite3_column_int64(s, 1);
    ids->max_id = sqlite3_column_int64(s, 2);
    sqlite3_finalize(s);
    return 0;
}

int store_read_run_id_list(store *st, int64_t **ids, size_t *n, char *err, size_t errlen)
{
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT id FROM run ORDER BY id", -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "listing runs");
    }
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(*ids, cap * sizeof *grown);
            if (!grown) {
                rc = SQLITE_NOMEM;
                break;
            }
            *ids = grown;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_NOMEM)
            set_err(err, errlen, "listing runs: out of memory");
        else
            store_db_fail(st->db, err, errlen, "listing runs");
        sqlite3_finalize(s);
        free(*ids);
        *ids = NULL;
        *n = 0;
        return -1;
    }
    sqlite3_finalize(s);
    return 0;
}

int store_run_exists(store *st, int64_t run_id, bool *exists, char *err, size_t errlen)
{
    *exists = false;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT EXISTS (SELECT 1 FROM run WHERE id = ?1)", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "listing runs");
    }
    *exists = sqlite3_column_int(s, 0) != 0;
    sqlite3_finalize(s);
    return 0;
}

/* A text column as a malloc'ed copy; NULL for SQL NULL (and, with empty_is_null, ""). */
static int copy_text(sqlite3_stmt *s, int col, bool empty_is_null, char **out)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    *out = NULL;
    if (!t || (empty_is_null && !*t))
        return 0;
    *out = strdup((const char *)t);
    return *out ? 0 : -1;
}

#define RUN_HEADER_COLUMNS "SELECT id, name, backend, scenario, world_size, warmup, bucket_cap_mb FROM run"

/* Reads the one row of `sql` (?1 bound to run_id when bind) into *h. */
static int read_header(store *st, const char *sql, bool bind, int64_t run_id, store_run_header *h, bool *found,
                       char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->bucket_cap_mb = NAN;
    *found = false;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
        (bind && sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK)) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the run");
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(s);
        return 0;
    }
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the run");
    }
    h->id = sqlite3_column_int64(s, 0);
    h->world_size = sqlite3_column_int(s, 4);
    h->warmup = sqlite3_column_int(s, 5);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL)
        h->bucket_cap_mb = sqlite3_column_double(s, 6);
    bool oom = copy_text(s, 1, false, &h->name) != 0 || copy_text(s, 2, false, &h->backend) != 0 ||
               copy_text(s, 3, true, &h->scenario) != 0;
    if (!oom && !h->name)
        oom = !(h->name = strdup("")); /* NOT NULL in the schema: only a damaged file */
    sqlite3_finalize(s);
    if (oom) {
        store_run_header_free(h);
        set_err(err, errlen, "reading the run: out of memory");
        return -1;
    }
    *found = true;
    return 0;
}

int store_read_run(store *st, int64_t run_id, store_run_header *h, bool *found, char *err, size_t errlen)
{
    return read_header(st, RUN_HEADER_COLUMNS " WHERE id = ?1", true, run_id, h, found, err, errlen);
}

int store_read_last_run(store *st, store_run_header *h, bool *found, char *err, size_t errlen)
{
    return read_header(st, RUN_HEADER_COLUMNS " ORDER BY id DESC LIMIT 1", false, 0, h, found, err, errlen);
}

void store_run_header_free(store_run_header *h)
{
    free(h->name);
    free(h->backend);
    free(h->scenario);
    memset(h, 0, sizeof *h);
    h->bucket_cap_mb = NAN;
}

int store_each_run_from(store *st, int64_t first_id, store_run_overrides_fn fn, void *ctx, char *err,
                        size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT id, overrides FROM run WHERE id >= ?1 ORDER BY id", -1, &s, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_int64(s, 1, first_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "listing runs");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ret = fn(sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1), ctx);
        if (ret != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "listing runs");
    sqlite3_finalize(s);
    return ret;
}

int store_each_sweep_point(store *st, store_sweep_point_fn fn, void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT 1 FROM pragma_table_info('run') WHERE name = 'sweep'", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    sqlite3_finalize(s);
    s = NULL;
    if (rc == SQLITE_DONE)
        return 0; /* older than schema 7 */
    if (rc != SQLITE_ROW ||
        sqlite3_prepare_v2(st->db,
                           "SELECT sweep, id FROM run WHERE sweep IS NOT NULL AND status = 'complete'"
                           " AND sweep IN (SELECT sweep FROM run WHERE status = 'complete' AND sweep IS NOT NULL"
                           "  GROUP BY sweep HAVING COUNT(*) > 1)"
                           " ORDER BY sweep, id",
                           -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading sweeps");
    }
    int ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if ((ret = fn(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), ctx)) != 0)
            break;
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading sweeps");
    sqlite3_finalize(s);
    return ret;
}

int store_begin_read(store *st, char *err, size_t errlen)
{
    return store_exec(st->db, "BEGIN", "beginning a read", err, errlen);
}

int store_end_read(store *st, char *err, size_t errlen)
{
    if (sqlite3_get_autocommit(st->db))
        return 0; /* no transaction open */
    return store_exec(st->db, "COMMIT", "ending a read", err, errlen);
}

int store_begin_read_unless_open(store *st, bool *began, char *err, size_t errlen)
{
    *began = false;
    if (!sqlite3_get_autocommit(st->db))
        return 0; /* the caller's transaction */
    if (store_begin_read(st, err, errlen) != 0)
        return -1;
    *began = true;
    return 0;
}
