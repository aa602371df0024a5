/* trace_internal.h — what the trace writers (trace_chrome.c, trace_kineto.c) share:
 * escaped JSON text and microsecond timestamps written straight to a stream, and the
 * run's header.  The spans themselves stream through store_each_span
 * (profiler/store_read_span_rows.h).  Nothing outside reports/trace_*.c includes it;
 * the public contract is trace_export.h.
 *
 * Ownership: nothing here allocates; a trace_run holds its text by value, and every
 * pointer is borrowed for the call. */
#ifndef DDPPROF_TRACE_INTERNAL_H
#define DDPPROF_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/store.h"

/* A JSON string literal, quotes included; control characters as \u00XX. */
void tj_str(FILE *out, const char *s);
/* ns as microseconds with exactly three decimals ("12.345"), as JSON number. */
void tj_us(FILE *out, int64_t ns);
/* An integer, or null when it is not set. */
void tj_int_or_null(FILE *out, bool set, int64_t v);

typedef struct {
    char name[256], backend[64], model[128]; /* "" where the run has none */
    int world_size;
} trace_run;

/* Reads the run row; -1 with "no run with id N" when it is absent. */
int trace_load_run(store *st, int64_t run_id, trace_run *r, char *err, size_t errlen);

/* 0 for "host", 1 "compute", 2 "comm", -1 otherwise. */
int trace_stream_index(const char *stream);

/* Flushes `out` and reports a write error as -1 with err. */
int trace_finish_output(FILE *out, char *err, size_t errlen);

#endif
