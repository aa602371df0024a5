/* whatif.c — deriving a replayable scenario from a run's measurements (whatif.h). */
#include "engine/predict/whatif.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "engine/ddp/bucket_plan.h"
#include "engine/device.h"
#include "engine/predict/fit_ring.h"
#include "engine/workload/model_zoo.h"

#define MIB (1024.0 * 1024.0)
/* Bandwidth that makes a copy cost nothing apart: its time is inside the measured
 * intervals (the top of device.*_gbps's range). */
#define FREE_GBPS 1e6

/* What one rank did in one measured iteration (ns on the run's clock; -1: not seen). */
typedef struct {
    int64_t step_start, step_end, bwd_start, bwd_end, comm_end;
    int64_t work_end; /* the end of its last DDP phase op (an imported iteration's may pass its period) */
    int64_t *ready;   /* per bucket */
    /* as rank_mean timed it (-1: not used): the forward phase's start, the last bucket's ready */
    int64_t timed_from, timed_ready;
} rank_iter;

typedef struct {
    sqlite3 *db;
    int64_t run;
    char *err;
    size_t errlen;
    /* the run */
    char name[128];
    int world, warmup, version;
    double bucket_cap_mb; /* NAN: not recorded */
    char *scenario_text;
    /* its buckets (latest assignment), in launch order */
    int nb;
    int64_t *bucket_bytes;
    /* the ranks the run holds (an imported trace may hold a few of its world) */
    int nheld;
    int *held;   /* ascending */
    int *pos_of; /* [world]: a rank's place in held, -1 when not held */
    double *table_speed; /* [world]: the rank table's speed factor; NAN: the rank is not in it */
    bool device; /* imported device spans: the phases are read on the device timeline */
    bool periods; /* imported 'step' spans: the job's period is the step */
    bool sizes_known; /* the buckets' bytes are in the run */
    /* measured iterations */
    int first_iter; /* the run's first (0, or an imported trace's first ProfilerStep#N) */
    int it0, nit;
    rank_iter *ri; /* [place in held * nit + (iter - it0)] */
} source;

static void add_note(whatif_derived *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(whatif_derived *d, const char *fmt, ...)
{
    size_t at = strlen(d->notes);
    if (at + 2 >= sizeof d->notes)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->notes + at, sizeof d->notes - at - 1, fmt, ap);
    va_end(ap);
    at = strlen(d->notes);
    d->notes[at] = '\n';
    d->notes[at + 1] = '\0';
}

static int db_fail(source *s, const char *what)
{
    set_err(s->err, s->errlen, "%s: %s", what, sqlite3_errmsg(s->db));
    return -1;
}

/* Prepares sql with ?1 = the run (and ?2 = the first measured iteration, if used). */
static sqlite3_stmt *query(source *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail(s, "reading the run");
        sqlite3_finalize(st);
        return NULL;
    }
    sqlite3_bind_int64(st, 1, s->run);
    if (sqlite3_bind_parameter_count(st) >= 2)
        sqlite3_bind_int(st, 2, s->it0);
    return st;
}

static int read_run(source *s)
{
    sqlite3_stmt *st = query(s, "SELECT name, world_size, warmup, bucket_cap_mb, scenario FROM run WHERE id = ?1");
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return db_fail(s, "reading the run");
        set_err(s->err, s->errlen, "no run with id %lld", (long long)s->run);
        return -1;
    }
    const unsigned char *name = sqlite3_column_text(st, 0);
    snprintf(s->name, sizeof s->name, "%s", name ? (const char *)name : "run");
    s->world = sqlite3_column_int(st, 1);
    s->warmup = sqlite3_column_int(st, 2);
    /* An imported trace records no cap (NULL, or 0). */
    s->bucket_cap_mb = sqlite3_column_type(st, 3) == SQLITE_NULL || sqlite3_column_double(st, 3) <= 0
                           ? NAN
                           : sqlite3_column_double(st, 3);
    const unsigned char *text = sqlite3_column_text(st, 4);
    bool has_text = text && *text; /* the text lives until the statement is finalized */
    s->scenario_text = has_text ? strdup((const char *)text) : NULL;
    sqlite3_finalize(st);
    if (has_text && !s->scenario_text) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    if (s->world < 1 || s->world > SCENARIO_MAX_WORLD) {
        set_err(s->err, s->errlen, "run %lld has %d ranks; whatif derives up to %d", (long long)s->run, s->world,
                SCENARIO_MAX_WORLD);
        return -1;
    }
    return 0;
}

/* A yes/no question about the run's spans (?1 the run). */
static int ask(source *s, const char *sql, bool *yes)
{
    sqlite3_stmt *st = query(s, sql);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    *yes = rc == SQLITE_ROW;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(s, "reading the spans");
}

/* The ranks the run holds: those of its rank table (all of its world for a recorded
 * run; the traced ones of an imported trace), and where its phases are measured. */
