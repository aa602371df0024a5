/* stats_live.c — statistics from the spans as they are recorded (stats_live.h).
 *
 * Each rank keeps its last SPAN_LIVE_WINDOW iterations open: their step bounds and the
 * intervals of their compute and allreduce spans, whose unions are taken when the
 * iteration closes (a later one pushes it out of the window, or the run ends), by
 * stats_unions(), which store_stats.c uses too.  A rank's wait in an iteration is the sum over
 * its allreduces of (last arrival - its arrival): the sum of its arrivals is kept with
 * the iteration, and the allreduces it took part in as runs of consecutive seqs, whose
 * last arrivals are added up at the end from prefix sums, when every rank has arrived.
 * Per collective, one record folds every rank's span; a bitmap of ranks per collective
 * tells a second span of a rank for one collective (which the stored spans would fold
 * first), and makes the live figures inexact.
 */
#include "profiler/stats_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    bool open, has_fwd, has_opt, has_span;
    int iter;
    int64_t min_start, max_end, fwd_start, opt_end, arrivals;
    stats_interval *iv;
    size_t n, cap;
} live_group;

/* Allreduces seq lo..hi of one rank-iteration. */
typedef struct {
    int rank, iter;
    int64_t lo, hi;
} seq_run;

typedef struct {
    live_group g[SPAN_LIVE_WINDOW];
    int newest_closed; /* the highest iteration closed, INT32_MIN: none */
    seq_run run;       /* the open run of allreduces (lo > hi: none) */
} live_rank;

typedef struct {
    bool seen;
    int iter, bucket, kind;
    int64_t bytes, first, last, last_allreduce, end, nranks;
} live_coll;

struct stats_live {
    int world;
    live_rank *ranks;
    live_coll *colls;
    uint64_t *arrived; /* per collective, world bits */
    size_t words;      /* 64-bit words per collective */
    int64_t ncolls, colls_cap;
    stats_live_iteration *its;
    size_t nits, its_cap;
    seq_run *runs;
    size_t nruns, runs_cap;
    int64_t rebuild_seq;
    stats_live_collective *out; /* stats_live_collectives()'s rows, built by finish */
    size_t nout;
    bool finished;
    char why_not[160];
};

static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *nv = realloc(*v, ncap * elem);
    if (!nv)
        return false;
    *v = nv;
    *cap = ncap;
    return true;
}

static void not_exact(stats_live *l, const char *why)
{
    if (!l->why_not[0])
        snprintf(l->why_not, sizeof l->why_not, "%s", why);
}

stats_live *stats_live_create(int world_size)
{
    stats_live *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->world = world_size;
    l->ranks = calloc((size_t)world_size, sizeof *l->ranks);
    if (!l->ranks) {
        free(l);
        return NULL;
    }
    for (int r = 0; r < world_size; r++) {
        l->ranks[r].newest_closed = INT32_MIN;
        l->ranks[r].run = (seq_run){.rank = r, .lo = 1, .hi = 0};
    }
    l->words = ((size_t)world_size + 63) / 64;
    l->rebuild_seq = -1;
    return l;
}

/* The view's MIN(kind): the least kind by its stored name. */
static int min_kind(int a, int b)
{
    return strcmp(span_kind_name((span_kind)a), span_kind_name((span_kind)b)) <= 0 ? a : b;
}

static int cmp_interval(const void *a, const void *b)
{
    const stats_interval *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

void stats_unions(stats_interval *v, size_t n, int64_t *c, int64_t *m, int64_t *u)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_interval);
    int64_t last[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
    int64_t *sum[3] = {c, m, u};
    *c = *m = *u = 0;
    for (size_t i = 0; i < n; i++) {
        int in[3] = {v[i].flags & STATS_C, v[i].flags & STATS_M, v[i].flags != 0};
        for (int s = 0; s < 3; s++) {
            if (!in[s])
                continue;
            int64_t from = v[i].start > last[s] ? v[i].start : last[s];
            if (v[i].end > from)
                *sum[s] += v[i].end - from;
            if (v[i].end > last[s])
                last[s] = v[i].end;
        }
    }
}

