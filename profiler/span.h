/* span.h — one timed operation of one rank: the unit the profiler records.
 *
 * Contract: times are integer nanoseconds on the run's one clock (shared by all ranks,
 * zero at the run's start).  stream and kind take the values below; their text names
 * (span_stream_name / span_kind_name) are what the database stores and users query.
 * layer, bucket and seq are -1 where they do not apply; seq numbers the collectives of
 * a run in launch order, the same on every rank.
 * Kinds after SPAN_BROADCAST come from imported traces (their stream is the class of
 * work, compute or comm, and device_stream the stream the trace named), except
 * SPAN_ALL_GATHER, which DDP's construction also records (the parameter counts).
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
    /* The kinds below come from imported traces (profiler/import/): other collectives,
     * each its own kind, and device or host work that no DDP phase claims. */
    SPAN_ALL_GATHER,  /* also DDP's construction: each rank's parameter count */
    SPAN_REDUCE_SCATTER,
    SPAN_ALL_TO_ALL,
    SPAN_SEND_RECV,   /* NCCL's SendRecv kernels: send, recv, and what all_to_all runs as */
    SPAN_REDUCE,
    SPAN_BARRIER,
    SPAN_COLLECTIVE,  /* a communication kernel whose collective the trace does not say */
    SPAN_KERNEL,      /* a device compute kernel outside forward, backward and optimizer */
    SPAN_MEMCPY,
    SPAN_MEMSET,
    SPAN_CPU_OP,      /* host work outside the phases above */
    /* An imported iteration as the job ran it (host stream): its period on the device
     * timeline, from its first device op to the next iteration's first, which is the
     * step of the analysis definitions on an imported run; and the host's
     * ProfilerStep#N range, shown beside. */
    SPAN_STEP,
    SPAN_PROFILER_STEP,
    SPAN_KIND_COUNT
} span_kind;

#define SPAN_NAME 96

/* The name of DDP's rebuild broadcast (rank 0's bucket assignment): the store dates
 * the rebuild by it, so that a collective says which assignment its bucket is of. */
#define DDP_REBUILD_SPAN_NAME "rebuild: bucket indices int32"
/* The name of DDP's all_gather of the parameter counts at construction (an allreduce
 * in files of schema 6 and older, which the upgrade re-kinds by this name). */
#define DDP_PARAM_COUNT_SPAN_NAME "verify params: allgather count int64"

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
    /* The device stream an imported span ran on (a CUDA stream id, any value), when
     * on_device is set; recorded spans leave both 0 and say their stream by `stream`. */
    uint8_t on_device;
    int32_t device_stream;
    char name[SPAN_NAME];
} span;

const char *span_stream_name(span_stream s);
const char *span_kind_name(span_kind k);
/* The kind named `name` (span_kind_name's text), or -1. */
int span_kind_from_name(const char *name);
/* True for the kinds of communication: allreduce, broadcast and the imported collectives. */
int span_kind_is_comm(span_kind k);

#endif
