/* trace_json.c — the pieces both trace writers share (trace_internal.h): JSON text
 * written without building a document (so a run of millions of spans streams), the
 * run header, and the list of a run's ranks (trace_export.h). */
#include "common/errmsg.h"
#include "reports/trace_export.h"
#include "reports/trace_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_layout.h"
#include "profiler/store_read_run_row.h"

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

void tj_int_or_null(FILE *out, bool set, int64_t v)
{
    if (set)
        fprintf(out, "%lld", (long long)v);
    else
        fputs("null", out);
}

int trace_load_run(store *st, int64_t run_id, trace_run *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    store_run_row row;
    bool found;
    if (store_read_run_row(st, run_id, &row, &found, err, errlen) != 0)
        return -1;
    if (found) {
        snprintf(r->name, sizeof r->name, "%s", row.name ? row.name : "");
        snprintf(r->backend, sizeof r->backend, "%s", row.backend ? row.backend : "");
        snprintf(r->model, sizeof r->model, "%s", row.model ? row.model : "");
        r->world_size = row.world_size;
    } else {
        set_err(err, errlen, "no run with id %" PRId64, run_id);
    }
    store_run_row_free(&row);
    return found ? 0 : -1;
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

int trace_run_ranks(store *st, int64_t run_id, int **ranks, size_t *n, char *err, size_t errlen)
{
    return store_read_span_ranks(st, run_id, ranks, n, err, errlen);
}
