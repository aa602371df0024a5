/* analysis.c — computes the report figures of analysis.h from a results database.
 *
 * Contract: see analysis.h.  All per-span arithmetic happens in the store's view SQL
 * or the statistics stored at a run's end, both read through profiler/store_read_*.h;
 * this file averages the per-rank-iteration rows and assembles the structs.  The
 * iteration rows of a run are read once and aggregated here, since the step
 * statistics and the per-rank means both need them.
 */
#include "common/errmsg.h"
#include "reports/analysis.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_import.h"
#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_run_row.h"
#include "profiler/store_read_spans.h"
#include "profiler/store_read_stats.h"

#define NS_PER_MS 1e6

static double ms(double ns)
{
    return ns / NS_PER_MS;
}

/* A copy of s (NULL stays NULL) into *out; -1 with err when out of memory. */
static int dup_text(const char *s, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!s)
        return 0;
    if (!(*out = strdup(s))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- run header ------------------------------------------------------------------ */

/* A run still 'running' in the file is running only while its writer lives: one whose
 * writer is gone is reported 'abandoned', so it is never read as a good run. */
static int judge_running(store *st, analysis_run *r, char *err, size_t errlen)
{
    if (!r->status || strcmp(r->status, "running") != 0)
        return 0;
    store_liveness state;
    char detail[512];
    if (store_run_liveness(st, r->id, &state, detail, sizeof detail, err, errlen) < 0)
        return -1;
    if (state == STORE_WRITER_GONE) {
        char *abandoned = strdup("abandoned");
        if (!abandoned) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        free(r->status);
        r->status = abandoned;
    }
    r->status_detail = strdup(detail);
    if (!r->status_detail) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Moves a text the row owns into the run. */
static char *take(char **text)
{
    char *t = *text;
    *text = NULL;
    return t;
}

/* The run's row: what was run, how it ended, where it came from (an import's clock
 * alignment and notes) and its provenance (overrides, --verify, sweep). */
static int load_header(store *st, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    store_run_row row;
    bool found;
    if (store_read_run_row(st, id, &row, &found, err, errlen) < 0)
        return -1;
    if (!found) {
        store_run_row_free(&row);
        set_err(err, errlen, "no run with id %" PRId64, id);
        return -1;
    }
    r->id = id;
    r->name = take(&row.name);
    r->status = take(&row.status);
    r->error = take(&row.error);
    r->backend = take(&row.backend);
    r->model = take(&row.model);
    r->source = take(&row.source);
    r->started_at = take(&row.started_at);
    r->finished_at = take(&row.finished_at);
    r->placement = take(&row.placement);
    r->clock_sync = take(&row.clock_sync);
    r->notes = take(&row.notes);
    r->overrides = take(&row.overrides);
    r->scenario = take(&row.scenario);
    r->world_size = row.world_size;
    r->total_params = row.total_params;
    r->iterations_planned = row.iterations;
    r->warmup_planned = row.warmup;
    r->bucket_cap_mb = isnan(row.bucket_cap_mb) ? 0 : row.bucket_cap_mb; /* an import's NULL reads as 0 */
    r->verified = row.verified;
    r->sweep = row.sweep;
    /* [record] detail as the stored scenario (scenario_to_ini) says it */
    r->phase_spans = r->scenario && strstr(r->scenario, "\ndetail = phase");
    store_run_row_free(&row);
    return judge_running(st, r, err, errlen);
}

static int count_version(int version, int nbuckets, void *ctx)
{
    analysis_run *r = ctx;
    if (version == 0)
        r->buckets_initial = nbuckets;
    else if (version == 1)
        r->buckets_rebuilt = nbuckets;
    if (version > r->bucket_version)
        r->bucket_version = version;
    return 0;
}

static int load_bucket_counts(store *st, analysis_run *r, char *err, size_t errlen)
{
    r->bucket_version = -1;
    return store_each_bucket_version(st, r->id, count_version, r, err, errlen);
}

/* Whether the run's statistics were stored when it ended (schema 4, store_stats.c):
 * then they are read instead of aggregating the spans through the views.  A run
 * still recording, or whose writer is gone, is always read from its spans. */
static int stats_stored(store *st, analysis_run *r, char *err, size_t errlen)
{
    r->stored_stats = false;
    if (!r->status || !strcmp(r->status, "running") || !strcmp(r->status, "abandoned"))
        return 0;
    return store_run_has_stored_stats(st, r->id, &r->stored_stats, err, errlen);
}

static store_stats_from stats_from(const analysis_run *r)
{
    return r->stored_stats ? STORE_STATS_STORED : STORE_STATS_VIEWS;
}

/* ---- iterations and ranks ----------------------------------------------------------- */

typedef struct {
    int rank, iter;
    bool warmup;
    int64_t step, compute, comm, overlap, exposed, wait, step_start;
} its_row;

typedef struct {
    its_row *rows;
    size_t n, cap;
    char *err;
    size_t errlen;
} its_rows;

static int add_its(const store_iteration_stat *w, void *ctx)
{
    its_rows *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        its_row *grown = realloc(l->rows, cap * sizeof *grown);
        if (!grown) {
            set_err(l->err, l->errlen, "out of memory");
            return -1;
        }
        l->rows = grown;
        l->cap = cap;
    }
    l->rows[l->n++] = (its_row){w->rank,          w->iter,           w->warmup,          w->step_ns,
                                w->compute_ns,    w->comm_ns,        w->overlap_ns,      w->exposed_comm_ns,
                                w->wait_ns,       w->step_start_ns};
    return 0;
}

static int load_its(store *st, const analysis_run *r, its_row **rows, size_t *nrows, char *err, size_t errlen)
{
    its_rows l = {.err = err, .errlen = errlen};
    *rows = NULL;
    *nrows = 0;
    if (store_each_iteration_stat(st, r->id, stats_from(r), add_its, &l, err, errlen) != 0) {
        free(l.rows);
        return -1;
    }
    *rows = l.rows;
    *nrows = l.n;
    return 0;
}

static bool counted(const analysis_run *r, const its_row *w)
{
    return r->all_iterations || !w->warmup;
}

typedef struct {
    int iter;
    bool warmup;
    int64_t step;
} iter_step;

static int cmp_iter_step(const void *a, const void *b)
{
    const iter_step *x = a, *y = b;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* v: one entry per iteration (ascending), the job's step in each. */
static void pick_representative(analysis_run *r, const iter_step *v, size_t m)
{
    r->representative_iter = -1;
    int64_t *steps = malloc((m ? m : 1) * sizeof *steps);
    size_t k = 0;
    if (!steps)
        return; /* only the timeline's choice is lost; it then shows none */
    for (size_t i = 0; i < m; i++)
        if (r->all_iterations || !v[i].warmup)
            steps[k++] = v[i].step;
    if (k > 0) {
        qsort(steps, k, sizeof *steps, cmp_int64);
        int64_t median = steps[(k - 1) / 2], best = -1;
        for (size_t i = 0; i < m; i++) {
            if (!r->all_iterations && v[i].warmup)
                continue;
            int64_t d = v[i].step > median ? v[i].step - median : median - v[i].step;
            if (best < 0 || d < best) {
                best = d;
                r->representative_iter = v[i].iter;
            }
        }
    }
    free(steps);
}

/* Iteration counts and the job's step time (the slowest rank's, per iteration). */
static int step_stats(analysis_run *r, const its_row *rows, size_t n, char *err, size_t errlen)
{
    r->step_ms_mean = r->step_ms_min = r->step_ms_max = NAN;
    if (n == 0)
        return 0;
    iter_step *v = malloc(n * sizeof *v);
    if (!v) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (iter_step){rows[i].iter, rows[i].warmup, rows[i].step};
    qsort(v, n, sizeof *v, cmp_iter_step);

    /* Collapse to one entry per iteration holding the slowest rank's step. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[m - 1].iter == v[i].iter) {
            if (v[i].step > v[m - 1].step)
                v[m - 1].step = v[i].step;
        } else {
            v[m++] = v[i];
        }
    }
    for (size_t i = 0; i < m; i++) {
        if (v[i].warmup)
            r->iterations_warmup++;
        else
            r->iterations_measured++;
    }
    r->all_iterations = r->iterations_measured == 0 && r->iterations_warmup > 0;

    double sum = 0;
    for (size_t i = 0; i < m; i++) {
        if (!r->all_iterations && v[i].warmup)
            continue;
        double step = ms((double)v[i].step);
        sum += step;
        if (r->steps == 0 || step < r->step_ms_min)
            r->step_ms_min = step;
        if (r->steps == 0 || step > r->step_ms_max)
            r->step_ms_max = step;
        r->steps++;
    }
    if (r->steps > 0)
        r->step_ms_mean = sum / r->steps;
    pick_representative(r, v, m);
    free(v);
    return 0;
}

typedef struct {
    int rank;
    double speed;
    bool spans;
} rank_speed;

typedef struct {
    rank_speed *v;
    size_t n, cap;
    char *err;
    size_t errlen;
} rank_speeds;

static int add_speed(const store_rank_row *row, void *ctx)
{
    rank_speeds *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        rank_speed *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            set_err(l->err, l->errlen, "out of memory");
            return -1;
        }
        l->v = grown;
        l->cap = cap;
    }
    /* rank.spans not recorded (-1, a file before schema 8): every rank's spans are stored */
    l->v[l->n++] = (rank_speed){row->rank, row->speed, row->spans != 0};
    return 0;
}

static int load_speeds(store *st, int64_t id, rank_speed **out, size_t *n, char *err, size_t errlen)
{
    rank_speeds l = {.err = err, .errlen = errlen};
    *out = NULL;
    *n = 0;
    if (store_each_rank(st, id, add_speed, &l, err, errlen) != 0) {
        free(l.v);
        return -1;
    }
    *out = l.v;
    *n = l.n;
    return 0;
}

static void finish_rank(analysis_rank *k, const int64_t sums[7])
{
    /* sums: step, compute, comm, overlap, exposed, wait, exposed wait */
    double n = k->iterations;
    if (k->iterations == 0) {
        k->step_ms = k->compute_ms = k->comm_ms = k->exposed_comm_ms = k->wait_ms = NAN;
        k->overlap_pct = NAN;
        k->attr_compute_ms = k->attr_exposed_transfer_ms = k->attr_exposed_wait_ms =
            k->attr_other_ms = NAN;
        return;
    }
    k->step_ms = ms((double)sums[0]) / n;
    k->compute_ms = ms((double)sums[1]) / n;
    k->comm_ms = ms((double)sums[2]) / n;
    k->overlap_pct = sums[2] > 0 ? 100.0 * (double)sums[3] / (double)sums[2] : NAN;
    k->exposed_comm_ms = ms((double)sums[4]) / n;
    k->wait_ms = ms((double)sums[5]) / n;
    /* Differences in integer ns, so that a zero part prints as 0 and not as rounding
     * noise of the means. */
    k->attr_compute_ms = k->compute_ms;
    k->attr_exposed_wait_ms = ms((double)sums[6]) / n;
    k->attr_exposed_transfer_ms = ms((double)(sums[4] - sums[6])) / n;
    k->attr_other_ms = ms((double)(sums[0] - sums[1] - sums[4])) / n;
}

/* Ranks are those of the rank table plus any that recorded spans without a row
 * there, so a malformed run still shows every rank it has data for. */
static int rank_stats(store *st, analysis_run *r, const its_row *rows, size_t n, char *err,
                      size_t errlen)
{
    rank_speed *sp;
    size_t nsp;
    if (load_speeds(st, r->id, &sp, &nsp, err, errlen) < 0)
        return -1;
    size_t cap = nsp + n;
    r->ranks = calloc(cap ? cap : 1, sizeof *r->ranks);
    if (!r->ranks) {
        free(sp);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t i = 0, j = 0; /* sp and rows are both ordered by rank */
    while (i < nsp || j < n) {
        int rank = i < nsp && (j >= n || sp[i].rank <= rows[j].rank) ? sp[i].rank : rows[j].rank;
        analysis_rank *k = &r->ranks[r->nranks++];
        k->rank = rank;
        k->speed = NAN;
        k->spans = true; /* a rank outside the rank table has spans: it is there by them */
        if (i < nsp && sp[i].rank == rank) {
            k->spans = sp[i].spans;
            k->speed = sp[i++].speed;
        }
        r->ranks_with_spans += k->spans;
        int64_t sums[7] = {0};
        for (; j < n && rows[j].rank == rank; j++) {
            const its_row *w = &rows[j];
            if (!counted(r, w))
                continue;
            int64_t strag = w->exposed < w->wait ? w->exposed : w->wait;
            int64_t add[7] = {w->step, w->compute, w->comm, w->overlap, w->exposed, w->wait, strag};
            for (int c = 0; c < 7; c++)
                sums[c] += add[c];
            k->iterations++;
        }
        finish_rank(k, sums);
    }
    free(sp);
    return 0;
}

/* ---- imported runs, HTA's figures, the straggler ---------------------------------------- */

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? round(10000.0 * (double)part / (double)whole) / 100.0 : NAN;
}

typedef struct {
    analysis_run *r;
    char *err;
    size_t errlen;
} load_ctx;

/* hta_stat (schema 5): HTA rounds its percentages to 2 decimals; so do we. */
static int add_hta(const store_hta_stat *h, void *ctx)
{
    load_ctx *c = ctx;
    analysis_run *r = c->r;
    if (!r->hta_steps && dup_text(h->steps, &r->hta_steps, c->err, c->errlen) < 0)
        return -1;
    for (size_t i = 0; i < r->nranks; i++) {
        analysis_rank *k = &r->ranks[i];
        if (k->rank != h->rank)
            continue;
        k->idle_pct = pct(h->idle_us, h->kernel_us);
        k->compute_pct = pct(h->compute_us, h->kernel_us);
        k->non_compute_pct = pct(h->non_compute_us, h->kernel_us);
        k->comm_overlap_pct = pct(h->comm_overlap_us, h->comm_us);
    }
    return 0;
}

static int load_hta(store *st, analysis_run *r, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->nranks; i++)
        r->ranks[i].comm_overlap_pct = r->ranks[i].idle_pct = r->ranks[i].compute_pct =
            r->ranks[i].non_compute_pct = NAN;
    load_ctx c = {r, err, errlen};
    return store_each_hta_stat(st, r->id, add_hta, &c, err, errlen);
}

static int add_source(const store_source_file *f, void *ctx)
{
    load_ctx *c = ctx;
    analysis_run *r = c->r;
    if (r->nsources % 8 == 0) {
        analysis_source *g = realloc(r->sources, (r->nsources + 8) * sizeof *g);
        if (!g) {
            set_err(c->err, c->errlen, "out of memory");
            return -1;
        }
        r->sources = g;
    }
    analysis_source *s = &r->sources[r->nsources++];
    memset(s, 0, sizeof *s);
    s->bytes = f->bytes;
    s->rank = f->rank;
    return dup_text(f->path, &s->path, c->err, c->errlen) < 0 ||
                   dup_text(f->sha256, &s->sha256, c->err, c->errlen) < 0 ||
                   dup_text(f->format, &s->format, c->err, c->errlen) < 0 ||
                   dup_text(f->rank_from, &s->rank_from, c->err, c->errlen) < 0
               ? -1
               : 0;
}

/* The files an imported run was read from, and the host's ProfilerStep#N ranges. */
static int load_sources(store *st, analysis_run *r, char *err, size_t errlen)
{
    load_ctx c = {r, err, errlen};
    if (store_each_source_file(st, r->id, add_source, &c, err, errlen) != 0)
        return -1;
    if (r->nsources == 0)
        return 0;
    double mean_ns;
    if (store_read_span_kind_mean(st, r->id, "profiler_step", &r->host_steps, &mean_ns, err, errlen) != 0)
        return -1;
    r->host_step_ms_mean = r->host_steps > 0 ? ms(mean_ns) : NAN;
    return 0;
}

/* Every rank the others wait for (analysis.h): a rank whose wait is near the least is
 * one the others wait for, so two equally slow ranks are both named. */
/* The others' wait that names a straggler: a share of the step (a real job's stragglers
 * cost a few percent of it: ranks of an 8-GPU V100 job waiting 1.5 ms for two late ones)
 * and a multiple of the stragglers' own wait (what sets them apart from noise). */
#define STRAGGLER_MIN_STEP_SHARE 0.01
#define STRAGGLER_MIN_RATIO 4.0

static int find_stragglers(analysis_run *r, char *err, size_t errlen)
{
    r->straggler_rank = -1;
    r->straggler_others_wait_ms = NAN;
    double least = NAN, most = NAN, least_step = NAN;
    size_t n = 0;
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        n++;
        if (isnan(least) || k->wait_ms < least) {
            least = k->wait_ms;
            least_step = k->step_ms;
        }
        if (isnan(most) || k->wait_ms > most)
            most = k->wait_ms;
    }
    if (n < 2 || !(most > least))
        return 0;
    double near_least = least + 0.25 * (most - least), others = 0, slow_most = 0;
    size_t nothers = 0;
    r->stragglers = malloc(n * sizeof *r->stragglers);
    if (!r->stragglers) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        if (k->wait_ms <= near_least) {
            r->stragglers[r->nstragglers++] = k->rank;
            slow_most = k->wait_ms > slow_most ? k->wait_ms : slow_most;
        } else {
            others += k->wait_ms;
            nothers++;
        }
    }
    others /= (double)nothers; /* most > near_least: at least one rank is not a straggler */
    if (!(others >= STRAGGLER_MIN_STEP_SHARE * least_step && others >= STRAGGLER_MIN_RATIO * slow_most)) {
        free(r->stragglers);
        r->stragglers = NULL;
        r->nstragglers = 0;
        return 0;
    }
    r->straggler_rank = r->stragglers[0];
    r->straggler_others_wait_ms = others;
    return 0;
}

