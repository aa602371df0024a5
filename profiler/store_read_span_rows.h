/* store_read_span_rows.h — a run's spans read back whole, one row at a time: what the
 * trace exports write, the timeline draws and calibrate --from learns from.
 *
 * Contract: store_each_span calls fn for each span of run `run_id` that the filter
 * selects, streamed in the table's order (no sort: a run of millions of spans costs
 * constant memory).  The row, its strings included, is borrowed for the call.  Times
 * are ns on the run's clock.  Returns 0, or -1 with "reading spans: SQLite's message"
 * in (err, errlen); a callback's nonzero return stops the iteration and is returned
 * as it is (the callback fills err itself).
 */
#ifndef DDPPROF_STORE_READ_SPAN_ROWS_H
#define DDPPROF_STORE_READ_SPAN_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

/* Which spans: each field narrows the selection; -1 / false: no narrowing. */
typedef struct {
    int rank;             /* that rank's only */
    int iter;             /* that iteration's only */
    int iter_from;        /* iterations from it on only */
    bool device_streams;  /* the compute and comm streams' only, not the host's */
} store_span_filter;

/* Every span of the run. */
#define STORE_SPAN_FILTER_ALL ((store_span_filter){.rank = -1, .iter = -1, .iter_from = -1})

/* One span as stored (the span view's columns). */
typedef struct {
    int rank, iter;
    const char *stream; /* "host", "compute", "comm" */
    const char *kind;   /* span.h's kind names, and an import's */
    const char *name;   /* NULL: none */
    /* the has_ flags say whether the column is set (not NULL); an unset one reads 0 */
    bool has_layer, has_bucket, has_seq, has_bytes;
    int layer, bucket;
    int64_t seq, bytes;
    int64_t start_ns, end_ns;
} store_span_row;
typedef int (*store_span_row_fn)(const store_span_row *s, void *ctx);

int store_each_span(store *st, int64_t run_id, const store_span_filter *filter, store_span_row_fn fn, void *ctx,
                    char *err, size_t errlen);

#endif
