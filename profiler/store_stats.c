/* store_stats.c — a run's statistics computed once, when it ends, and stored in
 * tables (schema 4), so that reports of a long run read thousands of rows instead
 * of aggregating millions of spans.
 *
 * Contract (store.h): store_compute_stats() reads run `run_id`'s spans in one pass
 * (through the (run_id, rank, iter) index) and replaces its rows in
 * iteration_stat, collective_stat and bucket_ready_stat, then marks it in run_stats,
 * all inside the caller's transaction.  The figures are exactly those of the views
 * (store_schema.c gives the definitions): iteration_stat has the columns of
 * iteration_stats, collective_stat those of collective (every collective, each with
 * its kind; the waits are those of the allreduces only, as collective_arrival's; the
 * bandwidths computed by the view's own SQL expressions from the same operands, so
 * that the floating-point figures are the same bits); bucket_ready_stat holds per
 * (rank, iter, bucket) the end of the bucket's last copy_in and the rank's first
 * arrival at the bucket's allreduce among the collectives counted in that iteration
 * (NULL when none), the pair report bucket figures need.  Unions are computed by
 * sorting each rank-iteration's spans by (start, end) and sweeping (stats_unions),
 * which is what the view's windowed sum does.  Given the statistics computed as the spans were
 * recorded (stats_live.h: the same definitions, every rank's, where only chosen ranks'
 * spans were stored), iteration_stat and collective_stat are theirs, and the stored
 * spans give bucket_ready_stat and hta_stat for the ranks that have them.
 */
#include "common/errmsg.h"
#include "profiler/hta_figures.h"
#include "profiler/span.h"
#include "profiler/store_sqlite.h"
#include "profiler/stats_live.h"
#include "profiler/store_stats.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A rank-iteration's figures: the live statistics' row type, so both write alike. */
typedef stats_live_iteration its_acc;

typedef struct {
    int64_t seq;
    int rank, iter, bucket; /* bucket -1: NULL */
    int kind;               /* span_kind */
    int64_t arrival, end, bytes; /* bytes -1: NULL */
} coll_rec;

typedef struct {
    int rank, iter, bucket;
    int64_t ready;
} ready_rec;

/* A growable array of `size`-byte elements. */
typedef struct {
    void *v;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *a)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 1024;
        void *grown = realloc(a->v, cap * a->size);
        if (!grown)
            return NULL;
        a->v = grown;
        a->cap = cap;
    }
    return (char *)a->v + a->size * a->n++;
}

/* qsort, which must not be given NULL even for nothing to sort. */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