/* ---- buckets ------------------------------------------------------------------------ */

static analysis_bucket *bucket_slot(analysis_run *r, size_t *cap, int idx, char *err,
                                    size_t errlen)
{
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].idx == idx)
            return &r->buckets[i];
    if (r->nbuckets == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        analysis_bucket *grown = realloc(r->buckets, *cap * sizeof *grown);
        if (!grown) {
            set_err(err, errlen, "out of memory");
            return NULL;
        }
        r->buckets = grown;
    }
    analysis_bucket *b = &r->buckets[r->nbuckets++];
    *b = (analysis_bucket){.idx = idx,
                           .ready_ms = NAN,
                           .launch_delay_ms = NAN,
                           .arrival_skew_ms = NAN,
                           .transfer_ms = NAN,
                           .busbw_gbps = NAN};
    return b;
}

static int cmp_bucket(const void *a, const void *b)
{
    const analysis_bucket *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* rows are ordered by (rank, iter). */
static const its_row *find_its(const its_row *rows, size_t n, int rank, int iter)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const its_row *w = &rows[mid];
        if (w->rank == rank && w->iter == iter)
            return w;
        if (w->rank < rank || (w->rank == rank && w->iter < iter))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}


typedef struct {
    analysis_run *r;
    size_t cap;
    char *err;
    size_t errlen;
    /* store_each_bucket_ready's rows: the iteration rows, and the bucket being summed */
    const its_row *rows;
    size_t nrows;
    analysis_bucket *b;
    double ready_sum, delay_sum;
    int delay_n;
} bucket_ctx;

