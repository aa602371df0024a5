/* run_list.h — the runs a results database holds, one line each: what `ddpprof runs`
 * prints, so a user picks the --run of report, export, compare and calibrate --from.
 *
 * Contract: run_list_write() loads every run (analysis.h, ascending id) and prints, per
 * run, its id, name, backend, status, world size, start time, mean job step (ms, the
 * slowest rank's per measured iteration) and DDP's gradient overlap (%, the mean over
 * ranks of each rank's overlap of bucket allreduces with compute); a figure a run lacks
 * is "-" in text and null in JSON ({"runs": [{"id": ..., "step_ms": ..., ...}]}).
 * Text: the name last and whole (a sweep point's ends with its point), the start as
 * "MM-DD HH:MM" UTC, other columns as wide as their cells, so that a line fits 100
 * columns for names up to about 35 characters.
 * A database without runs gives the header alone (an empty list in JSON).  Returns 0,
 * or -1 with err (nothing printed on a failure to load).
 *
 * Ownership: st and out are borrowed for the call; the runs it loads are freed before
 * it returns.
 */
#ifndef DDPPROF_RUN_LIST_H
#define DDPPROF_RUN_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profiler/store.h"

int run_list_write(store *st, bool json, FILE *out, char *err, size_t errlen);

#endif
