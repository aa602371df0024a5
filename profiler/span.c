/* span.c — the text names of span streams and kinds, as stored in the database. */
#include "profiler/span.h"

#include <string.h>

const char *span_stream_name(span_stream s)
{
    static const char *const names[STREAM_COUNT] = {"host", "compute", "comm"};
    return (unsigned)s < STREAM_COUNT ? names[s] : "?";
}

const char *span_kind_name(span_kind k)
{
    static const char *const names[SPAN_KIND_COUNT] = {
        "forward",   "backward",      "copy_in",    "allreduce", "copy_out",
        "optimizer", "wait",          "broadcast",  "all_gather", "reduce_scatter",
        "all_to_all", "send_recv",    "reduce",     "barrier",   "collective",
        "kernel",    "memcpy",        "memset",     "cpu_op",    "step",
        "profiler_step"};
    return (unsigned)k < SPAN_KIND_COUNT ? names[k] : "?";
}

int span_kind_from_name(const char *name)
{
    for (int k = 0; k < SPAN_KIND_COUNT; k++)
        if (!strcmp(span_kind_name((span_kind)k), name))
            return k;
    return -1;
}

int span_kind_is_comm(span_kind k)
{
    return k == SPAN_ALLREDUCE || k == SPAN_BROADCAST || (k >= SPAN_ALL_GATHER && k <= SPAN_COLLECTIVE);
}
