/* calibrate_share.h — the share of a host's cores each op of a measured run received,
 * as the sim's shared host gives it (engine/sim/sim_host.h): with ops and parts of sums of
 * the run's ranks running on `cores`, each progresses at its share of timing_core_shares()
 * (the parts of sums at `sum_weight`).  The ops
 * are the copies into and out of the buckets and the optimizer steps (compute-stream
 * spans, timing_on_host_cores), the backwards bound by their gradient write (of at least
 * CALIB_HOSTED_WRITE_MIN_BYTES: a write holds its core as a copy does), the writes that
 * begin the other backwards (write_bytes at `write_gbps` from the span's start, on a core
 * of their own, ended by the span's end at the latest: no span shows when they end, and
 * the sim holds a core while they write; write_gbps 0 leaves them out) and every rank's
 * part of each bucket allreduce seen by
 * all its ranks: one job per rank from the last arrival to the collective's end
 * (calib_collective_next).
 *
 * Contract: host_load_build() takes the spans of one or more runs, a run's together and
 * the runs in increasing order, the comm spans of the same runs in collective order
 * (run, seq) and the cores
 * (<= 0: nothing shared, every query gives the wall time), the sums' weight and the
 * sleeping writes' bandwidth (GB/s); NULL
 * when out of memory.  host_load_core_time() is the integral of a copy's or step's share
 * over [from, to] of run `run`, for an op that is one of those running (its own start and
 * end are events of the load; elsewhere the wall time); host_load_sum_core_time() the
 * same for a part of a collective's sums (from its last arrival to its end).  calib_collective_next() groups the
 * comm spans from index i on of one collective, returns the index past them, and says
 * whether they are a bucket allreduce every rank recorded with the same bytes, and its
 * last arrival and end (the first rank's end when the cores are shared: the late exits
 * are a term of their own; the last end otherwise).
 */
#ifndef DDPPROF_CALIBRATE_SHARE_H
#define DDPPROF_CALIBRATE_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/predict/calibrate_run.h"

typedef struct host_load host_load;

typedef struct {
    bool whole;            /* a bucket allreduce every rank recorded, with the same bytes */
    int64_t run, bytes;
    int world;
    int64_t last_arrival_ns, end_ns;
} calib_collective;

/* The smallest write-bound backward counted on the host's cores (a cached model's layers). */
#define CALIB_HOSTED_WRITE_MIN_BYTES ((int64_t)64 << 10)
/* A backward of at least min_bytes bound by its gradient write: it lasted over four
 * times its FLOP model (one that sleeps to its deadline would need a wake-up of three
 * times its model). */
bool calib_write_bound(const run_span *s, int64_t min_bytes);
/* An op on the host's cores: a copy into or out of a bucket, an optimizer step, or a
 * write-bound backward (the sim's sim_on_host_cores). */
bool calib_host_shared(const run_span *s);
size_t calib_collective_next(const run_span *c, size_t nc, size_t i, bool shared_cores, calib_collective *out);
host_load *host_load_build(const run_span *s, size_t n, const run_span *c, size_t nc, double cores,
                           double sum_weight, double write_gbps);
double host_load_core_time(const host_load *l, int64_t run, int64_t from_ns, int64_t to_ns);
double host_load_sum_core_time(const host_load *l, int64_t run, int64_t from_ns, int64_t to_ns);
void host_load_free(host_load *l);

#endif
