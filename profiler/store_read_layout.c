/* store_read_layout.c — a run's ranks and buckets read back (store_read_layout.h). */
#include "profiler/store_read_layout.h"

#include <stdlib.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

/* Whether table `table` has column `column` (an older schema may lack it). */
static int has_column(sqlite3 *db, const char *table, const char *column, bool *yes, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(s, 2, column, -1, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(db, err, errlen, "reading the schema");
    }
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_fail(db, err, errlen, "reading the schema");
}

int store_each_rank(store *st, int64_t run_id, store_rank_fn fn, void *ctx, char *err, size_t errlen)
{
    bool v8;
    if (has_column(st->db, "rank", "spans", &v8, err, errlen) != 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           v8 ? "SELECT rank, speed, COALESCE(spans, -1) FROM rank WHERE run_id = ?1 ORDER BY rank"
                              : "SELECT rank, speed, -1 FROM rank WHERE run_id = ?1 ORDER BY rank",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the ranks");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int spans = sqlite3_column_int(s, 2);
        store_rank_row r = {sqlite3_column_int(s, 0), sqlite3_column_double(s, 1), spans < 0 ? -1 : spans != 0};
        if ((ret = fn(&r, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the ranks");
    sqlite3_finalize(s);
    return ret;
}

int store_read_latest_buckets(store *st, int64_t run_id, int *version, int *nbuckets, char *err, size_t errlen)
{
    *version = -1;
    *nbuckets = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT COALESCE(MAX(version), -1), COUNT(*) FROM bucket WHERE run_id = ?1 AND "
                           "version = (SELECT MAX(version) FROM bucket WHERE run_id = ?1)",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the buckets");
    }
    *version = sqlite3_column_int(s, 0);
    *nbuckets = sqlite3_column_int(s, 1);
    sqlite3_finalize(s);
    return 0;
}

int store_read_latest_bucket_bytes(store *st, int64_t run_id, int64_t *bytes, int n, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT b.idx, CASE WHEN b.nbytes > 0 THEN b.nbytes ELSE (SELECT MAX(c.bytes) FROM span c "
                           "WHERE c.run_id = ?1 AND c.kind = 'allreduce' AND c.bucket = b.idx) END "
                           "FROM bucket b WHERE b.run_id = ?1 AND b.version = (SELECT MAX(version) FROM bucket "
                           "WHERE run_id = ?1) ORDER BY b.idx",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the buckets");
    }
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int idx = sqlite3_column_int(s, 0);
        if (idx >= 0 && idx < n)
            bytes[idx] = sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : store_db_fail(st->db, err, errlen, "reading the buckets");
}

int store_read_span_ranks(store *st, int64_t run_id, int **ranks, size_t *n, char *err, size_t errlen)
{
    *ranks = NULL;
    *n = 0;
    sqlite3_stmt *s = NULL;
    /* The span side reads the (run_id, rank, iter) index, skipping from rank to rank.
     * A rank whose spans were not stored (schema 8 rank.spans = 0: a run of many ranks
     * keeps chosen ranks' only) is left out; an older file has no such column. */
#define RANKS_WITH_SPANS(rank_filter)                                                      \
    "WITH RECURSIVE r(rank) AS ("                                                          \
    "  SELECT MIN(rank) FROM span WHERE run_id = ?1"                                       \
    "  UNION ALL SELECT (SELECT MIN(rank) FROM span"                                       \
    "   WHERE run_id = ?1 AND rank > r.rank) FROM r WHERE r.rank IS NOT NULL)"             \
    " SELECT rank FROM r WHERE rank IS NOT NULL"                                           \
    " UNION SELECT rank FROM rank WHERE run_id = ?1" rank_filter " ORDER BY 1"
    if ((sqlite3_prepare_v2(st->db, RANKS_WITH_SPANS(" AND spans IS NOT 0"), -1, &s, NULL) != SQLITE_OK &&
         sqlite3_prepare_v2(st->db, RANKS_WITH_SPANS(""), -1, &s, NULL) != SQLITE_OK) ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "listing ranks");
    }
#undef RANKS_WITH_SPANS
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int *grown = realloc(*ranks, cap * sizeof *grown);
            if (!grown) {
                rc = SQLITE_NOMEM;
                break;
            }
            *ranks = grown;
        }
        (*ranks)[(*n)++] = sqlite3_column_int(s, 0);
    }
    if (rc != SQLITE_DONE) {
        if (rc == SQLITE_NOMEM)
            set_err(err, errlen, "listing ranks: out of memory");
        else
            store_db_fail(st->db, err, errlen, "listing ranks");
        sqlite3_finalize(s);
        free(*ranks);
        *ranks = NULL;
        *n = 0;
        return -1;
    }
    sqlite3_finalize(s);
    return 0;
}

int store_each_bucket_version(store *st, int64_t run_id, store_bucket_version_fn fn, void *ctx, char *err,
                              size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT version, COUNT(*) FROM bucket WHERE run_id = ?1 GROUP BY version ORDER BY version",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the buckets");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        if ((ret = fn(sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), ctx)) != 0)
            break;
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the buckets");
    sqlite3_finalize(s);
    return ret;
}

int store_each_bucket(store *st, int64_t run_id, int version, store_bucket_row_fn fn, void *ctx, char *err,
                      size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT idx, nbytes, nparams FROM bucket WHERE run_id = ?1 AND version = ?2", -1,
                           &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK || sqlite3_bind_int(s, 2, version) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the buckets");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_bucket_row b = {sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int(s, 2)};
        if ((ret = fn(&b, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the buckets");
    sqlite3_finalize(s);
    return ret;
}