static int cmp_coll(const void *a, const void *b)
{
    const coll_rec *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_rib(int r1, int i1, int b1, int r2, int i2, int b2)
{
    if (r1 != r2)
        return r1 < r2 ? -1 : 1;
    if (i1 != i2)
        return i1 < i2 ? -1 : 1;
    return (b1 > b2) - (b1 < b2);
}

static int cmp_ready(const void *a, const void *b)
{
    const ready_rec *x = a, *y = b;
    return cmp_rib(x->rank, x->iter, x->bucket, y->rank, y->iter, y->bucket);
}

static int cmp_coll_rib(const void *a, const void *b)
{
    const coll_rec *x = a, *y = b;
    return cmp_rib(x->rank, x->iter, x->bucket, y->rank, y->iter, y->bucket);
}

typedef struct {
    vec its, colls, readies, group, group_ready;
    /* the open rank-iteration */
    int rank, iter;
    bool open, has_fwd, has_opt, has_step, has_work;
    int64_t min_start, max_end, fwd_start, opt_end;
    int64_t step_start, step_end; /* an imported iteration's 'step' span (the job's period) */
    int64_t work_start, work_end; /* over the spans but the host's profiler_step ranges */
    /* HTA's figures of a recorded run: the open rank's device spans (hta_ops: start, end,
     * communication or computation; hta_launch: each one's launch) and the start of its
     * latest iteration, the last ProfilerStep of its Kineto export. */
    bool hta;
    vec hta_ops, hta_launch;
    int64_t last_iter_start;
    int hta_rank;
    sqlite3 *db;
    int64_t run_id;
    /* DDP's rebuild: the span name's id (-1: not in the file) and the lowest seq of a
     * collective so named (-1: none), from which on buckets are the rebuilt ones. */
    int64_t rebuild_name_id, rebuild_seq;
} scan_state;

/* A recorded rank's figures as HTA computes them on the rank's Kineto export
 * (reports/trace_kineto.c): every compute and comm stream span is a kernel launched
 * 1 µs before it starts (at 0 at the earliest), ProfilerStep#N spans iteration N's
 * spans; HTA keeps the kernels launched before the last step starts; the comm stream's
 * allreduces and broadcasts are named as NCCL's kernels (communication), every other
 * span as computation. */
static int close_hta_rank(scan_state *s)
{
    if (!s->hta || s->hta_ops.n == 0)
        return 0;
    hta_op *ops = s->hta_ops.v;
    const int64_t *launch = s->hta_launch.v;
    int64_t last = hta_us_up(s->last_iter_start);
    size_t k = 0;
    for (size_t i = 0; i < s->hta_ops.n; i++)
        if (hta_us_up(launch[i]) < last)
            ops[k++] = ops[i];
    s->hta_ops.n = s->hta_launch.n = 0;
    store_hta_stat h = {.rank = s->hta_rank,
                        .steps = "every iteration but the last (HTA leaves out the last ProfilerStep of"
                                 " the rank's Kineto export)"};
    int rc = hta_figures_compute(ops, k, &h);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO hta_stat(run_id, rank, steps, kernel_us, idle_us, compute_us,"
                           " non_compute_us, comm_us, comm_overlap_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                           -1, &ins, NULL) != SQLITE_OK)
        return -1;
    rc = sqlite3_bind_int64(ins, 1, s->run_id) || sqlite3_bind_int(ins, 2, h.rank) ||
         sqlite3_bind_text(ins, 3, h.steps, -1, SQLITE_STATIC) || sqlite3_bind_int64(ins, 4, h.kernel_us) ||
         sqlite3_bind_int64(ins, 5, h.idle_us) || sqlite3_bind_int64(ins, 6, h.compute_us) ||
         sqlite3_bind_int64(ins, 7, h.non_compute_us) || sqlite3_bind_int64(ins, 8, h.comm_us) ||
         sqlite3_bind_int64(ins, 9, h.comm_overlap_us) || sqlite3_step(ins) != SQLITE_DONE;
    sqlite3_finalize(ins);
    return rc ? -1 : 0;
}

static int close_group(scan_state *s)
{
    if (!s->open)
        return 0;
    s->last_iter_start = s->min_start;
    its_acc *a = vec_push(&s->its);
    if (!a)
        return -1;
    memset(a, 0, sizeof *a);
    a->rank = s->rank;
    a->iter = s->iter;
    a->step_start = s->has_step ? s->step_start : s->has_fwd ? s->fwd_start : s->has_work ? s->work_start : s->min_start;
    a->step_end = s->has_step ? s->step_end : s->has_opt ? s->opt_end : s->has_work ? s->work_end : s->max_end;
    if (s->has_step) {
        /* The view's clipping: intervals within the imported iteration's period. */
        stats_interval *v = s->group.v;
        for (size_t i = 0; i < s->group.n; i++) {
            int64_t lo = v[i].start > s->step_start ? v[i].start : s->step_start;
            int64_t hi = v[i].end < s->step_end ? v[i].end : s->step_end;
            v[i].start = lo < s->step_end ? lo : s->step_end;
            v[i].end = hi > s->step_start ? hi : s->step_start;
        }
    }
    stats_unions(s->group.v, s->group.n, &a->c, &a->m, &a->u);
    s->group.n = 0;
    /* the bucket's ready time: the end of its last copy_in in this rank-iteration */
    ready_rec *g = s->group_ready.v;
    sort(g, s->group_ready.n, sizeof *g, cmp_ready);
    for (size_t i = 0; i < s->group_ready.n;) {
        ready_rec best = g[i];
        size_t j = i;
        for (; j < s->group_ready.n && g[j].bucket == g[i].bucket; j++)
            if (g[j].ready > best.ready)
                best.ready = g[j].ready;
        ready_rec *r = vec_push(&s->readies);
        if (!r)
            return -1;
        *r = best;
        i = j;
    }
    s->group_ready.n = 0;
    s->open = false;
    return 0;
}

static int add_span(scan_state *s, sqlite3_stmt *q)
{
    int rank = sqlite3_column_int(q, 0), iter = sqlite3_column_int(q, 1);
    if (s->open && (rank != s->rank || iter != s->iter) && close_group(s) < 0)
        return -1;
    if (s->hta_ops.n > 0 && rank != s->hta_rank && close_hta_rank(s) < 0)
        return -1;
    int stream = sqlite3_column_int(q, 2), kind = sqlite3_column_int(q, 3);
    int64_t start = sqlite3_column_int64(q, 6), end = sqlite3_column_int64(q, 7);
    bool bucket_null = sqlite3_column_type(q, 4) == SQLITE_NULL;
    int bucket = sqlite3_column_int(q, 4);
    if (!s->open) {
        s->open = true;
        s->rank = rank;
        s->iter = iter;
        s->has_fwd = s->has_opt = s->has_step = s->has_work = false;
        s->min_start = start;
        s->max_end = end;
    }
    if (kind == SPAN_STEP && (!s->has_step || start < s->step_start))
        s->step_start = start;
    if (kind == SPAN_STEP && (!s->has_step || end > s->step_end))
        s->step_end = end;
    s->has_step |= kind == SPAN_STEP;
    if (kind != SPAN_PROFILER_STEP) {
        if (!s->has_work || start < s->work_start)
            s->work_start = start;
        if (!s->has_work || end > s->work_end)
            s->work_end = end;
        s->has_work = true;
    }
    if (start < s->min_start)
        s->min_start = start;
    if (end > s->max_end)
        s->max_end = end;
    if (kind == SPAN_FORWARD && (!s->has_fwd || start < s->fwd_start)) {
        s->fwd_start = start;
        s->has_fwd = true;
    }
    if (kind == SPAN_OPTIMIZER && (!s->has_opt || end > s->opt_end)) {
        s->opt_end = end;
        s->has_opt = true;
    }
    if (s->hta && (stream == STREAM_COMPUTE || stream == STREAM_COMM)) {
        hta_op *o = vec_push(&s->hta_ops);
        int64_t *l = vec_push(&s->hta_launch);
        if (!o || !l)
            return -1;
        bool comm = stream == STREAM_COMM && (kind == SPAN_ALLREDUCE || kind == SPAN_BROADCAST);
        *o = (hta_op){hta_us_up(start), hta_us_down(end), comm ? HTA_OP_COMMUNICATION : HTA_OP_COMPUTATION};
        *l = start >= 1000 ? start - 1000 : 0;
        s->hta_rank = rank;
    }
    int flags = (stream == STREAM_COMPUTE ? STATS_C : 0) | (kind == SPAN_ALLREDUCE ? STATS_M : 0);
    if (flags) {
        stats_interval *v = vec_push(&s->group);
        if (!v)
            return -1;
        *v = (stats_interval){start, end, flags};
    }
    if (span_kind_is_comm((span_kind)kind) && sqlite3_column_type(q, 5) != SQLITE_NULL) {
        coll_rec *c = vec_push(&s->colls);
        if (!c)
            return -1;
        *c = (coll_rec){.seq = sqlite3_column_int64(q, 5), .rank = rank, .iter = iter,
                        .bucket = bucket_null ? -1 : bucket, .kind = kind, .arrival = start, .end = end,
                        .bytes = sqlite3_column_type(q, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 8)};
        if (s->rebuild_name_id >= 0 && sqlite3_column_type(q, 9) != SQLITE_NULL &&
            sqlite3_column_int64(q, 9) == s->rebuild_name_id && (s->rebuild_seq < 0 || c->seq < s->rebuild_seq))
            s->rebuild_seq = c->seq;
    }
    if (kind == SPAN_COPY_IN && !bucket_null) {
        ready_rec *r = vec_push(&s->group_ready);
        if (!r)
            return -1;
        *r = (ready_rec){rank, iter, bucket, end};
    }
    return 0;
}

/* The view's MIN(kind): the least kind by its stored name. */
static int min_kind(int a, int b)
{
    return strcmp(span_kind_name((span_kind)a), span_kind_name((span_kind)b)) <= 0 ? a : b;
}

/* Folds the collective spans into one record per (seq, rank), as the views group. */
static void fold_rank_collectives(vec *colls)
{
    coll_rec *c = colls->v;
    sort(c, colls->n, sizeof *c, cmp_coll);
    size_t m = 0;
    for (size_t i = 0; i < colls->n; i++) {
        if (m > 0 && c[m - 1].seq == c[i].seq && c[m - 1].rank == c[i].rank) {
            coll_rec *d = &c[m - 1];
            d->iter = c[i].iter < d->iter ? c[i].iter : d->iter;
            d->kind = min_kind(d->kind, c[i].kind);
            if (c[i].bucket >= 0 && (d->bucket < 0 || c[i].bucket < d->bucket))
                d->bucket = c[i].bucket;
            d->arrival = c[i].arrival < d->arrival ? c[i].arrival : d->arrival;
            d->end = c[i].end > d->end ? c[i].end : d->end;
            d->bytes = c[i].bytes > d->bytes ? c[i].bytes : d->bytes;
        } else {
            c[m++] = c[i];
        }
    }
    colls->n = m;
}

static its_acc *find_its(vec *its, int rank, int iter)
{
    its_acc *a = its->v;
    size_t lo = 0, hi = its->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].rank == rank && a[mid].iter == iter)
            return &a[mid];
        if (a[mid].rank < rank || (a[mid].rank == rank && a[mid].iter < iter))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
    return v < 0 ? sqlite3_bind_null(s, i) : sqlite3_bind_int64(s, i, v);
}