static int read_ranks(source *s)
{
    s->held = malloc((size_t)s->world * sizeof *s->held);
    s->pos_of = malloc((size_t)s->world * sizeof *s->pos_of);
    s->table_speed = malloc((size_t)s->world * sizeof *s->table_speed);
    if (!s->held || !s->pos_of || !s->table_speed) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    for (int r = 0; r < s->world; r++) {
        s->pos_of[r] = -1;
        s->table_speed[r] = NAN; /* not in the rank table (an untraced rank) */
    }
    /* A run of many ranks may keep the spans of chosen ranks only (rank.spans = 0 for
     * the others): those are measured, the others known by their speed factor. */
    sqlite3_stmt *st = query(s, "SELECT rank, speed, COALESCE(spans, 1) FROM rank WHERE run_id = ?1 ORDER BY rank");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int r = sqlite3_column_int(st, 0);
        if (r < 0 || r >= s->world)
            continue;
        s->table_speed[r] = sqlite3_column_double(st, 1);
        if (sqlite3_column_int(st, 2) && s->pos_of[r] < 0) {
            s->pos_of[r] = s->nheld;
            s->held[s->nheld++] = r;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(s, "reading the ranks");
    if (s->nheld == 0) /* a file without rank rows: every rank */
        for (int r = 0; r < s->world; r++) {
            s->pos_of[r] = r;
            s->held[s->nheld++] = r;
        }
    if (ask(s, "SELECT 1 FROM span WHERE run_id = ?1 AND device_stream IS NOT NULL LIMIT 1", &s->device) < 0 ||
        ask(s, "SELECT 1 FROM span WHERE run_id = ?1 AND kind = 'step' LIMIT 1", &s->periods) < 0)
        return -1;
    return 0;
}

/* The latest assignment's buckets; sizes a trace did not give come from the collectives. */
static int read_buckets(source *s)
{
    sqlite3_stmt *st = query(s, "SELECT COALESCE(MAX(version), -1), COUNT(*) FROM bucket WHERE run_id = ?1 AND "
                                "version = (SELECT MAX(version) FROM bucket WHERE run_id = ?1)");
    if (!st)
        return -1;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_fail(s, "reading the buckets");
    }
    s->version = sqlite3_column_int(st, 0);
    s->nb = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    if (s->nb <= 0 || s->nb > SCENARIO_MAX_CUSTOM_PARAMS) {
        set_err(s->err, s->errlen,
                s->nb <= 0 ? "run %lld has no DDP gradient buckets: whatif replays a DDP job (its bucket allreduces)"
                           : "run %lld has more buckets than whatif models",
                (long long)s->run);
        return -1;
    }
    s->bucket_bytes = calloc((size_t)s->nb, sizeof *s->bucket_bytes);
    if (!s->bucket_bytes) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    st = query(s, "SELECT b.idx, CASE WHEN b.nbytes > 0 THEN b.nbytes ELSE (SELECT MAX(c.bytes) FROM span c "
                  "WHERE c.run_id = ?1 AND c.kind = 'allreduce' AND c.bucket = b.idx) END "
                  "FROM bucket b WHERE b.run_id = ?1 AND b.version = (SELECT MAX(version) FROM bucket "
                  "WHERE run_id = ?1) ORDER BY b.idx");
    if (!st)
        return -1;
    int rc, k = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < s->nb) {
        int idx = sqlite3_column_int(st, 0);
        if (idx >= 0 && idx < s->nb)
            s->bucket_bytes[idx] = sqlite3_column_int64(st, 1);
        k++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return db_fail(s, "reading the buckets");
    s->sizes_known = true;
    for (int b = 0; b < s->nb; b++)
        s->sizes_known &= s->bucket_bytes[b] > 0;
    return 0;
}

static rank_iter *at(source *s, int rank, int iter)
{
    if (rank < 0 || rank >= s->world || s->pos_of[rank] < 0 || iter < s->it0 || iter >= s->it0 + s->nit)
        return NULL;
    return &s->ri[(size_t)s->pos_of[rank] * (size_t)s->nit + (size_t)(iter - s->it0)];
}

/* The spans a phase is read from: on an imported device trace, the device's (the host
 * runs ahead of them); everywhere else, all. */
static const char *timeline(const source *s)
{
    return s->device ? " AND device_stream IS NOT NULL" : "";
}

/* Runs sql (?1 run, ?2 first iteration; columns rank, iter, [bucket,] value) into the
 * rank_iter field chosen by `field` (0: step start and end, 1..4) or, with field -1, the
 * bucket's ready time. */
static int fill(source *s, const char *sql, int field)
{
    sqlite3_stmt *st = query(s, sql);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rank_iter *r = at(s, sqlite3_column_int(st, 0), sqlite3_column_int(st, 1));
        if (!r)
            continue;
        if (field < 0) {
            int b = sqlite3_column_int(st, 2);
            if (b >= 0 && b < s->nb)
                r->ready[b] = sqlite3_column_int64(st, 3);
            continue;
        }
        int64_t *f[5] = {&r->step_start, &r->step_end, &r->bwd_start, &r->bwd_end, &r->comm_end};
        *f[field] = sqlite3_column_int64(st, 2);
        if (field == 0)
            r->step_end = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : db_fail(s, "reading the spans");
}

static int read_iterations(source *s)
{
    /* The buckets measured are the latest assignment's: after the rebuild (DDP's first
     * synchronised iteration) and the warm-up. */
    sqlite3_stmt *st = query(s, "SELECT MIN(iter), MAX(iter) FROM span WHERE run_id = ?1");
    if (!st)
        return -1;
    bool any = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    int first = any ? sqlite3_column_int(st, 0) : 0, last = any ? sqlite3_column_int(st, 1) : -1;
    sqlite3_finalize(st);
    /* Iterations count from the run's first (an imported trace's ProfilerStep#N may start
     * anywhere). */
    s->first_iter = first;
    s->it0 = first + (s->warmup > (s->version > 0 ? 1 : 0) ? s->warmup : (s->version > 0 ? 1 : 0));
    /* An imported trace starts wherever the profiler's schedule began, seldom at DDP's
     * first iteration: buckets that differ between its steps are not DDP's rebuild, and
     * every step whose buckets are the latest assignment's counts (rank_mean checks). */
    if (s->periods)
        s->it0 = first + s->warmup;
    s->nit = last - s->it0 + 1;
    if (s->nit <= 0) {
        set_err(s->err, s->errlen, "run %lld has no measured iteration after DDP's rebuild and the warm-up",
                (long long)s->run);
        return -1;
    }
    size_t n = (size_t)s->nheld * (size_t)s->nit;
    s->ri = calloc(n, sizeof *s->ri);
    int64_t *ready = s->ri ? malloc(n * (size_t)s->nb * sizeof *ready) : NULL;
    if (!ready) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        s->ri[i] = (rank_iter){-1, -1, -1, -1, -1, -1, ready + i * (size_t)s->nb, -1, -1};
        for (int b = 0; b < s->nb; b++)
            s->ri[i].ready[b] = -1;
    }
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT rank, iter, MIN(start_ns), MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind IN ('forward', 'backward', 'copy_in', 'allreduce', 'copy_out', 'optimizer')%s GROUP BY rank, iter",
             timeline(s));
    if (fill(s, sql, 0) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        s->ri[i].work_end = s->ri[i].step_end;
    return 0;
}

/* The phases of each rank-iteration: the first forward (where the step of the
 * definitions starts, when forwards were recorded), the backward's start and end, the
 * last bucket allreduce's end and each bucket's ready point. */
