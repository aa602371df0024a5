/* trace_json.c — the pieces both trace writers share (trace_internal.h): JSON text
 * written without building a document (so a run of millions of spans streams), the
 * run header, the span cursor, and the list of a run's ranks (trace_export.h). */
#include "common/errmsg.h"
#include "reports/trace_export.h"
#include "reports/trace_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int trace_db_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    set_err(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
    return -1;
}

void tj_str(FILE *out, const char *s)
{
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            putc('\\', out);
            putc(*p, out);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\u%04x", *p);
        } else {
            putc(*p, out);
        }
    }
    putc('"', out);
}

void tj_us(FILE *out, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

void tj_int_or_null(FILE *out, sqlite3_stmt *s, int col)
{
    if (sqlite3_column_type(s, col) == SQLITE_NULL)
        fputs("null", out);
    else
        fprintf(out, "%lld", (long long)sqlite3_column_int64(s, col));
}

static void copy_col(char *dst, size_t n, sqlite3_stmt *s, int col)
{
    const unsigned char *v = sqlite3_column_text(s, col);
    snprintf(dst, n, "%s", v ? (const char *)v : "");
}

int trace_load_run(sqlite3 *db, int64_t run_id, trace_run *r, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    memset(r, 0, sizeof *r);
    if (sqlite3_prepare_v2(db, "SELECT name, backend, model, world_size FROM run WHERE id = ?1",
                           -1, &s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        trace_db_fail(db, err, errlen, "reading run");
        sqlite3_finalize(s);
        return -1;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        copy_col(r->name, sizeof r->name, s, 0);
        copy_col(r->backend, sizeof r->backend, s, 1);
        copy_col(r->model, sizeof r->model, s, 2);
        r->world_size = sqlite3_column_int(s, 3);
    } else if (rc == SQLITE_DONE) {
        set_err(err, errlen, "no run with id %" PRId64, run_id);
    } else {
        trace_db_fail(db, err, errlen, "reading run");
    }
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

int trace_span_cursor(sqlite3 *db, int64_t run_id, int rank, sqlite3_stmt **s, char *err,
                      size_t errlen)
{
    const char *sql = rank >= 0
                          ? "SELECT rank, iter, stream, kind, name, layer, bucket, seq, bytes,"
                            " start_ns, end_ns FROM span WHERE run_id = ?1 AND rank = ?2"
                          : "SELECT rank, iter, stream, kind, name, layer, bucket, seq, bytes,"
                            " start_ns, end_ns FROM span WHERE run_id = ?1";
    *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(*s, 1, run_id) != SQLITE_OK ||
        (rank >= 0 && sqlite3_bind_int(*s, 2, rank) != SQLITE_OK)) {
        trace_db_fail(db, err, errlen, "reading spans");
        sqlite3_finalize(*s);
        *s = NULL;
        return -1;
    }
    return 0;
}

int trace_stream_index(const char *stream)
{
    static const char *const names[] = {"host", "compute", "comm"};
    for (int i = 0; i < 3; i++)
        if (stream && strcmp(stream, names[i]) == 0)
            return i;
    return -1;
}

int trace_finish_output(FILE *out, char *err, size_t errlen)
{
    if (fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing the trace failed");
        return -1;
    }
    return 0;
}

int trace_run_ranks(sqlite3 *db, int64_t run_id, int **ranks, size_t *n, char *err,
                    size_t errlen)
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
    if ((sqlite3_prepare_v2(db, RANKS_WITH_SPANS(" AND spans IS NOT 0"), -1, &s, NULL) != SQLITE_OK &&
         sqlite3_prepare_v2(db, RANKS_WITH_SPANS(""), -1, &s, NULL) != SQLITE_OK) ||
        sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        trace_db_fail(db, err, errlen, "listing ranks");
        sqlite3_finalize(s);
        return -1;
    }
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int *grown = realloc(*ranks, cap * sizeof *grown);
            if (!grown) {
                set_err(err, errlen, "out of memory");
                rc = SQLITE_NOMEM;
                break;
            }
            *ranks = grown;
        }
        (*ranks)[(*n)++] = sqlite3_column_int(s, 0);
    }
    if (rc != SQLITE_DONE) {
        if (rc != SQLITE_NOMEM)
            trace_db_fail(db, err, errlen, "listing ranks");
        sqlite3_finalize(s);
        free(*ranks);
        *ranks = NULL;
        *n = 0;
        return -1;
    }
    sqlite3_finalize(s);
    return 0;
}