static int step_reset(sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* The INSERT of collective_stat rows: the bandwidths are the view's expressions over
 * the bound operands. */
static int prepare_collective_insert(sqlite3 *db, sqlite3_stmt **ins)
{
    return sqlite3_prepare_v2(db,
                              "INSERT INTO collective_stat(run_id, seq, iter, bucket, bytes, first_arrival_ns,"
                              " last_arrival_ns, end_ns, nranks, arrival_skew_ns, transfer_ns, kind, warmup,"
                              " bucket_version, algbw_gbps, busbw_gbps)"
                              " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?7 - ?6, ?8 - ?7, ?10, ?11, ?12,"
                              " " SQL_ALGBW("?5", "(?8 - ?7)") ","
                              " " SQL_ALGBW("?5", "(?8 - ?7)") " * " SQL_BUSBW_FACTOR("?10", "?9") ")",
                              -1, ins, NULL) == SQLITE_OK
               ? 0
               : -1;
}

/* One collective's row; `last` its last arrival. */
static int insert_collective(sqlite3_stmt *ins, int64_t run_id, int warmup, int64_t rebuild_seq, int64_t seq,
                             int iter, int bucket, int kind, int64_t bytes, int64_t first, int64_t last,
                             int64_t end, int64_t nranks)
{
    /* The view's bucket_version: a bucket's allreduce after the rebuild is of the
     * rebuilt assignment. */
    int64_t version = bucket < 0 || kind != SPAN_ALLREDUCE ? -1 : rebuild_seq >= 0 && seq > rebuild_seq ? 1 : 0;
    if (sqlite3_bind_int64(ins, 1, run_id) || sqlite3_bind_int64(ins, 2, seq) || sqlite3_bind_int(ins, 3, iter) ||
        bind_opt(ins, 4, bucket) || bind_opt(ins, 5, bytes) || sqlite3_bind_int64(ins, 6, first) ||
        sqlite3_bind_int64(ins, 7, last) || sqlite3_bind_int64(ins, 8, end) || sqlite3_bind_int64(ins, 9, nranks) ||
        sqlite3_bind_text(ins, 10, span_kind_name((span_kind)kind), -1, SQLITE_STATIC) ||
        sqlite3_bind_int(ins, 11, iter < warmup) || bind_opt(ins, 12, version) || step_reset(ins) < 0)
        return -1;
    return 0;
}

/* collective_stat rows, and each rank's wait at an allreduce added to its iteration. */
static int write_collectives(sqlite3 *db, int64_t run_id, int warmup, int64_t rebuild_seq, vec *colls, vec *its)
{
    sqlite3_stmt *ins = NULL;
    if (prepare_collective_insert(db, &ins) != 0)
        return -1;
    coll_rec *c = colls->v;
    int ret = 0;
    for (size_t i = 0; i < colls->n && ret == 0;) {
        coll_rec agg = c[i];
        int64_t first = c[i].arrival;
        size_t j = i;
        int64_t last_allreduce = INT64_MIN;
        for (; j < colls->n && c[j].seq == c[i].seq; j++) {
            agg.iter = c[j].iter < agg.iter ? c[j].iter : agg.iter;
            agg.kind = min_kind(agg.kind, c[j].kind);
            if (c[j].kind == SPAN_ALLREDUCE && c[j].arrival > last_allreduce)
                last_allreduce = c[j].arrival;
            if (c[j].bucket >= 0 && (agg.bucket < 0 || c[j].bucket < agg.bucket))
                agg.bucket = c[j].bucket;
            agg.bytes = c[j].bytes > agg.bytes ? c[j].bytes : agg.bytes;
            first = c[j].arrival < first ? c[j].arrival : first;
            agg.arrival = c[j].arrival > agg.arrival ? c[j].arrival : agg.arrival; /* the last */
            agg.end = c[j].end > agg.end ? c[j].end : agg.end;
        }
        for (size_t k = i; k < j; k++) {
            its_acc *a = c[k].kind == SPAN_ALLREDUCE ? find_its(its, c[k].rank, c[k].iter) : NULL;
            if (a)
                a->wait += last_allreduce - c[k].arrival;
        }
        ret = insert_collective(ins, run_id, warmup, rebuild_seq, agg.seq, agg.iter, agg.bucket, agg.kind, agg.bytes,
                                first, agg.arrival, agg.end, (int64_t)(j - i));
        i = j;
    }
    sqlite3_finalize(ins);
    return ret;
}

/* collective_stat rows of the live statistics (their waits are in their iterations). */
static int write_live_collectives(sqlite3 *db, int64_t run_id, int warmup, const stats_live *live)
{
    sqlite3_stmt *ins = NULL;
    if (prepare_collective_insert(db, &ins) != 0)
        return -1;
    size_t n;
    const stats_live_collective *c = stats_live_collectives(live, &n);
    int64_t rebuild_seq = stats_live_rebuild_seq(live);
    int ret = 0;
    for (size_t i = 0; i < n && ret == 0; i++)
        ret = insert_collective(ins, run_id, warmup, rebuild_seq, c[i].seq, c[i].iter, c[i].bucket, c[i].kind,
                                c[i].bytes, c[i].first_arrival, c[i].last_arrival, c[i].end, c[i].nranks);
    sqlite3_finalize(ins);
    return ret;
}

static int write_iterations(sqlite3 *db, int64_t run_id, int warmup, const its_acc *a, size_t n)
{
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO iteration_stat(run_id, rank, iter, warmup, step_ns, compute_ns,"
                           " comm_ns, overlap_ns, exposed_comm_ns, wait_ns, step_start_ns, step_end_ns)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                           -1, &ins, NULL) != SQLITE_OK)
        return -1;
    int ret = 0;
    for (size_t i = 0; i < n && ret == 0; i++) {
        const its_acc *w = &a[i];
        if (sqlite3_bind_int64(ins, 1, run_id) || sqlite3_bind_int(ins, 2, w->rank) ||
            sqlite3_bind_int(ins, 3, w->iter) || sqlite3_bind_int(ins, 4, w->iter < warmup) ||
            sqlite3_bind_int64(ins, 5, w->step_end - w->step_start) || sqlite3_bind_int64(ins, 6, w->c) ||
            sqlite3_bind_int64(ins, 7, w->m) || sqlite3_bind_int64(ins, 8, w->c + w->m - w->u) ||
            sqlite3_bind_int64(ins, 9, w->u - w->c) || sqlite3_bind_int64(ins, 10, w->wait) ||
            sqlite3_bind_int64(ins, 11, w->step_start) || sqlite3_bind_int64(ins, 12, w->step_end) ||
            step_reset(ins) < 0)
            ret = -1;
    }
    sqlite3_finalize(ins);
    return ret;
}

/* Per (rank, iter, bucket) with a copy_in: ready, and the first arrival among the
 * rank's collectives of that bucket counted in that iteration. */
static int write_ready(sqlite3 *db, int64_t run_id, vec *readies, vec *colls)
{
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO bucket_ready_stat(run_id, rank, iter, bucket, ready_ns, arrival_ns)"
                           " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                           -1, &ins, NULL) != SQLITE_OK)
        return -1;
    ready_rec *r = readies->v;
    sort(r, readies->n, sizeof *r, cmp_ready);
    coll_rec *c = colls->v; /* re-sorted: done with the per-seq order */
    sort(c, colls->n, sizeof *c, cmp_coll_rib);
    size_t j = 0;
    int ret = 0;
    for (size_t i = 0; i < readies->n && ret == 0; i++) {
        while (j < colls->n && cmp_rib(c[j].rank, c[j].iter, c[j].bucket, r[i].rank, r[i].iter, r[i].bucket) < 0)
            j++;
        int64_t arrival = -1;
        for (size_t k = j; k < colls->n && !cmp_rib(c[k].rank, c[k].iter, c[k].bucket, r[i].rank, r[i].iter,
                                                      r[i].bucket); k++)
            if (c[k].kind == SPAN_ALLREDUCE && (arrival < 0 || c[k].arrival < arrival))
                arrival = c[k].arrival;
        if (sqlite3_bind_int64(ins, 1, run_id) || sqlite3_bind_int(ins, 2, r[i].rank) ||
            sqlite3_bind_int(ins, 3, r[i].iter) || sqlite3_bind_int(ins, 4, r[i].bucket) ||
            sqlite3_bind_int64(ins, 5, r[i].ready) ||
            (arrival < 0 ? sqlite3_bind_null(ins, 6) : sqlite3_bind_int64(ins, 6, arrival)) ||
            step_reset(ins) < 0)
            ret = -1;
    }
    sqlite3_finalize(ins);
    return ret;
}

static int scan_spans(sqlite3 *db, int64_t run_id, scan_state *s, int64_t *nspans)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, iter, stream, kind, bucket, seq, start_ns, start_ns + dur_ns,"
                           " bytes, name_id FROM span_data WHERE run_id = ?1 ORDER BY rank, iter",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(q, 1, run_id) != SQLITE_OK) {
        sqlite3_finalize(q);
        return -1;
    }
    int rc;
    *nspans = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (add_span(s, q) < 0) {
            sqlite3_finalize(q);
            return -1;
        }
        (*nspans)++;
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE && close_group(s) == 0 && close_hta_rank(s) == 0 ? 0 : -1;
}