static int read_phases(source *s)
{
    char sql[5][384];
    const char *tl = timeline(s);
    snprintf(sql[0], sizeof sql[0],
             "SELECT rank, iter, MIN(start_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND kind = 'forward'%s "
             "GROUP BY rank, iter", tl);
    snprintf(sql[1], sizeof sql[1],
             "SELECT rank, iter, MIN(start_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND kind = 'backward'%s "
             "GROUP BY rank, iter", tl);
    snprintf(sql[2], sizeof sql[2],
             "SELECT rank, iter, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind IN ('backward', 'copy_in')%s GROUP BY rank, iter", tl);
    snprintf(sql[3], sizeof sql[3],
             "SELECT rank, iter, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND kind = 'allreduce' "
             "AND bucket IS NOT NULL GROUP BY rank, iter");
    snprintf(sql[4], sizeof sql[4],
             "SELECT rank, iter, bucket, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind = 'copy_in' AND bucket IS NOT NULL%s GROUP BY rank, iter, bucket", tl);
    sqlite3_stmt *st = query(s, sql[0]);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rank_iter *r = at(s, sqlite3_column_int(st, 0), sqlite3_column_int(st, 1));
        if (r)
            r->step_start = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(s, "reading the spans");
    if (fill(s, sql[1], 2) != 0 || fill(s, sql[2], 3) != 0 || fill(s, sql[3], 4) != 0 || fill(s, sql[4], -1) != 0)
        return -1;
    /* An imported iteration's step is the job's period (its 'step' span): the host's
     * stalls before the next iteration count, in the phase after the optimizer. */
    if (s->periods &&
        fill(s,
             "SELECT rank, iter, MIN(start_ns), MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind = 'step' GROUP BY rank, iter",
             0) != 0)
        return -1;
    return 0;
}

/* The mean of n > 0 values.  Means, not medians: the job's throughput is set by its
 * mean period, so a replay keeps each phase's mean, a slow iteration's stall included. */
static double mean_of(const double *v, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}

/* One rank's means over the iterations it was fully seen in: the forward phase, each
 * bucket's interval from the previous ready point, the optimizer phase.  false when no
 * iteration was complete. */
typedef struct {
    double fwd_ns, opt_ns, total_ns;
    double *bwd_ns; /* per bucket */
    int iterations;
} rank_means;

static bool rank_mean(source *s, int rank, rank_means *m, double *scratch)
{
    int n = 0;
    double *f = scratch, *o = scratch + s->nit, *b = scratch + 2 * s->nit;
    for (int i = 0; i < s->nit; i++) {
        rank_iter *r = at(s, rank, s->it0 + i);
        bool whole = r->step_start >= 0 && r->step_end >= 0 && r->bwd_start >= r->step_start && r->bwd_end >= 0;
        for (int k = 0; whole && k < s->nb; k++)
            whole = r->ready[k] >= 0;
        if (!whole)
            continue;
        /* An imported job's iterations may overlap on the device (the next forward's first
         * ops before this backward's end: a pipelined input or embedding stage): each
         * iteration is timed from when the previous one's work ended, if later than its
         * own start, to the next one's, so that its phases add up to the period. */
        const rank_iter *before = s->periods && i > 0 ? at(s, rank, s->it0 + i - 1) : NULL;
        if (s->periods && i == 0 && s->nit > 1)
            continue; /* the trace's first iteration: when the one before it ended is not in the trace */
        const rank_iter *next = s->periods ? at(s, rank, s->it0 + i + 1) : NULL;
        int64_t from = before && before->work_end > r->step_start ? before->work_end : r->step_start;
        int64_t to = r->step_end;
        if (next && next->step_start >= 0)
            to = next->step_start > r->work_end ? next->step_start : r->work_end;
        f[n] = r->bwd_start > from ? (double)(r->bwd_start - from) : 0.0;
        int64_t prev = r->bwd_start;
        for (int k = 0; k < s->nb; k++) {
            /* Buckets launch in index order: one ready before its predecessor waited for it. */
            int64_t ready = r->ready[k] > prev ? r->ready[k] : prev;
            b[(size_t)k * (size_t)s->nit + (size_t)n] = (double)(ready - prev);
            prev = ready;
        }
        int64_t after = r->comm_end > r->bwd_end ? r->comm_end : r->bwd_end;
        o[n] = after < to ? (double)(to - after) : 0.0;
        r->timed_from = from;
        r->timed_ready = prev;
        n++;
    }
    m->iterations = n;
    if (n == 0)
        return false;
    m->fwd_ns = mean_of(f, (size_t)n);
    m->opt_ns = mean_of(o, (size_t)n);
    m->total_ns = m->fwd_ns;
    for (int k = 0; k < s->nb; k++) {
        m->bwd_ns[k] = mean_of(b + (size_t)k * (size_t)s->nit, (size_t)n);
        m->total_ns += m->bwd_ns[k];
    }
    return true;
}

/* "a, b, c" of n doubles into buf (grown). */
static char *list_text(const double *v, int n, const char *fmt)
{
    size_t cap = (size_t)n * 24 + 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + len, cap - len, i ? ", " : "");
        len += (size_t)w;
        w = snprintf(buf + len, cap - len, fmt, v[i]);
        len += (size_t)w;
    }
    return buf;
}

static int set(scenario *sc, const char *key, const char *value, char *err, size_t errlen)
{
    char why[SCENARIO_ERR];
    if (scenario_set(sc, key, value, why, sizeof why) != 0) {
        set_err(err, errlen, "deriving %s: %s", key, why);
        return -1;
    }
    return 0;
}

static int set_num(scenario *sc, const char *key, double v, char *err, size_t errlen)
{
    char text[64];
    snprintf(text, sizeof text, "%.17g", v);
    return set(sc, key, text, err, errlen);
}

static int set_list(scenario *sc, const char *key, const double *v, int n, const char *fmt, char *err, size_t errlen)
{
    char *text = list_text(v, n, fmt);
    if (!text) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    int rc = set(sc, key, text, err, errlen);
    free(text);
    return rc;
}

/* The order autograd makes the model's gradients ready in: layers last to first, inside
 * a layer as its backward returns them (trainer.c's order). */
