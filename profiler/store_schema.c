/* store_schema.c — the results database's schema: the views' SQL (written once), the
 * tables of each schema version, the migrations between versions, and recognising
 * a ddpprof file before anything is written into it.
 *
 * Contract (store.h, store_internal.h): the schema is versioned in meta (key
 * 'schema_version'); MIGRATIONS[v] takes a file from version v to v + 1 and
 * store_migrate applies the missing steps in one IMMEDIATE transaction.
 * store_inspect only reads: a file that is not SQLite, or that holds tables of some
 * other program, or a ddpprof file of a newer schema, is refused before any pragma
 * or journal could change a byte of it.
 *
 * The views' SQL is written once, as macros taking a run filter: the views are
 * created from the unfiltered text, and store_view_select() hands readers the same
 * text restricted to one run (parameter ?1).  That second form exists because SQLite
 * 3.40 does not push `WHERE run_id = ?` through nested aggregates and window
 * functions, so a filtered query on collective / iteration_stats would otherwise read
 * every run's spans.  ddp_logging is a single aggregate, which SQLite does push into.
 *
 * Analysis definitions (DESIGN.md "Analysis definitions"), per (run, rank, iter):
 *   C = |union of stream='compute' spans|, M = |union of kind='allreduce' spans|,
 *   U = |union of both|; overlap |M ∩ C| = C + M - U and exposed |M \ C| = U - C
 *   (inclusion-exclusion, instead of joining the merged intervals of C against those
 *   of M).  Unions are gaps-and-islands in summed form: in start order, a span opens
 *   a new island when it starts after every earlier span has ended, and in any case
 *   adds max(0, end - max(start, latest earlier end)), its part beyond what earlier
 *   spans covered; summing that needs one window pass and one sort for all three sets
 *   instead of numbering islands and grouping them (3.5x faster measured).
 *   step = end of the last optimizer span - start of the first forward span; a
 *   rank-iteration without an optimizer span (no_sync step, failed run) ends at its
 *   last span, and one without a forward span starts at its first span.  An imported
 *   run's rank-iterations carry a 'step' span (the job's period on the device
 *   timeline, profiler/import/import_job.c), which is the step where present.
 *   arrival a(s,r) = start of rank r's allreduce for collective seq s;
 *   wait(s,r) = max_r' a(s,r') - a(s,r); transfer(s) = end(s) - max a(s,.).
 */
#include "common/errmsg.h"
#include "profiler/store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- view SQL, defined once ------------------------------------------------- */

#define RUN_ALL ""
#define RUN_ONE " AND run_id = ?1"

/* The kinds that are collectives (span_kind_is_collective). */
#define COLLECTIVE_KINDS                                                                 \
    "('allreduce', 'broadcast', 'all_gather', 'reduce_scatter', 'all_to_all',"          \
    " 'send_recv', 'reduce', 'barrier', 'collective')"

/* One row per (run, collective, rank): a rank's span of collective seq s, of the kinds
 * in KINDS.  Grouped so that a collective recorded as several spans on one rank still
 * arrives at its first. */
#define SQL_RANK_COLLECTIVE(RUN, KINDS)                                                  \
    "SELECT run_id, seq, rank, MIN(kind) AS kind, MIN(iter) AS iter,"                   \
    " MIN(bucket) AS bucket, MIN(start_ns) AS arrival_ns, MAX(end_ns) AS end_ns,"       \
    " MAX(bytes) AS bytes, MAX(name = '" DDP_REBUILD_SPAN_NAME "') AS rebuild"          \
    " FROM span WHERE kind IN " KINDS " AND seq IS NOT NULL" RUN                        \
    " GROUP BY run_id, seq, rank"

/* Per bucket allreduce and rank: the arrival and the wait (the straggler time that
 * iteration_stats sums).  end_ns here is this rank's end of the collective; the
 * collective view has the collective's end (the last rank's). */
#define SQL_COLLECTIVE_ARRIVAL(RUN)                                                      \
    "SELECT run_id, seq, iter, bucket, rank, arrival_ns,"                               \
    " MAX(arrival_ns) OVER (PARTITION BY run_id, seq) - arrival_ns AS wait_ns,"         \
    " end_ns, bytes"                                                                    \
    " FROM (" SQL_RANK_COLLECTIVE(RUN, "('allreduce')") ")"

/* Every collective (each kind), once.  warmup: its iteration is a warm-up one.
 * bucket_version: for a bucket's allreduce, 0 with the assignment DDP starts with
 * (iteration 0's one bucket of the whole model, unless find_unused_parameters), 1
 * once DDP has rebuilt the buckets, which it does after sending rank 0's assignment
 * (the broadcast named DDP_REBUILD_SPAN_NAME, dated by its seq); NULL for other
 * collectives.  algbw_gbps and busbw_gbps as nccl-tests defines them, over the
 * transfer (end - last arrival, so a straggler's wait is not counted as slow
 * transfer): algbw = bytes / transfer (bytes/ns is GB/s); busbw = algbw * 2(n-1)/n
 * for allreduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1 for
 * broadcast, reduce and send_recv (n = nranks); NULL where the bytes are unknown, the
 * transfer took no time or (barrier, a collective of unknown kind) nccl-tests has no
 * such figure. */
