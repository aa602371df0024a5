/* tmp_store.h — test helpers shared by the store, report and engine tests: a results
 * database in a fresh temporary file (removed with its WAL files afterwards), the cmocka
 * fixture of the tests that each get such a store (store_fixture), and a span built
 * from its fields. */
#ifndef DDPPROF_TMP_STORE_H
#define DDPPROF_TMP_STORE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profiler/store.h"

static inline void remove_db(const char *path)
{
    char p[512];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* Creates /tmp/<prefix>XXXXXX (written into path, pathlen >= 64) and opens it as a
 * store.  Returns 0, or -1 with the reason on stderr and nothing left behind. */
static inline int open_tmp_store(char *path, size_t pathlen, const char *prefix, store **st, char *err,
                                 size_t errlen)
{
    snprintf(path, pathlen, "/tmp/%sXXXXXX", prefix);
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd); /* an empty file is an empty SQLite database */
    if (store_open(path, st, err, errlen) != 0) {
        fprintf(stderr, "store_open: %s\n", err);
        remove_db(path);
        return -1;
    }
    return 0;
}

/* The fixture of the tests that each get a fresh store (one test's, or a group's): the
 * file, the open store, room for its errors, and a report a test writes into memory
 * (open_memstream into buf and len; the test frees buf, the teardown does not).  A test
 * that keeps more begins its own fixture with a store_fixture and opens it with
 * store_fixture_open and its size; one with nothing more uses store_fixture_setup. */
typedef struct {
    char path[64];
    store *st;
    char err[512];
    char *buf;
    size_t len;
} store_fixture;

/* A zeroed fixture of `size` bytes (>= sizeof (store_fixture); a test's own begins with
 * one) with a store opened in /tmp/ddpprof_<program>_XXXXXX, into *state.  0, or -1
 * with the reason on stderr and nothing left behind: a cmocka setup's result. */
static inline int store_fixture_open(void **state, size_t size)
{
    char prefix[40];
    /* The program's name keeps each binary's files apart in /tmp, cut to fit path[64]. */
    snprintf(prefix, sizeof prefix, "ddpprof_%.24s_", program_invocation_short_name);
    store_fixture *f = calloc(1, size);
    if (!f || open_tmp_store(f->path, sizeof f->path, prefix, &f->st, f->err, sizeof f->err) != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* store_fixture_open of a plain store_fixture, as a cmocka setup. */
static inline int store_fixture_setup(void **state)
{
    return store_fixture_open(state, sizeof(store_fixture));
}

/* Closes the store, removes its file (and WAL files) and frees the fixture: the
 * teardown of both. */
static inline int store_fixture_teardown(void **state)
{
    store_fixture *f = *state;
    store_close(f->st);
    remove_db(f->path);
    free(f);
    return 0;
}

/* Takes a file of schema 8 back to schema 7: no rank.spans (every rank's spans were
 * stored), no span kinds step and profiler_step. */
#define STORE_DOWNGRADE_V8_TO_V7                                                          \
    "ALTER TABLE rank DROP COLUMN spans;"                                                 \
    "DELETE FROM span_kind WHERE name IN ('step', 'profiler_step');"                      \
    "UPDATE meta SET value = '7' WHERE key = 'schema_version';"

/* Takes a file of schema 8 back to schema 6 (through 7): without the collectives' new columns and
 * the run's overrides, verdict and sweep, DDP's parameter-count all_gather recorded
 * as an allreduce, as ddpprof before schema 7 recorded it (the views are left as
 * they are: every upgrade recreates them). */
#define STORE_DOWNGRADE_V7_TO_V6                                                          \
    STORE_DOWNGRADE_V8_TO_V7                                                              \
    "ALTER TABLE collective_stat DROP COLUMN kind;"                                       \
    "ALTER TABLE collective_stat DROP COLUMN warmup;"                                     \
    "ALTER TABLE collective_stat DROP COLUMN bucket_version;"                             \
    "ALTER TABLE collective_stat DROP COLUMN algbw_gbps;"                                 \
    "ALTER TABLE collective_stat DROP COLUMN busbw_gbps;"                                 \
    "ALTER TABLE run DROP COLUMN overrides; ALTER TABLE run DROP COLUMN verified;"        \
    "ALTER TABLE run DROP COLUMN sweep;"                                                  \
    "UPDATE span_data SET kind = 3 WHERE kind = 8 AND name_id ="                          \
    " (SELECT id FROM span_name WHERE name = '" DDP_PARAM_COUNT_SPAN_NAME "');"           \
    "UPDATE meta SET value = '6' WHERE key = 'schema_version';"

/* Takes a file of schema 5 to 7 (6 only recreated views) back to schema 4, as an older ddpprof left it: spans in a
 * table of their own again (with its two indexes), no string table, no imported-run
 * columns.  The tests of older schemas start from it. */
#define STORE_DOWNGRADE_V5_TO_V4                                                          \
    STORE_DOWNGRADE_V7_TO_V6                                                              \
    "CREATE TEMP TABLE span_v4 AS SELECT run_id, rank, iter, stream, kind, name, layer,"  \
    " bucket, seq, bytes, start_ns, end_ns FROM span;"                                    \
    "DROP VIEW span; DROP TABLE span_data; DROP TABLE span_name; DROP TABLE span_stream;" \
    "DROP TABLE span_kind; DROP TABLE source_file; DROP TABLE hta_stat;"                  \
    "CREATE TABLE span("                                                                  \
    " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"                      \
    " rank INTEGER NOT NULL, iter INTEGER NOT NULL,"                                      \
    " stream TEXT NOT NULL CHECK (stream IN ('host','compute','comm')),"                  \
    " kind TEXT NOT NULL CHECK (kind IN ('forward','backward','copy_in','allreduce',"     \
    "  'copy_out','optimizer','wait','broadcast')),"                                      \
    " name TEXT, layer INTEGER, bucket INTEGER, seq INTEGER, bytes INTEGER,"              \
    " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL CHECK (end_ns >= start_ns));"    \
    "INSERT INTO span SELECT * FROM span_v4; DROP TABLE span_v4;"                         \
    "CREATE INDEX span_run_rank_iter ON span(run_id, rank, iter);"                        \
    "CREATE INDEX span_run_seq ON span(run_id, seq) WHERE seq IS NOT NULL;"               \
    "ALTER TABLE run DROP COLUMN clock_sync; ALTER TABLE run DROP COLUMN time_base_unix_ns;" \
    "ALTER TABLE run DROP COLUMN notes;"                                                  \
    "UPDATE meta SET value = '4' WHERE key = 'schema_version';"

static inline span mk(int rank, int iter, span_stream stream, span_kind kind, int bucket, int64_t seq,
                      int64_t bytes, int64_t start, int64_t end)
{
    span s = {.rank = rank,
              .iter = iter,
              .stream = (uint8_t)stream,
              .kind = (uint8_t)kind,
              .layer = -1,
              .bucket = bucket,
              .seq = seq,
              .bytes = bytes,
              .start_ns = start,
              .end_ns = end};
    snprintf(s.name, sizeof s.name, "%s", span_kind_name(kind));
    return s;
}

#endif