static void ready_order(const model *m, int *order)
{
    int n = 0;
    for (int l = m->nlayers - 1; l >= 0; l--) {
        const model_layer *L = &m->layers[l];
        for (int i = 0; i < L->nparams; i++)
            order[n++] = L->first_param + (L->grads_in_registration_order ? i : L->nparams - 1 - i);
    }
}

/* Whether model m at sc's bucket limits gives exactly the run's buckets (bytes, in
 * launch order); *assign receives the assignment when it does. */
static bool reproduces(const source *s, const model *m, const scenario *sc, bucket_assignment *assign)
{
    int *order = malloc((size_t)(m->nparams ? m->nparams : 1) * sizeof *order);
    if (!order)
        return false;
    ready_order(m, order);
    bool same = bucket_plan_sized(m, sc, order, assign) == 0 && assign->nbuckets == s->nb;
    for (int b = 0; same && b < s->nb; b++)
        same = assign->buckets[b].nbytes == s->bucket_bytes[b];
    free(order);
    if (!same)
        bucket_assignment_free(assign);
    return same;
}

/* Spreads each bucket's measured backward time over its layers by their FLOPs, and the
 * forward phase over every layer likewise. */
static int layer_times(const model *m, const bucket_assignment *a, const rank_means *base, scenario *sc, char *err,
                       size_t errlen)
{
    int nl = m->nlayers;
    double *fwd = calloc((size_t)nl, sizeof *fwd), *bwd = calloc((size_t)nl, sizeof *bwd);
    int *bucket_of_layer = malloc((size_t)nl * sizeof *bucket_of_layer);
    int rc = -1;
    if (!fwd || !bwd || !bucket_of_layer) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    for (int l = 0; l < nl; l++)
        bucket_of_layer[l] = -1;
    /* A layer's gradients belong to the bucket its last-ready parameter went to: the
     * bucket whose ready point its backward ends before. */
    for (int b = 0; b < a->nbuckets; b++)
        for (int i = 0; i < a->buckets[b].nparams; i++) {
            int l = m->params[a->buckets[b].params[i]].layer;
            if (bucket_of_layer[l] < b)
                bucket_of_layer[l] = b;
        }
    double total_flops = 0;
    for (int l = 0; l < nl; l++)
        total_flops += m->layers[l].fwd_flops;
    for (int b = 0; b < a->nbuckets; b++) {
        double flops = 0;
        int members = 0;
        for (int l = 0; l < nl; l++)
            if (bucket_of_layer[l] == b) {
                flops += m->layers[l].fwd_flops;
                members++;
            }
        for (int l = 0; l < nl; l++)
            if (bucket_of_layer[l] == b)
                bwd[l] = base->bwd_ns[b] * (flops > 0 ? m->layers[l].fwd_flops / flops : 1.0 / members) / 1e3;
    }
    /* A layer without parameters (a pooling layer) has no backward time of its own: its
     * time is inside the interval of the bucket made ready after it. */
    for (int l = 0; l < nl; l++)
        fwd[l] = base->fwd_ns * (total_flops > 0 ? m->layers[l].fwd_flops / total_flops : 1.0 / nl) / 1e3;
    if (set_list(sc, "model.layer_forward_us", fwd, nl, "%.6g", err, errlen) == 0 &&
        set_list(sc, "model.layer_backward_us", bwd, nl, "%.6g", err, errlen) == 0)
        rc = 0;
out:
    free(fwd);
    free(bwd);
    free(bucket_of_layer);
    return rc;
}

/* One flat parameter per bucket, registration order the reverse of launch order (bucket
 * 0 holds the last layers), each bucket its own layer. */
static int bucket_model(const source *s, const rank_means *base, scenario *sc, char *err, size_t errlen)
{
    double *numel = malloc((size_t)s->nb * sizeof *numel), *fwd = malloc((size_t)s->nb * sizeof *fwd),
           *bwd = malloc((size_t)s->nb * sizeof *bwd);
    int rc = -1;
    if (!numel || !fwd || !bwd) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    double bytes = 0;
    for (int b = 0; b < s->nb; b++)
        bytes += (double)s->bucket_bytes[b];
    for (int i = 0; i < s->nb; i++) {
        int b = s->nb - 1 - i;
        numel[i] = (double)(s->bucket_bytes[b] / FP32_BYTES);
        bwd[i] = base->bwd_ns[b] / 1e3;
        fwd[i] = base->fwd_ns * (double)s->bucket_bytes[b] / bytes / 1e3;
    }
    /* Without a recorded cap, limits under which each whole bucket closes its own: the
     * first bucket's size for the first, the smallest of the rest for the cap. */
    if (isnan(s->bucket_cap_mb)) {
        int64_t smallest = s->nb > 1 ? s->bucket_bytes[1] : s->bucket_bytes[0];
        for (int b = 2; b < s->nb - 1; b++)
            smallest = s->bucket_bytes[b] < smallest ? s->bucket_bytes[b] : smallest;
        if (set_num(sc, "ddp.first_bucket_mb", (double)s->bucket_bytes[0] / MIB, err, errlen) != 0 ||
            set_num(sc, "ddp.bucket_cap_mb", (double)smallest / MIB, err, errlen) != 0)
            goto out;
    }
    if (set(sc, "model.preset", "custom", err, errlen) == 0 &&
        set_list(sc, "model.params", numel, s->nb, "%.0f", err, errlen) == 0 &&
        set_list(sc, "model.layer_forward_us", fwd, s->nb, "%.6g", err, errlen) == 0 &&
        set_list(sc, "model.layer_backward_us", bwd, s->nb, "%.6g", err, errlen) == 0)
        rc = 0;
out:
    free(numel);
    free(fwd);
    free(bwd);
    return rc;
}

