/* store.h — the SQLite results database: schema, views, and the writes of one run.
 *
 * Contract: one file holds many runs.  store_open() creates or upgrades the schema
 * (versioned in `meta`), sets WAL mode, and prepares the insert statements; a file
 * that is not a ddpprof database (not SQLite, another program's tables, a newer
 * schema) is refused with not one byte of it changed.  A run is inserted with status
 * 'running' and its writer's identity (store_begin_run) and ends 'complete' or
 * 'failed' (store_finish_run); spans arrive in batches, each written in one
 * transaction.  A run still 'running' whose writer is gone is 'abandoned': readers
 * decide that with store_run_liveness, it is never stored.
 * One writer per file: a store handle is used from one thread at a time.
 * Tables: meta, run, rank, param, bucket, span, and (schema 4) run_stats,
 * iteration_stat, collective_stat, bucket_ready_stat.  Views: collective, collective_arrival,
 * iteration_stats, ddp_logging (see store_schema.c for their exact SQL; README states
 * them).  Schema 2 added run.writer_pid, writer_host, writer_start, writer_boot,
 * writer_pidns; files of schema 1 are upgraded by store_open and read as they are by
 * store_open_readonly.  Schema 4 added the tables run_stats, iteration_stat,
 * collective_stat and bucket_ready_stat: a run's statistics, computed from its spans
 * once when it ends (store_finish_run, or store_run_stats) with the views'
 * definitions, so that reports of a run of millions of spans need not aggregate
 * them; upgrading an older file computes them for every run that had ended.
 * Schema 7: collective and collective_stat hold every collective with its kind,
 * warm-up flag, bucket version and nccl-tests bandwidths; DDP's parameter-count
 * collective is an all_gather; run.overrides, run.verified and run.sweep say what was
 * run (store_set_run_provenance).
 * Schema 8: rank.spans says whether a rank's spans are stored (a run of many ranks
 * keeps those of chosen ranks only, profiler/span_select.h; NULL: a run from before,
 * every rank's), while the statistics hold every rank (store_set_live_stats).
 */
#ifndef DDPPROF_STORE_H
#define DDPPROF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/hta_figures.h"
#include "profiler/span.h"

#define STORE_SCHEMA_VERSION 8

typedef struct store store;

typedef struct {
    const char *name;
    const char *source;       /* scenario file path */
    const char *scenario_ini; /* effective scenario text */
    const char *backend;
    const char *model;
    int world_size;
    int iterations; /* measured */
    int warmup;
    int64_t total_params;
    double bucket_cap_mb;
    const double *rank_speed; /* world_size entries (or nranks, with ranks) */
    const bool *rank_spans;   /* likewise: whether a rank's spans are stored; NULL: all */
    /* The ranks the run holds, ascending, where it holds some of its world only (an
     * imported trace of a few ranks of a job): the rank table lists these alone.
     * NULL: every rank of world_size. */
    const int *ranks;
    int nranks;
} store_run_info;

/* One bucket of an assignment; `params` lists parameter indices in bucket order (NULL:
 * not known, as in an imported trace: the bucket then says only how many). */
typedef struct {
    int64_t nbytes;
    int64_t size_limit;
    int nparams;
    const int *params;
} store_bucket;

/* Opens (creating if needed: an absent or 0-byte file) the database at `path`,
 * upgrading an older schema.  Returns 0 or -1 with err; a refused file is untouched. */
int store_open(const char *path, store **out, char *err, size_t errlen);
void store_close(store *st);

int store_begin_run(store *st, const store_run_info *info, int64_t *run_id, char *err, size_t errlen);

/* Parameters in registration order: name, numel, shape text ("64x3x7x7"), layer name. */
int store_write_param(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                      const char *shape, const char *layer, char *err, size_t errlen);

/* What run `run_id` was (schema 7), recorded once it has ended: `overrides` the
 * command line's settings and sweep point as a JSON object ("section.key": "value"),
 * NULL for none; `sweep_first` the id of the first run of the sweep it is a point of,
 * -1 for none; `verified` --verify's verdict: -1 not asked, 1 every synchronised step
 * checked and exact, 0 not (a check failed, or the run ended first).  0 or -1 with err. */
int store_set_run_provenance(store *st, int64_t run_id, const char *overrides, int64_t sweep_first, int verified,
                             char *err, size_t errlen);

/* Writes assignment `version` (0 = initial, 1 = rebuilt) and sets param.bucket
 * (the latest version's bucket of each parameter). */
int store_write_buckets(store *st, int64_t run_id, int version, const store_bucket *buckets,
                        int nbuckets, char *err, size_t errlen);

/* Writes n spans in one transaction.  Names are interned (table span_name). */
int store_write_spans(store *st, int64_t run_id, const span *spans, size_t n, char *err, size_t errlen);
/* The same, with names[i] (when names and names[i] are not NULL) instead of spans[i].name:
 * for imported names longer than SPAN_NAME. */
int store_write_spans_named(store *st, int64_t run_id, const span *spans, const char *const *names,
                            size_t n, char *err, size_t errlen);

/* One transaction around everything written until store_end_bulk: an import writes its
 * run, spans, buckets and statistics there, so the run appears whole or not at all.
 * Inside it, the other writes join it instead of committing on their own, and a failed
 * write leaves the transaction for store_end_bulk(commit = false) to roll back. */
int store_begin_bulk(store *st, char *err, size_t errlen);
int store_end_bulk(store *st, bool commit, char *err, size_t errlen);