static int add_bucket(const store_bucket_row *row, void *ctx)
{
    bucket_ctx *c = ctx;
    analysis_bucket *b = bucket_slot(c->r, &c->cap, row->idx, c->err, c->errlen);
    if (!b)
        return -1;
    b->bytes = row->nbytes;
    b->nparams = row->nparams;
    return 0;
}

static int add_collectives(const store_bucket_collectives *m, void *ctx)
{
    bucket_ctx *c = ctx;
    analysis_run *r = c->r;
    analysis_bucket *b = bucket_slot(r, &c->cap, m->bucket, c->err, c->errlen);
    if (!b)
        return -1;
    b->collectives = m->collectives;
    b->arrival_skew_ms = ms(m->arrival_skew_ns);
    /* A few ranks of a job: the last arrival is not known. */
    b->transfer_ms = analysis_is_subset(r) ? NAN : ms(m->transfer_ns);
    if (b->nparams == 0 && b->bytes == 0 && !isnan(m->bytes))
        b->bytes = (int64_t)llround(m->bytes);
    /* Each collective's bus bandwidth as the store computes it, averaged: the figure
     * `select avg(busbw_gbps) from collective` gives, defined once. */
    b->busbw_gbps = analysis_is_subset(r) ? NAN : m->busbw_gbps; /* a few ranks: no transfer known */
    return 0;
}