/* Loads the recorded run's scenario text, if it has one, through a scratch file. */
static bool recorded_scenario(const source *s, scenario *sc)
{
    if (!s->scenario_text)
        return false;
    char path[] = "/tmp/ddpprof-whatif-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return false;
    size_t len = strlen(s->scenario_text);
    bool ok = write(fd, s->scenario_text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    char why[SCENARIO_ERR];
    ok = ok && scenario_load_file(path, sc, why, sizeof why) == 0;
    unlink(path);
    return ok;
}

/* Chooses the model: the recorded run's own, or --model, or a zoo preset that reproduces
 * the run's buckets; else the bucket-granularity model.  Sets the [model] keys. */
static int choose_model(source *s, const whatif_options *o, const rank_means *base, bool recorded, scenario *sc,
                        whatif_derived *d, char *err, size_t errlen)
{
    const char *tried[8];
    int ntried = 0;
    if (o && o->model)
        tried[ntried++] = o->model;
    else if (recorded)
        tried[ntried++] = sc->preset;
    else { /* every zoo preset a trace can be (custom needs its list), the toy mlp last */
        for (const char *const *p = scenario_model_presets; *p && ntried < 7; p++)
            if (strcmp(*p, "custom") != 0 && strcmp(*p, "mlp") != 0)
                tried[ntried++] = *p;
        tried[ntried++] = "mlp";
    }
    /* An imported trace does not say its bucket cap: the caps users set are tried, the
     * default first, and the one that gives the run's buckets is the run's.  Each with
     * the first bucket of 1 MiB, then with the first bucket the cap itself: PyTorch since
     * 2.3 (PR #121640) closes the first bucket at 1 MiB only when bucket_cap_mb was left
     * at its default, and at the cap when the user set one. */
    static const double caps[] = {25, 1, 2, 4, 5, 8, 10, 16, 20, 32, 40, 50, 64, 100, 128, 200, 256};
    size_t ncaps = isnan(s->bucket_cap_mb) && !recorded ? sizeof caps / sizeof caps[0] : 1;
    double cap0 = sc->bucket_cap_mb, first0 = sc->first_bucket_mb;
    for (int t = 0; t < ntried; t++) {
        char why[SCENARIO_ERR];
        if (scenario_set(sc, "model.preset", tried[t], why, sizeof why) != 0) {
            set_err(err, errlen, "--model %s: %s", tried[t], why);
            return -1;
        }
        model m;
        char merr[256];
        if (model_build(sc, &m, merr, sizeof merr) != 0)
            continue;
        for (size_t c = 0; c < 2 * ncaps; c++) {
            bool first_is_cap = c % 2 == 1;
            if (first_is_cap && ncaps == 1)
                continue; /* a recorded run's own settings: only them */
            double cap = ncaps > 1 ? caps[c / 2] : cap0;
            if ((ncaps > 1 && set_num(sc, "ddp.bucket_cap_mb", cap, err, errlen) != 0) ||
                set_num(sc, "ddp.first_bucket_mb", first_is_cap ? cap : first0, err, errlen) != 0) {
                model_free(&m);
                return -1;
            }
            bucket_assignment a;
            if (!reproduces(s, &m, sc, &a))
                continue;
            int rc = layer_times(&m, &a, base, sc, err, errlen);
            char at_cap[160] = "";
            if (ncaps > 1)
                snprintf(at_cap, sizeof at_cap,
                         " at bucket_cap_mb %g%s (the cap that gives them: the trace says none)", cap,
                         first_is_cap ? ", the first bucket too (PyTorch 2.3 on, a cap set by the user)" : "");
            add_note(d, "model: %s (%d parameters) gives the run's %d buckets exactly%s; each bucket's measured time "
                        "is spread over its layers by their FLOPs",
                     tried[t], m.nparams, s->nb, at_cap);
            bucket_assignment_free(&a);
            model_free(&m);
            return rc;
        }
        model_free(&m);
    }
    if ((ncaps > 1 && set_num(sc, "ddp.bucket_cap_mb", cap0, err, errlen) != 0) ||
        set_num(sc, "ddp.first_bucket_mb", first0, err, errlen) != 0)
        return -1;
    if (o && o->model)
        add_note(d, "model: %s does not give the run's %d buckets at bucket_cap_mb %g", o->model, s->nb,
                 sc->bucket_cap_mb);
    d->bucket_granularity = true;
    add_note(d, "model: one parameter per bucket (no known model gives the run's %d buckets): a new bucket_cap_mb "
                "re-buckets whole buckets, not parameters",
             s->nb);
    return bucket_model(s, base, sc, err, errlen);
}

/* One bucket allreduce of a measured iteration: its bytes (-1: unknown) and the time
 * it kept DDP's one communication stream busy, from when DDP could have started it to
 * its end.  It could start once the last rank had the bucket ready (its last copy in)
 * and the previous bucket had ended (DDP launches buckets in order on one stream); the
 * wait beyond that for the untraced ranks, for a collective of the job's own that held
 * the stream (an all_to_all), or in gloo's queue, is part of it, as a replay needs. */
typedef struct {
    int bucket;
    int64_t bytes;
    double busy_ns;
} bucket_busy;

static int cmp_busy_bytes(const void *a, const void *b)
{
    const bucket_busy *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int read_bucket_busy(source *s, bucket_busy **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    sqlite3_stmt *st = query(s, "SELECT iter, bucket, COALESCE(bytes, -1), last_arrival_ns, end_ns FROM collective "
                                "WHERE run_id = ?1 AND iter >= ?2 AND kind = 'allreduce' AND bucket IS NOT NULL "
                                "ORDER BY iter, bucket");
    if (!st)
        return -1;
    size_t cap = 0, n = 0;
    bucket_busy *v = NULL;
    int rc, prev_iter = -1;
    int64_t prev_end = INT64_MIN;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int iter = sqlite3_column_int(st, 0), b = sqlite3_column_int(st, 1);
        int64_t last_arrival = sqlite3_column_int64(st, 3), end = sqlite3_column_int64(st, 4);
        if (iter != prev_iter)
            prev_end = INT64_MIN;
        prev_iter = iter;
        int64_t ready = INT64_MIN;
        for (int i = 0; b >= 0 && b < s->nb && i < s->nheld; i++) {
            const rank_iter *r = at(s, s->held[i], iter);
            if (r && r->ready[b] > ready)
                ready = r->ready[b];
        }
        int64_t from = ready != INT64_MIN ? ready : last_arrival;
        from = from > prev_end ? from : prev_end;
        prev_end = end;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            bucket_busy *g = realloc(v, cap * sizeof *g);
            if (!g) {
                free(v);
                sqlite3_finalize(st);
                set_err(s->err, s->errlen, "out of memory");
                return -1;
            }
            v = g;
        }
        v[n++] = (bucket_busy){b, sqlite3_column_int64(st, 2), end > from ? (double)(end - from) : 0.0};
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return db_fail(s, "reading the collectives");
    }
    *out = v;
    *nout = n;
    return 0;
}

