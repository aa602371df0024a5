/* bucket_plan.h — which gradients share a bucket: DDP's assignment of a model's
 * parameters under a scenario's [ddp] section, before and after the rebuild.
 *
 * Contract: bucket_plan_initial() is the construction-time assignment (version 0): one
 * bucket for the whole model (PyTorch >= 1.13 without find_unused_parameters, or with
 * static_graph), else the greedy [first_bucket_mb, bucket_cap_mb] assignment in
 * registration order; reversed, so bucket 0 holds the last layers.  bucket_plan_sized()
 * is the greedy assignment walking `order` (the observed gradient-ready order at the
 * rebuild; NULL: registration order, buckets sorted by smallest index).  fp32 gradients;
 * 0, or -1 when out of memory.
 *
 * Ownership: on 0 each fills *out, whose arrays the caller frees with
 * bucket_assignment_free(); after -1 there is nothing to free.  m, sc and order are
 * borrowed for the call.
 */
#ifndef DDPPROF_BUCKET_PLAN_H
#define DDPPROF_BUCKET_PLAN_H

#include "engine/ddp/buckets.h"
#include "engine/scenario/scenario.h"
#include "engine/workload/model_zoo.h"

int bucket_plan_initial(const model *m, const scenario *sc, bucket_assignment *out);
int bucket_plan_sized(const model *m, const scenario *sc, const int *order, bucket_assignment *out);

#endif