static int close_group(stats_live *l, int rank, live_group *g)
{
    if (!g->open)
        return 0;
    if (!grow((void **)&l->its, &l->its_cap, l->nits + 1, sizeof *l->its))
        return -1;
    stats_live_iteration *a = &l->its[l->nits++];
    *a = (stats_live_iteration){.rank = rank, .iter = g->iter};
    a->step_start = g->has_fwd ? g->fwd_start : g->min_start;
    a->step_end = g->has_opt ? g->opt_end : g->max_end;
    stats_unions(g->iv, g->n, &a->c, &a->m, &a->u);
    a->wait = -g->arrivals; /* the last arrivals are added at the end */
    live_rank *lr = &l->ranks[rank];
    if (g->iter > lr->newest_closed)
        lr->newest_closed = g->iter;
    g->open = false;
    g->n = 0;
    return 0;
}

/* The open group of `iter` on rank r, opened if needed; NULL when the iteration was
 * already closed (the order assumption failed) or out of memory (why_not says). */
static live_group *group_of(stats_live *l, int rank, int iter)
{
    live_rank *lr = &l->ranks[rank];
    live_group *free_slot = NULL, *oldest = NULL;
    for (int k = 0; k < SPAN_LIVE_WINDOW; k++) {
        live_group *g = &lr->g[k];
        if (g->open && g->iter == iter)
            return g;
        if (!g->open && !free_slot)
            free_slot = g;
        if (g->open && (!oldest || g->iter < oldest->iter))
            oldest = g;
    }
    if (iter <= lr->newest_closed) {
        char why[160];
        snprintf(why, sizeof why, "rank %d recorded a span of iteration %d after closing iteration %d", rank, iter,
                 lr->newest_closed);
        not_exact(l, why);
        return NULL;
    }
    if (!free_slot) {
        if (oldest->iter > iter) {
            char why[160];
            snprintf(why, sizeof why, "rank %d recorded a span of iteration %d after spans of iteration %d", rank,
                     iter, oldest->iter);
            not_exact(l, why);
            return NULL;
        }
        if (close_group(l, rank, oldest) != 0) {
            not_exact(l, "out of memory");
            return NULL;
        }
        free_slot = oldest;
    }
    free_slot->open = true;
    free_slot->iter = iter;
    free_slot->has_fwd = free_slot->has_opt = free_slot->has_span = false;
    free_slot->arrivals = 0;
    free_slot->n = 0;
    return free_slot;
}

static live_coll *coll_of(stats_live *l, int64_t seq)
{
    if (seq >= l->colls_cap) {
        int64_t ncap = l->colls_cap ? l->colls_cap : 64;
        while (ncap <= seq)
            ncap *= 2;
        live_coll *nc = realloc(l->colls, (size_t)ncap * sizeof *nc);
        if (!nc)
            return NULL;
        l->colls = nc;
        uint64_t *na = realloc(l->arrived, (size_t)ncap * l->words * sizeof *na);
        if (!na)
            return NULL;
        l->arrived = na;
        memset(l->colls + l->colls_cap, 0, (size_t)(ncap - l->colls_cap) * sizeof *nc);
        memset(l->arrived + (size_t)l->colls_cap * l->words, 0,
               (size_t)(ncap - l->colls_cap) * l->words * sizeof *na);
        l->colls_cap = ncap;
    }
    if (seq >= l->ncolls)
        l->ncolls = seq + 1;
    return &l->colls[seq];
}

static int push_run(stats_live *l, const seq_run *run)
{
    if (run->lo > run->hi)
        return 0;
    if (!grow((void **)&l->runs, &l->runs_cap, l->nruns + 1, sizeof *l->runs))
        return -1;
    l->runs[l->nruns++] = *run;
    return 0;
}

/* Rank r's allreduce `seq` of iteration `iter`: into its open run of seqs, or a new one. */
static int note_allreduce(stats_live *l, int rank, int iter, int64_t seq)
{
    seq_run *run = &l->ranks[rank].run;
    if (run->lo <= run->hi && run->iter == iter && seq == run->hi + 1) {
        run->hi = seq;
        return 0;
    }
    if (push_run(l, run) != 0)
        return -1;
    *run = (seq_run){.rank = rank, .iter = iter, .lo = seq, .hi = seq};
    return 0;
}