/* Without message sizes, each bucket stands for the bytes a ring allreduce moves at
 * EQUIVALENT_GBPS in its measured time (from the last arrival) at the run's world size:
 * a change of world size then scales the time by the ring's 2(n-1)/n, as it would the
 * real bytes', and the replay keeps the measured times.  Changes that need the real
 * sizes (bucket_cap_mb) are refused by the caller (whatif_derived.sizes_unknown). */
#define EQUIVALENT_GBPS 1.0
static int equivalent_sizes(source *s, whatif_derived *d)
{
    if (s->sizes_known)
        return 0;
    bucket_busy *v;
    size_t nv;
    if (read_bucket_busy(s, &v, &nv) < 0)
        return -1;
    double *t = calloc((size_t)s->nb, sizeof *t);
    int *count = calloc((size_t)s->nb, sizeof *count);
    if (!t || !count) {
        free(t);
        free(count);
        free(v);
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nv; i++)
        if (v[i].bucket >= 0 && v[i].bucket < s->nb) {
            count[v[i].bucket]++;
            t[v[i].bucket] += v[i].busy_ns;
        }
    free(v);
    int ret = 0;
    double ring = s->world > 1 ? 2.0 * (s->world - 1) / s->world : 1.0;
    for (int b = 0; ret == 0 && b < s->nb; b++) {
        double bytes = count[b] > 0 ? t[b] / count[b] * EQUIVALENT_GBPS / ring : 1.0; /* GB/s is bytes per ns */
        s->bucket_bytes[b] = bytes >= 1.0 ? (int64_t)llround(bytes) : 1;
    }
    if (ret == 0) {
        d->sizes_unknown = true;
        add_note(d, "sizes: the trace gives no message sizes: each bucket stands for the bytes a ring allreduce moves in "
                    "its measured time at %.3g GB/s, so world size, skew and speed can change but not the bucket "
                    "sizes (profile with record_shapes=True for them)",
                 EQUIVALENT_GBPS);
    }
    free(t);
    free(count);
    return ret;
}

/* ---- collectives other than DDP's ------------------------------------------------------- */

typedef struct {
    int64_t a, b;
} ival;

/* Merges sorted intervals in place; their count. */
static size_t merge_ivals(ival *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[i].a <= v[m - 1].b) {
            if (v[i].b > v[m - 1].b)
                v[m - 1].b = v[i].b;
        } else {
            v[m++] = v[i];
        }
    }
    return m;
}

/* |x ∩ [lo, hi)| for merged intervals x, minus what of it merged y covers. */
static int64_t exposed_in(const ival *x, size_t nx, const ival *y, size_t ny, int64_t lo, int64_t hi)
{
    int64_t t = 0;
    for (size_t i = 0; i < nx; i++) {
        int64_t a = x[i].a > lo ? x[i].a : lo, b = x[i].b < hi ? x[i].b : hi;
        if (b <= a)
            continue;
        t += b - a;
        for (size_t j = 0; j < ny; j++) {
            int64_t c = y[j].a > a ? y[j].a : a, d = y[j].b < b ? y[j].b : b;
            if (d > c)
                t -= d - c;
        }
    }
    return t;
}

/* How long collectives other than DDP's bucket allreduces (an all_to_all, an all_gather,
 * a broadcast) ran with no compute beside them, inside the base rank's forward phase and
 * inside its backward up to the last bucket's ready point, as means over the iterations
 * rank_mean timed: the part of model.forward_comm_us and backward_comm_us that scales
 * with the world size. */
static int other_comm(source *s, int rank, double *fwd_ns, double *bwd_ns)
{
    *fwd_ns = *bwd_ns = 0;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT iter, start_ns, end_ns, stream = 'comm' FROM span WHERE run_id = ?1 AND iter >= ?2 AND rank = ?3"
             " AND ((stream = 'compute'%s) OR (stream = 'comm' AND NOT (kind = 'allreduce' AND bucket IS NOT NULL)))"
             " ORDER BY iter, start_ns",
             timeline(s));
    sqlite3_stmt *st = query(s, sql);
    if (!st)
        return -1;
    sqlite3_bind_int(st, 3, rank);
    size_t cap = 256, nc = 0, nf = 0;
    ival *c = malloc(cap * sizeof *c), *f = malloc(cap * sizeof *f);
    int rc, iter = INT32_MIN, used = 0;
    double fsum = 0, bsum = 0;
    bool oom = !c || !f;
    for (;;) {
        rc = oom ? SQLITE_NOMEM : sqlite3_step(st);
        int it = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : INT32_MIN;
        if (iter != INT32_MIN && it != iter) { /* an iteration's spans are all in: measure it */
            const rank_iter *r = at(s, rank, iter);
            if (r && r->timed_from >= 0) {
                nc = merge_ivals(c, nc);
                nf = merge_ivals(f, nf);
                fsum += (double)exposed_in(f, nf, c, nc, r->timed_from, r->bwd_start);
                bsum += (double)exposed_in(f, nf, c, nc, r->bwd_start, r->timed_ready);
                used++;
            }
            nc = nf = 0;
        }
        if (rc != SQLITE_ROW)
            break;
        iter = it;
        if (nc == cap || nf == cap) {
            cap *= 2;
            ival *c2 = realloc(c, cap * sizeof *c2);
            if (c2)
                c = c2;
            ival *f2 = c2 ? realloc(f, cap * sizeof *f2) : NULL;
            if (!f2) {
                oom = true;
                continue;
            }
            f = f2;
        }
        ival v = {sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
        if (sqlite3_column_int(st, 3))
            f[nf++] = v;
        else
            c[nc++] = v;
    }
    sqlite3_finalize(st);
    free(c);
    free(f);
    if (rc == SQLITE_NOMEM) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    if (rc != SQLITE_DONE)
        return db_fail(s, "reading the spans");
    if (used > 0) {
        *fwd_ns = fsum / used;
        *bwd_ns = bsum / used;
    }
    return 0;
}

