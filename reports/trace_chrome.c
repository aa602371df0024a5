/* trace_chrome.c — a run as one Chrome trace-event file (chrome://tracing, Perfetto
 * UI): a process per rank, a thread per stream, an "X" event per span, and flow
 * arrows from the last rank to reach each collective to every rank that waited for
 * it.  Contract and layout: trace_export.h. */
#include "common/errmsg.h"
#include "profiler/store.h"
#include "reports/trace_export.h"
#include "reports/trace_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const STREAM_NAMES[] = {"host", "compute", "comm"};

/* Comma handling for the traceEvents array, written one event at a time. */
typedef struct {
    FILE *out;
    bool first;
} event_list;

static FILE *next_event(event_list *l)
{
    if (!l->first)
        fputs(",\n", l->out);
    l->first = false;
    return l->out;
}

static int write_metadata(sqlite3 *db, int64_t run_id, event_list *l, char *err, size_t errlen)
{
    int *ranks;
    size_t n;
    if (trace_run_ranks(db, run_id, &ranks, &n, err, errlen) < 0)
        return -1;
    sqlite3_stmt *sp = NULL;
    if (sqlite3_prepare_v2(db, "SELECT speed FROM rank WHERE run_id = ?1 AND rank = ?2", -1, &sp,
                           NULL) != SQLITE_OK ||
        sqlite3_bind_int64(sp, 1, run_id) != SQLITE_OK) {
        free(ranks);
        sqlite3_finalize(sp);
        return trace_db_fail(db, err, errlen, "reading ranks");
    }
    int ret = 0;
    for (size_t i = 0; i < n && ret == 0; i++) {
        int r = ranks[i];
        FILE *o = next_event(l);
        fprintf(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"name\":\"rank %d\"}},\n", r, r);
        fprintf(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}}", r, r);
        if (sqlite3_bind_int(sp, 2, r) != SQLITE_OK) {
            ret = trace_db_fail(db, err, errlen, "reading ranks");
            break;
        }
        int rc = sqlite3_step(sp);
        if (rc == SQLITE_ROW && sqlite3_column_type(sp, 0) != SQLITE_NULL)
            fprintf(next_event(l),
                    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"labels\":\"speed %g\"}}",
                    r, sqlite3_column_double(sp, 0));
        else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            ret = trace_db_fail(db, err, errlen, "reading ranks");
        sqlite3_reset(sp);
        for (int t = 0; t < 3; t++) {
            fprintf(next_event(l),
                    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"%s\"}},\n"
                    "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"sort_index\":%d}}",
                    r, t, STREAM_NAMES[t], r, t, t);
        }
    }
    sqlite3_finalize(sp);
    free(ranks);
    return ret;
}

