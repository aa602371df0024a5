/* store.c — the SQLite results database: schema, views, and the writes of one run.
 *
 * Contract (see store.h): one file, many runs; the schema is versioned in meta
 * (key 'schema_version'), created or upgraded by store_open in one IMMEDIATE
 * transaction, and a file written by a newer ddpprof is refused untouched.  Every
 * SQLite return code is checked and failures carry sqlite3_errmsg in `err`.
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
 *   last span, and one without a forward span starts at its first span.
 *   arrival a(s,r) = start of rank r's allreduce for collective seq s;
 *   wait(s,r) = max_r' a(s,r') - a(s,r); transfer(s) = end(s) - max a(s,.).
 */
#include "errmsg.h"
#include "store.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* ---- view SQL, defined once ------------------------------------------------- */

#define RUN_ALL ""
#define RUN_ONE " AND run_id = ?1"

/* One row per (run, collective, rank): a rank's allreduce for seq s.  Grouped so that
 * a collective recorded as several spans on one rank still arrives at its first. */
#define SQL_RANK_COLLECTIVE(RUN)                                                         \
    "SELECT run_id, seq, rank, MIN(iter) AS iter, MIN(bucket) AS bucket,"               \
    " MIN(start_ns) AS arrival_ns, MAX(end_ns) AS end_ns, MAX(bytes) AS bytes"          \
    " FROM span WHERE kind = 'allreduce' AND seq IS NOT NULL" RUN                       \
    " GROUP BY run_id, seq, rank"

/* end_ns here is this rank's end of the collective; the collective view has the
 * collective's end (the last rank's). */
#define SQL_COLLECTIVE_ARRIVAL(RUN)                                                      \
    "SELECT run_id, seq, iter, bucket, rank, arrival_ns,"                               \
    " MAX(arrival_ns) OVER (PARTITION BY run_id, seq) - arrival_ns AS wait_ns,"         \
    " end_ns, bytes"                                                                    \
    " FROM (" SQL_RANK_COLLECTIVE(RUN) ")"

#define SQL_COLLECTIVE(RUN)                                                              \
    "SELECT run_id, seq, MIN(iter) AS iter, MIN(bucket) AS bucket, MAX(bytes) AS bytes," \
    " MIN(arrival_ns) AS first_arrival_ns, MAX(arrival_ns) AS last_arrival_ns,"         \
    " MAX(end_ns) AS end_ns, COUNT(*) AS nranks,"                                       \
    " MAX(arrival_ns) - MIN(arrival_ns) AS arrival_skew_ns,"                            \
    " MAX(end_ns) - MAX(arrival_ns) AS transfer_ns"                                     \
    " FROM (" SQL_RANK_COLLECTIVE(RUN) ") GROUP BY run_id, seq"

/* w: every span of a rank-iteration in start order, with the latest end among the
 * earlier spans of each set (C: compute stream, M: allreduce, U: either); the three
 * windows share one definition, so SQLite sorts once.  t: per rank-iteration, the
 * union lengths (see the header comment), the step bounds.  wt: the waits. */
#define SQL_ITERATION_STATS(RUN)                                                         \
    "WITH w AS ("                                                                       \
    "  SELECT run_id, rank, iter, kind, start_ns, end_ns,"                              \
    "   stream = 'compute' AS is_c, kind = 'allreduce' AS is_m,"                        \
    "   MAX(CASE WHEN stream = 'compute' THEN end_ns END) OVER win AS prev_c,"          \
    "   MAX(CASE WHEN kind = 'allreduce' THEN end_ns END) OVER win AS prev_m,"          \
    "   MAX(CASE WHEN stream = 'compute' OR kind = 'allreduce' THEN end_ns END)"        \
    "    OVER win AS prev_u"                                                            \
    "  FROM span WHERE 1" RUN                                                           \
    "  WINDOW win AS (PARTITION BY run_id, rank, iter ORDER BY start_ns, end_ns"        \
    "   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"                              \
    "), t AS ("                                                                         \
    "  SELECT run_id, rank, iter,"                                                      \
    "   SUM(CASE WHEN is_c THEN"                                                        \
    "    MAX(end_ns - MAX(start_ns, COALESCE(prev_c, start_ns)), 0) ELSE 0 END) AS c_ns," \
    "   SUM(CASE WHEN is_m THEN"                                                        \
    "    MAX(end_ns - MAX(start_ns, COALESCE(prev_m, start_ns)), 0) ELSE 0 END) AS m_ns," \
    "   SUM(CASE WHEN is_c OR is_m THEN"                                                \
    "    MAX(end_ns - MAX(start_ns, COALESCE(prev_u, start_ns)), 0) ELSE 0 END) AS u_ns," \
    "   COALESCE(MIN(start_ns) FILTER (WHERE kind = 'forward'), MIN(start_ns))"         \
    "    AS step_start_ns,"                                                             \
    "   COALESCE(MAX(end_ns) FILTER (WHERE kind = 'optimizer'), MAX(end_ns))"           \
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

