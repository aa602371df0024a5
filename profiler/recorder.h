/* recorder.h — lock-free span recording and the batched writer into the store.
 *
 * Contract: each recording thread owns one span_ring (single producer, no locks: two
 * atomic indices); one writer thread drains every ring every few milliseconds and
 * writes the spans in one transaction per batch.  A full ring makes its producer wait
 * for the writer (nothing is dropped).  recorder_stop() joins the writer after a final
 * drain, so every span pushed before it is in the database.  With no store (recording
 * off) spans are only counted: that is how the profiler's own cost is measured.
 */
#ifndef DDPPROF_RECORDER_H
#define DDPPROF_RECORDER_H

#include <stdint.h>

#include "span.h"
#include "store.h"

typedef struct recorder recorder;
typedef struct span_ring span_ring;

int recorder_create(store *st, int64_t run_id, int nrings, recorder **out);
span_ring *recorder_ring(recorder *r, int index);
void span_ring_push(span_ring *ring, const span *s);
int recorder_start(recorder *r);
/* Final drain and join.  Returns 0, or -1 with the first write error in err. */
int recorder_stop(recorder *r, char *err, size_t errlen);
int64_t recorder_written(const recorder *r);
void recorder_destroy(recorder *r);

#endif
