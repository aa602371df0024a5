/* whatif.c — deriving a replayable scenario from a run's measurements (whatif.h). */
#include "engine/predict/whatif.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "common/strbuf.h"
#include "engine/ddp/bucket_plan.h"
#include "engine/device.h"
#include "engine/predict/fit_ring.h"
#include "engine/workload/model_zoo.h"
#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_spans.h"

#define MIB (1024.0 * 1024.0)
/* Bandwidth that makes a copy cost nothing apart: its time is inside the measured
 * intervals (the top of device.*_gbps's range). */
#define FREE_GBPS 1e6
/* Bytes the SGD step moves per parameter, as the trainer times it: it reads the
 * parameter and its gradient and writes the parameter, fp32 each. */
#define SGD_BYTES_PER_PARAM 12.0
/* The range of skew.speed (scenario_keys.c): a rank's derived speed factor is held
 * inside it rather than refused, since a rank 100 times off the median is an outlier
 * the replay should keep as far as the scenario can say. */
#define SPEED_FACTOR_MIN 0.01
#define SPEED_FACTOR_MAX 100.0
/* The lowest network.bandwidth_gbps a scenario accepts (scenario_keys.c): a fit that
 * gives less (a noisy or negative slope) is held there. */
#define MIN_BANDWIDTH_GBPS 0.001
/* The replay warms up at least one iteration: its iteration 0 is DDP's first, before
 * the rebuild, and never what the run's measured iterations were. */
#define MIN_REPLAY_WARMUP 1
/* At most this many models are tried for a run that names no model: the zoo's presets of
 * real jobs in their order (scenario_model_presets), then its MLP; the first whose
 * buckets are the run's is taken. */
#define ZOO_TRIED_MAX 8
/* The bucket caps (MB) tried for an imported trace, which records none (choose_model):
 * PyTorch's default (25) first, then the values users set, round numbers and powers of
 * two up to 256. */
static const double CAPS_USERS_SET[] = {25, 1, 2, 4, 5, 8, 10, 16, 20, 32, 40, 50, 64, 100, 128, 200, 256};
/* Initial capacities of arrays grown by doubling: a run's bucket allreduces and one
 * iteration's spans of a rank number in the tens to hundreds. */
#define BUSY_INITIAL_CAP 64
#define IVAL_INITIAL_CAP 256

/* What one rank did in one measured iteration (ns on the run's clock; -1: not seen). */
typedef struct {
    int64_t step_start, step_end, bwd_start, bwd_end, comm_end;
    int64_t work_end; /* the end of its last DDP phase op (an imported iteration's may pass its period) */
    int64_t *ready;   /* per bucket */
    /* as rank_mean timed it (-1: not used): the forward phase's start, the last bucket's ready */
    int64_t timed_from, timed_ready;
} rank_iter;