#define SQL_COLLECTIVE(RUN)                                                              \
    "SELECT c.run_id, c.seq, c.kind, c.iter, c.iter < r.warmup AS warmup, c.bucket,"    \
    " CASE WHEN c.bucket IS NULL OR c.kind <> 'allreduce' THEN NULL"                    \
    "  WHEN c.seq > c.rebuild_seq THEN 1 ELSE 0 END AS bucket_version,"                 \
    " c.bytes, c.first_arrival_ns, c.last_arrival_ns, c.end_ns, c.nranks,"              \
    " c.arrival_skew_ns, c.transfer_ns,"                                                \
    " " SQL_ALGBW("c.bytes", "c.transfer_ns") " AS algbw_gbps,"                         \
    " " SQL_ALGBW("c.bytes", "c.transfer_ns") " * "                                     \
    SQL_BUSBW_FACTOR("c.kind", "c.nranks") " AS busbw_gbps"                             \
    " FROM (SELECT run_id, seq, MIN(kind) AS kind, MIN(iter) AS iter,"                  \
    "  MIN(bucket) AS bucket, MAX(bytes) AS bytes,"                                     \
    "  MIN(arrival_ns) AS first_arrival_ns, MAX(arrival_ns) AS last_arrival_ns,"        \
    "  MAX(end_ns) AS end_ns, COUNT(*) AS nranks,"                                      \
    "  MAX(arrival_ns) - MIN(arrival_ns) AS arrival_skew_ns,"                           \
    "  MAX(end_ns) - MAX(arrival_ns) AS transfer_ns,"                                   \
    "  MIN(MIN(CASE WHEN rebuild THEN seq END)) OVER (PARTITION BY run_id)"             \
    "   AS rebuild_seq"                                                                 \
    "  FROM (" SQL_RANK_COLLECTIVE(RUN, COLLECTIVE_KINDS) ") GROUP BY run_id, seq) c"   \
    " JOIN run r ON r.id = c.run_id"

/* p: an imported rank-iteration's period (its 'step' span); c: every span, its
 * interval clipped to that period where there is one (so that compute, exposed
 * communication and the rest add up to the period: a device op of the step that runs
 * past it belongs to the next period's time); w: the spans of a rank-iteration in
 * start order, with the latest end among the earlier spans of each set (C: compute
 * stream, M: allreduce, U: either); the three windows share one definition, so
 * SQLite sorts once.  t: per rank-iteration, the union lengths (see the header
 * comment), the step bounds.  wt: the waits. */
#define SQL_ITERATION_STATS(RUN)                                                         \
    "WITH p AS ("                                                                       \
    "  SELECT run_id, rank, iter, MIN(start_ns) AS p0, MAX(end_ns) AS p1"               \
    "  FROM span WHERE kind = 'step'" RUN " GROUP BY run_id, rank, iter"                \
    "), c AS ("                                                                         \
    "  SELECT s.run_id, s.rank, s.iter, s.kind, s.stream, s.start_ns, s.end_ns,"        \
    "   CASE WHEN p.p0 IS NULL THEN s.start_ns"                                         \
    "    ELSE MIN(MAX(s.start_ns, p.p0), p.p1) END AS cs,"                              \
    "   CASE WHEN p.p0 IS NULL THEN s.end_ns"                                           \
    "    ELSE MAX(MIN(s.end_ns, p.p1), p.p0) END AS ce"                                 \
    "  FROM (SELECT * FROM span WHERE 1" RUN ") s LEFT JOIN p ON p.run_id = s.run_id"   \
    "   AND p.rank = s.rank AND p.iter = s.iter"                                        \
    "), w AS ("                                                                         \
    "  SELECT run_id, rank, iter, kind, start_ns, end_ns, cs, ce,"                      \
    "   stream = 'compute' AS is_c, kind = 'allreduce' AS is_m,"                        \
    "   MAX(CASE WHEN stream = 'compute' THEN ce END) OVER win AS prev_c,"              \
    "   MAX(CASE WHEN kind = 'allreduce' THEN ce END) OVER win AS prev_m,"              \
    "   MAX(CASE WHEN stream = 'compute' OR kind = 'allreduce' THEN ce END)"            \
    "    OVER win AS prev_u"                                                            \
    "  FROM c"                                                                          \
    "  WINDOW win AS (PARTITION BY run_id, rank, iter ORDER BY cs, ce"                  \
    "   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"                              \
    "), t AS ("                                                                         \
    "  SELECT run_id, rank, iter,"                                                      \
    "   SUM(CASE WHEN is_c THEN"                                                        \
    "    MAX(ce - MAX(cs, COALESCE(prev_c, cs)), 0) ELSE 0 END) AS c_ns,"               \
    "   SUM(CASE WHEN is_m THEN"                                                        \
    "    MAX(ce - MAX(cs, COALESCE(prev_m, cs)), 0) ELSE 0 END) AS m_ns,"               \
    "   SUM(CASE WHEN is_c OR is_m THEN"                                                \
    "    MAX(ce - MAX(cs, COALESCE(prev_u, cs)), 0) ELSE 0 END) AS u_ns,"               \
    "   COALESCE(MIN(start_ns) FILTER (WHERE kind = 'step'),"                           \
    "    MIN(start_ns) FILTER (WHERE kind = 'forward'),"                                \
    "    MIN(start_ns) FILTER (WHERE kind <> 'profiler_step'), MIN(start_ns))"          \
    "    AS step_start_ns,"                                                             \
    "   COALESCE(MAX(end_ns) FILTER (WHERE kind = 'step'),"                             \
    "    MAX(end_ns) FILTER (WHERE kind = 'optimizer'),"                                \
    "    MAX(end_ns) FILTER (WHERE kind <> 'profiler_step'), MAX(end_ns))"              \
    "    AS step_end_ns"                                                                \
    "  FROM w GROUP BY run_id, rank, iter"                                              \
    "), wt AS ("                                                                        \
    "  SELECT run_id, rank, iter, SUM(wait_ns) AS wait_ns"                              \
    "  FROM (" SQL_COLLECTIVE_ARRIVAL(RUN) ") GROUP BY run_id, rank, iter"              \
    ")"                                                                                 \
