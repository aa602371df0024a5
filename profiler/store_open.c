/* store_open.c — opening a results database for writing (store_open) or for reading
 * only (store_open_readonly), preparing the write statements, closing.
 *
 * Contract (store.h): store_open creates an absent or 0-byte file; any other file is
 * first inspected through a read-only connection that cannot write (store_inspect),
 * so a file that is not SQLite, holds another program's tables, or is a ddpprof file
 * of a newer schema is refused with not one byte changed and no side file left.
 * Only then is the file opened read-write, put in WAL mode and migrated.
 *
 * store_open_readonly never writes and needs no write access anywhere:
 *  - with no -wal (and no -journal) beside the file, everything committed is in the
 *    file itself, and it is opened with `immutable=1`: no lock, no -wal or -shm
 *    created.  The consequence: a writer that starts while the report reads is not
 *    seen (the report is of the file as it was when opened), and a checkpoint it
 *    makes meanwhile could show the report a page of the newer state;
 *  - with a -wal (a writer is recording, or was killed before it could checkpoint),
 *    the committed pages are partly in the -wal, so it is opened `mode=ro`, which
 *    reads the -wal through the -shm; SQLite falls back to a read-only -shm where it
 *    cannot write one.  If the directory admits no -shm at all, a -wal without frames
 *    is ignored (immutable again) and one with frames is refused with what to do,
 *    never silently read without them.
 * Paths are passed as URIs with every byte outside [A-Za-z0-9/._~-] percent-escaped,
 * so '%', '?', '#' and a leading "file:" in a file name mean themselves.
 */
#include "common/errmsg.h"
#include "profiler/store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A run's final UPDATE waits this long for another process's write transaction
 * (a report never takes one; a second writer on the same file might). */
#define BUSY_TIMEOUT_MS 10000

/* A WAL file shorter than its 32-byte header plus one 24-byte frame header holds no
 * committed page. */
#define WAL_MIN_FRAME_BYTES (32 + 24)

/* "file:<escaped path>[?query]"; NULL when out of memory.  An absolute path gets an
 * empty authority ("file:///..."), so that one starting with "//" stays a path. */
static char *file_uri(const char *path, const char *query)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path);
    char *uri = malloc(8 + 3 * n + (query ? strlen(query) + 1 : 0) + 1);
    if (!uri)
        return NULL;
    char *o = uri;
    o += sprintf(o, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._~-", *p)) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    if (query)
        o += sprintf(o, "?%s", query);
    *o = '\0';
    return uri;
}

/* Size of PATH<suffix>, or -1 when it does not exist. */
static long long side_file_size(const char *path, const char *suffix)
{
    char side[4096];
    struct stat sb;
    if ((size_t)snprintf(side, sizeof side, "%s%s", path, suffix) >= sizeof side)
        return -1;
    return stat(side, &sb) == 0 ? (long long)sb.st_size : -1;
}