/* The bucket summed so far gets its means. */
static void finish_ready(bucket_ctx *c)
{
    analysis_bucket *b = c->b;
    if (!b)
        return;
    b->ready_ms = b->ready_samples ? ms(c->ready_sum / b->ready_samples) : NAN;
    b->launch_delay_ms = c->delay_n ? ms(c->delay_sum / c->delay_n) : NAN;
    c->b = NULL;
}

/* Rows come grouped by bucket: a bucket's means are taken when the next one starts. */
static int add_ready(const store_bucket_ready *row, void *ctx)
{
    bucket_ctx *c = ctx;
    if (c->b && row->bucket != c->b->idx)
        finish_ready(c);
    const its_row *w = find_its(c->rows, c->nrows, row->rank, row->iter);
    if (!w || !counted(c->r, w))
        return 0;
    if (!c->b) {
        if (!(c->b = bucket_slot(c->r, &c->cap, row->bucket, c->err, c->errlen)))
            return -1;
        c->ready_sum = c->delay_sum = 0;
        c->delay_n = 0;
        c->b->ready_samples = 0;
    }
    c->ready_sum += (double)(row->ready_ns - w->step_start);
    c->b->ready_samples++;
    if (row->arrived) {
        c->delay_sum += (double)(row->arrival_ns - row->ready_ns);
        c->delay_n++;
    }
    return 0;
}