" SELECT t.run_id, t.rank, t.iter, t.iter < r.warmup AS warmup,"                    \
    "  t.step_end_ns - t.step_start_ns AS step_ns, t.c_ns AS compute_ns,"               \
    "  t.m_ns AS comm_ns, t.c_ns + t.m_ns - t.u_ns AS overlap_ns,"                      \
    "  t.u_ns - t.c_ns AS exposed_comm_ns, COALESCE(wt.wait_ns, 0) AS wait_ns,"         \
    "  t.step_start_ns, t.step_end_ns"                                                  \
    " FROM t JOIN run r ON r.id = t.run_id"                                             \
    " LEFT JOIN wt ON wt.run_id = t.run_id AND wt.rank = t.rank AND wt.iter = t.iter"

/* PyTorch DDP logger's fields (torch/csrc/distributed/c10d/logger.cpp and reducer.cpp,
 * 1.13), one row per synchronised iteration (one with a bucket allreduce: the logger
 * times none other), from the events the reducer's timer records:
 *   forward start          DDP's forward begins (prepare_for_forward): the iteration's
 *                          first forward or pre-forward broadcast (rebuild, buffers),
 *                          construction excluded;
 *   backward compute start prepare_for_backward, at the end of forward;
 *   backward compute end   the last gradient copied into its bucket (the backward's end
 *                          where no copy is needed);
 *   backward comm start    bucket 0 launched: the point of the compute stream the comm
 *                          stream waits on, the end of bucket 0's last copy-in (its
 *                          allreduce's start where the gradients are views and a hook
 *                          divides, so nothing is copied).  The allreduce itself may
 *                          start later, when the comm stream gets to it;
 *   backward comm end      finalize_backward, after the gradients are copied back out
 *                          of the buckets (the last allreduce's end where they are views).
 * static_graph's first synchronised iteration (its used-parameter bitmap sent before any
 * bucket): delay_all_reduce() records compute end and comm start together when the
 * backward has ended, before it copies the gradients into the buckets, so both are the
 * backward's end and the overlap is 0.
 * forward_compute_time = backward compute start - forward start; backward_compute_time =
 * compute end - compute start; backward_comm_time = comm end - comm start;
 * backward_compute_comm_overlap_time = compute end - comm start.  A duration whose end
 * comes before its start has no value (NULL), as the logger's timer gives none. */
#define DDPL_CONSTRUCTION "(name LIKE 'verify params%' OR name LIKE 'sync module states%')"
#define DDPL_BUCKET "(kind = 'allreduce' AND bucket IS NOT NULL)"
#define DDPL_DELAYED                                                                     \
    "(MIN(seq) FILTER (WHERE name = 'local_used_map int32')"                            \
    " < MIN(seq) FILTER (WHERE " DDPL_BUCKET "))"
#define DDPL_BACKWARD_END "MAX(end_ns) FILTER (WHERE kind = 'backward')"
#define DDPL_FWD_START                                                                   \
    "MIN(start_ns) FILTER (WHERE kind = 'forward' OR (kind = 'broadcast' AND NOT "      \
    DDPL_CONSTRUCTION "))"
#define DDPL_BWD_START "MAX(end_ns) FILTER (WHERE kind = 'forward')"
#define DDPL_BWD_END                                                                     \
    "CASE WHEN " DDPL_DELAYED " THEN " DDPL_BACKWARD_END                                \
    " ELSE MAX(COALESCE(MAX(end_ns) FILTER (WHERE kind = 'copy_in'), 0),"               \
    " " DDPL_BACKWARD_END ") END"
#define DDPL_COMM_START                                                                  \
    "CASE WHEN " DDPL_DELAYED " THEN " DDPL_BACKWARD_END                                \
    " ELSE COALESCE(MAX(end_ns) FILTER (WHERE kind = 'copy_in' AND bucket = 0),"        \
    " MIN(start_ns) FILTER (WHERE " DDPL_BUCKET " AND bucket = 0)) END"
#define DDPL_COMM_END                                                                    \
    "COALESCE(MAX(end_ns) FILTER (WHERE kind = 'copy_out'),"                            \
    " MAX(end_ns) FILTER (WHERE " DDPL_BUCKET "))"
/* The logger's duration: none where the end comes first. */
#define DDPL_SPAN(END, START) "CASE WHEN " END " >= " START " THEN " END " - " START " END"
#define SQL_DDP_LOGGING(RUN)                                                             \
    "SELECT run_id, rank, iter,"                                                        \
    " " DDPL_SPAN("bs", "fs") " AS forward_compute_time,"                               \
    " " DDPL_SPAN("be", "bs") " AS backward_compute_time,"                              \
    " " DDPL_SPAN("ce", "cs") " AS backward_comm_time,"                                 \
    " " DDPL_SPAN("be", "cs") " AS backward_compute_comm_overlap_time,"                 \
    " fs AS forward_compute_time_start, bs AS backward_compute_time_start,"             \
    " be AS backward_compute_time_end, cs AS backward_comm_time_start,"                 \
    " ce AS backward_comm_time_end"                                                     \
    " FROM (SELECT run_id, rank, iter,"                                                 \
    "  " DDPL_FWD_START " AS fs, " DDPL_BWD_START " AS bs, " DDPL_BWD_END " AS be,"     \
    "  " DDPL_COMM_START " AS cs, " DDPL_COMM_END " AS ce"                              \
    "  FROM span WHERE 1" RUN " GROUP BY run_id, rank, iter"                            \
    "  HAVING COUNT(*) FILTER (WHERE " DDPL_BUCKET ") > 0)"

