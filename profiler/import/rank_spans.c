/* rank_spans.c — one rank's trace events become spans (see import_internal.h).
 *
 * How (reference/import.md §1.4-1.7, §5):
 *  - iterations: ProfilerStep#N on the host; an event belongs to the last step that
 *    started at or before it (before the first: the first), a device op to the step of
 *    its launch; a trace without steps is iteration 0;
 *  - host ops nest per thread; each host event knows its nearest enclosing DDP phase
 *    (event_names.c: forward, backward, copy into a bucket, copy out, optimizer) and its
 *    nearest enclosing op that carries collective arguments (record_param_comms);
 *  - a device op is linked to its launch by correlation id (never by flows, which are
 *    not 1:1), and takes the launch's phase; one without a launch in the file (an
 *    orphan) keeps its own time and no phase;
 *  - NCCL kernels are the communication, each of its collective (the trace's
 *    "Collective name" where given, else the kernel's name); on a job without device
 *    events, gloo's host ops are, and the host ops are the compute;
 *  - a job of one rank: its nccl:<op> ranges that launched no kernel (NCCL runs none
 *    for one rank) are collectives of no duration where the device reaches them;
 *  - DDP: per iteration, the allreduces launched after backward began are the buckets,
 *    numbered in launch order; a bucket's parameters are the gradients made ready
 *    (AccumulateGrad, or reducer::mul_out) since the previous bucket's launch.
 */
#include "profiler/import/import_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "profiler/import/event_names.h"

/* Per distinct name, what it says (computed once: names repeat millions of times). */
typedef struct {
    int8_t phase;       /* -1, or a span_kind */
    int8_t gloo;        /* -1, or a span_kind */
    uint8_t step;       /* ProfilerStep#N */
    uint8_t launch;     /* c10d:: or record_param_comms */
    uint8_t c10d_allreduce;
    uint8_t nccl;
    uint8_t nccl_annotation; /* "nccl:<op>": ProcessGroupNCCL's range around a collective */
    uint8_t hta;
} name_info;

typedef struct {
    trace_rank *tr;
    rank_result *rr;
    name_info *ni;
    int32_t *parent;     /* per event: enclosing host event, -1 */
    int32_t *phase_op;   /* nearest phase op, itself included; -1 */
    int32_t *info_op;    /* nearest op with collective arguments, itself included; -1 */
    uint8_t *flags;      /* F_* */
    int32_t *rt_by_corr; /* runtime event indices sorted by correlation */
    size_t nrt;
} ctx;

enum {
    F_PHASE_BELOW = 1,
    F_NESTED = 2,   /* under a host op other than a step */
    F_LAUNCHED = 4, /* it, or a host op under it, launched device work */
};

static const char *nm(const trace_rank *tr, int32_t i)
{
    return strtab_str(&tr->names, i);
}

static bool has_info(const tev *e)
{
    return e->info >= 0;
}

/* The phase of a host event (-1 for none): what its reader said, else its name's. */
static int event_phase(const ctx *c, const tev *e)
{
    if (e->kind >= 0)
        return e->kind == SPAN_FORWARD || e->kind == SPAN_BACKWARD || e->kind == SPAN_COPY_IN ||
                       e->kind == SPAN_COPY_OUT || e->kind == SPAN_OPTIMIZER
                   ? e->kind
                   : -1;
    return c->ni[e->name].phase;
}

/* The collective of a host event that is communication itself (gloo's, or one its
 * reader knows), or -1. */
static int event_comm(const ctx *c, const tev *e)
{
    if (e->kind >= 0)
        return span_kind_is_comm((span_kind)e->kind) ? e->kind : -1;
    return c->ni[e->name].gloo;
}

/* ---- steps ------------------------------------------------------------------------------ */

