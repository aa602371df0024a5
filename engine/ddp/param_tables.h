/* param_tables.h — the per-parameter tables that every rank of a time-only world holds
 * alike, held once for the world instead of once per rank.
 *
 * Contract: param_tables_create(m, sc) builds, for a model under a scenario,
 *  - a parameter table without memory ({data NULL, grad NULL, numel}): what a device
 *    without buffers gives every rank;
 *  - DDP's construction-time bucket layout: bucket_plan_initial()'s assignment with each
 *    parameter's bucket and element offset inside it.
 * param_tables_rebuilt(t, order) returns the layout rebuilt from a gradient-ready order
 * (bucket_plan_sized()): the first caller's order is planned and kept; a later caller
 * whose order is the same gets the same layout; a caller with another order gets NULL
 * and plans its own (so sharing never changes what a rank computes).  NULL also when out
 * of memory.  Thread-safe (ranks as threads may call it at once).
 * Everything returned is read-only to the ranks and lives until param_tables_free(),
 * which runs after every rank has ended.  Only ranks whose device has no buffers use it:
 * their tables hold no pointer of their own, so they are the same on every rank.  The
 * parameter table is handed out writable because ops and hooks take `dev_param *`; no
 * rank writes it (on such a device the reducer's re-pointing of gradients would store the
 * NULL already there, and it skips that store).
 */
#ifndef DDPPROF_PARAM_TABLES_H
#define DDPPROF_PARAM_TABLES_H

#include <stdint.h>

#include "engine/ddp/buckets.h"
#include "engine/device.h"
#include "engine/scenario/scenario.h"
#include "engine/workload/model_zoo.h"

typedef struct {
    bucket_assignment a;
    int *param_bucket;     /* parameter -> its bucket in `a` */
    int64_t *param_offset; /* parameter -> its element offset inside that bucket */
} bucket_layout;

typedef struct param_tables param_tables;

/* NULL when out of memory (the ranks then hold their own tables, as without it). */
param_tables *param_tables_create(const model *m, const scenario *sc);
dev_param *param_tables_params(param_tables *t);
const bucket_layout *param_tables_initial(const param_tables *t);
const bucket_layout *param_tables_rebuilt(param_tables *t, const int32_t *order);
void param_tables_free(param_tables *t);

/* Fills param_bucket/param_offset (m->nparams entries each) from assignment `a`. */
void bucket_layout_index(const model *m, const bucket_assignment *a, int *param_bucket, int64_t *param_offset);

#endif