/* The run's bucket cap where it was recorded (an imported trace's is PyTorch's default). */
static int bucket_limits(const source *s, scenario *sc, char *err, size_t errlen)
{
    return set_num(sc, "ddp.bucket_cap_mb", isnan(s->bucket_cap_mb) ? sc->bucket_cap_mb : s->bucket_cap_mb, err,
                   errlen);
}

static int derive_network(source *s, scenario *sc, whatif_derived *d, char *err, size_t errlen)
{
    if (s->world < 2)
        return 0;
    if (!s->sizes_known) /* the buckets' equivalent bytes (equivalent_sizes) on a bare ring */
        return set(sc, "network.algorithm", "ring", err, errlen) != 0 ||
                       set_num(sc, "network.latency_us", 0, err, errlen) != 0 ||
                       set_num(sc, "network.bandwidth_gbps", EQUIVALENT_GBPS, err, errlen) != 0 ||
                       set(sc, "network.gpus_per_node", "0", err, errlen) != 0
                   ? -1
                   : 0;
    bucket_busy *v;
    size_t nv;
    if (read_bucket_busy(s, &v, &nv) < 0)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < nv; i++)
        if (v[i].bytes > 0)
            v[n++] = v[i];
    qsort(v, n, sizeof *v, cmp_busy_bytes);
    double *t = malloc((n ? n : 1) * sizeof *t);
    int64_t *bytes = malloc((n ? n : 1) * sizeof *bytes);
    if (!t || !bytes) {
        free(t);
        free(bytes);
        free(v);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        t[i] = v[i].busy_ns;
        bytes[i] = v[i].bytes;
    }
    free(v);
    /* The mean per size (the times of one size are contiguous). */
    double mb[SCENARIO_MAX_MEASURED], mu[SCENARIO_MAX_MEASURED], mr[SCENARIO_MAX_MEASURED];
    ring_sample rs[SCENARIO_MAX_MEASURED];
    int np = 0;
    for (size_t i = 0; i < n && np < SCENARIO_MAX_MEASURED;) {
        size_t j = i;
        while (j < n && bytes[j] == bytes[i])
            j++;
        double us = mean_of(t + i, j - i) / 1e3;
        if (us > 0) {
            mb[np] = (double)bytes[i];
            mu[np] = us;
            mr[np] = s->world;
            rs[np] = (ring_sample){bytes[i], s->world, us};
            np++;
        }
        i = j;
    }
    free(t);
    free(bytes);
    if (np == 0) {
        add_note(d, "network: no bucket allreduce with a size and a time: [network] as in the scenario");
        return 0;
    }
    if (set(sc, "network.algorithm", "measured", err, errlen) != 0 ||
        set_list(sc, "network.measured_ranks", mr, np, "%.0f", err, errlen) != 0 ||
        set_list(sc, "network.measured_bytes", mb, np, "%.0f", err, errlen) != 0 ||
        set_list(sc, "network.measured_us", mu, np, "%.6g", err, errlen) != 0 ||
        set(sc, "network.gpus_per_node", "0", err, errlen) != 0)
        return -1;
    ring_fit fit;
    char why[256];
    double alpha = 0, bw;
    if (np >= 2 && fit_ring_world(rs, (size_t)np, s->world, &fit, why, sizeof why) == 0) {
        alpha = fit.alpha_us;
        bw = fit.bandwidth_gbps;
    } else {
        /* One size: the bandwidth that gives its time with no latency. */
        bw = 2.0 * (s->world - 1) / s->world * mb[np - 1] / (mu[np - 1] * 1e3);
    }
    if (set_num(sc, "network.latency_us", alpha, err, errlen) != 0 ||
        set_num(sc, "network.bandwidth_gbps", bw > 0.001 ? bw : 0.001, err, errlen) != 0)
        return -1;
    add_note(d, "network: %d bucket sizes' allreduce times from the bucket's ready point on the last rank (measured at "
                "%d ranks); a ring of "
                "%.3g us a step and %.4g GB/s a link fitted to them for other world sizes",
             np, s->world, alpha, bw);
    return 0;
}

