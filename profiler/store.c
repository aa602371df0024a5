/* store.c — the writes of one run into the results database: the run row and its
 * ranks, parameters, bucket assignments, span batches, and the run's end.
 *
 * Contract (store.h): each call is one transaction (or one autocommit statement), so
 * a reader never sees half of a batch.  Every SQLite return code is checked and
 * failures carry sqlite3_errmsg in `err`.  The run's end is written with more
 * persistence than the rest: a run left 'running' by a process that could still
 * have marked it is the one state a reader cannot tell from a live run, so
 * store_finish_run retries a locked database and, on a full one, retries with the
 * error text shortened to fit.  Opening and the schema are in store_open.c and
 * store_schema.c.
 */
#include "common/errmsg.h"
#include "common/strbuf.h"
#include "profiler/stats_live.h"
#include "profiler/store_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A lock still held after the busy timeout is retried after these pauses (ms), so a
 * run's end waits out a long transaction of another process, but not forever. */
static const int FINISH_BACKOFF_MS[] = {250, 500, 1000, 2000};

/* The error text written when the full text does not fit in a full database. */
#define SHORT_ERROR_CHARS 80

/* Runs a statement that returns no rows we need, and leaves it ready for reuse.
 * The message is taken before reset so it is the step's, not the reset's. */
