/* trace_internal.h — what the trace writers (trace_chrome.c, trace_kineto.c) share:
 * escaped JSON text and microsecond timestamps written straight to a stream, the
 * run's header, and a cursor over a run's spans.  Nothing outside reports/trace_*.c
 * includes it; the public contract is trace_export.h. */
#ifndef DDPPROF_TRACE_INTERNAL_H
#define DDPPROF_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* A JSON string literal, quotes included; control characters as \u00XX. */
void tj_str(FILE *out, const char *s);
/* ns as microseconds with exactly three decimals ("12.345"), as JSON number. */
void tj_us(FILE *out, int64_t ns);
/* An integer, or null when the column is NULL. */
void tj_int_or_null(FILE *out, sqlite3_stmt *s, int col);

typedef struct {
    char name[256], backend[64], model[128];
    int world_size;
} trace_run;

/* Reads the run row; -1 with "no run with id N" when it is absent. */
int trace_load_run(sqlite3 *db, int64_t run_id, trace_run *r, char *err, size_t errlen);

/* Columns of the span cursor, in order. */
enum {
    TS_RANK,
    TS_ITER,
    TS_STREAM,
    TS_KIND,
    TS_NAME,
    TS_LAYER,
    TS_BUCKET,
    TS_SEQ,
    TS_BYTES,
    TS_START,
    TS_END,
};

/* Prepares a cursor over run `run_id`'s spans (of `rank` only when rank >= 0), in
 * the table's order: no sort, so a long run streams. */
int trace_span_cursor(sqlite3 *db, int64_t run_id, int rank, sqlite3_stmt **s, char *err,
                      size_t errlen);

/* 0 for "host", 1 "compute", 2 "comm", -1 otherwise. */
int trace_stream_index(const char *stream);

int trace_db_fail(sqlite3 *db, char *err, size_t errlen, const char *what);
/* Flushes `out` and reports a write error as -1 with err. */
int trace_finish_output(FILE *out, char *err, size_t errlen);

#endif
