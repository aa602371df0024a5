/* store_read_span_rows.c — a run's spans streamed whole (store_read_span_rows.h). */
#include "profiler/store_read_span_rows.h"

#include <stdio.h>

#include "profiler/store_internal.h"

int store_each_span(store *st, int64_t run_id, const store_span_filter *filter, store_span_row_fn fn, void *ctx,
                    char *err, size_t errlen)
{
    /* Only the narrowing asked for is in the text, so each reader's query is the one
     * it always was, and so is the order its rows come in. */
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT rank, iter, stream, kind, name, layer, bucket, seq, bytes, start_ns, end_ns FROM span"
             " WHERE run_id = ?1%s%s%s%s",
             filter->rank >= 0 ? " AND rank = ?2" : "", filter->iter >= 0 ? " AND iter = ?3" : "",
             filter->iter_from >= 0 ? " AND iter >= ?4" : "", filter->device_streams ? " AND stream <> 'host'" : "");
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK ||
        (filter->rank >= 0 && sqlite3_bind_int(s, 2, filter->rank) != SQLITE_OK) ||
        (filter->iter >= 0 && sqlite3_bind_int(s, 3, filter->iter) != SQLITE_OK) ||
        (filter->iter_from >= 0 && sqlite3_bind_int(s, 4, filter->iter_from) != SQLITE_OK)) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading spans");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_span_row r = {
            .rank = sqlite3_column_int(s, 0),
            .iter = sqlite3_column_int(s, 1),
            .stream = (const char *)sqlite3_column_text(s, 2),
            .kind = (const char *)sqlite3_column_text(s, 3),
            .name = (const char *)sqlite3_column_text(s, 4),
            .has_layer = sqlite3_column_type(s, 5) != SQLITE_NULL,
            .has_bucket = sqlite3_column_type(s, 6) != SQLITE_NULL,
            .has_seq = sqlite3_column_type(s, 7) != SQLITE_NULL,
            .has_bytes = sqlite3_column_type(s, 8) != SQLITE_NULL,
            .layer = sqlite3_column_int(s, 5),
            .bucket = sqlite3_column_int(s, 6),
            .seq = sqlite3_column_int64(s, 7),
            .bytes = sqlite3_column_int64(s, 8),
            .start_ns = sqlite3_column_int64(s, 9),
            .end_ns = sqlite3_column_int64(s, 10),
        };
        if ((ret = fn(&r, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading spans");
    sqlite3_finalize(s);
    return ret;
}
