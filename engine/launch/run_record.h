/* run_record.h — a run's rows in the results database around its execution.
 *
 * Contract: run_record_begin() inserts the run ('running'), its ranks' speeds, its
 * parameters and its initial (version 0) bucket assignment; run_record_assignment()
 * adds a later version (1: rebuilt); run_record_finish() ends the run 'complete'
 * (failure == NULL or "") or 'failed' with the failure text.  Each returns 0, or -1
 * with err.  How the ranks were run is not this module's business.  `rank_spans`
 * (world_size entries, NULL: all) says which ranks' spans the run stores.
 *
 * Ownership: every pointer is borrowed for the call and none is kept; what the
 * functions allocate to write the rows is freed before they return.
 */
#ifndef DDPPROF_RUN_RECORD_H
#define DDPPROF_RUN_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ddp/buckets.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "profiler/store.h"

int run_record_begin(store *st, const scenario *sc, const model *m, const char *backend, const bool *rank_spans,
                     int64_t *run_id, char *err, size_t errlen);
int run_record_assignment(store *st, int64_t run_id, int version, const bucket_assignment *a, char *err,
                          size_t errlen);
int run_record_finish(store *st, int64_t run_id, const char *failure, char *err, size_t errlen);

#endif
