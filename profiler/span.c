/* span.c — the text names of span streams and kinds, as stored in the database. */
#include "profiler/span.h"

const char *span_stream_name(span_stream s)
{
    static const char *const names[STREAM_COUNT] = {"host", "compute", "comm"};
    return (unsigned)s < STREAM_COUNT ? names[s] : "?";
}

const char *span_kind_name(span_kind k)
{
    static const char *const names[SPAN_KIND_COUNT] = {
        "forward", "backward", "copy_in", "allreduce", "copy_out", "optimizer", "wait", "broadcast"};
    return (unsigned)k < SPAN_KIND_COUNT ? names[k] : "?";
}
