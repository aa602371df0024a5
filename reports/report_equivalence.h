/* report_equivalence.h — the text table of equivalence checks (table `equivalence`).
 *
 * Contract: prints every comparison group that holds run `run_id` (every group when
 * run_id is -1): one row per training, weights compared with the group's reference.
 * A database without the table, or a run in no group, prints nothing.  0 or -1 with err.
 *
 * Ownership: nothing here allocates; st and out are borrowed for the call.
 */
#ifndef DDPPROF_REPORT_EQUIVALENCE_H
#define DDPPROF_REPORT_EQUIVALENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/store.h"

int report_equivalence_text(store *st, int64_t run_id, FILE *out, char *err, size_t errlen);

#endif
