/* store_read_stats.c — a run's statistics read back, stored or through the views
 * (store_read_stats.h). */
#include "profiler/store_read_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

/* Prepares the stored form, or "WITH <view> AS (<view's one-run SELECT>) <tail>": the
 * filtered text keeps the read to one run's spans.  ?1 is bound to the run. */
static sqlite3_stmt *prepare_stats(store *st, store_stats_from from, const char *stored_sql, const char *view,
                                   const char *view_tail, int64_t run_id, const char *what, char *err,
                                   size_t errlen)
{
    char *sql = NULL;
    if (from == STORE_STATS_STORED) {
        sql = strdup(stored_sql);
    } else {
        const char *body = store_view_select(view, true);
        if (body && asprintf(&sql, "WITH %s AS (%s) %s", view, body, view_tail) < 0)
            sql = NULL;
    }
    if (!sql) {
        set_err(err, errlen, "%s: out of memory", what);
        return NULL;
    }
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    free(sql);
    if (rc != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        store_db_fail(st->db, err, errlen, what);
        sqlite3_finalize(s);
        return NULL;
    }
    return s;
}

int store_run_has_stored_stats(store *st, int64_t run_id, bool *yes, char *err, size_t errlen)
{
    *yes = false;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_stats'", -1, &s,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the schema");
    }
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE)
        return 0; /* an older schema */
    if (rc != SQLITE_ROW)
        return store_db_fail(st->db, err, errlen, "reading the schema");
    s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM run_stats WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading run_stats");
    }
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_db_fail(st->db, err, errlen, "reading run_stats");
    *yes = rc == SQLITE_ROW;
    return 0;
}

#define ITS_COLUMNS                                                                  \
    "SELECT rank, iter, warmup, step_ns, compute_ns, comm_ns, overlap_ns,"            \
    " exposed_comm_ns, wait_ns, step_start_ns"

int store_each_iteration_stat(store *st, int64_t run_id, store_stats_from from, store_iteration_stat_fn fn,
                              void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *s = prepare_stats(st, from, ITS_COLUMNS " FROM iteration_stat WHERE run_id = ?1 ORDER BY rank, iter",
                                    "iteration_stats", ITS_COLUMNS " FROM iteration_stats ORDER BY rank, iter",
                                    run_id, "reading iteration_stats", err, errlen);
    if (!s)
        return -1;
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_iteration_stat w = {
            .rank = sqlite3_column_int(s, 0),
            .iter = sqlite3_column_int(s, 1),
            .warmup = sqlite3_column_int(s, 2) != 0,
            .step_ns = sqlite3_column_int64(s, 3),
            .compute_ns = sqlite3_column_int64(s, 4),
            .comm_ns = sqlite3_column_int64(s, 5),
            .overlap_ns = sqlite3_column_int64(s, 6),
            .exposed_comm_ns = sqlite3_column_int64(s, 7),
            .wait_ns = sqlite3_column_int64(s, 8),
            .step_start_ns = sqlite3_column_int64(s, 9),
        };
        if ((ret = fn(&w, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading iteration_stats");
    sqlite3_finalize(s);
    return ret;
}

static double real_or_nan(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

int store_each_bucket_collectives(store *st, int64_t run_id, store_stats_from from, int iter_from,
                                  store_bucket_collectives_fn fn, void *ctx, char *err, size_t errlen)
{
    /* ?2: every iteration, ?3: the first counted */
#define COLLECTIVE_QUERY(TABLE, RUN)                                                                            \
    "SELECT bucket, COUNT(*), AVG(arrival_skew_ns), AVG(transfer_ns), AVG(bytes), AVG(busbw_gbps) FROM " TABLE \
    " WHERE " RUN "bucket IS NOT NULL AND (?2 OR iter >= ?3) GROUP BY bucket"
    sqlite3_stmt *s = prepare_stats(st, from, COLLECTIVE_QUERY("collective_stat", "run_id = ?1 AND "), "collective",
                                    COLLECTIVE_QUERY("collective", ""), run_id, "reading collectives", err, errlen);
#undef COLLECTIVE_QUERY
    if (!s)
        return -1;
    if (sqlite3_bind_int(s, 2, iter_from < 0) != SQLITE_OK || sqlite3_bind_int(s, 3, iter_from) != SQLITE_OK) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading collectives");
    }
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_bucket_collectives c = {sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), real_or_nan(s, 2),
                                      real_or_nan(s, 3), real_or_nan(s, 4), real_or_nan(s, 5)};
        if ((ret = fn(&c, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading collectives");
    sqlite3_finalize(s);
    return ret;
}

int store_each_bucket_ready(store *st, int64_t run_id, store_stats_from from, store_bucket_ready_fn fn, void *ctx,
                            char *err, size_t errlen)
{
    /* A bucket is ready when its last gradient has been copied in; the rank arrives at
     * its allreduce after that. */
    sqlite3_stmt *s = prepare_stats(
        st, from,
        "SELECT bucket, rank, iter, ready_ns, arrival_ns FROM bucket_ready_stat WHERE run_id = ?1 ORDER BY bucket",
        "collective_arrival",
        ", x AS ("
        "  SELECT rank, iter, bucket, MAX(end_ns) AS ready_ns, NULL AS arrival_ns"
        "  FROM span WHERE run_id = ?1 AND kind = 'copy_in' AND bucket IS NOT NULL"
        "  GROUP BY rank, iter, bucket"
        "  UNION ALL SELECT rank, iter, bucket, NULL, MIN(arrival_ns)"
        "  FROM collective_arrival WHERE bucket IS NOT NULL"
        "  GROUP BY rank, iter, bucket)"
        " SELECT bucket, rank, iter, MAX(ready_ns), MIN(arrival_ns) FROM x"
        " GROUP BY bucket, rank, iter HAVING MAX(ready_ns) IS NOT NULL"
        " ORDER BY bucket",
        run_id, "reading bucket ready times", err, errlen);
    if (!s)
        return -1;
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        bool arrived = sqlite3_column_type(s, 4) != SQLITE_NULL;
        store_bucket_ready b = {sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int(s, 2),
                                sqlite3_column_int64(s, 3), arrived, arrived ? sqlite3_column_int64(s, 4) : 0};
        if ((ret = fn(&b, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading bucket ready times");
    sqlite3_finalize(s);
    return ret;
}