static int bucket_stats(store *st, analysis_run *r, const its_row *rows, size_t nrows, char *err, size_t errlen)
{
    bucket_ctx c = {.r = r, .err = err, .errlen = errlen, .rows = rows, .nrows = nrows};
    /* The latest assignment, as the bucket table holds it; then the collective timings
     * of the counted iterations. */
    if (store_each_bucket(st, r->id, r->bucket_version, add_bucket, &c, err, errlen) != 0 ||
        store_each_bucket_collectives(st, r->id, stats_from(r), r->all_iterations ? -1 : r->warmup_planned,
                                      add_collectives, &c, err, errlen) != 0)
        return -1;
    /* Ready and launch delay, per rank-iteration.  The step start comes from the
     * iteration rows already read, rather than from a second evaluation of the view. */
    if (store_each_bucket_ready(st, r->id, stats_from(r), add_ready, &c, err, errlen) != 0)
        return -1;
    finish_ready(&c);
    if (r->nbuckets > 1)
        qsort(r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket);
    return 0;
}

/* ---- entry points --------------------------------------------------------------------- */

static void free_run(analysis_run *r)
{
    free(r->name);
    free(r->status);
    free(r->status_detail);
    free(r->error);
    free(r->backend);
    free(r->placement);
    free(r->model);
    free(r->source);
    free(r->started_at);
    free(r->finished_at);
    free(r->ranks);
    free(r->stragglers);
    free(r->buckets);
    free(r->hta_steps);
    free(r->clock_sync);
    free(r->notes);
    free(r->overrides);
    free(r->scenario);
    for (size_t i = 0; i < r->nsources; i++) {
        free(r->sources[i].path);
        free(r->sources[i].sha256);
        free(r->sources[i].format);
        free(r->sources[i].rank_from);
    }
    free(r->sources);
}


