/* trace_model.c — see trace_model.h. */
#include "profiler/import/trace_model.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"

void trace_rank_init(trace_rank *r, const char *path, int file_idx, const char *format,
                     const trace_limits *limits)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->file_idx = file_idx;
    r->format = format;
    r->rank = -1;
    r->world_size = -1;
    r->pg_count = -1;
    r->limits = limits;
    strtab_init(&r->names);
}

void trace_rank_drop_events(trace_rank *r)
{
    free(r->ev);
    free(r->info);
    r->ev = NULL;
    r->info = NULL;
    r->nev = r->cap = r->ninfo = r->capinfo = 0;
}

void trace_rank_free(trace_rank *r)
{
    strtab_free(&r->names);
    trace_rank_drop_events(r);
}

int trace_rank_push(trace_rank *r, const tev_in *e, char *err, size_t errlen)
{
    if (r->limits && r->limits->events_used) {
        if (*r->limits->events_used >= r->limits->max_events) {
            set_err(err, errlen,
                    "more than %zu events in the trace(s): too large to import in the memory allowed"
                    " (profile fewer steps, or raise --max-events)",
                    r->limits->max_events);
            return -1;
        }
        (*r->limits->events_used)++;
    }
    if (r->nev == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4096;
        tev *grown = realloc(r->ev, cap * sizeof *grown);
        if (!grown) {
            set_err(err, errlen, "out of memory for %zu trace events", cap);
            return -1;
        }
        r->ev = grown;
        r->cap = cap;
    }
    int32_t info = -1;
    if (e->bytes >= 0 || e->seq >= 0 || e->pg >= 0 || e->coll >= 0) {
        if (r->ninfo == r->capinfo) {
            size_t cap = r->capinfo ? 2 * r->capinfo : 256;
            tev_info *grown = cap <= INT32_MAX ? realloc(r->info, cap * sizeof *grown) : NULL;
            if (!grown) {
                set_err(err, errlen, "out of memory for %zu trace events' arguments", cap);
                return -1;
            }
            r->info = grown;
            r->capinfo = cap;
        }
        r->info[r->ninfo] = (tev_info){e->bytes, e->seq, e->pg, e->coll};
        info = (int32_t)r->ninfo++;
    }
    r->ev[r->nev++] = (tev){.ts_ns = e->ts_ns, .dur_ns = e->dur_ns, .tid = e->tid, .correlation = e->correlation,
                            .name = e->name, .info = info, .device = e->device, .type = e->type, .kind = e->kind};
    return 0;
}

int32_t trace_rank_name(trace_rank *r, const char *s, size_t len)
{
    int64_t i = strtab_intern(&r->names, s, len, NULL);
    return i < 0 ? -1 : (int32_t)i;
}
