/* span_wire.h — the messages a rank process streams to rank 0 over its socket: batches
 * of spans, "done", "failed" with the reason, and heartbeats.
 *
 * Contract: every message is a 12-byte header then a payload, all integers little-endian
 * and fixed width, written field by field (never a struct's memory):
 *   header    u32 magic "DDW1" (0x31574444)  u16 type  u16 flags (0)  u32 payload bytes
 *   SPAN_BATCH  u32 n (0..SPAN_WIRE_MAX_BATCH), then n spans, each
 *               i32 rank  i32 iter  u8 stream  u8 kind  u8 name_len (< SPAN_NAME)  u8 0
 *               i32 layer  i32 bucket  i64 seq  i64 bytes  i64 start_ns  i64 end_ns
 *               name_len bytes of name (no NUL)
 *   RANK_DONE   i32 rank  i64 spans sent in all (lets rank 0 check nothing was lost)
 *   RANK_FAILED i32 rank  u16 len (<= SPAN_WIRE_MAX_ERROR)  len bytes of text (no NUL)
 *   HEARTBEAT   i32 rank  i64 the sender's clock, ns
 * The encoders write one message into a caller buffer and return its size, or 0 when
 * the buffer is too small or the input cannot be represented (n out of range, a stream
 * or kind outside its enum, a negative rank); a name or error text too long is cut.
 * The decoder takes a byte stream in pieces of any size (span_wire_feed) and hands back
 * complete messages (span_wire_next).  It checks everything before believing it: magic,
 * type, flags, sizes (a header is refused as soon as it arrives, before its payload),
 * counts, enum ranges, string lengths, trailing bytes, so a corrupt or hostile peer
 * gets an error, never a crash or an allocation of its choosing.  After an error the
 * decoder stays failed.  A decoder is used by one thread at a time.
 */
#ifndef DDPPROF_SPAN_WIRE_H
#define DDPPROF_SPAN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/span.h"

typedef enum {
    SPAN_WIRE_BATCH = 1,
    SPAN_WIRE_RANK_DONE = 2,
    SPAN_WIRE_RANK_FAILED = 3,
    SPAN_WIRE_HEARTBEAT = 4,
    SPAN_WIRE_INTS = 5, /* a rank's list of i64 values (its rebuilt bucket assignment) */
} span_wire_type;

#define SPAN_WIRE_MAGIC 0x31574444u
#define SPAN_WIRE_HEADER 12
#define SPAN_WIRE_SPAN_FIXED 52 /* a span's bytes before its name */
#define SPAN_WIRE_MAX_BATCH 1024
#define SPAN_WIRE_MAX_ERROR 1024
#define SPAN_WIRE_MAX_INTS 16384
#define SPAN_WIRE_MAX_PAYLOAD (4 + SPAN_WIRE_MAX_BATCH * (SPAN_WIRE_SPAN_FIXED + SPAN_NAME - 1))
/* A buffer this large holds any message. */
#define SPAN_WIRE_MAX_MSG (SPAN_WIRE_HEADER + SPAN_WIRE_MAX_PAYLOAD)

typedef struct {
    span_wire_type type;
    int32_t rank;        /* RANK_DONE, RANK_FAILED, HEARTBEAT: the sender */
    int64_t total_spans; /* RANK_DONE */
    int64_t clock_ns;    /* HEARTBEAT */
    int nspans;          /* SPAN_BATCH */
    const span *spans;   /* SPAN_BATCH: the decoder's, valid until its next span_wire_next */
    char error[SPAN_WIRE_MAX_ERROR + 1]; /* RANK_FAILED, NUL-terminated */
    int nints;                           /* INTS */
    const int64_t *ints;                 /* INTS: the decoder's, valid until its next span_wire_next */
} span_wire_msg;

/* Bytes span_wire_encode_batch will write for these spans (0 when it would refuse). */
size_t span_wire_batch_size(const span *spans, int n);
size_t span_wire_encode_batch(void *buf, size_t cap, const span *spans, int n);
size_t span_wire_encode_done(void *buf, size_t cap, int32_t rank, int64_t total_spans);
size_t span_wire_encode_failed(void *buf, size_t cap, int32_t rank, const char *error);
/* INTS: i32 rank, u32 n, n x i64.  0 when n > SPAN_WIRE_MAX_INTS or cap is short. */
size_t span_wire_encode_ints(void *buf, size_t cap, int32_t rank, const int64_t *v, int n);
size_t span_wire_encode_heartbeat(void *buf, size_t cap, int32_t rank, int64_t clock_ns);

typedef struct span_wire_decoder span_wire_decoder;

/* NULL when out of memory. */
span_wire_decoder *span_wire_decoder_create(void);
/* NULL is a no-op. */
void span_wire_decoder_destroy(span_wire_decoder *d);
/* Takes up to len bytes and returns how many it took: fewer only when its buffer holds
 * a complete message that span_wire_next has not returned yet, or a header that
 * span_wire_next will refuse, or after an error.  The buffer grows to the message at
 * hand (at most SPAN_WIRE_MAX_MSG): an idle decoder costs a few KiB. */
size_t span_wire_feed(span_wire_decoder *d, const void *data, size_t len);
/* 1: *out is the next message; 0: more bytes are needed; -1: the stream is corrupt
 * (err says how; every later call fails the same way). */
int span_wire_next(span_wire_decoder *d, span_wire_msg *out, char *err, size_t errlen);
/* Bytes held of a message not complete yet: non-zero at end of stream means the peer
 * stopped in the middle of one. */
size_t span_wire_pending(const span_wire_decoder *d);

#endif
