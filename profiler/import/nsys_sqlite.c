/* nsys_sqlite.c — see nsys_sqlite.h.
 *
 * The file is opened read-only and immutable (it is an export: nothing writes it), and
 * only the tables that exist are read, each with one query.  A process's events go to
 * its trace_rank, made when the process is first seen; processes that did nothing the
 * importer reads are dropped at the end.
 *
 * ddpprof's own ranges ("rank R / forward", "rank R / bucket B allreduce",
 * "rank R / backward fc3", engine/cpu/cpu_device.c) say their rank, and ranks that run as
 * threads of one process share it: such ranges go to the trace of rank R, as host ops
 * whose kind the range names, and each "rank R / forward" phase range opens an
 * iteration (a step, numbered from 0, that lasts until the next).
 */
#include "profiler/import/nsys_sqlite.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/errmsg.h"
#include "profiler/span.h"

#define NVTX_PUSHPOP_FALLBACK 59
#define NVTX_STARTEND_FALLBACK 60
#define NVTX_DOMAIN_CREATE_FALLBACK 75

typedef struct {
    int64_t key;  /* pid, or (1 << 40) + ddpprof's rank */
    trace_rank *r;
    int64_t first_ts;
    /* ddpprof ranks: their forward phases' starts (iterations), in time order */
    int64_t *fwd;
    size_t nfwd, capfwd;
    int64_t last_end;
    int device; /* the GPU its kernels ran on; -1 none yet, -2 several */
} proc;

typedef struct {
    const char *path;
    int file_idx;
    const trace_limits *lim;
    sqlite3 *db;
    proc *p;
    size_t np, capp;
    int64_t base;
    bool abs;
    char *err;
    size_t errlen;
} reader;

static int fail(reader *rd, const char *what)
{
    set_err(rd->err, rd->errlen, "%s: %s: %s", rd->path, what, sqlite3_errmsg(rd->db));
    return -1;
}

static bool has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *s = NULL;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &s,
                                  NULL) == SQLITE_OK &&
               sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return yes;
}

static bool has_column(sqlite3 *db, const char *table, const char *col)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
    sqlite3_stmt *s = NULL;
    bool yes = sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
               sqlite3_bind_text(s, 1, col, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return yes;
}

static proc *proc_of(reader *rd, int64_t key, const char *label)
{
    for (size_t i = 0; i < rd->np; i++)
        if (rd->p[i].key == key)
            return &rd->p[i];
    if (rd->np == rd->capp) {
        size_t cap = rd->capp ? 2 * rd->capp : 8;
        proc *g = realloc(rd->p, cap * sizeof *g);
        if (!g)
            return NULL;
        rd->p = g;
        rd->capp = cap;
    }
    trace_rank *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    trace_rank_init(r, rd->path, rd->file_idx, "nsys-sqlite", rd->lim);
    r->abs_clock = rd->abs;
    r->base_ns = rd->base;
    snprintf(r->label, sizeof r->label, "%s", label);
    proc *p = &rd->p[rd->np++];
    memset(p, 0, sizeof *p);
    p->key = key;
    p->r = r;
    p->device = -1;
    return p;
}

static proc *proc_of_pid(reader *rd, int64_t pid)
{
    char label[64];
    snprintf(label, sizeof label, "(process %lld)", (long long)pid);
    return proc_of(rd, pid, label);
}

static int push(reader *rd, proc *p, tev_in *e, const char *name)
{
    if (!p) {
        set_err(rd->err, rd->errlen, "out of memory");
        return -1;
    }
    e->name = trace_rank_name(p->r, name ? name : "", name ? strlen(name) : 0);
    if (e->name < 0) {
        set_err(rd->err, rd->errlen, "out of memory");
        return -1;
    }
    char why[300];
    if (trace_rank_push(p->r, e, why, sizeof why) < 0) {
        set_err(rd->err, rd->errlen, "%s: %s", rd->path, why);
        return -1;
    }
    if (e->ts_ns + e->dur_ns > p->last_end)
        p->last_end = e->ts_ns + e->dur_ns;
    return 0;
}

static int64_t pid_of(int64_t global)
{
    return (global >> 24) & 0xffffff;
}

/* ---- device work and launches ---------------------------------------------------------- */

static const char *copy_name(int kind)
{
    /* CUPTI_ActivityMemcpyKind, as Kineto names the copies */
    switch (kind) {
    case 1:
        return "Memcpy HtoD (Pageable -> Device)";
    case 2:
        return "Memcpy DtoH (Device -> Pageable)";
    case 8:
        return "Memcpy DtoD (Device -> Device)";
    case 10:
        return "Memcpy PtoP (Device -> Device)";
    default:
        return "Memcpy";
    }
}