static int add_collective(stats_live *l, const span *s)
{
    live_coll *c = coll_of(l, s->seq);
    if (!c)
        return -1;
    uint64_t *bits = l->arrived + (size_t)s->seq * l->words;
    uint64_t bit = 1ull << (s->rank % 64);
    if (bits[s->rank / 64] & bit) {
        char why[160];
        snprintf(why, sizeof why, "rank %d recorded two spans of collective %lld", s->rank, (long long)s->seq);
        not_exact(l, why);
        return 0;
    }
    bits[s->rank / 64] |= bit;
    int bucket = s->bucket >= 0 ? s->bucket : -1;
    int64_t bytes = s->bytes >= 0 ? s->bytes : -1;
    if (!c->seen) {
        *c = (live_coll){.seen = true, .iter = s->iter, .bucket = bucket, .kind = s->kind, .bytes = bytes,
                         .first = s->start_ns, .last = s->start_ns, .last_allreduce = INT64_MIN, .end = s->end_ns};
    } else {
        c->iter = s->iter < c->iter ? s->iter : c->iter;
        c->kind = min_kind(c->kind, s->kind);
        if (bucket >= 0 && (c->bucket < 0 || bucket < c->bucket))
            c->bucket = bucket;
        c->bytes = bytes > c->bytes ? bytes : c->bytes;
        c->first = s->start_ns < c->first ? s->start_ns : c->first;
        c->last = s->start_ns > c->last ? s->start_ns : c->last;
        c->end = s->end_ns > c->end ? s->end_ns : c->end;
    }
    c->nranks++;
    if (s->kind == SPAN_ALLREDUCE && s->start_ns > c->last_allreduce)
        c->last_allreduce = s->start_ns;
    if (strcmp(s->name, DDP_REBUILD_SPAN_NAME) == 0 && (l->rebuild_seq < 0 || s->seq < l->rebuild_seq))
        l->rebuild_seq = s->seq;
    return 0;
}

int stats_live_add(stats_live *l, const span *s)
{
    if (l->why_not[0])
        return 0; /* inexact already: the figures will come from the spans */
    if (l->finished || s->rank < 0 || s->rank >= l->world) {
        char why[160];
        snprintf(why, sizeof why, "a span of rank %d in a world of %d", s->rank, l->world);
        not_exact(l, l->finished ? "a span after the end" : why);
        return 0;
    }
    live_group *g = group_of(l, s->rank, s->iter);
    if (!g)
        return l->why_not[0] ? 0 : -1;
    if (!g->has_span) {
        g->has_span = true;
        g->min_start = s->start_ns;
        g->max_end = s->end_ns;
    }
    if (s->start_ns < g->min_start)
        g->min_start = s->start_ns;
    if (s->end_ns > g->max_end)
        g->max_end = s->end_ns;
    if (s->kind == SPAN_FORWARD && (!g->has_fwd || s->start_ns < g->fwd_start)) {
        g->fwd_start = s->start_ns;
        g->has_fwd = true;
    }
    if (s->kind == SPAN_OPTIMIZER && (!g->has_opt || s->end_ns > g->opt_end)) {
        g->opt_end = s->end_ns;
        g->has_opt = true;
    }
    int flags = (s->stream == STREAM_COMPUTE ? STATS_C : 0) | (s->kind == SPAN_ALLREDUCE ? STATS_M : 0);
    if (flags) {
        if (!grow((void **)&g->iv, &g->cap, g->n + 1, sizeof *g->iv)) {
            not_exact(l, "out of memory");
            return -1;
        }
        g->iv[g->n++] = (stats_interval){s->start_ns, s->end_ns, flags};
    }
    if (span_kind_is_comm((span_kind)s->kind) && s->seq >= 0) {
        if (add_collective(l, s) != 0) {
            not_exact(l, "out of memory");
            return -1;
        }
        if (s->kind == SPAN_ALLREDUCE && !l->why_not[0]) {
            g->arrivals += s->start_ns;
            if (note_allreduce(l, s->rank, s->iter, s->seq) != 0) {
                not_exact(l, "out of memory");
                return -1;
            }
        }
    }
    return 0;
}