/* The logger's avg_* fields per (run, rank).  It samples synchronised iterations k = 1,
 * 2, ... (1-based) with k <= 10 or k % 100 = 0, and takes iteration k's figures at the
 * next synchronised forward (so never the last one's); each avg_ is its running integer
 * mean, avg = (t + avg * (n - 1)) / n in int64, reproduced here step by step.  A sample
 * whose duration has no value (NULL) still counts in n but leaves that average as it was
 * (Logger::calculate_avg_time returns before updating it); the averages start at 0. */
#define DDPL_AVG(F, A)                                                                   \
    "CASE WHEN s." F " IS NULL THEN a." A " ELSE (s." F " + a." A " * (s.n - 1)) / s.n END"
#define SQL_DDP_LOGGING_AVG(RUN)                                                         \
    "WITH RECURSIVE l AS ("                                                             \
    "  SELECT *, ROW_NUMBER() OVER (PARTITION BY run_id, rank ORDER BY iter) AS k,"    \
    "   COUNT(*) OVER (PARTITION BY run_id, rank) AS nsync"                             \
    "  FROM (" SQL_DDP_LOGGING(RUN) ")"                                                 \
    "), s AS ("                                                                         \
    "  SELECT *, ROW_NUMBER() OVER (PARTITION BY run_id, rank ORDER BY iter) AS n"      \
    "  FROM l WHERE k < nsync AND (k <= 10 OR k % 100 = 0)"                             \
    "), a AS ("                                                                         \
    "  SELECT run_id, rank, n, iter, COALESCE(forward_compute_time, 0) AS f,"           \
    "   COALESCE(backward_compute_time, 0) AS b, COALESCE(backward_comm_time, 0) AS c," \
    "   COALESCE(backward_compute_comm_overlap_time, 0) AS o FROM s WHERE n = 1"        \
    "  UNION ALL"                                                                       \
    "  SELECT s.run_id, s.rank, s.n, s.iter,"                                           \
    "   " DDPL_AVG("forward_compute_time", "f") ","                                     \
    "   " DDPL_AVG("backward_compute_time", "b") ","                                    \
    "   " DDPL_AVG("backward_comm_time", "c") ","                                       \
    "   " DDPL_AVG("backward_compute_comm_overlap_time", "o")                           \
    "  FROM a JOIN s ON s.run_id = a.run_id AND s.rank = a.rank AND s.n = a.n + 1"     \
    ")"                                                                                 \
    " SELECT run_id, rank, n AS iterations_logged, iter AS last_logged_iter,"          \
    "  f AS avg_forward_compute_time, b AS avg_backward_compute_time,"                  \
    "  c AS avg_backward_comm_time, o AS avg_backward_compute_comm_overlap_time"        \
    " FROM a WHERE n = (SELECT MAX(n) FROM s WHERE s.run_id = a.run_id AND s.rank = a.rank)"

typedef struct {
    const char *name;
    const char *all;
    const char *one;
} view_sql;

static const view_sql VIEWS[] = {
    {"collective_arrival", SQL_COLLECTIVE_ARRIVAL(RUN_ALL), SQL_COLLECTIVE_ARRIVAL(RUN_ONE)},
    {"collective", SQL_COLLECTIVE(RUN_ALL), SQL_COLLECTIVE(RUN_ONE)},
    {"iteration_stats", SQL_ITERATION_STATS(RUN_ALL), SQL_ITERATION_STATS(RUN_ONE)},
    {"ddp_logging", SQL_DDP_LOGGING(RUN_ALL), SQL_DDP_LOGGING(RUN_ONE)},
    {"ddp_logging_avg", SQL_DDP_LOGGING_AVG(RUN_ALL), SQL_DDP_LOGGING_AVG(RUN_ONE)},
};

const char *store_view_select(const char *view, bool one_run)
{
    for (size_t i = 0; i < sizeof VIEWS / sizeof VIEWS[0]; i++)
        if (strcmp(VIEWS[i].name, view) == 0)
            return one_run ? VIEWS[i].one : VIEWS[i].all;
    return NULL;
}

/* ---- schema ------------------------------------------------------------------- */

/* Schema version 1, as first released.  MIGRATIONS[v] takes a file from version v to
 * v + 1; a new version appends a step, so older files upgrade in place. */
