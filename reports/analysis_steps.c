/* analysis_steps.c — the iteration and rank figures of analysis.h: the run's
 * rank-iteration rows (read once, since the step statistics, the per-rank means and
 * the bucket figures all need them), the job's step per iteration and the
 * representative iteration, and each rank's means, attribution and speed.
 *
 * Contract: see analysis_internal.h.  Needs the store's read API
 * (profiler/store_read_stats.h, store_read_layout.h).  Ownership: analysis_load_its's
 * rows are the caller's; ranks[] is the run's (freed by analysis_free); the speeds read
 * here are freed before returning. */
#include "common/errmsg.h"
#include "reports/analysis_internal.h"

#include <math.h>
#include <stdlib.h>

#include "profiler/store_read_layout.h"
#include "profiler/store_read_stats.h"

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

int analysis_load_its(store *st, const analysis_run *r, its_row **rows, size_t *nrows, char *err, size_t errlen)
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
int analysis_step_stats(analysis_run *r, const its_row *rows, size_t n, char *err, size_t errlen)
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
int analysis_rank_stats(store *st, analysis_run *r, const its_row *rows, size_t n, char *err,
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