static int step_done(sqlite3 *db, sqlite3_stmt *stmt, const char *what, char *err, size_t errlen)
{
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        store_db_fail(db, err, errlen, what);
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

static int writable(const store *st, char *err, size_t errlen)
{
    if (st->readonly) {
        set_err(err, errlen, "database opened read-only");
        return -1;
    }
    return 0;
}

/* Inside a bulk transaction (store_begin_bulk) a call's writes join it: no BEGIN or
 * COMMIT of their own, and a failure is rolled back whole by store_end_bulk. */
static int tx_begin(store *st, char *err, size_t errlen)
{
    if (st->bulk)
        return 0;
    return step_done(st->db, st->begin, "beginning transaction", err, errlen);
}

static void rollback(store *st)
{
    sqlite3_step(st->rollback);
    sqlite3_reset(st->rollback);
    strtab_clear(&st->names); /* names added by the transaction are gone with it */
}

static int tx_commit(store *st, char *err, size_t errlen)
{
    if (st->bulk)
        return 0;
    if (step_done(st->db, st->commit, "committing", err, errlen) == 0)
        return 0;
    rollback(st); /* the commit's error is the one to report */
    return -1;
}

static int tx_fail(store *st)
{
    if (!st->bulk && sqlite3_get_autocommit(st->db) == 0)
        rollback(st); /* the error that led here is the one to report */
    return -1;
}

int store_begin_bulk(store *st, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    if (st->bulk) {
        set_err(err, errlen, "store_begin_bulk: already in a bulk transaction");
        return -1;
    }
    if (step_done(st->db, st->begin, "beginning transaction", err, errlen) < 0)
        return -1;
    st->bulk = true;
    return 0;
}

int store_end_bulk(store *st, bool commit, char *err, size_t errlen)
{
    if (!st->bulk) {
        set_err(err, errlen, "store_end_bulk: no bulk transaction");
        return -1;
    }
    st->bulk = false;
    if (!commit) {
        if (sqlite3_get_autocommit(st->db) == 0)
            rollback(st);
        return 0;
    }
    if (step_done(st->db, st->commit, "committing", err, errlen) == 0)
        return 0;
    rollback(st);
    return -1;
}

/* ---- writes ------------------------------------------------------------------------ */

/* Who writes this run, for store_run_liveness; unknown fields are stored as NULL. */
static int bind_writer(sqlite3_stmt *s, int first)
{
    store_writer w;
    store_writer_self(&w);
    return sqlite3_bind_int64(s, first, w.pid) ||
           bind_text(s, first + 1, w.host[0] ? w.host : NULL) ||
           bind_opt(s, first + 2, w.start_ticks) ||
           bind_text(s, first + 3, w.boot_id[0] ? w.boot_id : NULL) ||
           bind_text(s, first + 4, w.pidns[0] ? w.pidns : NULL);
}

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
        sqlite3_bind_int(s, 9, info->warmup) || sqlite3_bind_double(s, 10, info->bucket_cap_mb) ||
        bind_writer(s, 11)) {
        store_db_fail(st->db, err, errlen, "binding run");
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    if (step_done(st->db, s, "inserting run", err, errlen) < 0)
        return tx_fail(st);
    int64_t id = sqlite3_last_insert_rowid(st->db);
    int nranks = info->ranks ? info->nranks : info->world_size;
    for (int i = 0; i < nranks; i++) {
        int r = info->ranks ? info->ranks[i] : i;
        s = st->ins_rank;
        double speed = info->rank_speed ? info->rank_speed[i] : 1.0;
        if (sqlite3_bind_int64(s, 1, id) || sqlite3_bind_int(s, 2, r) ||
            sqlite3_bind_double(s, 3, speed) || sqlite3_bind_int(s, 4, info->rank_spans ? info->rank_spans[i] : 1)) {
            store_db_fail(st->db, err, errlen, "binding rank");
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
        return store_db_fail(st->db, err, errlen, "binding param");
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
    strbuf sb = STRBUF_INIT;
    for (int i = 0; b->params && i < b->nparams; i++)
        strbuf_addf(&sb, i ? ",%d" : "%d", b->params[i]);
    return strbuf_detach(&sb, NULL); /* NULL when out of memory */
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
        if (buckets[b].nparams < 0) {
            set_err(err, errlen, "store_write_buckets: bucket %d has no parameter list", b);
            return -1;
        }
    if (tx_begin(st, err, errlen) < 0)
        return -1;
    /* Rewriting a version replaces it whole, so no stale bucket survives. */
    sqlite3_stmt *s = st->del_bucket;
    if (sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, version)) {
        store_db_fail(st->db, err, errlen, "binding bucket delete");
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
            store_db_fail(st->db, err, errlen, "binding bucket");
            sqlite3_clear_bindings(s);
            return tx_fail(st);
        }
        if (step_done(st->db, s, "inserting bucket", err, errlen) < 0)
            return tx_fail(st);
    }

    /* param.bucket follows the newest assignment, whatever order versions arrive in. */
    s = st->max_version;
    if (sqlite3_bind_int64(s, 1, run_id)) {
        store_db_fail(st->db, err, errlen, "binding bucket version");
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    int rc = sqlite3_step(s);
    int latest = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
    if (rc != SQLITE_ROW) {
        store_db_fail(st->db, err, errlen, "reading bucket version");
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return tx_fail(st);
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (version == latest) {
        for (int b = 0; b < nbuckets; b++)
            for (int p = 0; buckets[b].params && p < buckets[b].nparams; p++) {
                s = st->upd_param_bucket;
                if (sqlite3_bind_int(s, 1, b) || sqlite3_bind_int64(s, 2, run_id) ||
                    sqlite3_bind_int(s, 3, buckets[b].params[p])) {
                    store_db_fail(st->db, err, errlen, "binding param bucket");
                    sqlite3_clear_bindings(s);
                    return tx_fail(st);
                }
                if (step_done(st->db, s, "setting param bucket", err, errlen) < 0)
                    return tx_fail(st);
            }
    }
    return tx_commit(st, err, errlen);
}

/* span_name's id of `name`: from the handle's table when seen before, else inserted
 * (or found: another run wrote it) and remembered.  -1 with err. */
static int64_t name_id(store *st, const char *name, size_t len, char *err, size_t errlen)
{
    int64_t i = strtab_find(&st->names, name, len);
    if (i >= 0)
        return st->names.value[i];
    if (sqlite3_bind_text(st->ins_name, 1, name, (int)len, SQLITE_STATIC) ||
        step_done(st->db, st->ins_name, "inserting span name", err, errlen) < 0)
        return -1;
    sqlite3_stmt *g = st->get_name;
    if (sqlite3_bind_text(g, 1, name, (int)len, SQLITE_STATIC)) {
        sqlite3_clear_bindings(g);
        store_db_fail(st->db, err, errlen, "binding span name");
        return -1;
    }
    int rc = sqlite3_step(g);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(g, 0) : -1;
    if (rc != SQLITE_ROW)
        store_db_fail(st->db, err, errlen, "reading span name id");
    sqlite3_reset(g);
    sqlite3_clear_bindings(g);
    if (id < 0)
        return -1;
    i = strtab_intern(&st->names, name, len, NULL);
    if (i < 0) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    st->names.value[i] = id;
    return id;
}

int store_write_spans_named(store *st, int64_t run_id, const span *spans, const char *const *names,
                            size_t n, char *err, size_t errlen)
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
        const char *name = names && names[i] ? names[i] : sp->name;
        size_t nlen = names && names[i] ? strlen(name) : strnlen(sp->name, SPAN_NAME);
        int64_t nid = -1;
        if (nlen && (nid = name_id(st, name, nlen, err, errlen)) < 0)
            return tx_fail(st);
        int rc = sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, sp->rank) ||
                 sqlite3_bind_int(s, 3, sp->iter) || sqlite3_bind_int64(s, 4, sp->start_ns) ||
                 sqlite3_bind_int(s, 5, sp->stream) || sqlite3_bind_int(s, 6, sp->kind) ||
                 bind_opt(s, 7, nid) || bind_opt(s, 8, sp->layer) || bind_opt(s, 9, sp->bucket) ||
                 bind_opt(s, 10, sp->seq) || bind_opt(s, 11, sp->bytes) ||
                 sqlite3_bind_int64(s, 12, sp->end_ns - sp->start_ns) ||
                 (sp->on_device ? sqlite3_bind_int(s, 13, sp->device_stream) : sqlite3_bind_null(s, 13));
        if (rc) {
            store_db_fail(st->db, err, errlen, "binding span");
            sqlite3_clear_bindings(s);
            return tx_fail(st);
        }
        if (step_done(st->db, s, "inserting span", err, errlen) < 0)
            return tx_fail(st);
    }
    return tx_commit(st, err, errlen);
}