/* PyTorch DDP logger's names; NULL where a rank-iteration lacks the spans. */
#define SQL_DDP_LOGGING(RUN)                                                             \
    "SELECT run_id, rank, iter,"                                                        \
    " MAX(end_ns) FILTER (WHERE kind = 'forward')"                                      \
    "  - MIN(start_ns) FILTER (WHERE kind = 'forward') AS forward_compute_time,"        \
    " MAX(end_ns) FILTER (WHERE kind = 'backward')"                                     \
    "  - MAX(end_ns) FILTER (WHERE kind = 'forward') AS backward_compute_time,"         \
    " MAX(end_ns) FILTER (WHERE kind = 'allreduce')"                                    \
    "  - MIN(start_ns) FILTER (WHERE kind = 'allreduce') AS backward_comm_time,"        \
    " MAX(MAX(end_ns) FILTER (WHERE kind = 'backward')"                                 \
    "  - MIN(start_ns) FILTER (WHERE kind = 'allreduce'), 0)"                           \
    "  AS backward_compute_comm_overlap_time"                                           \
    " FROM span WHERE 1" RUN " GROUP BY run_id, rank, iter"

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
};

const char *store_view_select(const char *view, bool one_run)
{
    for (size_t i = 0; i < sizeof VIEWS / sizeof VIEWS[0]; i++)
        if (strcmp(VIEWS[i].name, view) == 0)
            return one_run ? VIEWS[i].one : VIEWS[i].all;
    return NULL;
}

/* ---- schema ------------------------------------------------------------------- */

#define NOW_UTC "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* Schema version 1.  MIGRATIONS[v] takes a database from version v to v + 1; a new
 * version appends a step, so older files upgrade in place. */
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
    "CREATE VIEW ddp_logging AS " SQL_DDP_LOGGING(RUN_ALL) ";";

static const char *const MIGRATIONS[STORE_SCHEMA_VERSION] = {SCHEMA_V1};

/* ---- handle ---------------------------------------------------------------------- */

struct store {
    sqlite3 *db;
    bool readonly;
    sqlite3_stmt *begin, *commit, *rollback;
    sqlite3_stmt *ins_run, *ins_rank, *ins_param;
    sqlite3_stmt *del_bucket, *ins_bucket, *max_version, *upd_param_bucket;
    sqlite3_stmt *ins_span;
    sqlite3_stmt *finish_run, *run_status;
};


static int db_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    set_err(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

/* Runs a statement that returns no rows we need, and leaves it ready for reuse.
 * The message is taken before reset so it is the step's, not the reset's. */
static int step_done(sqlite3 *db, sqlite3_stmt *stmt, const char *what, char *err, size_t errlen)
{
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        db_fail(db, err, errlen, what);
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
        return -1;
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return 0;
}

static int bind_text(sqlite3_stmt *s, int i, const char *v)
{
    return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i);
}

/* -1 means "does not apply" in span/bucket fields; the database says NULL. */
static int bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
    return v < 0 ? sqlite3_bind_null(s, i) : sqlite3_bind_int64(s, i, v);
}

