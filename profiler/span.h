/* span.h — one timed operation of one rank: the unit the profiler records.
 *
 * Contract: times are integer nanoseconds on the run's one clock (shared by all ranks,
 * zero at the run's start).  stream and kind take the values below; their text names
 * (span_stream_name / span_kind_name) are what the database stores and users query.
 * layer, bucket and seq are -1 where they do not apply; seq numbers the collectives of
 * a run in launch order, the same on every rank.
 */
#ifndef DDPPROF_SPAN_H
#define DDPPROF_SPAN_H

#include <stdint.h>

typedef enum { STREAM_HOST = 0, STREAM_COMPUTE, STREAM_COMM, STREAM_COUNT } span_stream;

typedef enum {
    SPAN_FORWARD = 0,
    SPAN_BACKWARD,
    SPAN_COPY_IN,
    SPAN_ALLREDUCE,
    SPAN_COPY_OUT,
    SPAN_OPTIMIZER,
    SPAN_WAIT,      /* host blocked on a stream (end of the step) */
    SPAN_BROADCAST, /* bucket rebuild: rank 0's assignment sent to all */
    SPAN_KIND_COUNT
} span_kind;

#define SPAN_NAME 96

typedef struct {
    int32_t rank;
    int32_t iter;
    uint8_t stream; /* span_stream */
    uint8_t kind;   /* span_kind */
    int32_t layer;
    int32_t bucket;
    int64_t seq;
    int64_t bytes;
    int64_t start_ns;
    int64_t end_ns;
    char name[SPAN_NAME];
} span;

const char *span_stream_name(span_stream s);
const char *span_kind_name(span_kind k);

#endif
