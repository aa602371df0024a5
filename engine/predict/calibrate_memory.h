/* calibrate_memory.h — the bandwidths of the memory-bound ops, learned from measured runs
 * (terms of calibrate_run.h's costs): copies into and out of the buckets, optimizer
 * steps and gradient writes.
 *
 * Contract: calib_fit_memory() takes the spans of one or more runs in calibrate_run.c's
 * place order (a run's spans together) and `inside[i]`, whether span i has time inside
 * its rank's collectives.  copy_in_gbps is the bytes moved over time of the copies into
 * the buckets (read + write: 2 x bytes), copy_out_gbps of those out of them,
 * optimizer_gbps of the SGD steps (parameter and gradient read, parameter written: 3 x
 * bytes); where `load` shares the cores (calibrate_share.h) each span's time is the
 * core time it received: with k copies, steps and sums of the run's ranks running at
 * once, min(1, cores / k) of each moment, so the bandwidths are one op's on one core.
 * grad_write_gbps is the median of bytes written over wall time of the backwards bound
 * by their write (at least `min_write_bytes`, a modelled FLOP time under a quarter of the
 * span) outside collectives.  Each figure says how many spans it came from (0: not
 * learned, value 0).  Returns -1 only when out of memory.
 *
 * Ownership: s, inside and load are borrowed for the call; the scratch is allocated and
 * freed within it, and *out holds values only.
 */
#ifndef DDPPROF_CALIBRATE_MEMORY_H
#define DDPPROF_CALIBRATE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/predict/calibrate_run.h"
#include "engine/predict/calibrate_share.h"

/* How many spans the bandwidths came from, all kinds (0: none learned). */
size_t calib_bandwidths_spans(const calib_bandwidths *b);
int calib_fit_memory(const run_span *s, size_t n, const bool *inside, const host_load *load, int64_t min_write_bytes,
                     calib_bandwidths *out);

#endif