static int load_run(store *st, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->step_ms_mean = r->step_ms_min = r->step_ms_max = r->host_step_ms_mean = NAN;
    r->representative_iter = -1;
    its_row *rows = NULL;
    size_t n = 0;
    if (load_header(st, id, r, err, errlen) < 0 || load_bucket_counts(st, r, err, errlen) < 0 ||
        stats_stored(st, r, err, errlen) < 0 || load_its(st, r, &rows, &n, err, errlen) < 0 ||
        step_stats(r, rows, n, err, errlen) < 0 || rank_stats(st, r, rows, n, err, errlen) < 0 ||
        load_hta(st, r, err, errlen) < 0 || load_sources(st, r, err, errlen) < 0 ||
        bucket_stats(st, r, rows, n, err, errlen) < 0) {
        free(rows);
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    free(rows);
    if (find_stragglers(r, err, errlen) < 0) {
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    return 0;
}

/* The ids asked for: run_id, or every run's (-1). */
static int run_ids(store *st, int64_t run_id, int64_t **ids, size_t *n, char *err, size_t errlen)
{
    if (run_id == -1) {
        if (store_read_run_id_list(st, ids, n, err, errlen) != 0)
            return -1;
        if (*n == 0) {
            set_err(err, errlen, "no runs in DB");
            return -1;
        }
        return 0;
    }
    *n = 0;
    if (!(*ids = malloc(sizeof **ids))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    **ids = run_id;
    *n = 1;
    return 0;
}

int analysis_load(store *st, int64_t run_id, analysis_run **runs, size_t *nruns, char *err, size_t errlen)
{
    *runs = NULL;
    *nruns = 0;
    int64_t *ids = NULL;
    size_t n = 0, loaded = 0;
    analysis_run *out = NULL;
    /* One read transaction, so that a writer committing meanwhile cannot make the
     * figures come from two states of the file; a caller already inside a
     * transaction has that guarantee from its own. */
    bool own_tx;
    if (store_begin_read_unless_open(st, &own_tx, err, errlen) != 0)
        return -1;
    if (run_ids(st, run_id, &ids, &n, err, errlen) < 0)
        goto fail;
    out = calloc(n, sizeof *out);
    if (!out) {
        set_err(err, errlen, "out of memory");
        goto fail;
    }
    for (; loaded < n; loaded++)
        if (load_run(st, ids[loaded], &out[loaded], err, errlen) < 0)
            goto fail;
    if (own_tx && store_end_read(st, err, errlen) != 0)
        goto fail;
    free(ids);
    *runs = out;
    *nruns = n;
    return 0;
fail:
    free(ids);
    analysis_free(out, loaded);
    if (own_tx) {
        char ignored[64]; /* the first error is the one reported */
        store_end_read(st, ignored, sizeof ignored);
    }
    return -1;
}

void analysis_free(analysis_run *runs, size_t nruns)
{
    if (!runs)
        return;
    for (size_t i = 0; i < nruns; i++)
        free_run(&runs[i]);
    free(runs);
}

/* The mean over ranks of each rank's overlap; NAN when no rank communicated. */
double analysis_mean_overlap_pct(const analysis_run *r)
{
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        if (!isnan(r->ranks[k].overlap_pct)) {
            sum += r->ranks[k].overlap_pct;
            n++;
        }
    }
    return n ? sum / n : NAN;
}

bool analysis_is_subset(const analysis_run *r)
{
    return r->nranks > 0 && (int)r->nranks < r->world_size;
}

char *analysis_ranks_held(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    if (!analysis_is_subset(r))
        return buf;
    /* Room for the tail ", ... N ranks of W" whatever the list's length. */
    size_t at = 0, room = n > 40 ? n - 40 : 0;
    int w = snprintf(buf, n, "rank%s ", r->nranks == 1 ? "" : "s");
    at = w > 0 ? (size_t)w : 0;
    size_t i = 0;
    for (; i < r->nranks && at < room; i++) {
        w = snprintf(buf + at, n - at, "%s%d", i ? ", " : "", r->ranks[i].rank);
        if (w < 0 || (size_t)w >= n - at)
            break;
        at += (size_t)w;
    }
    if (i < r->nranks)
        snprintf(buf + at, n - at, ", ... (%zu ranks) of %d", r->nranks, r->world_size);
    else
        snprintf(buf + at, n - at, " of %d", r->world_size);
    return buf;
}

void analysis_stragglers_text(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    size_t len = 0, shown = r->nstragglers > 8 ? 8 : r->nstragglers;
    for (size_t i = 0; i < shown && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%d", i == 0 ? (r->nstragglers > 1 ? "ranks " : "rank ") : ", ",
                         r->stragglers[i]);
        /* Cut (the callers' 160 bytes hold the at most 142 written): len passes n, what
         * fitted stays and nothing more is written. */
        len += w > 0 ? (size_t)w : 0;
    }
    if (r->nstragglers > shown && len < n)
        snprintf(buf + len, n - len, ", ... (%zu ranks)", r->nstragglers);
}
