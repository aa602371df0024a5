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
#include "engine/predict/fit_ring.h"
#include "engine/predict/median.h"
#include "engine/workload/model_zoo.h"

#define MIB (1024.0 * 1024.0)
/* Bandwidth that makes a copy cost nothing apart: its time is inside the measured
 * intervals (the top of device.*_gbps's range). */
#define FREE_GBPS 1e6

/* What one rank did in one measured iteration (ns on the run's clock; -1: not seen). */
typedef struct {
    int64_t step_start, step_end, bwd_start, bwd_end, comm_end;
    int64_t *ready; /* per bucket */
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
    /* measured iterations */
    int it0, nit;
    rank_iter *ri; /* [rank * nit + (iter - it0)] */
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
    for (int b = 0; b < s->nb; b++) {
        if (s->bucket_bytes[b] <= 0) {
            set_err(s->err, s->errlen,
                    "run %lld: bucket %d's size is not in the run (the trace gives no message sizes); whatif "
                    "needs each bucket's bytes",
                    (long long)s->run, b);
            return -1;
        }
    }
    return 0;
}

static rank_iter *at(source *s, int rank, int iter)
{
    if (rank < 0 || rank >= s->world || iter < s->it0 || iter >= s->it0 + s->nit)
        return NULL;
    return &s->ri[(size_t)rank * (size_t)s->nit + (size_t)(iter - s->it0)];
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
    s->it0 = s->warmup > (s->version > 0 ? 1 : 0) ? s->warmup : (s->version > 0 ? 1 : 0);
    sqlite3_stmt *st = query(s, "SELECT MAX(iter) FROM span WHERE run_id = ?1");
    if (!st)
        return -1;
    int last = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_int(st, 0)
                                                                                              : -1;
    sqlite3_finalize(st);
    s->nit = last - s->it0 + 1;
    if (s->nit <= 0) {
        set_err(s->err, s->errlen, "run %lld has no measured iteration after DDP's rebuild and the warm-up",
                (long long)s->run);
        return -1;
    }
    size_t n = (size_t)s->world * (size_t)s->nit;
    s->ri = calloc(n, sizeof *s->ri);
    int64_t *ready = s->ri ? malloc(n * (size_t)s->nb * sizeof *ready) : NULL;
    if (!ready) {
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        s->ri[i] = (rank_iter){-1, -1, -1, -1, -1, ready + i * (size_t)s->nb};
        for (int b = 0; b < s->nb; b++)
            s->ri[i].ready[b] = -1;
    }
    if (fill(s,
             "SELECT rank, iter, MIN(start_ns), MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind IN ('forward', 'backward', 'copy_in', 'allreduce', 'copy_out', 'optimizer') GROUP BY rank, iter",
             0) != 0)
        return -1;
    return 0;
}

/* The phases of each rank-iteration: the first forward (where the step of the
 * definitions starts, when forwards were recorded), the backward's start and end, the
 * last bucket allreduce's end and each bucket's ready point. */
static int read_phases(source *s)
{
    sqlite3_stmt *st = query(s, "SELECT rank, iter, MIN(start_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
                                "kind = 'forward' GROUP BY rank, iter");
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
    if (fill(s,
             "SELECT rank, iter, MIN(start_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND kind = 'backward' "
             "GROUP BY rank, iter",
             2) != 0 ||
        fill(s,
             "SELECT rank, iter, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind IN ('backward', 'copy_in') GROUP BY rank, iter",
             3) != 0 ||
        fill(s,
             "SELECT rank, iter, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND kind = 'allreduce' "
             "AND bucket IS NOT NULL GROUP BY rank, iter",
             4) != 0 ||
        fill(s,
             "SELECT rank, iter, bucket, MAX(end_ns) FROM span WHERE run_id = ?1 AND iter >= ?2 AND "
             "kind = 'copy_in' AND bucket IS NOT NULL GROUP BY rank, iter, bucket",
             -1) != 0)
        return -1;
    return 0;
}

/* One rank's medians over the iterations it was fully seen in: the forward phase, each
 * bucket's interval from the previous ready point, the optimizer phase.  false when no
 * iteration was complete. */
typedef struct {
    double fwd_ns, opt_ns, total_ns;
    double *bwd_ns; /* per bucket */
    int iterations;
} rank_medians;