static int cmp_i64_triple(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static int build_steps(ctx *c, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    rank_result *rr = c->rr;
    size_t n = 0;
    for (size_t i = 0; i < tr->nev; i++)
        n += tr->ev[i].type == TEV_CPU && c->ni[tr->ev[i].name].step;
    int64_t *t = malloc((n ? n : 1) * 3 * sizeof *t);
    rr->step_n = malloc((n ? n : 1) * sizeof *rr->step_n);
    rr->step_start = malloc((n ? n : 1) * sizeof *rr->step_start);
    rr->step_end = malloc((n ? n : 1) * sizeof *rr->step_end);
    if (!t || !rr->step_n || !rr->step_start || !rr->step_end) {
        free(t);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < tr->nev; i++) {
        const tev *e = &tr->ev[i];
        long long num;
        if (e->type == TEV_CPU && c->ni[e->name].step && name_profiler_step(nm(tr, e->name), &num)) {
            t[3 * k] = num;
            t[3 * k + 1] = e->ts_ns;
            t[3 * k + 2] = e->ts_ns + e->dur_ns;
            k++;
        }
    }
    if (k > 1)
        qsort(t, k, 3 * sizeof *t, cmp_i64_triple);
    for (size_t i = 0; i < k; i++) {
        bool dup = false;
        for (size_t j = 0; j < rr->nsteps && !dup; j++)
            dup = rr->step_n[j] == t[3 * i];
        if (dup)
            continue; /* a step annotated twice (host and device ranges) counts once */
        rr->step_n[rr->nsteps] = t[3 * i];
        rr->step_start[rr->nsteps] = t[3 * i + 1];
        rr->step_end[rr->nsteps] = t[3 * i + 2];
        rr->nsteps++;
    }
    free(t);
    return 0;
}

/* The step of an event at time t: the last to start at or before t; the first before it. */
static int32_t iter_of(const rank_result *rr, int64_t t)
{
    if (rr->nsteps == 0)
        return 0;
    size_t lo = 0, hi = rr->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rr->step_start[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int32_t)rr->step_n[lo == 0 ? 0 : lo - 1];
}

/* ---- host nesting ------------------------------------------------------------------------ */

/* Orders of event indices, through glibc's qsort_r (the events are the context). */
static int cmp_host(const void *a, const void *b, void *arg)
{
    const tev *ev = arg;
    const tev *x = &ev[*(const int32_t *)a], *y = &ev[*(const int32_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns ? -1 : 1;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns > y->dur_ns ? -1 : 1; /* the enclosing one first */
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;   /* an op before the launch it makes */
    return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

static int cmp_corr(const void *a, const void *b, void *arg)
{
    const tev *ev = arg;
    const tev *x = &ev[*(const int32_t *)a], *y = &ev[*(const int32_t *)b];
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static bool encloses(const tev *outer, const tev *inner)
{
    int64_t oe = outer->ts_ns + outer->dur_ns, ie = inner->ts_ns + inner->dur_ns;
    if (inner->ts_ns < outer->ts_ns || ie > oe)
        return false;
    /* Zero-length ops enclose nothing after their instant. */
    return outer->dur_ns > 0 || inner->ts_ns == outer->ts_ns;
}

static int nest_host(ctx *c, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    size_t n = 0;
    for (size_t i = 0; i < tr->nev; i++)
        n += tr->ev[i].type == TEV_CPU || tr->ev[i].type == TEV_RUNTIME;
    int32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!idx || !stack) {
        free(idx);
        free(stack);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < tr->nev; i++)
        if (tr->ev[i].type == TEV_CPU || tr->ev[i].type == TEV_RUNTIME)
            idx[k++] = (int32_t)i;
    if (n > 1)
        qsort_r(idx, n, sizeof *idx, cmp_host, tr->ev);
    size_t depth = 0;
    int64_t tid = 0;
    for (size_t j = 0; j < n; j++) {
        int32_t i = idx[j];
        const tev *e = &tr->ev[i];
        if (j == 0 || e->tid != tid) {
            depth = 0;
            tid = e->tid;
        }
        while (depth > 0 && !encloses(&tr->ev[stack[depth - 1]], e))
            depth--;
        int32_t p = depth > 0 ? stack[depth - 1] : -1;
        c->parent[i] = p;
        bool is_phase = e->type == TEV_CPU && event_phase(c, e) >= 0;
        c->phase_op[i] = is_phase ? i : p >= 0 ? c->phase_op[p] : -1;
        c->info_op[i] = e->type == TEV_CPU && has_info(e) ? i : p >= 0 ? c->info_op[p] : -1;
        if (p >= 0 && ((c->flags[p] & F_NESTED) || !c->ni[tr->ev[p].name].step))
            c->flags[i] |= F_NESTED;
        if (is_phase)
            for (int32_t a = p; a >= 0 && !(c->flags[a] & F_PHASE_BELOW); a = c->parent[a])
                c->flags[a] |= F_PHASE_BELOW;
        if (e->type == TEV_CPU)
            stack[depth++] = i;
    }
    free(idx);
    free(stack);
    return 0;
}

static int index_runtime(ctx *c, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    size_t n = 0;
    for (size_t i = 0; i < tr->nev; i++)
        n += tr->ev[i].type == TEV_RUNTIME && tr->ev[i].correlation >= 0;
    c->rt_by_corr = malloc((n ? n : 1) * sizeof *c->rt_by_corr);
    if (!c->rt_by_corr) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < tr->nev; i++)
        if (tr->ev[i].type == TEV_RUNTIME && tr->ev[i].correlation >= 0)
            c->rt_by_corr[k++] = (int32_t)i;
    if (n > 1)
        qsort_r(c->rt_by_corr, n, sizeof *c->rt_by_corr, cmp_corr, tr->ev);
    c->nrt = n;
    return 0;
}

static int32_t launch_of(const ctx *c, int64_t corr)
{
    if (corr < 0)
        return -1;
    size_t lo = 0, hi = c->nrt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v = c->tr->ev[c->rt_by_corr[mid]].correlation;
        if (v == corr)
            return c->rt_by_corr[mid];
        if (v < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* ---- spans --------------------------------------------------------------------------------- */

pspan *rank_span_new(rank_result *rr, char *err, size_t errlen)
{
    if (rr->nsp == rr->cap) {
        size_t cap = rr->cap ? 2 * rr->cap : 4096;
        pspan *grown = realloc(rr->sp, cap * sizeof *grown);
        if (!grown) {
            set_err(err, errlen, "out of memory for %zu spans", cap);
            return NULL;
        }
        rr->sp = grown;
        rr->cap = cap;
    }
    pspan *p = &rr->sp[rr->nsp++];
    memset(p, 0, sizeof *p);
    p->bytes = p->coll_seq = p->seq = -1;
    p->bucket = p->pg = -1;
    return p;
}

static tev_info completed_info(const ctx *c, tev_info info, int32_t from);

/* A collective kernel's arguments: its own (Kineto copies record_param_comms's onto
 * it), completed by those of the host ops around its launch, innermost first: the
 * nccl:<op> annotation's sizes (record_shapes), record_param_comms's group and Seq. */
static tev_info collective_info(const ctx *c, const tev *kernel, int32_t launch)
{
    return completed_info(c, tev_extra(c->tr, kernel), launch);
}

/* info completed by the host ops with collective arguments from `from` outward. */
static tev_info completed_info(const ctx *c, tev_info info, int32_t from)
{
    const trace_rank *tr = c->tr;
    for (int32_t op = from >= 0 ? c->info_op[from] : -1; op >= 0;
         op = c->parent[op] >= 0 ? c->info_op[c->parent[op]] : -1) {
        tev_info more = tev_extra(tr, &tr->ev[op]);
        if (info.bytes < 0)
            info.bytes = more.bytes;
        if (info.seq < 0)
            info.seq = more.seq;
        if (info.pg < 0)
            info.pg = more.pg;
        if (info.coll < 0)
            info.coll = more.coll;
    }
    return info;
}

static int device_span(ctx *c, size_t i, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    const tev *e = &tr->ev[i];
    int32_t rt = launch_of(c, e->correlation);
    /* Correlation ids grow with each launch: one below every recorded launch's was
     * launched before recording began (the schedule's warm-up step, whose kernels can
     * still be running when the first active step starts).  It belongs to no traced
     * iteration, and taken into the first one it would be a bucket of that step. */
    if (rt < 0 && e->correlation > 0 && c->nrt > 0 && e->correlation < tr->ev[c->rt_by_corr[0]].correlation) {
        c->rr->launched_before++;
        return 0;
    }
    pspan *p = rank_span_new(c->rr, err, errlen);
    if (!p)
        return -1;
    p->start = e->ts_ns;
    p->end = e->ts_ns + e->dur_ns;
    p->launch = rt >= 0 ? tr->ev[rt].ts_ns : e->ts_ns;
    p->launched = rt >= 0;
    for (int32_t a = rt >= 0 ? c->parent[rt] : -1; a >= 0 && !(c->flags[a] & F_LAUNCHED); a = c->parent[a])
        c->flags[a] |= F_LAUNCHED;
    p->iter = p->launch_iter = iter_of(c->rr, p->launch);
    p->name = e->name;
    p->on_device = 1;
    p->dev_stream = e->tid;
    p->hta = c->ni[e->name].hta;
    const name_info *ni = &c->ni[e->name];
    if (e->type == TEV_KERNEL && ni->nccl) {
        /* The kernel's own collective arguments (Kineto copies them from
         * record_param_comms), else those of the host op that launched it. */
        tev_info info = collective_info(c, e, rt);
        int k = info.coll >= 0 ? name_coll_kind(nm(tr, info.coll)) : -1;
        p->kind = (uint8_t)(k >= 0 ? k : (int)name_nccl_kind(nm(tr, e->name)));
        p->stream = STREAM_COMM;
        p->bytes = info.bytes;
        p->pg = info.pg;
        p->coll_seq = info.seq;
        c->rr->has_comm = true;
        return 0;
    }
    p->stream = STREAM_COMPUTE;
    int ph = rt >= 0 && c->phase_op[rt] >= 0 ? event_phase(c, &tr->ev[c->phase_op[rt]]) : -1;
    p->kind = (uint8_t)(ph >= 0                  ? ph
                        : e->type == TEV_KERNEL ? SPAN_KERNEL
                        : e->type == TEV_MEMCPY ? SPAN_MEMCPY
                                                : SPAN_MEMSET);
    if (e->type != TEV_KERNEL)
        p->bytes = tev_extra(tr, e).bytes;
    return 0;
}

static int host_span(ctx *c, size_t i, bool device_job, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    const tev *e = &tr->ev[i];
    const name_info *ni = &c->ni[e->name];
    if (ni->step)
        return 0;
    int kind = -1, stream = device_job ? STREAM_HOST : STREAM_COMPUTE;
    int comm = event_comm(c, e), phase = event_phase(c, e);
    if (comm >= 0) {
        if (device_job)
            return 0; /* NCCL's kernels are the communication there */
        kind = comm;
        stream = STREAM_COMM;
        c->rr->has_comm = true;
    } else if (phase >= 0) {
        if (c->parent[i] >= 0 && c->phase_op[c->parent[i]] >= 0)
            return 0; /* inside another phase op, whose span covers it */
        kind = phase;
    } else if (!device_job && !(c->flags[i] & (F_NESTED | F_PHASE_BELOW)) &&
               (c->phase_op[i] < 0)) {
        kind = SPAN_CPU_OP; /* host work of a CPU-only job outside the phases */
    } else {
        return 0;
    }
    pspan *p = rank_span_new(c->rr, err, errlen);
    if (!p)
        return -1;
    p->start = p->launch = e->ts_ns;
    p->end = e->ts_ns + e->dur_ns;
    p->iter = iter_of(c->rr, e->ts_ns);
    p->name = e->name;
    p->kind = (uint8_t)kind;
    p->stream = (uint8_t)stream;
    if (stream == STREAM_COMM) {
        tev_info info = tev_extra(tr, e);
        p->bytes = info.bytes;
        p->pg = info.pg;
        p->coll_seq = info.seq;
    }
    return 0;
}

/* gloo runs a collective on its own threads, with no link to the c10d::<op>_ call that
 * enqueued it; they pair up in order (ProcessGroupGloo's queue is first in, first out). */
static void pair_gloo_launches(ctx *c)
{
    trace_rank *tr = c->tr;
    rank_result *rr = c->rr;
    size_t ngloo = 0, nlaunch = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        ngloo += rr->sp[i].stream == STREAM_COMM && rr->sp[i].kind == SPAN_ALLREDUCE && !rr->sp[i].on_device;
    for (size_t i = 0; i < tr->nev; i++)
        nlaunch += tr->ev[i].type == TEV_CPU && c->ni[tr->ev[i].name].c10d_allreduce;
    if (ngloo == 0 || ngloo != nlaunch)
        return;
    int64_t *l = malloc(nlaunch * sizeof *l);
    size_t *g = malloc(ngloo * sizeof *g);
    if (!l || !g) {
        free(l);
        free(g);
        return; /* launches stay at the collectives' starts */
    }
    size_t k = 0;
    for (size_t i = 0; i < tr->nev; i++)
        if (tr->ev[i].type == TEV_CPU && c->ni[tr->ev[i].name].c10d_allreduce)
            l[k++] = tr->ev[i].ts_ns;
    k = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        if (rr->sp[i].stream == STREAM_COMM && rr->sp[i].kind == SPAN_ALLREDUCE && !rr->sp[i].on_device)
            g[k++] = i;
    /* both in time order */
    for (size_t a = 1; a < nlaunch; a++)
        for (size_t b = a; b > 0 && l[b - 1] > l[b]; b--) {
            int64_t t = l[b];
            l[b] = l[b - 1];
            l[b - 1] = t;
        }
    for (size_t a = 1; a < ngloo; a++)
        for (size_t b = a; b > 0 && rr->sp[g[b - 1]].start > rr->sp[g[b]].start; b--) {
            size_t t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    for (size_t a = 0; a < ngloo; a++)
        if (l[a] <= rr->sp[g[a]].start)
            rr->sp[g[a]].launch = l[a];
    free(l);
    free(g);
}

/* ---- collectives of one rank alone ----------------------------------------------------------- */

typedef struct {
    int64_t launch, end;
} launched_op;

static int cmp_launched(const void *a, const void *b)
{
    const launched_op *x = a, *y = b;
    return (x->launch > y->launch) - (x->launch < y->launch);
}

/* A job of one rank: NCCL runs no kernel for a collective of one rank, so DDP's
 * allreduces are only their nccl:<op> ranges on the host.  Each becomes a collective
 * of no duration on the device timeline, where the compute stream reaches it (the end
 * of the device work launched before it), so that DDP's buckets are seen and whatif
 * can ask what more ranks would cost. */
static int lone_rank_collectives(ctx *c, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    rank_result *rr = c->rr;
    if (tr->world_size != 1)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        n += rr->sp[i].on_device && rr->sp[i].stream == STREAM_COMPUTE;
    launched_op *ops = malloc((n ? n : 1) * sizeof *ops);
    if (!ops) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < rr->nsp; i++)
        if (rr->sp[i].on_device && rr->sp[i].stream == STREAM_COMPUTE)
            ops[k++] = (launched_op){rr->sp[i].launch, rr->sp[i].end};
    qsort(ops, n, sizeof *ops, cmp_launched);
    for (size_t i = 1; i < n; i++) /* the latest end among the ops launched so far */
        ops[i].end = ops[i].end > ops[i - 1].end ? ops[i].end : ops[i - 1].end;
    int ret = 0;
    for (size_t i = 0; i < tr->nev && ret == 0; i++) {
        const tev *e = &tr->ev[i];
        if (e->type != TEV_CPU || !c->ni[e->name].nccl_annotation || (c->flags[i] & F_LAUNCHED))
            continue;
        int kind = name_coll_kind(nm(tr, e->name) + 5);
        size_t lo = 0, hi = n; /* ops launched before it */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ops[mid].launch < e->ts_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        pspan *p = rank_span_new(rr, err, errlen);
        if (!p) {
            ret = -1;
            break;
        }
        p->start = p->end = lo > 0 ? ops[lo - 1].end : e->ts_ns;
        p->launch = e->ts_ns;
        p->iter = p->launch_iter = iter_of(rr, e->ts_ns);
        p->name = e->name;
        p->kind = (uint8_t)(kind >= 0 ? kind : SPAN_COLLECTIVE);
        p->stream = STREAM_COMM;
        tev_info info = completed_info(c, (tev_info){-1, -1, -1, -1}, (int32_t)i);
        p->bytes = info.bytes;
        p->pg = info.pg;
        p->coll_seq = info.seq;
        rr->has_comm = true;
    }
    free(ops);
    return ret;
}

/* ---- DDP's buckets -------------------------------------------------------------------------- */

static int cmp_sp_iter_launch(const void *a, const void *b, void *arg)
{
    const pspan *sp = arg;
    const pspan *x = &sp[*(const size_t *)a], *y = &sp[*(const size_t *)b];
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    if (x->launch != y->launch)
        return x->launch < y->launch ? -1 : 1;
    return (x->start > y->start) - (x->start < y->start);
}

typedef struct {
    int32_t iter;
    int64_t t;
} marker;

static int cmp_marker(const void *a, const void *b)
{
    const marker *x = a, *y = b;
    if (x->iter != y->iter)
        return x->iter < y->iter ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* The iteration's first backward moment (host op or device op), or INT64_MAX. */
static int64_t first_backward(const rank_result *rr, const size_t *order, size_t from, size_t to)
{
    int64_t t = INT64_MAX;
    for (size_t j = from; j < to; j++) {
        const pspan *p = &rr->sp[order[j]];
        if ((p->kind == SPAN_BACKWARD || p->kind == SPAN_COPY_IN) && p->launch < t)
            t = p->launch;
    }
    return t;
}

static int ddp_buckets(ctx *c, char *err, size_t errlen)
{
    rank_result *rr = c->rr;
    trace_rank *tr = c->tr;
    size_t n = rr->nsp;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t nm_ = 0;
    for (size_t i = 0; i < tr->nev; i++)
        nm_ += tr->ev[i].type == TEV_CPU && event_phase(c, &tr->ev[i]) == SPAN_COPY_IN;
    marker *mk = malloc((nm_ ? nm_ : 1) * sizeof *mk);
    ddp_bucket *cur = malloc((n ? n : 1) * sizeof *cur);
    if (!order || !mk || !cur) {
        free(order);
        free(mk);
        free(cur);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (n > 1)
        qsort_r(order, n, sizeof *order, cmp_sp_iter_launch, rr->sp);
    /* Gradients made ready: the outermost of AccumulateGrad's node and mul_out (one per
     * parameter, whichever the trace has). */
    size_t k = 0;
    for (size_t i = 0; i < tr->nev; i++) {
        const tev *e = &tr->ev[i];
        if (e->type != TEV_CPU || event_phase(c, e) != SPAN_COPY_IN)
            continue;
        bool inner = false;
        for (int32_t a = c->parent[i]; a >= 0 && !inner; a = c->parent[a])
            inner = event_phase(c, &tr->ev[a]) == SPAN_COPY_IN;
        if (!inner)
            mk[k++] = (marker){iter_of(rr, e->ts_ns), e->ts_ns};
    }
    nm_ = k;
    if (nm_ > 1)
        qsort(mk, nm_, sizeof *mk, cmp_marker);

    int ret = 0;
    size_t m = 0; /* markers consumed */
    for (size_t from = 0; from < n && ret == 0;) {
        size_t to = from;
        int32_t iter = rr->sp[order[from]].iter;
        while (to < n && rr->sp[order[to]].iter == iter)
            to++;
        int64_t bwd = first_backward(rr, order, from, to);
        int nb = 0;
        int64_t prev_launch = INT64_MIN;
        while (m < nm_ && mk[m].iter < iter)
            m++;
        for (size_t j = from; j < to; j++) {
            pspan *p = &rr->sp[order[j]];
            if (p->stream != STREAM_COMM || p->kind != SPAN_ALLREDUCE || p->launch < bwd)
                continue;
            int params = 0;
            while (m < nm_ && mk[m].iter == iter && mk[m].t <= p->launch) {
                params++;
                m++;
            }
            p->bucket = nb;
            cur[nb] = (ddp_bucket){p->bytes, params};
            /* The copies into this bucket: those launched since the previous bucket's. */
            for (size_t q = from; q < to; q++) {
                pspan *s = &rr->sp[order[q]];
                if (s->kind == SPAN_COPY_IN && s->launch > prev_launch && s->launch <= p->launch)
                    s->bucket = nb;
            }
            prev_launch = p->launch;
            nb++;
        }
        if (nb > 0) {
            ddp_bucket **dst = rr->first_buckets ? &rr->last_buckets : &rr->first_buckets;
            int *dn = rr->first_buckets ? &rr->nlast : &rr->nfirst;
            free(*dst);
            *dst = malloc((size_t)nb * sizeof **dst);
            if (!*dst) {
                set_err(err, errlen, "out of memory");
                ret = -1;
            } else {
                memcpy(*dst, cur, (size_t)nb * sizeof **dst);
                *dn = nb;
            }
        }
        from = to;
    }
    free(order);
    free(mk);
    free(cur);
    return ret;
}

/* ---- entry --------------------------------------------------------------------------------- */

static int classify_names(ctx *c, char *err, size_t errlen)
{
    trace_rank *tr = c->tr;
    size_t n = tr->names.n;
    c->ni = calloc(n ? n : 1, sizeof *c->ni);
    if (!c->ni) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = strtab_str(&tr->names, (int64_t)i);
        name_info *ni = &c->ni[i];
        long long num;
        span_kind gk;
        ni->phase = (int8_t)name_phase(s);
        ni->gloo = name_gloo(s, &gk) ? (int8_t)gk : -1;
        ni->step = name_profiler_step(s, &num);
        ni->launch = name_is_collective_launch(s);
        ni->c10d_allreduce = !strcmp(s, "c10d::allreduce_");
        ni->nccl = name_is_nccl_kernel(s);
        ni->nccl_annotation = !strncmp(s, "nccl:", 5);
        ni->hta = (uint8_t)name_hta_class(s);
    }
    return 0;
}

int rank_spans_build(rank_result *rr, trace_rank *tr, bool device_job, char *err, size_t errlen)
{
    memset(rr, 0, sizeof *rr);
    rr->tr = tr;
    rr->uncertainty = -1;
    ctx c = {.tr = tr, .rr = rr};
    size_t n = tr->nev;
    c.parent = malloc((n ? n : 1) * sizeof *c.parent);
    c.phase_op = malloc((n ? n : 1) * sizeof *c.phase_op);
    c.info_op = malloc((n ? n : 1) * sizeof *c.info_op);
    c.flags = calloc(n ? n : 1, 1);
    int ret = -1;
    if (!c.parent || !c.phase_op || !c.info_op || !c.flags) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        c.parent[i] = c.phase_op[i] = c.info_op[i] = -1;
    if (classify_names(&c, err, errlen) < 0 || build_steps(&c, err, errlen) < 0 ||
        nest_host(&c, err, errlen) < 0 || index_runtime(&c, err, errlen) < 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const tev *e = &tr->ev[i];
        int rc = 0;
        if (e->type == TEV_KERNEL || e->type == TEV_MEMCPY || e->type == TEV_MEMSET) {
            rr->has_device = true;
            rc = device_span(&c, i, err, errlen);
        } else if (e->type == TEV_CPU) {
            rc = host_span(&c, i, device_job, err, errlen);
        }
        if (rc < 0)
            goto out;
    }
    if (!device_job)
        pair_gloo_launches(&c);
    else if (lone_rank_collectives(&c, err, errlen) < 0)
        goto out;
    if (ddp_buckets(&c, err, errlen) < 0)
        goto out;
    ret = 0;
out:
    free(c.ni);
    free(c.parent);
    free(c.phase_op);
    free(c.info_op);
    free(c.flags);
    free(c.rt_by_corr);
    return ret;
}

void rank_result_free(rank_result *rr)
{
    free(rr->sp);
    free(rr->step_n);
    free(rr->step_start);
    free(rr->step_end);
    free(rr->first_buckets);
    free(rr->last_buckets);
    memset(rr, 0, sizeof *rr);
}