int store_write_spans(store *st, int64_t run_id, const span *spans, size_t n, char *err,
                      size_t errlen)
{
    return store_write_spans_named(st, run_id, spans, NULL, n, err, errlen);
}

int store_write_source_file(store *st, int64_t run_id, const store_source_file *f, char *err,
                            size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO source_file(run_id, idx, path, bytes, sha256, format, rank,"
                           " rank_from) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                           -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "preparing source file");
    int rc = sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, f->idx) ||
             bind_text(s, 3, f->path) || sqlite3_bind_int64(s, 4, f->bytes) ||
             bind_text(s, 5, f->sha256) || bind_text(s, 6, f->format) || bind_opt(s, 7, f->rank) ||
             bind_text(s, 8, f->rank_from);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc != SQLITE_OK)
        store_db_fail(st->db, err, errlen, "inserting source file");
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : -1;
}

int store_write_hta_stat(store *st, int64_t run_id, const store_hta_stat *h, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT OR REPLACE INTO hta_stat(run_id, rank, steps, kernel_us, idle_us, compute_us,"
                           " non_compute_us, comm_us, comm_overlap_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                           -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "preparing HTA figures");
    int rc = sqlite3_bind_int64(s, 1, run_id) || sqlite3_bind_int(s, 2, h->rank) || bind_text(s, 3, h->steps) ||
             sqlite3_bind_int64(s, 4, h->kernel_us) || sqlite3_bind_int64(s, 5, h->idle_us) ||
             sqlite3_bind_int64(s, 6, h->compute_us) || sqlite3_bind_int64(s, 7, h->non_compute_us) ||
             sqlite3_bind_int64(s, 8, h->comm_us) || sqlite3_bind_int64(s, 9, h->comm_overlap_us);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc != SQLITE_OK)
        store_db_fail(st->db, err, errlen, "writing HTA figures");
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : -1;
}