static bool rank_median(source *s, int rank, rank_medians *m, double *scratch)
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
        f[n] = (double)(r->bwd_start - r->step_start);
        int64_t prev = r->bwd_start;
        for (int k = 0; k < s->nb; k++) {
            /* Buckets launch in index order: one ready before its predecessor waited for it. */
            int64_t ready = r->ready[k] > prev ? r->ready[k] : prev;
            b[(size_t)k * (size_t)s->nit + (size_t)n] = (double)(ready - prev);
            prev = ready;
        }
        int64_t after = r->comm_end > r->bwd_end ? r->comm_end : r->bwd_end;
        o[n] = after < r->step_end ? (double)(r->step_end - after) : 0.0;
        n++;
    }
    m->iterations = n;
    if (n == 0)
        return false;
    m->fwd_ns = median_sort(f, (size_t)n);
    m->opt_ns = median_sort(o, (size_t)n);
    m->total_ns = m->fwd_ns;
    for (int k = 0; k < s->nb; k++) {
        m->bwd_ns[k] = median_sort(b + (size_t)k * (size_t)s->nit, (size_t)n);
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
    if (scenario_set(sc, key, value, why) != 0) {
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
static int layer_times(const model *m, const bucket_assignment *a, const rank_medians *base, scenario *sc, char *err,
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
static int bucket_model(const source *s, const rank_medians *base, scenario *sc, char *err, size_t errlen)
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
        numel[i] = (double)(s->bucket_bytes[b] / 4);
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
    ok = ok && scenario_load_file(path, sc, why) == 0;
    unlink(path);
    return ok;
}

/* Chooses the model: the recorded run's own, or --model, or a zoo preset that reproduces
 * the run's buckets; else the bucket-granularity model.  Sets the [model] keys. */
static int choose_model(source *s, const whatif_options *o, const rank_medians *base, bool recorded, scenario *sc,
                        whatif_derived *d, char *err, size_t errlen)
{
    static const char *const zoo[] = {"resnet18", "resnet50", "bert-large", "gpt2", "mlp"};
    const char *tried[8];
    int ntried = 0;
    if (o && o->model)
        tried[ntried++] = o->model;
    else if (recorded)
        tried[ntried++] = sc->preset;
    else
        for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
            tried[ntried++] = zoo[i];
    for (int t = 0; t < ntried; t++) {
        char why[SCENARIO_ERR];
        if (scenario_set(sc, "model.preset", tried[t], why) != 0) {
            set_err(err, errlen, "--model %s: %s", tried[t], why);
            return -1;
        }
        model m;
        char merr[256];
        if (model_build(sc, &m, merr, sizeof merr) != 0)
            continue;
        bucket_assignment a;
        if (reproduces(s, &m, sc, &a)) {
            int rc = layer_times(&m, &a, base, sc, err, errlen);
            add_note(d, "model: %s (%d parameters) gives the run's %d buckets exactly; each bucket's measured time "
                        "is spread over its layers by their FLOPs",
                     tried[t], m.nparams, s->nb);
            bucket_assignment_free(&a);
            model_free(&m);
            return rc;
        }
        model_free(&m);
    }
    if (o && o->model)
        add_note(d, "model: %s does not give the run's %d buckets at bucket_cap_mb %g", o->model, s->nb,
                 sc->bucket_cap_mb);
    d->bucket_granularity = true;
    add_note(d, "model: one parameter per bucket (no known model gives the run's %d buckets): a new bucket_cap_mb "
                "re-buckets whole buckets, not parameters",
             s->nb);
    return bucket_model(s, base, sc, err, errlen);
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
    sqlite3_stmt *st = query(s, "SELECT bytes, transfer_ns FROM collective WHERE run_id = ?1 AND iter >= ?2 AND "
                                "bucket IS NOT NULL AND bytes > 0 ORDER BY bytes");
    if (!st)
        return -1;
    /* Rows by increasing bytes; the times of one size are contiguous in t. */
    size_t cap = 0, n = 0;
    double *t = NULL;
    int64_t *bytes = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            double *t2 = realloc(t, cap * sizeof *t);
            if (t2)
                t = t2;
            int64_t *b2 = t2 ? realloc(bytes, cap * sizeof *bytes) : NULL;
            if (!b2) {
                rc = SQLITE_NOMEM;
                break;
            }
            bytes = b2;
        }
        bytes[n] = sqlite3_column_int64(st, 0);
        t[n] = (double)sqlite3_column_int64(st, 1);
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(t);
        free(bytes);
        if (rc == SQLITE_NOMEM) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        return db_fail(s, "reading the collectives");
    }
    /* The median per size, from the last arrival to the end. */
    double mb[SCENARIO_MAX_MEASURED], mu[SCENARIO_MAX_MEASURED], mr[SCENARIO_MAX_MEASURED];
    ring_sample rs[SCENARIO_MAX_MEASURED];
    int np = 0;
    for (size_t i = 0; i < n && np < SCENARIO_MAX_MEASURED;) {
        size_t j = i;
        while (j < n && bytes[j] == bytes[i])
            j++;
        double us = median_sort(t + i, j - i) / 1e3;
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
    add_note(d, "network: %d bucket sizes' allreduce times from the last arrival (measured at %d ranks); a ring of "
                "%.3g us a step and %.4g GB/s a link fitted to them for other world sizes",
             np, s->world, alpha, bw);
    return 0;
}

int whatif_derive(sqlite3 *db, int64_t run_id, const whatif_options *o, whatif_derived *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    source s = {.db = db, .run = run_id, .err = err, .errlen = errlen};
    rank_medians *rm = NULL;
    double *scratch = NULL, *speeds = NULL;
    int rc = -1;
    out->sc = malloc(sizeof *out->sc);
    if (!out->sc) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    if (read_run(&s) != 0 || read_buckets(&s) != 0 || read_iterations(&s) != 0 || read_phases(&s) != 0)
        goto out;
    rm = calloc((size_t)s.world, sizeof *rm);
    double *bwd = rm ? calloc((size_t)s.world * (size_t)s.nb, sizeof *bwd) : NULL;
    scratch = malloc((size_t)s.nit * (size_t)(s.nb + 2) * sizeof *scratch);
    speeds = malloc((size_t)s.world * sizeof *speeds);
    if (!rm || !bwd || !scratch || !speeds) {
        free(bwd);
        set_err(err, errlen, "out of memory");
        goto out;
    }
    int seen = 0;
    for (int r = 0; r < s.world; r++) {
        rm[r].bwd_ns = bwd + (size_t)r * (size_t)s.nb;
        seen += rank_median(&s, r, &rm[r], scratch);
    }
    if (seen < s.world) {
        set_err(err, errlen,
                "run %lld: %d of %d ranks have no measured iteration with a forward, a backward and every bucket's "
                "copies",
                (long long)run_id, s.world - seen, s.world);
        goto out;
    }
    /* The representative rank: the median by compute; the others' speeds relative to it. */
    int base = 0;
    for (int r = 0; r < s.world; r++) {
        int below = 0;
        for (int q = 0; q < s.world; q++)
            below += rm[q].total_ns < rm[r].total_ns || (rm[q].total_ns == rm[r].total_ns && q < r);
        if (below == (s.world - 1) / 2)
            base = r;
    }
    for (int r = 0; r < s.world; r++) {
        double v = rm[r].total_ns > 0 ? rm[base].total_ns / rm[r].total_ns : 1.0;
        speeds[r] = v < 0.01 ? 0.01 : v > 100 ? 100 : v;
    }

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
        set_num(sc, "run.warmup", s.it0 > 1 ? s.it0 : 1, err, errlen) != 0 ||
        set(sc, "model.compute", "model", err, errlen) != 0 || set(sc, "model.params_file", "", err, errlen) != 0 ||
        set(sc, "skew.slow_ranks", "", err, errlen) != 0 || set(sc, "skew.slowdown", "1", err, errlen) != 0 ||
        set(sc, "skew.jitter", "0", err, errlen) != 0 || set(sc, "skew.slow_fraction", "0", err, errlen) != 0 ||
        set(sc, "skew.speed_sigma", "0", err, errlen) != 0 ||
        set_list(sc, "skew.speed", speeds, s.world, "%.6g", err, errlen) != 0 ||
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
    add_note(out, "compute: rank %d's measured iterations (%d, from iteration %d; medians), forward %.3f ms, "
                  "backward %.3f ms to the last bucket, optimizer phase %.3f ms; the other ranks by their speed",
             base, rm[base].iterations, s.it0, rm[base].fwd_ns / 1e6, (rm[base].total_ns - rm[base].fwd_ns) / 1e6,
             rm[base].opt_ns / 1e6);
    char why[SCENARIO_ERR];
    if (scenario_validate(sc, why) != 0) {
        set_err(err, errlen, "the derived scenario: %s", why);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        whatif_free(out);
    free(s.scenario_text);
    free(s.bucket_bytes);
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
    free(d->sc);
    d->sc = NULL;
}
