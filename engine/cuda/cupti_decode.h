/* cupti_decode.h — CUPTI activity buffers in, ddpprof spans out; CUPTI's clock onto the run's.
 *
 * Attribution.  Before launching an op's GPU work the cuda backend registers the op in a
 * cupti_op_table, which answers a 64-bit external id, and brackets the launch (its CUDA,
 * cuBLAS and NCCL calls, ncclGroupEnd included) with
 * cuptiActivityPushExternalCorrelationId(CUPTI_DECODE_EXTERNAL_KIND, id) / Pop.  CUPTI then
 * writes an EXTERNAL_CORRELATION record tying each API call made inside the bracket (its
 * CUPTI correlation id) to that external id, and the kernel, memcpy and memset records of
 * the work carry the same correlation id.  NCCL launches its kernels from the calling
 * thread, so an allreduce called inside the bracket is attributed like any other op.
 * CUPTI writes EXTERNAL_CORRELATION records only while an API kind is enabled: enable
 * CUPTI_ACTIVITY_KIND_RUNTIME and _DRIVER beside CONCURRENT_KERNEL, MEMCPY, MEMSET and
 * EXTERNAL_CORRELATION (the decoder skips the API records themselves).
 *
 * A GPU record whose correlation leads to a registered op becomes a span with that op's
 * fields (name, rank, iter, stream, kind, layer, bucket, seq, bytes) and the record's GPU
 * start and end.  One op may make several spans (a GEMM's kernels, a graph's nodes).
 *
 * Records no op claims (work launched outside any bracket: NCCL communicator set-up,
 * a library's own initialisation, another thread's work; or whose external id has left
 * the op table) become spans with inferred fields: iter, layer, bucket and seq -1 (not part
 * of any iteration ddpprof launched); rank and stream from the CUDA stream's mapping
 * (cupti_decode_map_stream), else the decoder's rank and, for kernels, STREAM_COMM when
 * the kernel is NCCL's (its name, demangled or after an `_Z<len>` prefix, starts with
 * "nccl", any case) and STREAM_COMPUTE otherwise; kind: a kernel that is NCCL's or runs on
 * a comm stream is SPAN_ALLREDUCE, any other kernel SPAN_FORWARD (compute, claiming
 * nothing about the pass); a memcpy to the host (DtoH, AtoH) SPAN_COPY_OUT, any other
 * memcpy and a memset SPAN_COPY_IN, on STREAM_COMPUTE unless mapped, with the record's
 * bytes.  Names: the op's; else the kernel's (mangled, cut at SPAN_NAME-1 bytes on a
 * UTF-8 character boundary), "memcpy HtoD" and the like, or "memset".
 *
 * Ordering.  A GPU record may come before or after its EXTERNAL_CORRELATION record, in the
 * same buffer or another, so a record whose correlation is not known yet waits in a
 * pending store (max_pending records).  Each buffer's correlations are matched against
 * the whole store once the buffer is read.  When the store is full the oldest waiting
 * record is emitted with inferred fields and counted (overflow), so GPU time is never
 * lost, only its attribution.  cupti_decode_flush() gives up on every waiting record
 * (inferred spans): call it after cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
 * has returned every buffer of work that has completed (end of iteration, end of run).
 * The correlations seen are remembered in corr_slots slots indexed by correlation id
 * (CUPTI numbers API calls in increasing order, so a slot is reused corr_slots calls
 * later); a GPU record whose correlation was forgotten waits like one not seen yet.
 *
 * Buffers are walked with CUPTI's own cuptiActivityGetNextRecord (it needs no GPU or
 * driver), so the record stride is CUPTI's.  Because it reads a record's 4-byte kind
 * before checking the bytes left, the decoder hands it the valid size rounded down to
 * the 8 bytes all records are aligned and sized in.  Nothing past `valid` is read: a
 * trailing partial record, a record shorter than its kind's struct, or a kind CUPTI does
 * not know ends the buffer (-1 with the reason, counted in bad_buffers) after the records
 * before it are decoded.  Record structs: CUDA 13's CUpti_ActivityKernel10, Memcpy6,
 * Memset4, ExternalCorrelation, API; create refuses a libcupti of another major version
 * or older than the headers.
 *
 * Threads.  cupti_op_table calls are safe from any thread (a mutex per table).  A decoder
 * serialises its own calls (a mutex per decoder); `emit` runs on the decoding thread
 * with that mutex held and must not call back into the decoder.  Nothing here is
 * process-wide: CUPTI's buffer callbacks take no user pointer, so the file that registers
 * them keeps the one process-wide pointer to its decoder.
 */
#ifndef DDPPROF_CUPTI_DECODE_H
#define DDPPROF_CUPTI_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/span.h"

/* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: the external-id kind ddpprof pushes. */
#define CUPTI_DECODE_EXTERNAL_KIND 3

/* ---- clock: CUPTI timestamps onto the run's clock ------------------------------------ */

/* One back-to-back reading of both clocks: host, cuptiGetTimestamp, host. */
typedef struct {
    uint64_t cupti_ns;
    int64_t host_before_ns;
    int64_t host_after_ns;
} cupti_clock_read;