int store_set_run_source(store *st, int64_t run_id, const char *clock_sync, const int64_t *time_base_unix_ns,
                         const char *notes, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "UPDATE run SET clock_sync = ?2, time_base_unix_ns = ?3, notes = ?4 WHERE id = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "preparing run source");
    int rc = sqlite3_bind_int64(s, 1, run_id) || bind_text(s, 2, clock_sync) ||
             (time_base_unix_ns ? sqlite3_bind_int64(s, 3, *time_base_unix_ns) : sqlite3_bind_null(s, 3)) ||
             bind_text(s, 4, notes);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    if (rc != SQLITE_OK)
        store_db_fail(st->db, err, errlen, "writing run source");
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The run's final UPDATE, waiting out locks: each step already waits out the busy
 * timeout in SQLite's busy handler, and a lock held longer than that is tried again
 * after each FINISH_BACKOFF_MS pause.  Returns SQLITE_DONE or the last (primary)
 * SQLite code, with its message in err. */
static int finish_update(store *st, int64_t run_id, const char *status, const char *error,
                         char *err, size_t errlen)
{
    sqlite3_stmt *s = st->finish_run;
    for (size_t attempt = 0;; attempt++) {
        if (sqlite3_bind_text(s, 1, status, -1, SQLITE_STATIC) || bind_text(s, 2, error) ||
            sqlite3_bind_int64(s, 3, run_id)) {
            sqlite3_clear_bindings(s);
            store_db_fail(st->db, err, errlen, "binding run status");
            return SQLITE_ERROR;
        }
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
            sqlite3_reset(s);
            sqlite3_clear_bindings(s);
            return SQLITE_DONE;
        }
        store_db_fail(st->db, err, errlen, "finishing run");
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        rc &= 0xff;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) ||
            attempt == sizeof FINISH_BACKOFF_MS / sizeof FINISH_BACKOFF_MS[0])
            return rc;
        int ms = FINISH_BACKOFF_MS[attempt];
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
}

void store_set_live_stats(store *st, int64_t run_id, const struct stats_live *live)
{
    st->live = live;
    st->live_run = run_id;
}

/* The live statistics of run `run_id` when they are exact; otherwise NULL, said on
 * stderr where they were not. */
static const stats_live *live_stats_of(const store *st, int64_t run_id)
{
    if (!st->live || st->live_run != run_id)
        return NULL;
    if (stats_live_exact(st->live))
        return st->live;
    fprintf(stderr, "ddpprof: run %" PRId64 ": the statistics computed as the spans were recorded are not exact (%s);"
                    " they are computed from the stored spans, of the ranks that kept them\n",
            run_id, stats_live_why_not(st->live));
    return NULL;
}

int store_run_stats(store *st, int64_t run_id, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    const stats_live *live = live_stats_of(st, run_id);
    if (st->bulk)
        return store_compute_stats(st->db, run_id, live, err, errlen);
    if (store_exec(st->db, "BEGIN IMMEDIATE", "starting statistics", err, errlen) < 0)
        return -1;
    if (store_compute_stats(st->db, run_id, live, err, errlen) < 0 ||
        store_exec(st->db, "COMMIT", "committing statistics", err, errlen) < 0) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL); /* the first error is reported */
        return -1;
    }
    return 0;
}

int store_set_run_provenance(store *st, int64_t run_id, const char *overrides, int64_t sweep_first, int verified,
                             char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "UPDATE run SET overrides = ?2, sweep = ?3, verified = ?4 WHERE id = ?1", -1, &s,
                           NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "recording what the run was");
    int rc = sqlite3_bind_int64(s, 1, run_id) || bind_text(s, 2, overrides) ||
             (sweep_first >= 0 ? sqlite3_bind_int64(s, 3, sweep_first) : sqlite3_bind_null(s, 3)) ||
             (verified >= 0 ? sqlite3_bind_int(s, 4, verified ? 1 : 0) : sqlite3_bind_null(s, 4));
    if (rc || sqlite3_step(s) != SQLITE_DONE) {
        store_db_fail(st->db, err, errlen, "recording what the run was");
        sqlite3_finalize(s);
        return -1;
    }
    sqlite3_finalize(s);
    if (sqlite3_changes(st->db) != 1) {
        set_err(err, errlen, "no run with id %" PRId64, run_id);
        return -1;
    }
    return 0;
}

