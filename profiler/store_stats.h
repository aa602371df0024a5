/* store_stats.h — a run's statistics, computed once when it ends into tables shaped like
 * the views (iteration_stat, collective_stat, bucket_ready_stat, hta_stat; run_stats
 * lists the runs that have them), so that reports of millions of spans read thousands
 * of rows.  The contract of each figure is in store_stats.c.
 *
 * Contract: both run inside the caller's transaction on an open read-write database of
 * the current schema: one run's statistics, or those of every run that has ended and
 * has none.  0, or -1 with err.
 */
#ifndef DDPPROF_STORE_STATS_H
#define DDPPROF_STORE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct stats_live;
/* With `live` (exact, stats_live.h), iteration_stat and collective_stat are its rows,
 * every rank's, and the stored spans give only what needs them whole (bucket_ready_stat,
 * hta_stat) for the ranks that have them; NULL: everything from the stored spans. */
int store_compute_stats(sqlite3 *db, int64_t run_id, const struct stats_live *live, char *err, size_t errlen);
int store_compute_finished_stats(sqlite3 *db, char *err, size_t errlen);

#endif
