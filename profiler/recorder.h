/* recorder.h — lock-free span recording and the batched writer into the store.
 *
 * Contract: each recording thread owns one span_ring (single producer, no locks: two
 * atomic indices); one writer thread drains every ring every few milliseconds and
 * writes the spans in one transaction per batch.  A full ring makes its producer wait
 * for the writer (nothing is dropped while the writer works).  recorder_stop() joins
 * the writer after a final drain, so every span pushed before it is in the database.
 * With no store (recording off) spans are only counted: that is how the profiler's
 * own cost is measured.
 *
 * Failure: the first failed batch (a full disk, an I/O error) ends the writer.  From
 * then on recorder_failed() says so, with the reason, to whoever watches the run (the
 * launcher aborts it: a run that cannot be recorded must not go on training), and
 * producers never wait again: a span that finds its ring full is dropped and counted
 * (recorder_dropped), as are the spans of the failed batch and those left in the
 * rings.  recorder_written() counts only spans that reached the database.
 *
 * Spans of chosen ranks: recorder_keep_spans() (before recorder_start) has the writer
 * hand every span to `live` (stats_live.h: the statistics of every rank) and store only
 * those of the ranks r with keep[r] (nkeep entries; a rank outside them is stored);
 * both are borrowed and must outlive the writer.
 */
#ifndef DDPPROF_RECORDER_H
#define DDPPROF_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/span.h"
#include "profiler/store.h"

typedef struct recorder recorder;
typedef struct span_ring span_ring;

int recorder_create(store *st, int64_t run_id, int nrings, recorder **out);
/* The same, with the writer handing each batch to `sink` (called on the writer thread
 * only) instead of a store: how a rank process streams its spans to the run's one
 * writer.  A sink returns 0, or -1 with err, which fails the recorder as a store would. */
typedef int (*recorder_sink)(void *user, const span *spans, size_t n, char *err, size_t errlen);
int recorder_create_sink(recorder_sink sink, void *user, int nrings, recorder **out);
span_ring *recorder_ring(recorder *r, int index);
/* Never blocks for ever: waits on a full ring only while the writer lives. */
void span_ring_push(span_ring *ring, const span *s);
struct stats_live;
void recorder_keep_spans(recorder *r, const bool *keep, int nkeep, struct stats_live *live);
int recorder_start(recorder *r);
/* 1 once the writer has failed, with its first error in err ("writing spans: ...");
 * 0 otherwise.  Any thread, any time between create and destroy; takes no lock. */
int recorder_failed(recorder *r, char *err, size_t errlen);
/* Final drain and join.  Returns 0, or -1 with the first write error in err. */
int recorder_stop(recorder *r, char *err, size_t errlen);
int64_t recorder_written(const recorder *r);
/* Spans pushed but never written because the writer had failed (exact after stop). */
int64_t recorder_dropped(const recorder *r);
void recorder_destroy(recorder *r);

#endif
