/* store_read_spans.c — a run's spans read back by rank and iteration
 * (store_read_spans.h). */
#include "profiler/store_read_spans.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/errmsg.h"
#include "profiler/store_internal.h"

/* Prepares sql with ?1 bound to the run; NULL with err on failure. */
static sqlite3_stmt *prepare_run(store *st, const char *sql, int64_t run_id, const char *what, char *err,
                                 size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        store_db_fail(st->db, err, errlen, what);
        sqlite3_finalize(s);
        return NULL;
    }
    return s;
}

int store_read_span_iterations(store *st, int64_t run_id, bool *any, int *first, int *last, char *err,
                               size_t errlen)
{
    *any = false;
    *first = 0;
    *last = -1;
    sqlite3_stmt *s = prepare_run(st, "SELECT MIN(iter), MAX(iter) FROM span WHERE run_id = ?1", run_id,
                                  "reading the spans", err, errlen);
    if (!s)
        return -1;
    if (sqlite3_step(s) != SQLITE_ROW) {
        store_db_fail(st->db, err, errlen, "reading the spans");
        sqlite3_finalize(s);
        return -1;
    }
    if (sqlite3_column_type(s, 0) != SQLITE_NULL) {
        *any = true;
        *first = sqlite3_column_int(s, 0);
        *last = sqlite3_column_int(s, 1);
    }
    sqlite3_finalize(s);
    return 0;
}

/* Whether the one-row question sql (?1 the run, ?2 text when given) has a row. */
static int ask(store *st, const char *sql, int64_t run_id, const char *text, bool *yes, char *err, size_t errlen)
{
    *yes = false;
    sqlite3_stmt *s = prepare_run(st, sql, run_id, "reading the spans", err, errlen);
    if (!s)
        return -1;
    if (text && sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC) != SQLITE_OK) {
        store_db_fail(st->db, err, errlen, "reading the spans");
        sqlite3_finalize(s);
        return -1;
    }
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        store_db_fail(st->db, err, errlen, "reading the spans");
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int store_run_has_device_spans(store *st, int64_t run_id, bool *yes, char *err, size_t errlen)
{
    return ask(st, "SELECT 1 FROM span WHERE run_id = ?1 AND device_stream IS NOT NULL LIMIT 1", run_id, NULL, yes,
               err, errlen);
}

int store_run_has_span_kind(store *st, int64_t run_id, const char *kind, bool *yes, char *err, size_t errlen)
{
    return ask(st, "SELECT 1 FROM span WHERE run_id = ?1 AND kind = ?2 LIMIT 1", run_id, kind, yes, err, errlen);
}

/* More kinds than any grouping asks for: DDP's six phase kinds. */
#define MAX_GROUP_KINDS 8