int store_finish_run(store *st, int64_t run_id, const char *error, char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    /* Before the status: a run that ended has its statistics.  Without them (a full
     * disk, a lock held too long) reports aggregate the spans instead, so the run's
     * end still matters more. */
    char stats_err[256] = "";
    if (store_run_stats(st, run_id, stats_err, sizeof stats_err) < 0 && st->bulk) {
        /* Inside a bulk transaction the statements so far may be half done: the
         * whole transaction is to be rolled back. */
        set_err(err, errlen, "run %" PRId64 ": statistics: %s", run_id, stats_err);
        return -1;
    } else if (stats_err[0] && !st->bulk)
        fprintf(stderr, "ddpprof: run %" PRId64 ": statistics not stored (%s); reports will"
                        " compute them from the spans\n", run_id, stats_err);
    const char *status = error ? "failed" : "complete";
    int rc = finish_update(st, run_id, status, error, err, errlen);
    if (rc == SQLITE_FULL && error && strlen(error) > SHORT_ERROR_CHARS) {
        /* The row may have needed a new page for the long text; the status and a
         * shorter reason usually still fit in the row's page. */
        char shorter[SHORT_ERROR_CHARS + 16];
        snprintf(shorter, sizeof shorter, "%.*s [...]", SHORT_ERROR_CHARS, error);
        rc = finish_update(st, run_id, status, shorter, err, errlen);
    }
    if (rc != SQLITE_DONE) {
        char why[384];
        snprintf(why, sizeof why, "%s", err);
        set_err(err, errlen,
                "could not mark run %" PRId64 " %s (%s); it stays 'running', and reports show it"
                " abandoned once this process has exited",
                run_id, status, why);
        return -1;
    }
    if (sqlite3_changes(st->db) == 1)
        return 0;

    /* Nothing changed: say whether the run is missing or already ended. */
    sqlite3_stmt *s = st->run_status;
    if (sqlite3_bind_int64(s, 1, run_id)) {
        sqlite3_clear_bindings(s);
        return store_db_fail(st->db, err, errlen, "binding run id");
    }
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        set_err(err, errlen, "run %" PRId64 " already finished (%s)", run_id,
                (const char *)sqlite3_column_text(s, 0));
    else if (rc == SQLITE_DONE)
        set_err(err, errlen, "no run with id %" PRId64, run_id);
    else
        store_db_fail(st->db, err, errlen, "reading run status");
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return -1;
}

/* Rarely called (once per rank and run): prepared on the spot. */
static int update_row(store *st, const char *sql, int64_t run_id, int rank, int64_t a, int64_t b, const char *text,
                      char *err, size_t errlen)
{
    if (writable(st, err, errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(st->db, err, errlen, "preparing an update");
    int rc = sqlite3_bind_int64(s, 1, run_id);
    if (rc == SQLITE_OK)
        rc = text ? sqlite3_bind_text(s, 2, text, -1, SQLITE_TRANSIENT) : sqlite3_bind_int(s, 2, rank);
    if (rc == SQLITE_OK && !text)
        rc = sqlite3_bind_int64(s, 3, a);
    if (rc == SQLITE_OK && !text)
        rc = sqlite3_bind_int64(s, 4, b);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_db_fail(st->db, err, errlen, "updating the run's ranks");
    return 0;
}

int store_set_rank_clock(store *st, int64_t run_id, int rank, int64_t offset_ns, int64_t uncertainty_ns, char *err,
                         size_t errlen)
{
    return update_row(st,
                      "UPDATE rank SET clock_offset_ns = ?3, clock_uncertainty_ns = ?4 WHERE run_id = ?1 AND rank = ?2",
                      run_id, rank, offset_ns, uncertainty_ns, NULL, err, errlen);
}

int store_set_run_ranks(store *st, int64_t run_id, const char *how, char *err, size_t errlen)
{
    return update_row(st, "UPDATE run SET ranks = ?2 WHERE id = ?1", run_id, 0, 0, 0, how, err, errlen);
}
