/* store_read_layout.c — a run's ranks and buckets read back (store_read_layout.h). */
#include "profiler/store_read_layout.h"

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