static int read_device(reader *rd, const char *table, int type)
{
    if (!has_table(rd->db, table))
        return 0;
    char sql[768];
    if (type == TEV_KERNEL) {
        const char *name = has_column(rd->db, table, "demangledName") ? "demangledName" : "shortName";
        snprintf(sql, sizeof sql,
                 "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid, s.value"
                 " FROM %s k LEFT JOIN StringIds s ON s.id = k.%s",
                 table, name);
    } else {
        snprintf(sql, sizeof sql,
                 "SELECT start, end, deviceId, streamId, correlationId, globalPid, %s, bytes FROM %s",
                 type == TEV_MEMCPY && has_column(rd->db, table, "copyKind") ? "copyKind" : "0", table);
    }
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rd->db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(rd, table);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(s, 0), end = sqlite3_column_int64(s, 1);
        if (end < start) {
            sqlite3_finalize(s);
            set_err(rd->err, rd->errlen, "%s: %s: a row that ends before it starts (%lld < %lld)", rd->path, table,
                    (long long)end, (long long)start);
            return -1;
        }
        tev_in e = {.ts_ns = start, .dur_ns = end - start, .tid = sqlite3_column_int64(s, 3),
                 .correlation = sqlite3_column_int64(s, 4), .bytes = -1, .seq = -1, .pg = -1, .coll = -1,
                 .device = sqlite3_column_int(s, 2), .type = (uint8_t)type, .kind = -1};
        proc *p = proc_of_pid(rd, pid_of(sqlite3_column_int64(s, 5)));
        if (p)
            p->device = p->device == -1 || p->device == e.device ? e.device : -2;
        const char *name;
        if (type == TEV_KERNEL) {
            name = (const char *)sqlite3_column_text(s, 6);
            if (!name)
                name = "(unnamed kernel)";
        } else {
            e.bytes = sqlite3_column_int64(s, 7);
            name = type == TEV_MEMCPY ? copy_name(sqlite3_column_int(s, 6)) : "Memset (Device)";
        }
        if (push(rd, p, &e, name) < 0) {
            sqlite3_finalize(s);
            return -1;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail(rd, table);
}

static int read_runtime(reader *rd)
{
    const char *t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!has_table(rd->db, t))
        return 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rd->db,
                           "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value"
                           " FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId",
                           -1, &s, NULL) != SQLITE_OK)
        return fail(rd, t);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(s, 0), end = sqlite3_column_int64(s, 1), gt = sqlite3_column_int64(s, 2);
        tev_in e = {.ts_ns = start, .dur_ns = end > start ? end - start : 0, .tid = gt & 0xffffff,
                 .correlation = sqlite3_column_int64(s, 3), .bytes = -1, .seq = -1, .pg = -1, .coll = -1,
                 .device = -1, .type = TEV_RUNTIME, .kind = -1};
        const char *name = (const char *)sqlite3_column_text(s, 4);
        if (push(rd, proc_of_pid(rd, pid_of(gt)), &e, name ? name : "cudaLaunchKernel") < 0) {
            sqlite3_finalize(s);
            return -1;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail(rd, t);
}

/* ---- NVTX ------------------------------------------------------------------------------- */