typedef struct {
    store *st;
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

/* Appends one remark and its newline to d->notes.  A derivation makes at most seven, of
 * at most a few hundred bytes each (a model's name is a preset's, under 32): some 1.5 KB,
 * well inside notes.  Should one not fit all the same, the notes end cut short in
 * "...\n", so that the cut shows. */
static void add_note(whatif_derived *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(whatif_derived *d, const char *fmt, ...)
{
    static const char cut[] = "...\n";
    size_t at = strlen(d->notes), room = sizeof d->notes - at; /* room: the NUL's byte too */
    int w = -1;
    if (room >= sizeof cut) {
        va_list ap;
        va_start(ap, fmt);
        w = vsnprintf(d->notes + at, room - 1, fmt, ap); /* a byte kept for the newline */
        va_end(ap);
        if (w < 0) {
            d->notes[at] = '\0'; /* a remark that cannot be formatted is left out */
            return;
        }
    }
    if (w < 0 || (size_t)w >= room - 1) {
        memcpy(d->notes + sizeof d->notes - sizeof cut, cut, sizeof cut);
        return;
    }
    d->notes[at + (size_t)w] = '\n';
    d->notes[at + (size_t)w + 1] = '\0';
}

static int read_run(source *s)
{
    store_run_header h;
    bool found;
    if (store_read_run(s->st, s->run, &h, &found, s->err, s->errlen) != 0)
        return -1;
    if (!found) {
        store_run_header_free(&h);
        set_err(s->err, s->errlen, "no run with id %lld", (long long)s->run);
        return -1;
    }
    snprintf(s->name, sizeof s->name, "%s", h.name);
    s->world = h.world_size;
    s->warmup = h.warmup;
    /* An imported trace records no cap (NULL, or 0). */
    s->bucket_cap_mb = isnan(h.bucket_cap_mb) || h.bucket_cap_mb <= 0 ? NAN : h.bucket_cap_mb;
    s->scenario_text = h.scenario; /* now the source's */
    h.scenario = NULL;
    store_run_header_free(&h);
    if (s->world < 1 || s->world > SCENARIO_MAX_WORLD) {
        set_err(s->err, s->errlen, "run %lld has %d ranks; whatif derives up to %d", (long long)s->run, s->world,
                SCENARIO_MAX_WORLD);
        return -1;
    }
    return 0;
}

/* One row of the rank table: its speed factor, and a place in held where its spans are kept. */
static int take_rank(const store_rank_row *row, void *ctx)
{
    source *s = ctx;
    int r = row->rank;
    if (r < 0 || r >= s->world)
        return 0;
    s->table_speed[r] = row->speed;
    if (row->spans != 0 && s->pos_of[r] < 0) { /* -1: not recorded, every rank's are kept */
        s->pos_of[r] = s->nheld;
        s->held[s->nheld++] = r;
    }
    return 0;
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
    if (store_each_rank(s->st, s->run, take_rank, s, s->err, s->errlen) != 0)
        return -1;
    if (s->nheld == 0) /* a file without rank rows: every rank */
        for (int r = 0; r < s->world; r++) {
            s->pos_of[r] = r;
            s->held[s->nheld++] = r;
        }
    if (store_run_has_device_spans(s->st, s->run, &s->device, s->err, s->errlen) != 0 ||
        store_run_has_span_kind(s->st, s->run, "step", &s->periods, s->err, s->errlen) != 0)
        return -1;
    return 0;
}

/* The latest assignment's buckets; sizes a trace did not give come from the collectives. */
static int read_buckets(source *s)
{
    if (store_read_latest_buckets(s->st, s->run, &s->version, &s->nb, s->err, s->errlen) != 0)
        return -1;
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
    if (store_read_latest_bucket_bytes(s->st, s->run, s->bucket_bytes, s->nb, s->err, s->errlen) != 0)
        return -1;
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

/* Which figure of a rank_iter a group of spans gives. */
typedef enum {
    SET_STEP,       /* step_start and step_end: the group's first start and last end */
    SET_STEP_START, /* step_start: its first start */
    SET_BWD_START,  /* bwd_start: its first start */
    SET_BWD_END,    /* bwd_end: its last end */
    SET_COMM_END,   /* comm_end: its last end */
    SET_READY,      /* ready[bucket]: its last end, per bucket */
} phase_field;

typedef struct {
    source *s;
    phase_field field;
} fill_ctx;

static int take_group(const store_span_group *g, void *ctx)
{
    const fill_ctx *f = ctx;
    rank_iter *r = at(f->s, g->rank, g->iter);
    if (!r)
        return 0;
    switch (f->field) {
    case SET_STEP:
        r->step_start = g->first_start_ns;
        r->step_end = g->last_end_ns;
        break;
    case SET_STEP_START:
        r->step_start = g->first_start_ns;
        break;
    case SET_BWD_START:
        r->bwd_start = g->first_start_ns;
        break;
    case SET_BWD_END:
        r->bwd_end = g->last_end_ns;
        break;
    case SET_COMM_END:
        r->comm_end = g->last_end_ns;
        break;
    case SET_READY:
        if (g->bucket >= 0 && g->bucket < f->s->nb)
            r->ready[g->bucket] = g->last_end_ns;
        break;
    }
    return 0;
}

/* Sets `field` of each measured rank-iteration from its spans of `kinds`; with
 * on_timeline, only the spans a phase is read from: on an imported device trace the
 * device's (the host runs ahead of them), everywhere else all; with of_bucket, only
 * spans of a bucket. */
static int fill(source *s, phase_field field, const char *const *kinds, int nkinds, bool on_timeline, bool of_bucket)
{
    store_span_groups q = {.kinds = kinds,
                           .nkinds = nkinds,
                           .iter_from = s->it0,
                           .device_only = on_timeline && s->device,
                           .of_bucket = of_bucket,
                           .per_bucket = field == SET_READY};
    fill_ctx f = {s, field};
    return store_each_span_group(s->st, s->run, &q, take_group, &f, s->err, s->errlen);
}

static const char *const DDP_PHASE_KINDS[] = {"forward", "backward", "copy_in", "allreduce", "copy_out", "optimizer"};
static const char *const FORWARD[] = {"forward"}, *const BACKWARD[] = {"backward"},
                         *const BACKWARD_AND_COPY_IN[] = {"backward", "copy_in"}, *const ALLREDUCE[] = {"allreduce"},
                         *const COPY_IN[] = {"copy_in"}, *const STEP[] = {"step"};
#define NKINDS(a) ((int)(sizeof a / sizeof a[0]))

static int read_iterations(source *s)
{
    /* The buckets measured are the latest assignment's: after the rebuild (DDP's first
     * synchronised iteration) and the warm-up. */
    bool any;
    int first, last;
    if (store_read_span_iterations(s->st, s->run, &any, &first, &last, s->err, s->errlen) != 0)
        return -1;
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
    if (fill(s, SET_STEP, DDP_PHASE_KINDS, NKINDS(DDP_PHASE_KINDS), true, false) != 0)
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
    if (fill(s, SET_STEP_START, FORWARD, NKINDS(FORWARD), true, false) != 0 ||
        fill(s, SET_BWD_START, BACKWARD, NKINDS(BACKWARD), true, false) != 0 ||
        fill(s, SET_BWD_END, BACKWARD_AND_COPY_IN, NKINDS(BACKWARD_AND_COPY_IN), true, false) != 0 ||
        fill(s, SET_COMM_END, ALLREDUCE, NKINDS(ALLREDUCE), false, true) != 0 ||
        fill(s, SET_READY, COPY_IN, NKINDS(COPY_IN), true, true) != 0)
        return -1;
    /* An imported iteration's step is the job's period (its 'step' span): the host's
     * stalls before the next iteration count, in the phase after the optimizer. */
    if (s->periods && fill(s, SET_STEP, STEP, NKINDS(STEP), false, false) != 0)
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

/* "a, b, c" of n doubles (malloc'ed; NULL when out of memory).  A strbuf: "%.0f" of a
 * large double has hundreds of digits. */
static char *list_text(const double *v, int n, const char *fmt)
{
    strbuf sb = STRBUF_INIT;
    for (int i = 0; i < n; i++) {
        if (i)
            strbuf_addstr(&sb, ", ");
        strbuf_addf(&sb, fmt, v[i]);
    }
    return strbuf_detach(&sb, NULL);
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

/* Loads the recorded run's scenario text, if it has one; false when it has none or the
 * text no longer reads (a scenario of an older ddpprof): the run is then derived as an
 * imported one would be. */
static bool recorded_scenario(const source *s, scenario *sc)
{
    if (!s->scenario_text)
        return false;
    char origin[64], why[SCENARIO_ERR];
    snprintf(origin, sizeof origin, "run %lld's scenario", (long long)s->run);
    return scenario_load_text(s->scenario_text, origin, sc, why, sizeof why) == 0;
}

/* Chooses the model: the recorded run's own, or --model, or a zoo preset that reproduces
 * the run's buckets; else the bucket-granularity model.  Sets the [model] keys. */
static int choose_model(source *s, const whatif_options *o, const rank_means *base, bool recorded, scenario *sc,
                        whatif_derived *d, char *err, size_t errlen)
{
    const char *tried[ZOO_TRIED_MAX];
    int ntried = 0;
    if (o && o->model)
        tried[ntried++] = o->model;
    else if (recorded)
        tried[ntried++] = sc->preset;
    else { /* every zoo preset a trace can be (custom needs its list), the toy mlp last */
        for (const char *const *p = scenario_model_presets; *p && ntried < ZOO_TRIED_MAX - 1; p++)
            if (strcmp(*p, "custom") != 0 && strcmp(*p, "mlp") != 0)
                tried[ntried++] = *p;
        tried[ntried++] = "mlp";
    }
    /* An imported trace does not say its bucket cap: the caps users set are tried, the
     * default first, and the one that gives the run's buckets is the run's.  Each with
     * the first bucket of 1 MiB, then with the first bucket the cap itself: PyTorch since
     * 2.3 (PR #121640) closes the first bucket at 1 MiB only when bucket_cap_mb was left
     * at its default, and at the cap when the user set one. */
    size_t ncaps = isnan(s->bucket_cap_mb) && !recorded ? sizeof CAPS_USERS_SET / sizeof CAPS_USERS_SET[0] : 1;
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
            double cap = ncaps > 1 ? CAPS_USERS_SET[c / 2] : cap0;
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

/* The bucket allreduces read so far, and where the previous one of the iteration ended. */
typedef struct {
    source *s;
    bucket_busy *v;
    size_t n, cap;
    int prev_iter;
    int64_t prev_end;
} busy_ctx;

static int take_allreduce(const store_bucket_allreduce *c, void *ctx)
{
    busy_ctx *k = ctx;
    source *s = k->s;
    int b = c->bucket;
    if (c->iter != k->prev_iter)
        k->prev_end = INT64_MIN;
    k->prev_iter = c->iter;
    int64_t ready = INT64_MIN;
    for (int i = 0; b >= 0 && b < s->nb && i < s->nheld; i++) {
        const rank_iter *r = at(s, s->held[i], c->iter);
        if (r && r->ready[b] > ready)
            ready = r->ready[b];
    }
    int64_t from = ready != INT64_MIN ? ready : c->last_arrival_ns;
    from = from > k->prev_end ? from : k->prev_end;
    k->prev_end = c->end_ns;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : BUSY_INITIAL_CAP;
        bucket_busy *g = realloc(k->v, cap * sizeof *g);
        if (!g) {
            set_err(s->err, s->errlen, "out of memory");
            return -1;
        }
        k->v = g;
        k->cap = cap;
    }
    k->v[k->n++] = (bucket_busy){b, c->bytes, c->end_ns > from ? (double)(c->end_ns - from) : 0.0};
    return 0;
}

static int read_bucket_busy(source *s, bucket_busy **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    busy_ctx k = {.s = s, .prev_iter = -1, .prev_end = INT64_MIN};
    if (store_each_bucket_allreduce(s->st, s->run, s->it0, take_allreduce, &k, s->err, s->errlen) != 0) {
        free(k.v);
        return -1;
    }
    *out = k.v;
    *nout = k.n;
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
typedef struct {
    source *s;
    int rank;
    int iter; /* the iteration whose spans are being gathered; INT32_MIN: none yet */
    ival *c, *f; /* its compute and its other collectives */
    size_t cap, nc, nf;
    double fsum, bsum;
    int used;
} comm_ctx;

/* An iteration's spans are all in: measure it, if rank_mean timed it. */
static void measure_iteration(comm_ctx *k)
{
    const rank_iter *r = at(k->s, k->rank, k->iter);
    if (r && r->timed_from >= 0) {
        k->nc = merge_ivals(k->c, k->nc);
        k->nf = merge_ivals(k->f, k->nf);
        k->fsum += (double)exposed_in(k->f, k->nf, k->c, k->nc, r->timed_from, r->bwd_start);
        k->bsum += (double)exposed_in(k->f, k->nf, k->c, k->nc, r->bwd_start, r->timed_ready);
        k->used++;
    }
    k->nc = k->nf = 0;
}

static int take_overlap_span(const store_overlap_span *v, void *ctx)
{
    comm_ctx *k = ctx;
    if (k->iter != INT32_MIN && v->iter != k->iter)
        measure_iteration(k);
    k->iter = v->iter;
    if (k->nc == k->cap || k->nf == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : IVAL_INITIAL_CAP;
        ival *c = realloc(k->c, cap * sizeof *c);
        if (c)
            k->c = c;
        ival *f = c ? realloc(k->f, cap * sizeof *f) : NULL;
        if (!f) {
            set_err(k->s->err, k->s->errlen, "out of memory");
            return -1;
        }
        k->f = f;
        k->cap = cap;
    }
    ival x = {v->start_ns, v->end_ns};
    if (v->comm)
        k->f[k->nf++] = x;
    else
        k->c[k->nc++] = x;
    return 0;
}

static int other_comm(source *s, int rank, double *fwd_ns, double *bwd_ns)
{
    *fwd_ns = *bwd_ns = 0;
    comm_ctx k = {.s = s, .rank = rank, .iter = INT32_MIN};
    int rc = store_each_overlap_span(s->st, s->run, rank, s->it0, s->device, take_overlap_span, &k, s->err,
                                     s->errlen);
    if (rc == 0 && k.iter != INT32_MIN)
        measure_iteration(&k);
    free(k.c);
    free(k.f);
    if (rc != 0)
        return -1;
    if (k.used > 0) {
        *fwd_ns = k.fsum / k.used;
        *bwd_ns = k.bsum / k.used;
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
        set_num(sc, "network.bandwidth_gbps", bw > MIN_BANDWIDTH_GBPS ? bw : MIN_BANDWIDTH_GBPS, err, errlen) != 0)
        return -1;
    add_note(d, "network: %d bucket sizes' allreduce times from the bucket's ready point on the last rank (measured at "
                "%d ranks); a ring of "
                "%.3g us a step and %.4g GB/s a link fitted to them for other world sizes",
             np, s->world, alpha, bw);
    return 0;
}

/* Each held rank's means over the measured iterations: *rm (nheld of them; the caller
 * frees rm[0].bwd_ns and rm, even on failure).  0, or -1 with s's err when out of memory
 * or when a rank has no measured iteration with every phase. */
static int measure_ranks(source *s, rank_means **rm)
{
    int nh = s->nheld;
    *rm = calloc((size_t)nh, sizeof **rm);
    double *bwd = *rm ? calloc((size_t)nh * (size_t)s->nb, sizeof *bwd) : NULL;
    double *scratch = malloc((size_t)s->nit * (size_t)(s->nb + 2) * sizeof *scratch);
    if (!*rm || !bwd || !scratch) {
        free(bwd);
        free(scratch);
        set_err(s->err, s->errlen, "out of memory");
        return -1;
    }
    int seen = 0;
    for (int i = 0; i < nh; i++) {
        (*rm)[i].bwd_ns = bwd + (size_t)i * (size_t)s->nb;
        seen += rank_mean(s, s->held[i], &(*rm)[i], scratch);
    }
    free(scratch);
    if (seen < nh) {
        set_err(s->err, s->errlen,
                "run %lld: %d of the %d ranks it holds have no measured iteration with a forward, a backward and every "
                "bucket's copies",
                (long long)s->run, nh - seen, nh);
        return -1;
    }
    return 0;
}

/* The representative rank: the median by compute (the lower of the two middle ones). */
static int median_rank(const rank_means *rm, int nh)
{
    int base = 0;
    for (int i = 0; i < nh; i++) {
        int below = 0;
        for (int q = 0; q < nh; q++)
            below += rm[q].total_ns < rm[i].total_ns || (rm[q].total_ns == rm[i].total_ns && q < i);
        if (below == (nh - 1) / 2)
            base = i;
    }
    return base;
}

/* Every rank's speed relative to the representative rank `base` (held index), into
 * speeds: a traced rank's own; a rank not traced, that of a traced rank in turn (the
 * traced ranks repeat over the world).  Returns how many speeds there are, and says how
 * they were found in d's notes. */
static int rank_speeds(const source *s, const rank_means *rm, int base, double *speeds, whatif_derived *d)
{
    int nh = s->nheld;
    int nspeeds = s->world <= SCENARIO_MAX_RANK_LIST ? s->world : nh;
    int nknown = 0; /* ranks without spans whose speed factor the rank table gives */
    for (int r = 0; r < nspeeds; r++) {
        double v;
        double own = s->table_speed[r], of_base = s->table_speed[s->held[base]];
        if (nspeeds == s->world && s->pos_of[r] < 0 && !isnan(own) && own > 0 && of_base > 0) {
            v = own / of_base; /* a recorded rank whose spans were not kept */
            nknown++;
        } else {
            int i = nspeeds == s->world && s->pos_of[r] >= 0 ? s->pos_of[r] : r % nh;
            v = rm[i].total_ns > 0 ? rm[base].total_ns / rm[i].total_ns : 1.0;
        }
        speeds[r] = v < SPEED_FACTOR_MIN ? SPEED_FACTOR_MIN : v > SPEED_FACTOR_MAX ? SPEED_FACTOR_MAX : v;
    }
    if (nknown > 0)
        add_note(d, "ranks: %d measured (their spans kept), %d by the speed factor the run recorded", nh, nknown);
    else if (nh < s->world)
        add_note(d, "ranks: %d of %d traced; the others take the traced ranks' speeds in turn, and a collective's "
                    "measured time (which holds the wait for the untraced ranks) stands for all",
                 nh, s->world);
    return nspeeds;
}

/* The replay's [run], [skew] and [ddp]: the sim backend, the run's world and measured
 * iterations, no skew but the ranks' speeds, the run's bucket limits. */
static int set_replay_run(source *s, scenario *sc, const rank_means *base, const double *speeds, int nspeeds,
                          char *err, size_t errlen)
{
    char name[160];
    snprintf(name, sizeof name, "whatif of run %lld", (long long)s->run); /* short: a sweep adds its point */
    int warmup = s->it0 - s->first_iter > MIN_REPLAY_WARMUP ? s->it0 - s->first_iter : MIN_REPLAY_WARMUP;
    if (set(sc, "run.name", name, err, errlen) != 0 || set(sc, "run.backend", "sim", err, errlen) != 0 ||
        set(sc, "run.ranks", "threads", err, errlen) != 0 ||
        set_num(sc, "run.world_size", s->world, err, errlen) != 0 ||
        set_num(sc, "run.iterations", base->iterations, err, errlen) != 0 ||
        set_num(sc, "run.warmup", warmup, err, errlen) != 0 || set(sc, "model.compute", "model", err, errlen) != 0 ||
        set(sc, "model.params_file", "", err, errlen) != 0 || set(sc, "skew.slow_ranks", "", err, errlen) != 0 ||
        set(sc, "skew.slowdown", "1", err, errlen) != 0 || set(sc, "skew.jitter", "0", err, errlen) != 0 ||
        set(sc, "skew.slow_fraction", "0", err, errlen) != 0 || set(sc, "skew.speed_sigma", "0", err, errlen) != 0 ||
        set_list(sc, "skew.speed", speeds, nspeeds, "%.6g", err, errlen) != 0 ||
        set(sc, "skew.speed_repeat", "true", err, errlen) != 0 ||
        set(sc, "ddp.broadcast_buffers", "false", err, errlen) != 0 || bucket_limits(s, sc, err, errlen) != 0)
        return -1;
    return 0;
}

/* The replay's [device]: memory free (the measured phases hold the copies), the
 * optimizer at the bandwidth that gives the representative rank's step for the derived
 * model's parameters, no hand-off. */
static int set_replay_device(scenario *sc, const rank_means *base, char *err, size_t errlen)
{
    model m;
    char merr[256];
    if (model_build(sc, &m, merr, sizeof merr) != 0) {
        set_err(err, errlen, "the derived model: %s", merr);
        return -1;
    }
    double opt_bytes = SGD_BYTES_PER_PARAM * (double)m.total_numel; /* the SGD step's, as the trainer times it */
    model_free(&m);
    double opt_gbps = base->opt_ns > 0 ? opt_bytes / base->opt_ns : FREE_GBPS;
    if (set_num(sc, "device.mem_bw_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.copy_out_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.grad_write_gbps", FREE_GBPS, err, errlen) != 0 ||
        set_num(sc, "device.optimizer_gbps", opt_gbps < FREE_GBPS ? opt_gbps : FREE_GBPS, err, errlen) != 0 ||
        set(sc, "device.op_overhead_us", "0", err, errlen) != 0 || set(sc, "device.comm_slowdown", "0", err, errlen) != 0)
        return -1;
    return 0;
}

/* Collectives other than DDP's in `rank`'s forward and backward, kept in the model
 * where they ran (model.forward_comm_us, backward_comm_us) and said in d's notes. */
static int set_other_comm(source *s, int rank, scenario *sc, whatif_derived *d, char *err, size_t errlen)
{
    double fwd_comm, bwd_comm;
    if (other_comm(s, rank, &fwd_comm, &bwd_comm) != 0)
        return -1;
    if (fwd_comm <= 0 && bwd_comm <= 0)
        return 0;
    if (set_num(sc, "model.forward_comm_us", fwd_comm / 1e3, err, errlen) != 0 ||
        set_num(sc, "model.backward_comm_us", bwd_comm / 1e3, err, errlen) != 0 ||
        set_num(sc, "model.comm_ranks", s->world, err, errlen) != 0)
        return -1;
    add_note(d, "other collectives: %.3f ms of the forward and %.3f ms of the backward are collectives other than "
                "DDP's with no compute beside them; they stay where they ran and scale with the world size as "
                "(n-1)/n (those after the backward stay as measured)",
             fwd_comm / 1e6, bwd_comm / 1e6);
    return 0;
}

int whatif_derive(store *st, int64_t run_id, const whatif_options *o, whatif_derived *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    source s = {.st = st, .run = run_id, .err = err, .errlen = errlen};
    rank_means *rm = NULL;
    double *speeds = NULL;
    int rc = -1;
    out->sc = calloc(1, sizeof *out->sc); /* zeroed: holds nothing, whatif_free() may free it */
    if (!out->sc) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    if (read_run(&s) != 0 || read_ranks(&s) != 0 || read_buckets(&s) != 0 || read_iterations(&s) != 0 ||
        read_phases(&s) != 0 || equivalent_sizes(&s, out) != 0 || measure_ranks(&s, &rm) != 0)
        goto out;
    speeds = malloc((size_t)s.world * sizeof *speeds);
    if (!speeds) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    int base = median_rank(rm, s.nheld);
    int nspeeds = rank_speeds(&s, rm, base, speeds, out);
    scenario *sc = out->sc;
    bool recorded = recorded_scenario(&s, sc);
    if (!recorded)
        scenario_defaults(sc);
    if (set_replay_run(&s, sc, &rm[base], speeds, nspeeds, err, errlen) != 0)
        goto out;
    scenario_reset_section(sc, "host");
    scenario_reset_section(sc, "fault");
    if (choose_model(&s, o, &rm[base], recorded, sc, out, err, errlen) != 0 ||
        set_replay_device(sc, &rm[base], err, errlen) != 0 || derive_network(&s, sc, out, err, errlen) != 0 ||
        set_other_comm(&s, s.held[base], sc, out, err, errlen) != 0)
        goto out;
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
    free(speeds);
    return rc;
}

void whatif_free(whatif_derived *d)
{
    scenario_free(d->sc);
    free(d->sc);
    d->sc = NULL;
}