static int write_spans(sqlite3 *db, int64_t run_id, event_list *l, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    if (trace_span_cursor(db, run_id, -1, &s, err, errlen) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int tid = trace_stream_index((const char *)sqlite3_column_text(s, TS_STREAM));
        int64_t start = sqlite3_column_int64(s, TS_START), end = sqlite3_column_int64(s, TS_END);
        FILE *o = next_event(l);
        fprintf(o, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", sqlite3_column_int(s, TS_RANK),
                tid < 0 ? 3 : tid);
        tj_us(o, start);
        fputs(",\"dur\":", o);
        tj_us(o, end - start);
        fputs(",\"name\":", o);
        tj_str(o, (const char *)sqlite3_column_text(s, TS_NAME));
        fputs(",\"cat\":", o);
        tj_str(o, (const char *)sqlite3_column_text(s, TS_KIND));
        fputs(",\"args\":{\"kind\":", o);
        tj_str(o, (const char *)sqlite3_column_text(s, TS_KIND));
        fprintf(o, ",\"iter\":%d,\"layer\":", sqlite3_column_int(s, TS_ITER));
        tj_int_or_null(o, s, TS_LAYER);
        fputs(",\"bucket\":", o);
        tj_int_or_null(o, s, TS_BUCKET);
        fputs(",\"bytes\":", o);
        tj_int_or_null(o, s, TS_BYTES);
        fputs(",\"seq\":", o);
        tj_int_or_null(o, s, TS_SEQ);
        fputs("}}", o);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return trace_db_fail(db, err, errlen, "reading spans");
    return 0;
}

static void write_flow(event_list *l, const char *ph, int64_t id, int64_t seq, int rank,
                       int64_t ts)
{
    FILE *o = next_event(l);
    fprintf(o, "{\"ph\":\"%s\",\"id\":%lld,\"pid\":%d,\"tid\":2,\"ts\":", ph, (long long)id,
            rank);
    tj_us(o, ts);
    fprintf(o, ",\"cat\":\"collective\",\"name\":\"allreduce seq %lld\"%s}", (long long)seq,
            ph[0] == 'f' ? ",\"bp\":\"e\"" : "");
}

/* Rows come per collective, last arrival first: that rank is the arrow's source. */
static int write_flows(sqlite3 *db, int64_t run_id, int world_size, event_list *l, char *err,
                       size_t errlen)
{
    const char *view = store_view_select("collective_arrival", true);
    char *sql = NULL;
    if (!view || asprintf(&sql,
                          "WITH ca AS (%s) SELECT seq, rank, arrival_ns FROM ca"
                          " ORDER BY seq, arrival_ns DESC, rank",
                          view) < 0) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    sqlite3_stmt *s = NULL;
    int prc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    free(sql);
    if (prc != SQLITE_OK || sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(s);
        return trace_db_fail(db, err, errlen, "reading collectives");
    }
    int64_t cur_seq = -1, last_arrival = 0;
    int last_rank = -1;
    int rc;
    int64_t w = world_size > 0 ? world_size : 1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(s, 0);
        int rank = sqlite3_column_int(s, 1);
        if (seq != cur_seq || last_rank < 0) {
            cur_seq = seq;
            last_rank = rank;
            last_arrival = sqlite3_column_int64(s, 2);
            continue;
        }
        int64_t id = seq * w + rank + 1;
        write_flow(l, "s", id, seq, last_rank, last_arrival);
        write_flow(l, "f", id, seq, rank, last_arrival);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return trace_db_fail(db, err, errlen, "reading collectives");
    return 0;
}

/* The ranks whose spans the trace holds, as a JSON array, or null when it holds every
 * rank's (all `world` ranks have spans). */
static int write_spans_ranks(sqlite3 *db, int64_t run_id, int world, FILE *out, char *err, size_t errlen)
{
    int *ranks;
    size_t n;
    if (trace_run_ranks(db, run_id, &ranks, &n, err, errlen) < 0)
        return -1;
    if ((int)n >= world) {
        fputs("null", out);
    } else {
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%d", i ? "," : "[", ranks[i]);
        fputs(n ? "]" : "[]", out);
    }
    free(ranks);
    return 0;
}

int trace_export_chrome(sqlite3 *db, int64_t run_id, FILE *out, char *err, size_t errlen)
{
    trace_run run;
    if (trace_load_run(db, run_id, &run, err, errlen) < 0)
        return -1;
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"ddpprof\",\"run_id\":", out);
    fprintf(out, "%lld,\"run_name\":", (long long)run_id);
    tj_str(out, run.name);
    fputs(",\"backend\":", out);
    tj_str(out, run.backend);
    fputs(",\"model\":", out);
    tj_str(out, run.model);
    fprintf(out, ",\"world_size\":%d,\"spans_ranks\":", run.world_size);
    if (write_spans_ranks(db, run_id, run.world_size, out, err, errlen) < 0)
        return -1;
    fputs("},\n\"traceEvents\":[\n", out);
    event_list l = {.out = out, .first = true};
    if (write_metadata(db, run_id, &l, err, errlen) < 0 ||
        write_spans(db, run_id, &l, err, errlen) < 0 ||
        write_flows(db, run_id, run.world_size, &l, err, errlen) < 0)
        return -1;
    fputs("\n]}\n", out);
    return trace_finish_output(out, err, errlen);
}