static int exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Reads meta.schema_version: 0 for a file without our schema (new or empty). */
static int read_version(sqlite3 *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    *version = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                           -1, &s, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "reading schema");
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return db_fail(db, err, errlen, "reading schema");

    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s,
                           NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "reading schema version");
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : -1;
        if (!v || *end != '\0' || n < 1) {
            set_err(err, errlen, "bad schema_version '%s' in meta", v ? v : "NULL");
            sqlite3_finalize(s);
            return -1;
        }
        *version = (int)n;
    } else if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading schema version");
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_finalize(s);
    return 0;
}

static int check_not_newer(int version, const char *path, char *err, size_t errlen)
{
    if (version > STORE_SCHEMA_VERSION) {
        set_err(err, errlen,
                "%s: database schema version %d is newer than this ddpprof supports (%d)", path,
                version, STORE_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

/* Applies the missing migrations; the version is re-read inside the IMMEDIATE
 * transaction so that two processes creating one file do not both create it. */
static int migrate(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    if (exec(db, "BEGIN IMMEDIATE", "starting schema transaction", err, errlen) < 0)
        return -1;
    int version;
    if (read_version(db, &version, err, errlen) < 0 || check_not_newer(version, path, err, errlen) < 0)
        goto fail;
    for (int v = version; v < STORE_SCHEMA_VERSION; v++)
        if (exec(db, MIGRATIONS[v], "creating schema", err, errlen) < 0)
            goto fail;
    if (version < STORE_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql,
                 "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '%d')",
                 STORE_SCHEMA_VERSION);
        if (exec(db, sql, "writing schema version", err, errlen) < 0)
            goto fail;
    }
    if (exec(db, "COMMIT", "committing schema", err, errlen) < 0)
        goto fail;
    return 0;
fail:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* the first error is the one to report */
    return -1;
}

static int prepare(sqlite3 *db, sqlite3_stmt **s, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "preparing statement");
    return 0;
}

static int prepare_all(store *st, char *err, size_t errlen)
{
    sqlite3 *db = st->db;
    struct {
        sqlite3_stmt **s;
        const char *sql;
    } stmts[] = {
        {&st->begin, "BEGIN IMMEDIATE"},
        {&st->commit, "COMMIT"},
        {&st->rollback, "ROLLBACK"},
        {&st->ins_run,
         "INSERT INTO run(name, scenario, source, backend, world_size, model, total_params,"
         " iterations, warmup, bucket_cap_mb) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
        {&st->ins_rank, "INSERT INTO rank(run_id, rank, speed) VALUES (?, ?, ?)"},
        {&st->ins_param,
         "INSERT INTO param(run_id, idx, name, numel, bytes, shape, layer) VALUES (?, ?, ?, ?, ?, ?, ?)"},
        {&st->del_bucket, "DELETE FROM bucket WHERE run_id = ? AND version = ?"},
        {&st->ins_bucket,
         "INSERT INTO bucket(run_id, version, idx, nbytes, nparams, size_limit, params)"
         " VALUES (?, ?, ?, ?, ?, ?, ?)"},
        {&st->max_version, "SELECT MAX(version) FROM bucket WHERE run_id = ?"},
        {&st->upd_param_bucket, "UPDATE param SET bucket = ? WHERE run_id = ? AND idx = ?"},
        {&st->ins_span,
         "INSERT INTO span(run_id, rank, iter, stream, kind, name, layer, bucket, seq, bytes,"
         " start_ns, end_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
        {&st->finish_run,
         "UPDATE run SET status = ?, error = ?, finished_at = " NOW_UTC
         " WHERE id = ? AND status = 'running'"},
        {&st->run_status, "SELECT status FROM run WHERE id = ?"},
    };
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++)
        if (prepare(db, stmts[i].s, stmts[i].sql, err, errlen) < 0)
            return -1;
    return 0;
}

static int open_common(const char *path, bool readonly, store **out, char *err, size_t errlen)
{
    *out = NULL;
    store *st = calloc(1, sizeof *st);
    if (!st) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    st->readonly = readonly;
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        goto fail;
    }
    if (sqlite3_busy_timeout(st->db, 5000) != SQLITE_OK) {
        db_fail(st->db, err, errlen, "setting busy timeout");
        goto fail;
    }
    /* Refuse a newer file before changing anything in it (journal mode included). */
    int version;
    if (read_version(st->db, &version, err, errlen) < 0 ||
        check_not_newer(version, path, err, errlen) < 0)
        goto fail;
    if (readonly) {
        if (version < STORE_SCHEMA_VERSION) {
            set_err(err, errlen, "%s: not a ddpprof database (schema version %d, expected %d)",
                    path, version, STORE_SCHEMA_VERSION);
            goto fail;
        }
        *out = st;
        return 0;
    }
    if (exec(st->db, "PRAGMA journal_mode = WAL", "setting WAL mode", err, errlen) < 0 ||
        exec(st->db, "PRAGMA synchronous = NORMAL", "setting synchronous", err, errlen) < 0 ||
        exec(st->db, "PRAGMA foreign_keys = ON", "enabling foreign keys", err, errlen) < 0)
        goto fail;
    /* A current file needs no write lock to open, so a second process (a report while
     * a run is recording) does not wait on the writer. */
    if ((version < STORE_SCHEMA_VERSION && migrate(st->db, path, err, errlen) < 0) ||
        prepare_all(st, err, errlen) < 0)
        goto fail;
    *out = st;
    return 0;
fail:
    store_close(st);
    return -1;
}

int store_open(const char *path, store **out, char *err, size_t errlen)
{
    return open_common(path, false, out, err, errlen);
}

int store_open_readonly(const char *path, store **out, char *err, size_t errlen)
{
    return open_common(path, true, out, err, errlen);
}

void store_close(store *st)
{
    if (!st)
        return;
    sqlite3_stmt *all[] = {st->begin,      st->commit,           st->rollback,   st->ins_run,
                           st->ins_rank,   st->ins_param,        st->del_bucket, st->ins_bucket,
                           st->max_version, st->upd_param_bucket, st->ins_span,  st->finish_run,
                           st->run_status};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        sqlite3_finalize(all[i]);
    /* close_v2 defers the close if a reader still holds a statement on this handle. */
    sqlite3_close_v2(st->db);
    free(st);
}

struct sqlite3 *store_db(store *st)
{
    return st ? st->db : NULL;
}

static int writable(const store *st, char *err, size_t errlen)
{
    if (st->readonly) {
        set_err(err, errlen, "database opened read-only");
        return -1;
    }
    return 0;
}

static int tx_begin(store *st, char *err, size_t errlen)
{
    return step_done(st->db, st->begin, "beginning transaction", err, errlen);
}

static int tx_commit(store *st, char *err, size_t errlen)
{
    if (step_done(st->db, st->commit, "committing", err, errlen) == 0)
        return 0;
    sqlite3_step(st->rollback); /* the commit's error is the one to report */
    sqlite3_reset(st->rollback);
    return -1;
}

static int tx_fail(store *st)
{
    if (sqlite3_get_autocommit(st->db) == 0) {
        sqlite3_step(st->rollback); /* the error that led here is the one to report */
        sqlite3_reset(st->rollback);
    }
    return -1;
}

/* ---- writes ------------------------------------------------------------------------ */

int store_begin_run(store *st, const store_run_info *info, int64_t *run_id, char *err,
                    size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    if (!info || !info->name || info->world_size < 1 || info->warmup < 0) {
        set_err(err, errlen, "store_begin_run: need a name, world_size >= 1 and warmup >= 0");
        return -1;
    }
    if (tx_begin(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = st->ins_run;
    if (bind_text(s, 1, info->name) || bind_text(s, 2, info->scenario_ini) ||
        bind_text(s, 3, info->source) || bind_text(s, 4, info->backend) ||
        sqlite3_bind_int(s, 5, info->world_size) || bind_text(s, 6, info->model) ||
        sqlite3_bind_int64(s, 7, info->total_params) || sqlite3_bind_int(s, 8, info->iterations) ||
        sqlite3_bind_int(s, 9, info->warmup) || sqlite3_bind_double(s, 10, info->bucket_cap_mb)) {
        db_fail(st->db, err, errlen, "binding run");
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    if (step_done(st->db, s, "inserting run", err, errlen) < 0)
        return tx_fail(st);
    int64_t id = sqlite3_last_insert_rowid(st->db);
    for (int r = 0; r < info->world_size; r++) {
        s = st->ins_rank;
        double speed = info->rank_speed ? info->rank_speed[r] : 1.0;
        if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int(s, 2, r) ||
            sqlite3_bind_double(s, 3, speed)) {
            db_fail(st->db, err, errlen, "binding rank");
            sqlite3_clear_bindings(s);
            return tx_fail(st);
        }
        if (step_done(st->db, s, "inserting rank", err, errlen) < 0)
            return tx_fail(st);
    }
    if (tx_commit(st, err, errlen) < 0)
        return -1;
    *run_id = id;
    return 0;
}

int store_write_param_bytes(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                            int64_t bytes, const char *shape, const char *layer, char *err,
                            size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = st->ins_param;
    if (sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, idx) || bind_text(s, 3, name) ||
        sqlite3_bind_int64(s, 4, numel) || sqlite3_bind_int64(s, 5, bytes) ||
        bind_text(s, 6, shape) || bind_text(s, 7, layer)) {
        sqlite3_clear_bindings(s);
        return db_fail(st->db, err, errlen, "binding param");
    }
    return step_done(st->db, s, "inserting param", err, errlen);
}

int store_write_param(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                      const char *shape, const char *layer, char *err, size_t errlen)
{
    /* fp32 is the only dtype scenarios accept today. */
    return store_write_param_bytes(st, run_id, idx, name, numel, numel * 4, shape, layer, err,
                                   errlen);
}

/* "3,2,1": the members in bucket order, as users read them in the bucket table. */
static char *param_list(const store_bucket *b)
{
    size_t cap = (size_t)(b->nparams > 0 ? b->nparams : 0) * 12 + 1;
    char *txt = malloc(cap);
    if (!txt)
        return NULL;
    size_t len = 0;
    txt[0] = '\0';
    for (int i = 0; i < b->nparams; i++)
        len += (size_t)snprintf(txt + len, cap - len, i ? ",%d" : "%d", b->params[i]);
    return txt;
}

int store_write_buckets(store *st, int64_t run_id, int version, const store_bucket *buckets,
                        int nbuckets, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    if (version < 0 || nbuckets < 0 || (nbuckets > 0 && !buckets)) {
        set_err(err, errlen, "store_write_buckets: bad arguments");
        return -1;
    }
    for (int b = 0; b < nbuckets; b++)
        if (buckets[b].nparams < 0 || (buckets[b].nparams > 0 && !buckets[b].params)) {
            set_err(err, errlen, "store_write_buckets: bucket %d has no parameter list", b);
            return -1;
        }
    if (tx_begin(st, err, errlen) < 0)
        return -1;
    /* Rewriting a version replaces it whole, so no stale bucket survives. */
    sqlite3_stmt *s = st->del_bucket;
    if (sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, version)) {
        db_fail(st->db, err, errlen, "binding bucket delete");
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    if (step_done(st->db, s, "replacing buckets", err, errlen) < 0)
        return tx_fail(st);

    for (int b = 0; b < nbuckets; b++) {
        char *txt = param_list(&buckets[b]);
        if (!txt) {
            set_err(err, errlen, "out of memory");
            return tx_fail(st);
        }
        s = st->ins_bucket;
        int rc = sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, version) ||
                 sqlite3_bind_int(s, 3, b) || sqlite3_bind_int64(s, 4, buckets[b].nbytes) ||
                 sqlite3_bind_int(s, 5, buckets[b].nparams) ||
                 bind_opt(s, 6, buckets[b].size_limit) ||
                 sqlite3_bind_text(s, 7, txt, -1, SQLITE_TRANSIENT);
        free(txt);
        if (rc) {
            db_fail(st->db, err, errlen, "binding bucket");
            sqlite3_clear_bindings(s);
            return tx_fail(st);
        }
        if (step_done(st->db, s, "inserting bucket", err, errlen) < 0)
            return tx_fail(st);
    }

    /* param.bucket follows the newest assignment, whatever order versions arrive in. */
    s = st->max_version;
    if (sqlite3_bind_int64(s, 1, run_id)) {
        db_fail(st->db, err, errlen, "binding bucket version");
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    int rc = sqlite3_step(s);
    int latest = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
    if (rc != SQLITE_ROW) {
        db_fail(st->db, err, errlen, "reading bucket version");
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (version == latest) {
        for (int b = 0; b < nbuckets; b++)
            for (int p = 0; p < buckets[b].nparams; p++) {
                s = st->upd_param_bucket;
                if (sqlite3_bind_int(s, 1, b) || sqlite3_bind_int64(s, 2, run_id) ||
                    sqlite3_bind_int(s, 3, buckets[b].params[p])) {
                    db_fail(st->db, err, errlen, "binding param bucket");
                    sqlite3_clear_bindings(s);
                    return tx_fail(st);
                }
                if (step_done(st->db, s, "setting param bucket", err, errlen) < 0)
                    return tx_fail(st);
            }
    }
    return tx_commit(st, err, errlen);
}

int store_write_spans(store *st, int64_t run_id, const span *spans, size_t n, char *err,
                      size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    if (n == 0)
        return 0;
    if (!spans) {
        set_err(err, errlen, "store_write_spans: NULL spans");
        return -1;
    }
    if (tx_begin(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = st->ins_span;
    for (size_t i = 0; i < n; i++) {
        const span *sp = &spans[i];
        if (sp->stream >= STREAM_COUNT || sp->kind >= SPAN_KIND_COUNT) {
            set_err(err, errlen, "span %zu: bad stream %u or kind %u", i, sp->stream, sp->kind);
            return tx_fail(st);
        }
        size_t nlen = strnlen(sp->name, SPAN_NAME);
        int rc = sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, sp->rank) ||
                 sqlite3_bind_int(s, 3, sp->iter) ||
                 sqlite3_bind_text(s, 4, span_stream_name(sp->stream), -1, SQLITE_STATIC) ||
                 sqlite3_bind_text(s, 5, span_kind_name(sp->kind), -1, SQLITE_STATIC) ||
                 (nlen ? sqlite3_bind_text(s, 6, sp->name, (int)nlen, SQLITE_TRANSIENT)
                       : sqlite3_bind_null(s, 6)) ||
                 bind_opt(s, 7, sp->layer) || bind_opt(s, 8, sp->bucket) ||
                 bind_opt(s, 9, sp->seq) || bind_opt(s, 10, sp->bytes) ||
                 sqlite3_bind_int64(s, 11, sp->start_ns) || sqlite3_bind_int64(s, 12, sp->end_ns);
        if (rc) {
            db_fail(st->db, err, errlen, "binding span");
            sqlite3_clear_bindings(s);
            return tx_fail(st);
        }
        if (step_done(st->db, s, "inserting span", err, errlen) < 0)
            return tx_fail(st);
    }
    return tx_commit(st, err, errlen);
}

int store_finish_run(store *st, int64_t run_id, const char *error, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = st->finish_run;
    if (sqlite3_bind_text(s, 1, error ? "failed" : "complete", -1, SQLITE_STATIC) ||
        bind_text(s, 2, error) || sqlite3_bind_int64(s, 3, run_id)) {
        sqlite3_clear_bindings(s);
        return db_fail(st->db, err, errlen, "binding run status");
    }
    if (step_done(st->db, s, "finishing run", err, errlen) < 0)
        return -1;
    if (sqlite3_changes(st->db) == 1)
        return 0;

    /* Nothing changed: say whether the run is missing or already ended. */
    s = st->run_status;
    if (sqlite3_bind_int64(s, 1, run_id)) {
        sqlite3_clear_bindings(s);
        return db_fail(st->db, err, errlen, "binding run id");
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        set_err(err, errlen, "run %" PRId64 " already finished (%s)", run_id,
                (const char *)sqlite3_column_text(s, 0));
    else if (rc == SQLITE_DONE)
        set_err(err, errlen, "no run with id %" PRId64, run_id);
    else
        db_fail(st->db, err, errlen, "reading run status");
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return -1;
}
