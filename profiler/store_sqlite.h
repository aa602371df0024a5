/* store_sqlite.h — what the store's files, and the statistics below them, share of SQLite:
 * the two wrappers every fallible SQL call goes through, and the SQL fragments that the
 * schema's views and the stored statistics must compute alike.
 *
 * Contract: the wrappers (store_sqlite.c) return 0, or -1 with "what: SQLite's message" in
 * (err, errlen); the fragments are string literals to paste into SQL text.
 */
#ifndef DDPPROF_STORE_SQLITE_H
#define DDPPROF_STORE_SQLITE_H

#include <stddef.h>

#include <sqlite3.h>

/* The current time as the store writes it (UTC, ISO 8601 with milliseconds). */
#define NOW_UTC "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* nccl-tests' bandwidths as SQL expressions (the collective view's, and
 * collective_stat's computed from the same operands, so the figures are equal):
 * algbw = bytes / transfer in GB/s (bytes/ns), NULL for no transfer time; busbw =
 * algbw times the collective's factor for n ranks, NULL where nccl-tests has none. */
#define SQL_BUSBW_FACTOR(KIND, N)                                                        \
    "CASE " KIND " WHEN 'allreduce' THEN 2.0 * (" N " - 1) / " N                        \
    " WHEN 'all_gather' THEN 1.0 * (" N " - 1) / " N                                    \
    " WHEN 'reduce_scatter' THEN 1.0 * (" N " - 1) / " N                                \
    " WHEN 'all_to_all' THEN 1.0 * (" N " - 1) / " N                                    \
    " WHEN 'broadcast' THEN 1.0 WHEN 'reduce' THEN 1.0 WHEN 'send_recv' THEN 1.0 END"
#define SQL_ALGBW(BYTES, TRANSFER)                                                       \
    "CASE WHEN " TRANSFER " > 0 THEN " BYTES " * 1.0 / " TRANSFER " END"

/* store_db_fail puts "what: SQLite's message" in err
 * and returns -1, for its caller to return; store_exec runs SQL that returns no rows:
 * 0, or -1 with "what: SQLite's message". */
int store_db_fail(sqlite3 *db, char *err, size_t errlen, const char *what);
int store_exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen);

#endif