/* run ns = host_ref - t0 + d + d * drift, where d = cupti ns - cupti_ref. */
typedef struct {
    uint64_t cupti_ref;
    int64_t host_ref;   /* the host time at cupti_ref: the midpoint of the best reading */
    int64_t bracket_ns; /* that reading's host_after - host_before: its uncertainty */
    int64_t t0_ns;      /* the run's origin on the host clock */
    double drift;       /* host ns per CUPTI ns, minus 1; 0 until cupti_clock_fit */
} cupti_clock;

/* Drift beyond this (1000 ppm) means a clock was stepped, not that it ran fast. */
#define CUPTI_CLOCK_MAX_DRIFT 1e-3

/* Offset from the reading with the smallest bracket; readings with host_after <
 * host_before or a zero CUPTI time are ignored.  0, or -1 (none usable, *c untouched). */
int cupti_clock_sync(cupti_clock *c, const cupti_clock_read *reads, size_t n, int64_t t0_ns);
/* Drift from a second set of readings taken later (the end of the run, or of an
 * iteration: times after it are extrapolated, so take it late).  0, or -1 with *c
 * untouched: no usable reading, not later than the reference, or |drift| beyond the limit. */
int cupti_clock_fit(cupti_clock *c, const cupti_clock_read *reads, size_t n);
/* Saturates rather than overflow on absurd inputs. */
int64_t cupti_clock_to_run(const cupti_clock *c, uint64_t cupti_ns);

/* ---- op table: the launcher's side ----------------------------------------------------- */

typedef struct cupti_op_table cupti_op_table;

/* `capacity` ops are remembered (0: 16384); ids run first_id, first_id + 1, ... (first_id
 * != 0; give each table of a process its own range, e.g. CLOCK_MONOTONIC ns at creation,
 * so that a late record of an earlier run cannot name an op of this one).  0 or -1. */
int cupti_op_table_create(size_t capacity, uint64_t first_id, cupti_op_table **out);
void cupti_op_table_destroy(cupti_op_table *t);
/* Registers `op` (its start_ns and end_ns are ignored) and returns its external id,
 * never 0.  The op `capacity` adds earlier is forgotten. */
uint64_t cupti_op_table_add(cupti_op_table *t, const span *op);
/* 1 with the op in *out, or 0 when `id` was never added or has been forgotten. */
int cupti_op_table_get(cupti_op_table *t, uint64_t id, span *out);

/* ---- decoder ---------------------------------------------------------------------------- */

typedef struct cupti_decode cupti_decode;

typedef void (*cupti_span_emit)(void *user, const span *sp);

typedef struct {
    int rank;              /* of records that no op claims and whose stream is not mapped */
    size_t max_pending;    /* 0: 8192 */
    size_t corr_slots;     /* 0: 65536 */
    cupti_op_table *ops;   /* NULL: every span inferred */
    cupti_clock clock;     /* replaced by cupti_decode_set_clock */
    cupti_span_emit emit;  /* required */
    void *user;
} cupti_decode_config;

typedef struct {
    int64_t buffers;      /* handed to cupti_decode_buffer */
    int64_t bad_buffers;  /* of them, cut short (truncated, unreadable record) */
    int64_t records;      /* activity records read */
    int64_t skipped;      /* records that make no span: API calls, other kinds, other external ids */
    int64_t correlations; /* EXTERNAL_CORRELATION records of our kind */
    int64_t spans;        /* emitted: matched + inferred */
    int64_t matched;      /* with a registered op's fields */
    int64_t inferred;     /* with inferred fields */
    int64_t stale;        /* of inferred: the external id was not (or no longer) in the op table */
    int64_t overflow;     /* of inferred: pushed out of the full pending store */
    int64_t untimed;      /* GPU records without timestamps: no span */
    int64_t dropped;      /* records CUPTI reported dropped before they reached us */
    int64_t pending;      /* GPU records waiting for their correlation now */
} cupti_decode_stats;

int cupti_decode_create(const cupti_decode_config *cfg, cupti_decode **out, char *err, size_t errlen);
void cupti_decode_destroy(cupti_decode *d);
/* Spans inferred on CUDA stream `cuda_stream` (cuptiGetStreamIdEx's id) get this rank
 * and stream.  Mapping a stream again replaces its entry.  0, or -1 when the map is full
 * (64 streams) or the arguments are out of range. */
int cupti_decode_map_stream(cupti_decode *d, uint32_t cuda_stream, int rank, span_stream s);
/* Applies to every span emitted from now on, waiting records included. */
void cupti_decode_set_clock(cupti_decode *d, const cupti_clock *c);
/* Decodes one buffer as CUPTI's bufferCompleted callback hands it (`valid` bytes) and
 * adds `dropped` (cuptiActivityGetNumDroppedRecords for it) to the count.  The buffer
 * stays the caller's.  0, or -1 with the reason when the buffer was cut short. */
int cupti_decode_buffer(cupti_decode *d, uint8_t *buf, size_t valid, size_t dropped, char *err, size_t errlen);
/* Emits every waiting record with inferred fields. */
void cupti_decode_flush(cupti_decode *d);
void cupti_decode_get_stats(cupti_decode *d, cupti_decode_stats *out);
/* Hands `sp` (times already on the run's clock) to `emit` as a decoded span would be,
 * under the decoder's mutex: a span timed otherwise (an op CUPTI sees no work of). */
void cupti_decode_emit_timed(cupti_decode *d, const span *sp);

#endif