int whatif_derive(sqlite3 *db, int64_t run_id, const whatif_options *o, whatif_derived *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    source s = {.db = db, .run = run_id, .err = err, .errlen = errlen};
    rank_means *rm = NULL;
    double *scratch = NULL, *speeds = NULL;
    int rc = -1;
    out->sc = calloc(1, sizeof *out->sc); /* zeroed: holds nothing, whatif_free() may free it */
    if (!out->sc) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    if (read_run(&s) != 0 || read_ranks(&s) != 0 || read_buckets(&s) != 0 || read_iterations(&s) != 0 ||
        read_phases(&s) != 0 || equivalent_sizes(&s, out) != 0)
        goto out;
    int nh = s.nheld;
    rm = calloc((size_t)nh, sizeof *rm);
    double *bwd = rm ? calloc((size_t)nh * (size_t)s.nb, sizeof *bwd) : NULL;
    scratch = malloc((size_t)s.nit * (size_t)(s.nb + 2) * sizeof *scratch);
    speeds = malloc((size_t)s.world * sizeof *speeds);
    if (!rm || !bwd || !scratch || !speeds) {
        free(bwd);
        set_err(err, errlen, "out of memory");
        goto out;
    }
    int seen = 0;
    for (int i = 0; i < nh; i++) {
        rm[i].bwd_ns = bwd + (size_t)i * (size_t)s.nb;
        seen += rank_mean(&s, s.held[i], &rm[i], scratch);
    }
    if (seen < nh) {
        set_err(err, errlen,
                "run %lld: %d of the %d ranks it holds have no measured iteration with a forward, a backward and every "
                "bucket's copies",
                (long long)run_id, nh - seen, nh);
        goto out;
    }
    /* The representative rank: the median by compute; the others' speeds relative to it. */
    int base = 0;
    for (int i = 0; i < nh; i++) {
        int below = 0;
        for (int q = 0; q < nh; q++)
            below += rm[q].total_ns < rm[i].total_ns || (rm[q].total_ns == rm[i].total_ns && q < i);
        if (below == (nh - 1) / 2)
            base = i;
    }
    /* Every rank's speed: a traced rank's own; a rank not traced, that of a traced rank
     * in turn (the traced ranks repeat over the world). */
    int nspeeds = s.world <= SCENARIO_MAX_RANK_LIST ? s.world : nh;
    int nknown = 0; /* ranks without spans whose speed factor the rank table gives */
    for (int r = 0; r < nspeeds; r++) {
        double v;
        double own = s.table_speed[r], of_base = s.table_speed[s.held[base]];
        if (nspeeds == s.world && s.pos_of[r] < 0 && !isnan(own) && own > 0 && of_base > 0) {
            v = own / of_base; /* a recorded rank whose spans were not kept */
            nknown++;
        } else {
            int i = nspeeds == s.world && s.pos_of[r] >= 0 ? s.pos_of[r] : r % nh;
            v = rm[i].total_ns > 0 ? rm[base].total_ns / rm[i].total_ns : 1.0;
        }
        speeds[r] = v < 0.01 ? 0.01 : v > 100 ? 100 : v;
    }
    if (nknown > 0)
        add_note(out, "ranks: %d measured (their spans kept), %d by the speed factor the run recorded", nh, nknown);
    else if (nh < s.world)
        add_note(out, "ranks: %d of %d traced; the others take the traced ranks' speeds in turn, and a collective's "
                      "measured time (which holds the wait for the untraced ranks) stands for all",
                 nh, s.world);

    scenario *sc = out->sc;
    bool recorded = recorded_scenario(&s, sc);
    if (!recorded)
        scenario_defaults(sc);
    char name[160];
    snprintf(name, sizeof name, "whatif of run %lld", (long long)run_id); /* short: a sweep adds its point */
    double opt_bytes = 0; /* the SGD step's bytes, as the trainer times it */
    if (set(sc, "run.name", name, err, errlen) != 0 || set(sc, "run.backend", "sim", err, errlen) != 0 ||
        set(sc, "run.ranks", "threads", err, errlen) != 0 || set_num(sc, "run.world_size", s.world, err, errlen) != 0 ||
        set_num(sc, "run.iterations", rm[base].iterations, err, errlen) != 0 ||
        set_num(sc, "run.warmup", s.it0 - s.first_iter > 1 ? s.it0 - s.first_iter : 1, err, errlen) != 0 ||
        set(sc, "model.compute", "model", err, errlen) != 0 || set(sc, "model.params_file", "", err, errlen) != 0 ||
        set(sc, "skew.slow_ranks", "", err, errlen) != 0 || set(sc, "skew.slowdown", "1", err, errlen) != 0 ||
        set(sc, "skew.jitter", "0", err, errlen) != 0 || set(sc, "skew.slow_fraction", "0", err, errlen) != 0 ||
        set(sc, "skew.speed_sigma", "0", err, errlen) != 0 ||
        set_list(sc, "skew.speed", speeds, nspeeds, "%.6g", err, errlen) != 0 ||
        set(sc, "skew.speed_repeat", "true", err, errlen) != 0 ||
        set(sc, "ddp.broadcast_buffers", "false", err, errlen) != 0 || bucket_limits(&s, sc, err, errlen) != 0)
        goto out;
    scenario_reset_section(sc, "host");
    scenario_reset_section(sc, "fault");
    if (choose_model(&s, o, &rm[base], recorded, sc, out, err, errlen) != 0)
        goto out;
    model m;
    char merr[256];
    if (model_build(sc, &m, merr, sizeof merr) != 0) {
        set_err(err, errlen, "the derived model: %s", merr);
        goto out;
    }
    opt_bytes = 12.0 * (double)m.total_numel;
    model_free(&m);
    double opt_gbps = rm[base].opt_ns > 0 ? opt_bytes / rm[base].opt_ns : FREE_GBPS;
    if (set_num(sc, "device.mem_bw_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.copy_out_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.grad_write_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.optimizer_gbps", opt_gbps < FREE_GBPS ? opt_gbps : FREE_GBPS, err, errlen) != 0 ||
        set(sc, "device.op_overhead_us", "0", err, errlen) != 0 || set(sc, "device.comm_slowdown", "0", err, errlen) != 0)
        goto out;
    if (derive_network(&s, sc, out, err, errlen) != 0)
        goto out;
    double fwd_comm, bwd_comm;
    if (other_comm(&s, s.held[base], &fwd_comm, &bwd_comm) != 0)
        goto out;
    if (fwd_comm > 0 || bwd_comm > 0) {
        if (set_num(sc, "model.forward_comm_us", fwd_comm / 1e3, err, errlen) != 0 ||
            set_num(sc, "model.backward_comm_us", bwd_comm / 1e3, err, errlen) != 0 ||
            set_num(sc, "model.comm_ranks", s.world, err, errlen) != 0)
            goto out;
        add_note(out, "other collectives: %.3f ms of the forward and %.3f ms of the backward are collectives other than "
                      "DDP's with no compute beside them; they stay where they ran and scale with the world size as "
                      "(n-1)/n (those after the backward stay as measured)",
                 fwd_comm / 1e6, bwd_comm / 1e6);
    }
    add_note(out, "compute: rank %d's measured iterations (%d, from iteration %d; means), forward %.3f ms, "
                  "backward %.3f ms to the last bucket, optimizer phase %.3f ms%s; the other ranks by their speed",
             s.held[base], rm[base].iterations, s.it0, rm[base].fwd_ns / 1e6, (rm[base].total_ns - rm[base].fwd_ns) / 1e6,
             rm[base].opt_ns / 1e6, s.periods ? " (to the next iteration's start: the job's period)" : "");
    char why[SCENARIO_ERR];
    if (scenario_validate(sc, why, sizeof why) != 0) {
        set_err(err, errlen, "the derived scenario: %s", why);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        whatif_free(out);
    free(s.scenario_text);
    free(s.bucket_bytes);
    free(s.held);
    free(s.pos_of);
    free(s.table_speed);
    if (s.ri)
        free(s.ri[0].ready);
    free(s.ri);
    if (rm)
        free(rm[0].bwd_ns);
    free(rm);
    free(scratch);
    free(speeds);
    return rc;
}

void whatif_free(whatif_derived *d)
{
    scenario_free(d->sc);
    free(d->sc);
    d->sc = NULL;
}