/* A file a run was imported from (table source_file). */
typedef struct {
    int idx;            /* 0, 1, ... in the order given */
    const char *path;
    int64_t bytes;
    const char *sha256; /* 64 hex digits */
    const char *format; /* "kineto-json", "pytorch-legacy-json", "nsys-sqlite" */
    int rank;           /* -1: several ranks, or none */
    const char *rank_from; /* how the rank was known: "distributedInfo", "--rank", "file name" */
} store_source_file;
int store_write_source_file(store *st, int64_t run_id, const store_source_file *f, char *err,
                            size_t errlen);
int store_write_hta_stat(store *st, int64_t run_id, const store_hta_stat *h, char *err, size_t errlen);

/* An imported run's clock alignment (run.clock_sync), its zero on the wall clock (NULL
 * pointer: unknown) and remarks for the report (run.notes, one per line, or NULL). */
int store_set_run_source(store *st, int64_t run_id, const char *clock_sync, const int64_t *time_base_unix_ns,
                         const char *notes, char *err, size_t errlen);

/* Ranks as processes: rank `rank`'s clock offset against the run's clock and its
 * uncertainty, and how the ranks were run ("threads", "processes", "torchrun", ...). */
int store_set_rank_clock(store *st, int64_t run_id, int rank, int64_t offset_ns, int64_t uncertainty_ns, char *err,
                         size_t errlen);
int store_set_run_ranks(store *st, int64_t run_id, const char *how, char *err, size_t errlen);

/* Marks the run 'complete' (error == NULL) or 'failed' with the error text.  A locked
 * database is waited for (busy timeout, then bounded retries); on a full one the
 * error text is shortened to fit.  -1 with err saying the run stays 'running'. */
int store_finish_run(store *st, int64_t run_id, const char *error, char *err, size_t errlen);

/* Table `equivalence`, outside the versioned schema: profiler/store_equivalence.h. */

/* (Re)computes run `run_id`'s statistics from its spans and stores them (one
 * transaction).  store_finish_run does this before marking the run ended; a failure
 * there is not fatal (reports then aggregate the spans through the views). */
int store_run_stats(store *st, int64_t run_id, char *err, size_t errlen);

/* Statistics of run `run_id` computed as its spans were recorded (stats_live.h), for
 * store_run_stats / store_finish_run to store instead of computing iteration_stat and
 * collective_stat from the stored spans, which hold some ranks only: borrowed, it must
 * live until the run's statistics are stored; NULL forgets it.  Where the live figures
 * are not exact (stats_live_exact), the stored spans are used and stderr says why. */
struct stats_live;
void store_set_live_stats(store *st, int64_t run_id, const struct stats_live *live);

/* Sets the connection's page cache to `kib` KiB (PRAGMA cache_size): a long transaction
 * holds its pages there until it commits, and a smaller cache lets SQLite spill them to
 * the WAL instead.  0 or -1 with err. */
int store_set_page_cache_kib(store *st, int kib, char *err, size_t errlen);

/* The underlying connection.  Readers outside profiler/ use the read API
 * (store_read_*.h) instead; tests inspect or alter the file through it. */
struct sqlite3 *store_db(store *st);

/* Opens an existing database for reading only (reports): never creates, upgrades,
 * locks or leaves a side file where none was, and needs no write access (see
 * store_open.c for how, and what a concurrent writer means then).  Schemas 1 to
 * STORE_SCHEMA_VERSION are read; anything newer is refused.  Returns 0 or -1 with err. */
int store_open_readonly(const char *path, store **out, char *err, size_t errlen);

/* store_write_param with an explicit byte size (store_write_param assumes fp32). */
int store_write_param_bytes(store *st, int64_t run_id, int idx, const char *name, int64_t numel,
                            int64_t bytes, const char *shape, const char *layer, char *err,
                            size_t errlen);

/* The SELECT behind view `view` ("collective", "collective_arrival", "iteration_stats",
 * "ddp_logging"), the same text the view was created from.  With one_run, every read
 * of a table is restricted to run_id = ?1: SQLite does not push `WHERE run_id = ?`
 * into the nested aggregates of these views, so readers of one run use this form
 * (e.g. "WITH s AS (<text>) SELECT ... FROM s").  NULL for an unknown view. */
const char *store_view_select(const char *view, bool one_run);

/* Who writes a run, recorded by store_begin_run; a field not known is 0 / -1 / "". */
typedef struct {
    int64_t pid;         /* 0: not recorded (a run of schema 1) */
    char host[256];      /* gethostname() */
    int64_t start_ticks; /* field 22 of /proc/PID/stat, so a reused pid is not mistaken */
    char boot_id[40];    /* /proc/sys/kernel/random/boot_id: a reboot ends every writer */
    char pidns[40];      /* the pid namespace, "pid:[4026531836]": pids mean nothing across */
} store_writer;

typedef enum {
    STORE_WRITER_ALIVE,   /* the writer still runs: the run may still be recording */
    STORE_WRITER_GONE,    /* it exited, or its host rebooted, without finishing the run */
    STORE_WRITER_UNKNOWN, /* cannot be checked here: other host or pid namespace, or
                           * not recorded */
} store_liveness;

/* This process, as store_begin_run records it. */
void store_writer_self(store_writer *w);

/* Judges a writer from this process's vantage point: same host (name and boot) and
 * pid namespace, and a process `pid` with the same start time, is ALIVE; on the same
 * host and namespace with no such process (or another boot) it is GONE; anything
 * else is UNKNOWN.  `detail` gets one sentence saying which and why. */
store_liveness store_writer_liveness(const store_writer *w, char *detail, size_t detaillen);

/* Reads run `run_id`'s writer (none in a schema-1 file: UNKNOWN) and judges it.
 * Returns 0, or -1 with err (no such run, SQLite error). */
int store_run_liveness(store *st, int64_t run_id, store_liveness *state, char *detail, size_t detaillen, char *err,
                       size_t errlen);

#endif