static int event_type(sqlite3 *db, const char *name, int fallback)
{
    if (!has_table(db, "ENUM_NSYS_EVENT_TYPE"))
        return fallback;
    sqlite3_stmt *s = NULL;
    int v = fallback;
    if (sqlite3_prepare_v2(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = ?1", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* "rank R / <kind>[ <name>]" and "rank R / bucket B allreduce": ddpprof's ranges. */
static bool ddpprof_range(const char *text, int *rank, int *kind, bool *phase_begin)
{
    if (strncmp(text, "rank ", 5) != 0 || !isdigit((unsigned char)text[5]))
        return false;
    char *end;
    long r = strtol(text + 5, &end, 10);
    if (strncmp(end, " / ", 3) != 0 || r < 0 || r > 1000000)
        return false;
    const char *rest = end + 3;
    *rank = (int)r;
    if (!strncmp(rest, "bucket ", 7) && strstr(rest, " allreduce")) {
        *kind = SPAN_ALLREDUCE;
        *phase_begin = false;
        return true;
    }
    char word[32];
    size_t n = 0;
    while (rest[n] && rest[n] != ' ' && n < sizeof word - 1) {
        word[n] = rest[n];
        n++;
    }
    word[n] = '\0';
    int k = span_kind_from_name(word);
    if (k < 0)
        return false;
    *kind = k;
    *phase_begin = rest[n] == '\0';
    return true;
}

/* PyTorch's emit_nvtx ranges carry ", seq = N, sizes = [...]" after the op's name. */
static void op_name(const char *text, char *out, size_t n)
{
    const char *cut = strstr(text, ", seq = ");
    const char *cut2 = strstr(text, ", sizes = ");
    if (!cut || (cut2 && cut2 < cut))
        cut = cut2;
    size_t len = cut ? (size_t)(cut - text) : strlen(text);
    if (len >= n)
        len = n - 1;
    memcpy(out, text, len);
    out[len] = '\0';
}

static int read_nvtx(reader *rd)
{
    const char *t = "NVTX_EVENTS";
    if (!has_table(rd->db, t))
        return 0;
    int pushpop = event_type(rd->db, "NvtxPushPopRange", NVTX_PUSHPOP_FALLBACK);
    int startend = event_type(rd->db, "NvtxStartEndRange", NVTX_STARTEND_FALLBACK);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT e.start, e.end, e.globalTid, %s FROM NVTX_EVENTS e"
             " WHERE e.eventType IN (?1, ?2) AND e.end IS NOT NULL ORDER BY e.start",
             has_table(rd->db, "StringIds") && has_column(rd->db, t, "textId")
                 ? "COALESCE(e.text, (SELECT s.value FROM StringIds s WHERE s.id = e.textId))"
                 : "e.text");
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rd->db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_bind_int(s, 1, pushpop) != SQLITE_OK ||
        sqlite3_bind_int(s, 2, startend) != SQLITE_OK) {
        sqlite3_finalize(s);
        return fail(rd, t);
    }
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(s, 0), end = sqlite3_column_int64(s, 1), gt = sqlite3_column_int64(s, 2);
        const char *text = (const char *)sqlite3_column_text(s, 3);
        if (!text || end < start)
            continue;
        tev_in e = {.ts_ns = start, .dur_ns = end - start, .tid = gt & 0xffffff, .correlation = -1, .bytes = -1,
                 .seq = -1, .pg = -1, .coll = -1, .device = -1, .type = TEV_CPU, .kind = -1};
        int rank, kind;
        bool phase_begin;
        proc *p;
        char name[512];
        if (ddpprof_range(text, &rank, &kind, &phase_begin)) {
            char label[64];
            snprintf(label, sizeof label, "(ddpprof rank %d)", rank);
            p = proc_of(rd, ((int64_t)1 << 40) + rank, label);
            if (p) {
                p->r->rank = rank;
                p->r->rank_from = "NVTX";
            }
            e.kind = (int8_t)kind;
            if (p && phase_begin && kind == SPAN_FORWARD) {
                if (p->nfwd == p->capfwd) {
                    size_t cap = p->capfwd ? 2 * p->capfwd : 64;
                    int64_t *g = realloc(p->fwd, cap * sizeof *g);
                    if (!g) {
                        sqlite3_finalize(s);
                        set_err(rd->err, rd->errlen, "out of memory");
                        return -1;
                    }
                    p->fwd = g;
                    p->capfwd = cap;
                }
                p->fwd[p->nfwd++] = start;
            }
            snprintf(name, sizeof name, "%s", text);
        } else {
            p = proc_of_pid(rd, pid_of(gt));
            op_name(text, name, sizeof name);
        }
        if (push(rd, p, &e, name) < 0) {
            sqlite3_finalize(s);
            return -1;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : fail(rd, t);
}

/* Each ddpprof rank's iterations as steps: from one forward phase to the next. */
static int add_ddpprof_steps(reader *rd)
{
    for (size_t i = 0; i < rd->np; i++) {
        proc *p = &rd->p[i];
        for (size_t k = 0; k < p->nfwd; k++) {
            int64_t end = k + 1 < p->nfwd ? p->fwd[k + 1] : p->last_end;
            char name[48];
            snprintf(name, sizeof name, "ProfilerStep#%zu", k);
            tev_in e = {.ts_ns = p->fwd[k], .dur_ns = end - p->fwd[k], .tid = -1, .correlation = -1, .bytes = -1,
                     .seq = -1, .pg = -1, .coll = -1, .device = -1, .type = TEV_CPU, .kind = -1};
            if (push(rd, p, &e, name) < 0)
                return -1;
        }
    }
    return 0;
}

static void session_start(reader *rd)
{
    const char *t = "TARGET_INFO_SESSION_START_TIME";
    if (!has_table(rd->db, t) || !has_column(rd->db, t, "utcEpochNs"))
        return;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rd->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", -1, &s, NULL) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
        rd->base = sqlite3_column_int64(s, 0);
        rd->abs = rd->base > 0;
    }
    sqlite3_finalize(s);
}

int nsys_sqlite_read(const char *path, int file_idx, const trace_limits *lim, trace_rank ***out, int *nout,
                     char *err, size_t errlen)
{
    *out = NULL;
    *nout = 0;
    reader rd = {.path = path, .file_idx = file_idx, .lim = lim, .err = err, .errlen = errlen};
    char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
    int ret = -1;
    if (!uri) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    /* A plain path with '?' or '#' would be cut short as a URI; those are opened as they are. */
    bool plain = strpbrk(path, "?#%") != NULL;
    if (sqlite3_open_v2(plain ? path : uri, &rd.db, SQLITE_OPEN_READONLY | (plain ? 0 : SQLITE_OPEN_URI), NULL) !=
        SQLITE_OK) {
        set_err(err, errlen, "%s: %s", path, rd.db ? sqlite3_errmsg(rd.db) : "cannot open");
        goto out;
    }
    static const char *const tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                         "NVTX_EVENTS"};
    bool any = false;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        any |= has_table(rd.db, tables[i]);
    if (!any) {
        set_err(err, errlen,
                "%s: an SQLite file, but not an Nsight Systems export (none of its tables: kernels, copies,"
                " runtime calls, NVTX ranges)%s",
                path, has_table(rd.db, "span") || has_table(rd.db, "span_data") ? "; it is a ddpprof database" : "");
        goto out;
    }
    session_start(&rd);
    if (read_device(&rd, "CUPTI_ACTIVITY_KIND_KERNEL", TEV_KERNEL) < 0 ||
        read_device(&rd, "CUPTI_ACTIVITY_KIND_MEMCPY", TEV_MEMCPY) < 0 ||
        read_device(&rd, "CUPTI_ACTIVITY_KIND_MEMSET", TEV_MEMSET) < 0 || read_runtime(&rd) < 0 ||
        read_nvtx(&rd) < 0 || add_ddpprof_steps(&rd) < 0)
        goto out;
    /* Keep the processes that did GPU work or carry ddpprof's ranks; several GPU
     * processes in one report (nsys profile torchrun ...) are told apart by their GPU. */
    size_t keep = 0;
    for (size_t i = 0; i < rd.np; i++) {
        proc *p = &rd.p[i];
        bool device = false, steps = p->nfwd > 0;
        for (size_t k = 0; k < p->r->nev && !device; k++)
            device = p->r->ev[k].type == TEV_KERNEL || p->r->ev[k].type == TEV_MEMCPY || p->r->ev[k].type == TEV_MEMSET;
        if (device || steps || p->r->rank >= 0)
            rd.p[keep++] = *p;
        else {
            trace_rank_free(p->r);
            free(p->r);
            free(p->fwd);
        }
    }
    rd.np = keep;
    size_t ngpu = 0;
    for (size_t i = 0; i < rd.np; i++)
        ngpu += rd.p[i].r->rank < 0;
    if (ngpu == 1) {
        for (size_t i = 0; i < rd.np; i++)
            if (rd.p[i].r->rank < 0)
                rd.p[i].r->label[0] = '\0'; /* one process: the file's rank (name, --rank) */
    } else if (ngpu > 1) {
        bool distinct = true;
        for (size_t i = 0; i < rd.np; i++)
            for (size_t j = i + 1; j < rd.np; j++)
                if (rd.p[i].r->rank < 0 && rd.p[j].r->rank < 0 &&
                    (rd.p[i].device < 0 || rd.p[i].device == rd.p[j].device))
                    distinct = false;
        for (size_t i = 0; i < rd.np; i++)
            if (distinct && rd.p[i].r->rank < 0) {
                rd.p[i].r->rank = rd.p[i].device;
                rd.p[i].r->rank_from = "GPU of the process";
            }
    }
    *out = calloc(rd.np ? rd.np : 1, sizeof **out);
    if (!*out) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < rd.np; i++) {
        (*out)[i] = rd.p[i].r;
        rd.p[i].r = NULL;
    }
    *nout = (int)rd.np;
    ret = 0;
out:
    for (size_t i = 0; i < rd.np; i++) {
        if (rd.p[i].r) {
            trace_rank_free(rd.p[i].r);
            free(rd.p[i].r);
        }
        free(rd.p[i].fwd);
    }
    free(rd.p);
    sqlite3_free(uri);
    sqlite3_close(rd.db);
    return ret;
}