static int cmp_its(const void *a, const void *b)
{
    const stats_live_iteration *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

static stats_live_iteration *find_its(stats_live *l, int rank, int iter)
{
    stats_live_iteration key = {.rank = rank, .iter = iter};
    return bsearch(&key, l->its, l->nits, sizeof *l->its, cmp_its);
}

int stats_live_finish(stats_live *l)
{
    if (l->finished)
        return 0;
    l->finished = true;
    if (l->why_not[0])
        return 0;
    for (int r = 0; r < l->world; r++) {
        live_rank *lr = &l->ranks[r];
        /* Oldest first, as a later one would have pushed them out. */
        for (;;) {
            live_group *oldest = NULL;
            for (int k = 0; k < SPAN_LIVE_WINDOW; k++)
                if (lr->g[k].open && (!oldest || lr->g[k].iter < oldest->iter))
                    oldest = &lr->g[k];
            if (!oldest)
                break;
            if (close_group(l, r, oldest) != 0) {
                not_exact(l, "out of memory");
                return -1;
            }
        }
        if (push_run(l, &lr->run) != 0) {
            not_exact(l, "out of memory");
            return -1;
        }
        lr->run.lo = 1, lr->run.hi = 0;
    }
    if (l->nits > 1)
        qsort(l->its, l->nits, sizeof *l->its, cmp_its);
    /* prefix[s] = sum of the last allreduce arrivals of collectives 0..s-1 (0 where none:
     * a run names only collectives at which its rank arrived with an allreduce). */
    int64_t *prefix = calloc((size_t)l->ncolls + 1, sizeof *prefix);
    if (!prefix) {
        not_exact(l, "out of memory");
        return -1;
    }
    for (int64_t s = 0; s < l->ncolls; s++) {
        const live_coll *c = &l->colls[s];
        prefix[s + 1] = prefix[s] + (c->seen && c->last_allreduce != INT64_MIN ? c->last_allreduce : 0);
    }
    for (size_t i = 0; i < l->nruns; i++) {
        const seq_run *run = &l->runs[i];
        stats_live_iteration *a = find_its(l, run->rank, run->iter);
        if (!a) {
            not_exact(l, "an allreduce outside every iteration");
            break;
        }
        a->wait += prefix[run->hi + 1] - prefix[run->lo];
    }
    free(prefix);
    /* The collectives, those seen, by seq. */
    l->out = calloc((size_t)(l->ncolls ? l->ncolls : 1), sizeof *l->out);
    if (!l->out) {
        not_exact(l, "out of memory");
        return -1;
    }
    for (int64_t s = 0; s < l->ncolls; s++) {
        const live_coll *c = &l->colls[s];
        if (c->seen)
            l->out[l->nout++] = (stats_live_collective){.seq = s, .iter = c->iter, .bucket = c->bucket,
                                                        .kind = c->kind, .bytes = c->bytes,
                                                        .first_arrival = c->first, .last_arrival = c->last,
                                                        .end = c->end, .nranks = c->nranks};
    }
    return 0;
}

bool stats_live_exact(const stats_live *l) { return l && l->finished && !l->why_not[0]; }

const char *stats_live_why_not(const stats_live *l) { return l->why_not; }

const stats_live_iteration *stats_live_iterations(const stats_live *l, size_t *n)
{
    *n = l->nits;
    return l->its;
}

const stats_live_collective *stats_live_collectives(const stats_live *l, size_t *n)
{
    *n = l->nout;
    return l->out;
}

int64_t stats_live_rebuild_seq(const stats_live *l) { return l->rebuild_seq; }

void stats_live_free(stats_live *l)
{
    if (!l)
        return;
    for (int r = 0; l->ranks && r < l->world; r++)
        for (int k = 0; k < SPAN_LIVE_WINDOW; k++)
            free(l->ranks[r].g[k].iv);
    free(l->ranks);
    free(l->colls);
    free(l->arrived);
    free(l->its);
    free(l->runs);
    free(l->out);
    free(l);
}
