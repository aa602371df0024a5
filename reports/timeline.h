/* timeline.h — the spans of one iteration of a run, every rank, ready to draw.
 *
 * Contract: timeline_load() reads run `run_id`'s spans of iteration `iter` for each
 * rank in `ranks` (through the span table's (run_id, rank, iter) index, so a long run
 * costs only that iteration) and, for each allreduce span, the last arrival of its
 * collective among the loaded ranks: [start, last_arrival] is the rank's straggler
 * wait inside the collective, [last_arrival, end] the transfer.  Times stay in ns on
 * the run's clock; t0_ns/t1_ns bound the iteration over all ranks.  0 or -1 with err.
 */
#ifndef DDPPROF_TIMELINE_H
#define DDPPROF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/store.h"

typedef struct {
    int rank;
    int stream;   /* 0 host, 1 compute, 2 comm */
    char kind[16];
    char name[64];
    int bucket;   /* -1: none */
    int64_t seq;  /* -1: none */
    int64_t start_ns, end_ns;
    int64_t last_arrival_ns; /* allreduce spans only; else -1 */
} timeline_span;

typedef struct {
    int iter;
    int64_t t0_ns, t1_ns;
    size_t n;
    timeline_span *spans;
} timeline;

int timeline_load(store *st, int64_t run_id, int iter, const int *ranks, size_t nranks,
                  timeline *tl, char *err, size_t errlen);
void timeline_free(timeline *tl);

#endif