int store_compute_stats(sqlite3 *db, int64_t run_id, const stats_live *live, char *err, size_t errlen)
{
    scan_state s = {.its = {.size = sizeof(its_acc)},
                    .colls = {.size = sizeof(coll_rec)},
                    .readies = {.size = sizeof(ready_rec)},
                    .group = {.size = sizeof(stats_interval)},
                    .group_ready = {.size = sizeof(ready_rec)},
                    .hta_ops = {.size = sizeof(hta_op)},
                    .hta_launch = {.size = sizeof(int64_t)},
                    .db = db,
                    .run_id = run_id,
                    .rebuild_name_id = -1,
                    .rebuild_seq = -1};
    int64_t nspans = 0, warmup = 0;
    char sql[256];
    snprintf(sql, sizeof sql,
             "DELETE FROM iteration_stat WHERE run_id = %lld;"
             "DELETE FROM collective_stat WHERE run_id = %lld;"
             "DELETE FROM bucket_ready_stat WHERE run_id = %lld;"
             "DELETE FROM run_stats WHERE run_id = %lld;",
             (long long)run_id, (long long)run_id, (long long)run_id, (long long)run_id);
    sqlite3_stmt *w = NULL;
    int ret = -1;
    if (store_exec(db, sql, "clearing run statistics", err, errlen) < 0)
        goto out;
    /* An imported run's HTA figures come from its trace (the importer knows each
     * kernel's launch); a recorded run's are computed here, as HTA computes them on its
     * export. */
    if (sqlite3_prepare_v2(db, "SELECT NOT EXISTS (SELECT 1 FROM source_file WHERE run_id = ?1)", -1, &w, NULL) !=
            SQLITE_OK ||
        sqlite3_bind_int64(w, 1, run_id) != SQLITE_OK || sqlite3_step(w) != SQLITE_ROW) {
        store_db_fail(db, err, errlen, "run statistics: reading source files");
        goto out;
    }
    s.hta = sqlite3_column_int(w, 0) != 0;
    sqlite3_finalize(w);
    w = NULL;
    if (s.hta) {
        snprintf(sql, sizeof sql, "DELETE FROM hta_stat WHERE run_id = %lld", (long long)run_id);
        if (store_exec(db, sql, "clearing HTA figures", err, errlen) < 0)
            goto out;
    }
    if (sqlite3_prepare_v2(db, "SELECT warmup FROM run WHERE id = ?1", -1, &w, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(w, 1, run_id) != SQLITE_OK || sqlite3_step(w) != SQLITE_ROW) {
        set_err(err, errlen, "run statistics: no run %lld (%s)", (long long)run_id, sqlite3_errmsg(db));
        goto out;
    }
    warmup = sqlite3_column_int64(w, 0);
    sqlite3_finalize(w);
    w = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id FROM span_name WHERE name = '" DDP_REBUILD_SPAN_NAME "'", -1, &w, NULL) !=
        SQLITE_OK) {
        store_db_fail(db, err, errlen, "run statistics: reading span names");
        goto out;
    }
    int rc = sqlite3_step(w);
    if (rc == SQLITE_ROW)
        s.rebuild_name_id = sqlite3_column_int64(w, 0);
    else if (rc != SQLITE_DONE) {
        store_db_fail(db, err, errlen, "run statistics: reading span names");
        goto out;
    }
    if (scan_spans(db, run_id, &s, &nspans) < 0) {
        store_db_fail(db, err, errlen, "run statistics: reading spans");
        goto out;
    }
    fold_rank_collectives(&s.colls);
    size_t nlive = 0;
    const stats_live_iteration *live_its = live ? stats_live_iterations(live, &nlive) : NULL;
    if ((live ? write_live_collectives(db, run_id, (int)warmup, live) < 0 ||
                    write_iterations(db, run_id, (int)warmup, live_its, nlive) < 0
              : write_collectives(db, run_id, (int)warmup, s.rebuild_seq, &s.colls, &s.its) < 0 ||
                    write_iterations(db, run_id, (int)warmup, s.its.v, s.its.n) < 0) ||
        write_ready(db, run_id, &s.readies, &s.colls) < 0) {
        store_db_fail(db, err, errlen, "run statistics: writing");
        goto out;
    }
    sqlite3_finalize(w);
    w = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO run_stats(run_id, spans, computed_at) VALUES (?1, ?2, " NOW_UTC ")",
                           -1, &w, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(w, 1, run_id) != SQLITE_OK || sqlite3_bind_int64(w, 2, nspans) != SQLITE_OK ||
        sqlite3_step(w) != SQLITE_DONE) {
        store_db_fail(db, err, errlen, "run statistics: marking");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(w);
    free(s.its.v);
    free(s.colls.v);
    free(s.readies.v);
    free(s.group.v);
    free(s.group_ready.v);
    free(s.hta_ops.v);
    free(s.hta_launch.v);
    return ret;
}

int store_compute_finished_stats(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT id FROM run WHERE status <> 'running'"
                           " AND id NOT IN (SELECT run_id FROM run_stats) ORDER BY id",
                           -1, &s, NULL) != SQLITE_OK)
        return store_db_fail(db, err, errlen, "listing runs without statistics");
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(ids, cap * sizeof *ids);
            if (!grown) {
                rc = SQLITE_NOMEM;
                break;
            }
            ids = grown;
        }
        ids[n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    int ret = rc == SQLITE_DONE ? 0 : store_db_fail(db, err, errlen, "listing runs without statistics");
    for (size_t i = 0; i < n && ret == 0; i++)
        ret = store_compute_stats(db, ids[i], NULL, err, errlen);
    free(ids);
    return ret;
}