static int open_uri(const char *path, const char *query, int flags, sqlite3 **db, char *err,
                    size_t errlen)
{
    *db = NULL;
    char *uri = file_uri(path, query);
    if (!uri) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    int rc = sqlite3_open_v2(uri, db, flags | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        set_err(err, errlen, "%s", *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    if (sqlite3_busy_timeout(*db, BUSY_TIMEOUT_MS) != SQLITE_OK) {
        store_db_fail(*db, err, errlen, "setting busy timeout");
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

/* A file to be read: a regular file we may read (stat's reason otherwise). */
static int check_regular(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        set_err(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        set_err(err, errlen, "not a regular file");
        return -1;
    }
    return 0;
}

/* Opens `path` read-only as the header comment describes and inspects its schema. */
static int open_ro_inspected(const char *path, sqlite3 **out, store_file_kind *kind,
                             int *version, char *err, size_t errlen)
{
    *out = NULL;
    if (check_regular(path, err, errlen) < 0)
        return -1;
    long long wal = side_file_size(path, "-wal");
    bool journal = side_file_size(path, "-journal") >= 0;
    bool immutable = wal < 0 && !journal;
    sqlite3 *db = NULL;
    if (open_uri(path, immutable ? "immutable=1" : "mode=ro", SQLITE_OPEN_READONLY, &db, err,
                 errlen) < 0)
        return -1;
    if (store_inspect(db, kind, version, err, errlen) == 0) {
        *out = db;
        return 0;
    }
    int code = sqlite3_errcode(db);
    sqlite3_close(db);
    /* A hot -journal must be rolled back before the file can be trusted: that is for
     * a writer to do, so only the -wal case goes on. */
    if (immutable || journal || (code != SQLITE_CANTOPEN && code != SQLITE_READONLY))
        return -1;
    /* mode=ro could not create the -shm it needs: only a -wal without frames may be
     * passed over. */
    if (wal >= WAL_MIN_FRAME_BYTES) {
        set_err(err, errlen,
                "%s-wal holds changes that SQLite reads only through a -shm file, and there"
                " is none and the directory is not writable; copy the database and its -wal"
                " into a writable directory and read the copy",
                path);
        return -1;
    }
    if (open_uri(path, "immutable=1", SQLITE_OPEN_READONLY, &db, err, errlen) < 0)
        return -1;
    if (store_inspect(db, kind, version, err, errlen) < 0) {
        sqlite3_close(db);
        return -1;
    }
    *out = db;
    return 0;
}

static int prepare(sqlite3 *db, sqlite3_stmt **s, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, s, NULL) != SQLITE_OK)
        return store_db_fail(db, err, errlen, "preparing statement");
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
         " iterations, warmup, bucket_cap_mb, writer_pid, writer_host, writer_start,"
         " writer_boot, writer_pidns)"
         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
        {&st->ins_rank, "INSERT INTO rank(run_id, rank, speed, spans) VALUES (?, ?, ?, ?)"},
        {&st->ins_param,
         "INSERT INTO param(run_id, idx, name, numel, bytes, shape, layer) VALUES (?, ?, ?, ?, ?, ?, ?)"},
        {&st->del_bucket, "DELETE FROM bucket WHERE run_id = ? AND version = ?"},
        {&st->ins_bucket,
         "INSERT INTO bucket(run_id, version, idx, nbytes, nparams, size_limit, params)"
         " VALUES (?, ?, ?, ?, ?, ?, ?)"},
        {&st->max_version, "SELECT MAX(version) FROM bucket WHERE run_id = ?"},
        {&st->upd_param_bucket, "UPDATE param SET bucket = ? WHERE run_id = ? AND idx = ?"},
        /* dup: 0 unless a span with the same (run, rank, iter, start) is there, which
         * the primary key's index answers at once. */
        {&st->ins_span,
         "INSERT INTO span_data(run_id, rank, iter, start_ns, dup, stream, kind, name_id, layer,"
         " bucket, seq, bytes, dur_ns, device_stream) VALUES (?1, ?2, ?3, ?4,"
         " (SELECT COALESCE(MAX(dup) + 1, 0) FROM span_data WHERE run_id = ?1 AND rank = ?2"
         "  AND iter = ?3 AND start_ns = ?4), ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"},
        {&st->ins_name, "INSERT OR IGNORE INTO span_name(name) VALUES (?1)"},
        {&st->get_name, "SELECT id FROM span_name WHERE name = ?1"},
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

int store_open(const char *path, store **out, char *err, size_t errlen)
{
    *out = NULL;
    store *st = calloc(1, sizeof *st);
    if (!st) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    strtab_init(&st->names);
    struct stat sb;
    bool fresh = stat(path, &sb) != 0 ? errno == ENOENT : S_ISREG(sb.st_mode) && sb.st_size == 0;
    if (!fresh) {
        /* Anything already there is judged before a read-write connection exists: that
         * one could replay another program's journal or leave a -wal behind. */
        sqlite3 *ro = NULL;
        store_file_kind kind;
        int version;
        int rc = open_ro_inspected(path, &ro, &kind, &version, err, errlen);
        sqlite3_close(ro);
        if (rc < 0 || store_check_not_newer(version, err, errlen) < 0)
            goto fail;
    }
    if (open_uri(path, NULL, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &st->db, err, errlen) < 0)
        goto fail;
    /* Judged again on this connection: the file may have been replaced meanwhile. */
    store_file_kind kind;
    int version;
    if (store_inspect(st->db, &kind, &version, err, errlen) < 0 ||
        store_check_not_newer(version, err, errlen) < 0)
        goto fail;
    if (store_exec(st->db, "PRAGMA journal_mode = WAL", "setting WAL mode", err, errlen) < 0 ||
        store_exec(st->db, "PRAGMA synchronous = NORMAL", "setting synchronous", err, errlen) < 0 ||
        store_exec(st->db, "PRAGMA foreign_keys = ON", "enabling foreign keys", err, errlen) < 0 ||
        /* Spans of thousands of ranks land all over the span indexes: with SQLite's
         * default 2 MiB page cache every insert re-reads index pages from the OS (a
         * 8192-rank prediction spent a quarter of its time in pread/pwrite).  Pages are
         * only allocated as used. */
        store_exec(st->db, "PRAGMA cache_size = -262144", "setting the page cache", err, errlen) < 0)
        goto fail;
    /* A current file needs no write lock to open, so a second process (a report while
     * a run is recording) does not wait on the writer. */
    if ((version < STORE_SCHEMA_VERSION && store_migrate(st->db, err, errlen) < 0) ||
        prepare_all(st, err, errlen) < 0)
        goto fail;
    *out = st;
    return 0;
fail:
    store_close(st);
    return -1;
}

int store_open_readonly(const char *path, store **out, char *err, size_t errlen)
{
    *out = NULL;
    store *st = calloc(1, sizeof *st);
    if (!st) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    strtab_init(&st->names);
    st->readonly = true;
    store_file_kind kind;
    int version;
    if (open_ro_inspected(path, &st->db, &kind, &version, err, errlen) < 0 ||
        store_check_not_newer(version, err, errlen) < 0)
        goto fail;
    if (kind != STORE_FILE_DDPPROF) {
        set_err(err, errlen, "not a ddpprof database (no tables)");
        goto fail;
    }
    *out = st;
    return 0;
fail:
    store_close(st);
    return -1;
}

void store_close(store *st)
{
    if (!st)
        return;
    sqlite3_stmt *all[] = {st->begin,      st->commit,           st->rollback,   st->ins_run,
                           st->ins_rank,   st->ins_param,        st->del_bucket, st->ins_bucket,
                           st->max_version, st->upd_param_bucket, st->ins_span,  st->finish_run,
                           st->run_status, st->ins_name,         st->get_name};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        sqlite3_finalize(all[i]);
    /* close_v2 defers the close if a reader still holds a statement on this handle. */
    sqlite3_close_v2(st->db);
    strtab_free(&st->names);
    free(st);
}

struct sqlite3 *store_db(store *st)
{
    return st ? st->db : NULL;
}

int store_set_page_cache_kib(store *st, int kib, char *err, size_t errlen)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size = -%d", kib); /* negative: KiB, not pages */
    return store_exec(st->db, sql, "setting the page cache", err, errlen);
}
