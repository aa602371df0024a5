/* trace_model.c — see trace_model.h. */
#include "trace_model.h"

#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

void trace_rank_init(trace_rank *r, const char *path, int file_idx, const char *format,
                     const trace_limits *limits)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->file_idx = file_idx;
    r->format = format;
    r->rank = -1;
    r->world_size = -1;
    r->limits = limits;
    strtab_init(&r->names);
}

void trace_rank_free(trace_rank *r)
{
    strtab_free(&r->names);
    free(r->ev);
    r->ev = NULL;
    r->nev = r->cap = 0;
}

int trace_rank_push(trace_rank *r, const tev *e, char *err, size_t errlen)
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
    r->ev[r->nev++] = *e;
    return 0;
}

int32_t trace_rank_name(trace_rank *r, const char *s, size_t len)
{
    int64_t i = strtab_intern(&r->names, s, len, NULL);
    return i < 0 ? -1 : (int32_t)i;
}