static const char SCHEMA_V1[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE run("
    " id INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL,"
    " scenario TEXT,"
    " source TEXT,"
    " backend TEXT,"
    " world_size INTEGER NOT NULL CHECK (world_size >= 1),"
    " status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running','complete','failed')),"
    " started_at TEXT NOT NULL DEFAULT (" NOW_UTC "),"
    " finished_at TEXT,"
    " error TEXT,"
    " model TEXT,"
    " total_params INTEGER,"
    " iterations INTEGER,"
    " warmup INTEGER NOT NULL DEFAULT 0 CHECK (warmup >= 0),"
    " bucket_cap_mb REAL);"
    "CREATE TABLE rank("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " speed REAL NOT NULL DEFAULT 1.0,"
    " PRIMARY KEY (run_id, rank));"
    "CREATE TABLE param("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL,"
    " name TEXT,"
    " numel INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL,"
    " shape TEXT,"
    " layer TEXT,"
    " bucket INTEGER,"
    " PRIMARY KEY (run_id, idx));"
    "CREATE TABLE bucket("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " version INTEGER NOT NULL CHECK (version >= 0),"
    " idx INTEGER NOT NULL,"
    " nbytes INTEGER NOT NULL,"
    " nparams INTEGER NOT NULL,"
    " size_limit INTEGER,"
    " params TEXT NOT NULL,"
    " PRIMARY KEY (run_id, version, idx));"
    "CREATE TABLE span("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " iter INTEGER NOT NULL,"
    " stream TEXT NOT NULL CHECK (stream IN ('host','compute','comm')),"
    " kind TEXT NOT NULL CHECK (kind IN ('forward','backward','copy_in','allreduce',"
    "  'copy_out','optimizer','wait','broadcast')),"
    " name TEXT,"
    " layer INTEGER,"
    " bucket INTEGER,"
    " seq INTEGER,"
    " bytes INTEGER,"
    " start_ns INTEGER NOT NULL,"
    " end_ns INTEGER NOT NULL CHECK (end_ns >= start_ns));"
    "CREATE INDEX span_run_rank_iter ON span(run_id, rank, iter);"
    "CREATE INDEX span_run_seq ON span(run_id, seq);"
    "CREATE VIEW collective_arrival AS " SQL_COLLECTIVE_ARRIVAL(RUN_ALL) ";"
    "CREATE VIEW collective AS " SQL_COLLECTIVE(RUN_ALL) ";"
    "CREATE VIEW iteration_stats AS " SQL_ITERATION_STATS(RUN_ALL) ";"
    "CREATE VIEW ddp_logging AS " SQL_DDP_LOGGING(RUN_ALL) ";"
    "CREATE VIEW ddp_logging_avg AS " SQL_DDP_LOGGING_AVG(RUN_ALL) ";";


/* Version 2: who writes a run, so that a run left 'running' by a process that died
 * can be told from one still recording (store_liveness.c), and the application id
 * that marks the file as ddpprof's. */
#define STR_(x) #x
#define STR(x) STR_(x)
static const char MIGRATE_V2[] =
    "ALTER TABLE run ADD COLUMN writer_pid INTEGER;"
    "ALTER TABLE run ADD COLUMN writer_host TEXT;"
    "ALTER TABLE run ADD COLUMN writer_start INTEGER;"
    "ALTER TABLE run ADD COLUMN writer_boot TEXT;"
    "ALTER TABLE run ADD COLUMN writer_pidns TEXT;"
    "PRAGMA application_id = " STR(STORE_APPLICATION_ID) ";";

/* Version 3: ranks may be processes, each on its own clock; the offset of each rank's
 * clock against the run's (coordinator's) clock, and its uncertainty, measured at the
 * rendezvous (NULL for ranks that were threads of the writing process). */
static const char MIGRATE_V3[] =
    "ALTER TABLE rank ADD COLUMN clock_offset_ns INTEGER;"
    "ALTER TABLE rank ADD COLUMN clock_uncertainty_ns INTEGER;"
    "ALTER TABLE run ADD COLUMN ranks TEXT;";

/* Version 4: a long run stays quick to report.  Each run's statistics are computed
 * once when it ends (store_stats.c) into tables shaped like the views (which stay,
 * for ad-hoc SQL, and for runs without statistics); run_stats lists the runs that
 * have them.  The seq index only covers spans with a seq (the collectives), which
 * is all its readers ask for, so other spans do not pay for it.  store_migrate
 * computes the statistics of every run that had already ended.  IF NOT EXISTS: a
 * file whose recorded version was set back may hold the tables already. */
static const char MIGRATE_V4[] =
    "CREATE TABLE IF NOT EXISTS run_stats("
    " run_id INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,"
    " spans INTEGER NOT NULL,"
    " computed_at TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS iteration_stat("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, iter INTEGER NOT NULL, warmup INTEGER NOT NULL,"
    " step_ns INTEGER NOT NULL, compute_ns INTEGER NOT NULL, comm_ns INTEGER NOT NULL,"
    " overlap_ns INTEGER NOT NULL, exposed_comm_ns INTEGER NOT NULL, wait_ns INTEGER NOT NULL,"
    " step_start_ns INTEGER NOT NULL, step_end_ns INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, rank, iter)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS collective_stat("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, iter INTEGER NOT NULL, bucket INTEGER, bytes INTEGER,"
    " first_arrival_ns INTEGER NOT NULL, last_arrival_ns INTEGER NOT NULL,"
    " end_ns INTEGER NOT NULL, nranks INTEGER NOT NULL, arrival_skew_ns INTEGER NOT NULL,"
    " transfer_ns INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS bucket_ready_stat("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, iter INTEGER NOT NULL, bucket INTEGER NOT NULL,"
    " ready_ns INTEGER NOT NULL, arrival_ns INTEGER,"
    " PRIMARY KEY (run_id, bucket, rank, iter)) WITHOUT ROWID;"
    "DROP INDEX IF EXISTS span_run_seq;"
    "CREATE INDEX span_run_seq ON span(run_id, seq) WHERE seq IS NOT NULL;";

/* Version 5: traces of other profilers are imported (profiler/import/), and spans are
 * stored lean, since an imported GPU trace holds millions of them.
 *  - span_data holds the spans: stream and kind as small integers (span_stream and
 *    span_kind name them), the name as an id into span_name (the string table, as
 *    Nsight Systems' StringIds), and the duration instead of the end, which is shorter
 *    as a varint.  It is clustered on (run_id, rank, iter, start_ns, dup): the order
 *    statistics and reports read spans in, so no second index on (run_id, rank, iter)
 *    is needed; dup numbers spans that share the first four (0 for nearly all, which
 *    SQLite stores in no byte).  A recorded run's span costs 33-36 bytes instead of 78.
 *  - span is now a view with the old columns (plus device_stream), so every query and
 *    view reads as before; triggers turn an INSERT or DELETE on it into one on
 *    span_data, for SQL written against the old table.
 *  - the new kinds of span.h (other collectives, kernels, memcpy, memset, host ops),
 *    and device_stream: the stream an imported span ran on.
 *  - source_file: the files a run was imported from (path, size, sha256, format, and
 *    which rank each held and how that was known); run.clock_sync says how the ranks'
 *    clocks were put on one, run.time_base_unix_ns where the run's zero is on the wall
 *    clock (when known), run.notes what a reader of the report must know about the
 *    source (one remark per line).
 *  - hta_stat: per rank, Holistic Trace Analysis's figures (temporal breakdown and
 *    communication/computation overlap, in its whole microseconds), computed with the
 *    other statistics. */
static const char MIGRATE_V5[] =
    "CREATE TABLE span_stream(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "INSERT INTO span_stream VALUES (0, 'host'), (1, 'compute'), (2, 'comm');"
    "CREATE TABLE span_kind(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "INSERT INTO span_kind VALUES (0, 'forward'), (1, 'backward'), (2, 'copy_in'),"
    " (3, 'allreduce'), (4, 'copy_out'), (5, 'optimizer'), (6, 'wait'), (7, 'broadcast'),"
    " (8, 'all_gather'), (9, 'reduce_scatter'), (10, 'all_to_all'), (11, 'send_recv'),"
    " (12, 'reduce'), (13, 'barrier'), (14, 'collective'), (15, 'kernel'), (16, 'memcpy'),"
    " (17, 'memset'), (18, 'cpu_op');"
    "CREATE TABLE span_name(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE span_data("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " iter INTEGER NOT NULL,"
    " start_ns INTEGER NOT NULL,"
    " dup INTEGER NOT NULL,"
    " stream INTEGER NOT NULL,"
    " kind INTEGER NOT NULL,"
    " name_id INTEGER,"
    " layer INTEGER,"
    " bucket INTEGER,"
    " seq INTEGER,"
    " bytes INTEGER,"
    " dur_ns INTEGER NOT NULL CHECK (dur_ns >= 0),"
    " device_stream INTEGER,"
    " PRIMARY KEY (run_id, rank, iter, start_ns, dup)) WITHOUT ROWID;"
    "INSERT INTO span_name(name) SELECT DISTINCT name FROM span WHERE name IS NOT NULL;"
    "INSERT INTO span_data(run_id, rank, iter, start_ns, dup, stream, kind, name_id, layer,"
    " bucket, seq, bytes, dur_ns)"
    " SELECT s.run_id, s.rank, s.iter, s.start_ns,"
    "  ROW_NUMBER() OVER (PARTITION BY s.run_id, s.rank, s.iter, s.start_ns ORDER BY s.rowid) - 1,"
    "  ss.id, sk.id, n.id, s.layer, s.bucket, s.seq, s.bytes, s.end_ns - s.start_ns"
    " FROM span s JOIN span_stream ss ON ss.name = s.stream JOIN span_kind sk ON sk.name = s.kind"
    " LEFT JOIN span_name n ON n.name = s.name;"
    "DROP INDEX IF EXISTS span_run_rank_iter;"
    "DROP INDEX IF EXISTS span_run_seq;"
    "DROP TABLE span;"
    "CREATE INDEX span_run_seq ON span_data(run_id, seq) WHERE seq IS NOT NULL;"
    "CREATE VIEW span AS"
    " SELECT span_data.run_id AS run_id, span_data.rank AS rank, span_data.iter AS iter,"
    "  span_stream.name AS stream, span_kind.name AS kind, span_name.name AS name,"
    "  span_data.layer AS layer, span_data.bucket AS bucket, span_data.seq AS seq,"
    "  span_data.bytes AS bytes, span_data.start_ns AS start_ns,"
    "  span_data.start_ns + span_data.dur_ns AS end_ns, span_data.device_stream AS device_stream"
    " FROM span_data JOIN span_stream ON span_stream.id = span_data.stream"
    " JOIN span_kind ON span_kind.id = span_data.kind"
    " LEFT JOIN span_name ON span_name.id = span_data.name_id;"
    /* An unknown stream or kind finds no id, and NOT NULL refuses the row. */
    "CREATE TRIGGER span_insert INSTEAD OF INSERT ON span BEGIN"
    " INSERT OR IGNORE INTO span_name(name) SELECT NEW.name WHERE NEW.name IS NOT NULL;"
    " INSERT INTO span_data(run_id, rank, iter, start_ns, dup, stream, kind, name_id, layer,"
    "  bucket, seq, bytes, dur_ns, device_stream) VALUES (NEW.run_id, NEW.rank, NEW.iter,"
    "  NEW.start_ns, (SELECT COALESCE(MAX(dup) + 1, 0) FROM span_data WHERE run_id = NEW.run_id"
    "   AND rank = NEW.rank AND iter = NEW.iter AND start_ns = NEW.start_ns),"
    "  (SELECT id FROM span_stream WHERE name = NEW.stream),"
    "  (SELECT id FROM span_kind WHERE name = NEW.kind),"
    "  (SELECT id FROM span_name WHERE name = NEW.name), NEW.layer, NEW.bucket, NEW.seq,"
    "  NEW.bytes, NEW.end_ns - NEW.start_ns, NEW.device_stream);"
    " END;"
    "CREATE TRIGGER span_delete INSTEAD OF DELETE ON span BEGIN"
    " DELETE FROM span_data WHERE run_id = OLD.run_id AND rank = OLD.rank AND iter = OLD.iter"
    "  AND start_ns = OLD.start_ns AND dur_ns = OLD.end_ns - OLD.start_ns"
    "  AND stream = (SELECT id FROM span_stream WHERE name = OLD.stream)"
    "  AND kind = (SELECT id FROM span_kind WHERE name = OLD.kind);"
    " END;"
    "CREATE TABLE source_file("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL,"
    " path TEXT NOT NULL,"
    " bytes INTEGER NOT NULL,"
    " sha256 TEXT NOT NULL,"
    " format TEXT NOT NULL,"
    " rank INTEGER,"
    " rank_from TEXT,"
    " PRIMARY KEY (run_id, idx));"
    "ALTER TABLE run ADD COLUMN clock_sync TEXT;"
    "ALTER TABLE run ADD COLUMN time_base_unix_ns INTEGER;"
    "ALTER TABLE run ADD COLUMN notes TEXT;"
    "CREATE TABLE hta_stat("
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " steps TEXT NOT NULL,"
    " kernel_us INTEGER NOT NULL,"
    " idle_us INTEGER NOT NULL,"
    " compute_us INTEGER NOT NULL,"
    " non_compute_us INTEGER NOT NULL,"
    " comm_us INTEGER NOT NULL,"
    " comm_overlap_us INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, rank)) WITHOUT ROWID;";

_Static_assert(STREAM_COUNT == 3, "span_stream in MIGRATE_V5 lists span.h's streams");

/* Version 6: the DDP logger's views take comm start at bucket 0's launch (not its
 * allreduce's start), static_graph's first iteration as delay_all_reduce() times it,
 * and leave a duration without value (end before start) out of the averages; views
 * are text in the file, so an older file gets the new ones here. */
static const char MIGRATE_V6[] =
    "DROP VIEW IF EXISTS ddp_logging_avg;"
    "DROP VIEW IF EXISTS ddp_logging;"
    "CREATE VIEW ddp_logging AS " SQL_DDP_LOGGING(RUN_ALL) ";"
    "CREATE VIEW ddp_logging_avg AS " SQL_DDP_LOGGING_AVG(RUN_ALL) ";";

/* Version 7: what a performance engineer asks of the collectives first, and what a
 * run was.
 *  - collective (and collective_stat, which mirrors it) holds every collective, each
 *    with its kind, not only the allreduces; and warmup, bucket_version, algbw_gbps
 *    and busbw_gbps (SQL_COLLECTIVE), so that a per-bucket query can leave out
 *    iteration 0's one whole-model bucket.  collective_arrival and the waits stay
 *    those of the bucket allreduces.
 *  - DDP's parameter-count collective at construction is an all_gather (PyTorch's
 *    _verify_param_shape_across_processes): spans recorded as allreduce before are
 *    re-kinded, and every ended run's statistics computed again (store_migrate).
 *  - run.overrides: the command line's -s settings and sweep point, as a JSON object
 *    of "section.key": "value" (NULL: none); run.verified: NULL when --verify was not
 *    asked, 1 when every synchronised step's gradients were checked and exact, 0 when
 *    not; run.sweep: the id of the first run of the sweep the run is a point of (NULL:
 *    not a sweep's point), so that a report can show the sweep's summary again. */
static const char MIGRATE_V7[] =
    "DROP VIEW IF EXISTS iteration_stats;"
    "DROP VIEW IF EXISTS collective;"
    "DROP VIEW IF EXISTS collective_arrival;"
    "CREATE VIEW collective_arrival AS " SQL_COLLECTIVE_ARRIVAL(RUN_ALL) ";"
    "CREATE VIEW collective AS " SQL_COLLECTIVE(RUN_ALL) ";"
    "CREATE VIEW iteration_stats AS " SQL_ITERATION_STATS(RUN_ALL) ";"
    "UPDATE span_data SET kind = (SELECT id FROM span_kind WHERE name = 'all_gather')"
    " WHERE kind = (SELECT id FROM span_kind WHERE name = 'allreduce')"
    " AND name_id = (SELECT id FROM span_name WHERE name = '" DDP_PARAM_COUNT_SPAN_NAME "');"
    "ALTER TABLE collective_stat ADD COLUMN kind TEXT;"
    "ALTER TABLE collective_stat ADD COLUMN warmup INTEGER;"
    "ALTER TABLE collective_stat ADD COLUMN bucket_version INTEGER;"
    "ALTER TABLE collective_stat ADD COLUMN algbw_gbps REAL;"
    "ALTER TABLE collective_stat ADD COLUMN busbw_gbps REAL;"
    "ALTER TABLE run ADD COLUMN overrides TEXT;"
    "ALTER TABLE run ADD COLUMN verified INTEGER CHECK (verified IN (0, 1));"
    "ALTER TABLE run ADD COLUMN sweep INTEGER;";

/* Version 8:
 *  - a run of many ranks stores the spans of chosen ranks only (profiler/span_select.h),
 *    and the statistics of every rank: rank.spans says whether a rank's spans are stored
 *    (1) or not (0); NULL in a run recorded before, which stored every rank's;
 *  - an imported iteration's step is the job's period (span kinds 'step' and
 *    'profiler_step', the first the step bounds of iteration_stats where present), and a
 *    run may hold some of its world's ranks only (the rank table lists those it holds).
 *    Older runs have no 'step' span: their figures stay as they were. */
static const char MIGRATE_V8[] =
    "ALTER TABLE rank ADD COLUMN spans INTEGER CHECK (spans IN (0, 1));"
    "INSERT INTO span_kind VALUES (19, 'step'), (20, 'profiler_step');"
    "DROP VIEW IF EXISTS iteration_stats;"
    "CREATE VIEW iteration_stats AS " SQL_ITERATION_STATS(RUN_ALL) ";";

_Static_assert(SPAN_KIND_COUNT == 21, "span_kind in MIGRATE_V5 and MIGRATE_V8 lists span.h's kinds");

static const char *const MIGRATIONS[STORE_SCHEMA_VERSION] = {SCHEMA_V1,  MIGRATE_V2, MIGRATE_V3, MIGRATE_V4,
                                                             MIGRATE_V5, MIGRATE_V6, MIGRATE_V7, MIGRATE_V8};

/* ---- recognising a file ------------------------------------------------------------ */

/* The first failure on a file that is not a database is at the first read, not at
 * open (SQLite opens lazily); that is where the message becomes a plain one. */
static int read_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    if (sqlite3_errcode(db) == SQLITE_NOTADB) {
        set_err(err, errlen, "not an SQLite database (left untouched)");
        return -1;
    }
    return store_db_fail(db, err, errlen, what);
}

typedef struct {
    int ntables;
    bool meta, run, span;
    char other[64]; /* one table that is not ddpprof's, for the message */
} table_census;

static int census(sqlite3 *db, table_census *c, char *err, size_t errlen)
{
    static const char *const ours[] = {"meta",           "run",          "rank",
                                       "param",          "bucket",       "span",
                                       "run_stats",      "iteration_stat", "collective_stat",
                                       "bucket_ready_stat", "span_data", "span_name",
                                       "span_stream",    "span_kind",    "source_file",
                                       "hta_stat"};
    memset(c, 0, sizeof *c);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table'"
                           " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                           -1, &s, NULL) != SQLITE_OK)
        return read_fail(db, err, errlen, "reading schema");
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        if (!name)
            continue;
        c->ntables++;
        c->meta |= strcmp(name, "meta") == 0;
        c->run |= strcmp(name, "run") == 0;
        c->span |= strcmp(name, "span") == 0 || strcmp(name, "span_data") == 0;
        bool known = false;
        for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
            known |= strcmp(name, ours[i]) == 0;
        if (!known && !c->other[0])
            snprintf(c->other, sizeof c->other, "%.60s", name);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return read_fail(db, err, errlen, "reading schema");
    return 0;
}

static int read_int(sqlite3 *db, const char *sql, int64_t *v, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return read_fail(db, err, errlen, "reading schema");
    int rc = sqlite3_step(s);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return read_fail(db, err, errlen, "reading schema");
    return 0;
}

/* meta.schema_version: -1 when the key is missing (someone else's meta table). */
static int read_version(sqlite3 *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *version = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s,
                           NULL) != SQLITE_OK)
        return read_fail(db, err, errlen, "reading schema version");
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : -1;
        if (!v || *end != '\0' || n < 1 || n > 1000000) {
            set_err(err, errlen, "bad schema_version '%s' in meta", v ? v : "NULL");
            sqlite3_finalize(s);
            return -1;
        }
        *version = (int)n;
    } else if (rc != SQLITE_DONE) {
        read_fail(db, err, errlen, "reading schema version");
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_finalize(s);
    return 0;
}