int store_each_span_group(store *st, int64_t run_id, const store_span_groups *q, store_span_group_fn fn, void *ctx,
                          char *err, size_t errlen)
{
    if (q->nkinds < 1 || q->nkinds > MAX_GROUP_KINDS) {
        set_err(err, errlen, "reading the spans: %d kinds asked for (1 to %d)", q->nkinds, MAX_GROUP_KINDS);
        return -1;
    }
    /* ?1 the run, ?2 the first iteration, ?3... the kinds */
    char kinds[8 * MAX_GROUP_KINDS] = "";
    size_t len = 0;
    for (int k = 0; k < q->nkinds; k++)
        len += (size_t)snprintf(kinds + len, sizeof kinds - len, k ? ", ?%d" : "?%d", k + 3);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT rank, iter, %s, MIN(start_ns), MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind IN (%s)%s%s GROUP BY rank, iter%s",
             q->per_bucket ? "bucket" : "-1", kinds, q->of_bucket ? " AND bucket IS NOT NULL" : "",
             q->device_only ? " AND device_stream IS NOT NULL" : "", q->per_bucket ? ", bucket" : "");
    sqlite3_stmt *s = prepare_run(st, sql, run_id, "reading the spans", err, errlen);
    if (!s)
        return -1;
    bool bound = sqlite3_bind_int(s, 2, q->iter_from) == SQLITE_OK;
    for (int k = 0; bound && k < q->nkinds; k++)
        bound = sqlite3_bind_text(s, 3 + k, q->kinds[k], -1, SQLITE_STATIC) == SQLITE_OK;
    int rc = SQLITE_ERROR, ret = 0;
    while (bound && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_span_group g = {sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int(s, 2),
                              sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4)};
        if ((ret = fn(&g, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the spans");
    sqlite3_finalize(s);
    return ret;
}

int store_each_rank_iteration(store *st, int64_t run_id, int rank, store_span_group_fn fn, void *ctx, char *err,
                              size_t errlen)
{
    sqlite3_stmt *s = prepare_run(st,
                                  "SELECT iter, MIN(start_ns), MAX(end_ns) FROM span"
                                  " WHERE run_id = ?1 AND rank = ?2 GROUP BY iter ORDER BY iter",
                                  run_id, "reading iterations", err, errlen);
    if (!s)
        return -1;
    int rc = SQLITE_ERROR, ret = 0;
    bool bound = sqlite3_bind_int(s, 2, rank) == SQLITE_OK;
    while (bound && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_span_group g = {rank, sqlite3_column_int(s, 0), -1, sqlite3_column_int64(s, 1),
                              sqlite3_column_int64(s, 2)};
        if ((ret = fn(&g, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading iterations");
    sqlite3_finalize(s);
    return ret;
}

int store_read_span_kind_mean(store *st, int64_t run_id, const char *kind, int *count, double *mean_ns, char *err,
                              size_t errlen)
{
    *count = 0;
    *mean_ns = NAN;
    sqlite3_stmt *s = prepare_run(st,
                                  "SELECT AVG(end_ns - start_ns), COUNT(*) FROM span WHERE run_id = ?1 AND kind = ?2",
                                  run_id, "reading the spans", err, errlen);
    if (!s)
        return -1;
    if (sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return store_db_fail(st->db, err, errlen, "reading the spans");
    }
    *count = sqlite3_column_int(s, 1);
    if (*count > 0)
        *mean_ns = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    return 0;
}

int store_each_overlap_span(store *st, int64_t run_id, int rank, int iter_from, bool device_only,
                            store_overlap_span_fn fn, void *ctx, char *err, size_t errlen)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT iter, start_ns, end_ns, stream = 'comm' FROM span WHERE run_id = ?1 AND iter >= ?2 AND rank = ?3"
             " AND ((stream = 'compute'%s) OR (stream = 'comm' AND NOT (kind = 'allreduce' AND bucket IS NOT NULL)))"
             " ORDER BY iter, start_ns",
             device_only ? " AND device_stream IS NOT NULL" : "");
    sqlite3_stmt *s = prepare_run(st, sql, run_id, "reading the spans", err, errlen);
    if (!s)
        return -1;
    int rc = SQLITE_ERROR, ret = 0;
    bool bound = sqlite3_bind_int(s, 2, iter_from) == SQLITE_OK && sqlite3_bind_int(s, 3, rank) == SQLITE_OK;
    while (bound && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_overlap_span v = {sqlite3_column_int(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                                sqlite3_column_int(s, 3) != 0};
        if ((ret = fn(&v, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the spans");
    sqlite3_finalize(s);
    return ret;
}

int store_each_bucket_allreduce(store *st, int64_t run_id, int iter_from, store_bucket_allreduce_fn fn, void *ctx,
                                char *err, size_t errlen)
{
    sqlite3_stmt *s = prepare_run(st,
                                  "SELECT iter, bucket, COALESCE(bytes, -1), last_arrival_ns, end_ns FROM collective "
                                  "WHERE run_id = ?1 AND iter >= ?2 AND kind = 'allreduce' AND bucket IS NOT NULL "
                                  "ORDER BY iter, bucket",
                                  run_id, "reading the collectives", err, errlen);
    if (!s)
        return -1;
    int rc = SQLITE_ERROR, ret = 0;
    bool bound = sqlite3_bind_int(s, 2, iter_from) == SQLITE_OK;
    while (bound && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_bucket_allreduce c = {sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2),
                                    sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4)};
        if ((ret = fn(&c, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading the collectives");
    sqlite3_finalize(s);
    return ret;
}

int store_each_collective_arrival(store *st, int64_t run_id, store_collective_arrival_fn fn, void *ctx, char *err,
                                  size_t errlen)
{
    char *sql = NULL;
    const char *view = store_view_select("collective_arrival", true);
    if (!view ||
        asprintf(&sql, "WITH ca AS (%s) SELECT seq, rank, arrival_ns FROM ca ORDER BY seq, arrival_ns DESC, rank", view) <
            0) {
        set_err(err, errlen, "reading collectives: out of memory");
        return -1;
    }
    sqlite3_stmt *s = prepare_run(st, sql, run_id, "reading collectives", err, errlen);
    free(sql);
    if (!s)
        return -1;
    int rc, ret = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_collective_arrival a = {sqlite3_column_int64(s, 0), sqlite3_column_int(s, 1),
                                      sqlite3_column_int64(s, 2)};
        if ((ret = fn(&a, ctx)) != 0)
            break;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_fail(st->db, err, errlen, "reading collectives");
    sqlite3_finalize(s);
    return ret;
}