int store_inspect(sqlite3 *db, store_file_kind *kind, int *version, char *err, size_t errlen)
{
    table_census c;
    int64_t app_id;
    *version = 0;
    if (census(db, &c, err, errlen) < 0 ||
        read_int(db, "PRAGMA application_id", &app_id, err, errlen) < 0)
        return -1;
    if (app_id != 0 && app_id != STORE_APPLICATION_ID) {
        set_err(err, errlen,
                "not a ddpprof database (SQLite application_id 0x%08llx; left untouched)",
                (unsigned long long)(uint32_t)app_id);
        return -1;
    }
    if (c.ntables == 0) {
        *kind = STORE_FILE_EMPTY;
        return 0;
    }
    int v = -1;
    if (c.meta && read_version(db, &v, err, errlen) < 0)
        return -1;
    if (v < 1 || !c.run || !c.span) {
        if (c.other[0])
            set_err(err, errlen,
                    "not a ddpprof database (it holds table '%s'; left untouched)", c.other);
        else
            set_err(err, errlen, "not a ddpprof database (no ddpprof schema; left untouched)");
        return -1;
    }
    *kind = STORE_FILE_DDPPROF;
    *version = v;
    return 0;
}

int store_check_not_newer(int version, char *err, size_t errlen)
{
    if (version > STORE_SCHEMA_VERSION) {
        set_err(err, errlen, "database schema version %d is newer than this ddpprof supports (%d)",
                version, STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* The version is read again inside the IMMEDIATE transaction, so that two processes
 * creating one file do not both create it. */
int store_migrate(sqlite3 *db, char *err, size_t errlen)
{
    if (store_exec(db, "BEGIN IMMEDIATE", "starting schema transaction", err, errlen) < 0)
        return -1;
    store_file_kind kind;
    int version;
    if (store_inspect(db, &kind, &version, err, errlen) < 0 ||
        store_check_not_newer(version, err, errlen) < 0)
        goto fail;
    for (int v = version; v < STORE_SCHEMA_VERSION; v++)
        if (store_exec(db, MIGRATIONS[v], v ? "upgrading schema" : "creating schema", err,
                       errlen) < 0)
            goto fail;
    /* Runs that ended before schema 4 get their statistics now, once; those of schema
     * 4 to 6 are computed again for what schemas 5 (hta_stat) and 7 (the collectives'
     * new columns, the all_gather) changed. */
    if (version >= 4 && version < 7 &&
        store_exec(db, "DELETE FROM run_stats", "upgrading statistics", err, errlen) < 0)
        goto fail;
    if (version >= 1 && version < 7 && store_compute_finished_stats(db, err, errlen) < 0)
        goto fail;
    if (version < STORE_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql,
                 "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '%d')",
                 STORE_SCHEMA_VERSION);
        if (store_exec(db, sql, "writing schema version", err, errlen) < 0)
            goto fail;
    }
    if (store_exec(db, "COMMIT", "committing schema", err, errlen) < 0)
        goto fail;
    return 0;
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* the first error is the one to report */
    return -1;
}
