/* equivalence.c — one rank vs N ranks vs the hand-written sync, weights compared
 * (see equivalence.h). */
#include "engine/launch/equivalence.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/workload/dataset.h"
#include "engine/workload/real_training.h"
#include "common/textcopy.h"
#include "profiler/store_equivalence.h"

typedef enum { V_REFERENCE = 0, V_DDP, V_MANUAL, V_LOSS_SCALED, V_LR_SCALED, V_COUNT } variant_kind;

static const char *const variant_names[V_COUNT] = {"reference", "ddp", "hand-written", "ddp, loss x N",
                                                   "ddp, lr x N"};

/* Each rank's weights after its last synchronised step, flat in registration order. */
typedef struct {
    int64_t numel;
    float *w[SCENARIO_MAX_RANK_LIST];
} capture;

static int capture_hook(void *user, int rank, int iter, int micro_first, int micro_last, const dev_param *params,
                        int nparams, char *err, size_t errlen)
{
    (void)iter, (void)micro_first, (void)micro_last, (void)err, (void)errlen;
    capture *c = user;
    float *dst = c->w[rank]; /* each rank writes only its own buffer */
    for (int p = 0; p < nparams; p++) {
        memcpy(dst, params[p].data, (size_t)params[p].numel * sizeof *dst);
        dst += params[p].numel;
    }
    return 0;
}

typedef struct {
    double max_abs_diff, rel_to_update, update_ratio, replica_max_diff;
    double max_abs_weight; /* the reference's largest weight, the scale of fp32 rounding */
    double step_ms, overlap_pct, collectives_per_step;
} figures;

static void compare(const capture *c, int world, const float *ref, const float *w0, figures *f)
{
    double max_diff = 0, max_ref_move = 0, move2 = 0, ref_move2 = 0, replica = 0, max_w = 0;
    for (int64_t i = 0; i < c->numel; i++) {
        double w = c->w[0][i], r = ref[i], z = w0[i];
        max_diff = fmax(max_diff, fabs(w - r));
        max_ref_move = fmax(max_ref_move, fabs(r - z));
        max_w = fmax(max_w, fabs(r));
        move2 += (w - z) * (w - z);
        ref_move2 += (r - z) * (r - z);
        for (int q = 1; q < world; q++)
            replica = fmax(replica, fabs((double)c->w[q][i] - w));
    }
    f->max_abs_diff = max_diff;
    f->rel_to_update = max_ref_move > 0 ? max_diff / max_ref_move : NAN;
    f->update_ratio = ref_move2 > 0 ? sqrt(move2 / ref_move2) : NAN;
    f->replica_max_diff = replica;
    f->max_abs_weight = max_w;
}

/* The weights differ by no more than fp32 rounding of the per-rank partial sums. */
static bool within_rounding(const figures *f, int steps)
{
    return f->rel_to_update <= EQUIVALENCE_ROUNDING ||
           f->max_abs_diff <= EQUIVALENCE_ULPS_PER_STEP * FLT_EPSILON * steps * f->max_abs_weight;
}

/* The run's timing figures, as its row records them. */
static int timing_figures(store *st, int64_t run_id, figures *f, char *err, size_t errlen)
{
    store_equivalence_timing t;
    if (store_read_equivalence_timing(st, run_id, &t, err, errlen) != 0)
        return -1;
    f->step_ms = t.step_ms;
    f->overlap_pct = t.overlap_pct;
    f->collectives_per_step = t.collectives_per_step;
    return 0;
}

/* out (holding nothing) becomes the variant: 0, or -1 with err (the caller frees out). */
static int make_variant(const scenario *sc, variant_kind v, scenario *out, char *err, size_t errlen)
{
    if (scenario_copy(out, sc, err, errlen) != 0)
        return -1;
    int n = sc->world_size;
    out->equivalence = false;
    out->global_batch = dataset_per_rank_batch(sc) * n;
    char suffix[64];
    switch (v) {
    case V_REFERENCE:
        out->world_size = 1;
        out->nodes = out->gpus_per_node = 0;
        out->nspeed = out->nslow = 0;
        out->slowdown = 1;
        out->fault = FAULT_NONE;
        out->fault_rank = -1;
        break;
    case V_DDP:
        break;
    case V_MANUAL:
        out->sync = SYNC_MANUAL;
        break;
    case V_LOSS_SCALED:
        out->loss_scale = sc->loss_scale * n;
        break;
    case V_LR_SCALED:
        out->lr = sc->lr * n;
        break;
    case V_COUNT:
        break;
    }
    snprintf(suffix, sizeof suffix, " [%s, %d rank%s]", variant_names[v], out->world_size,
             out->world_size == 1 ? "" : "s");
    size_t len = strlen(out->name);
    if (len + strlen(suffix) < sizeof out->name)
        memcpy(out->name + len, suffix, strlen(suffix) + 1);
    return 0;
}

static void verdict(const scenario *v, variant_kind kind, int n, const figures *f, char *buf, size_t len)
{
    if (kind == V_REFERENCE) {
        snprintf(buf, len, "reference: 1 rank, global batch %d", v->global_batch);
    } else if (within_rounding(f, v->warmup + v->iterations)) {
        snprintf(buf, len, "same weights (fp32 rounding)%s",
                 kind == V_MANUAL ? "; no overlap, one allreduce per parameter" : "");
    } else if (v->loss_reduction == LOSS_SUM && fabs(f->update_ratio * n - 1.0) < 0.05) {
        snprintf(buf, len,
                 "update 1/%d of the reference's: DDP averages, so a sum loss gives the global sum / %d; fix: "
                 "model.loss_scale = %d (loss x N) or model.lr = %g (lr x N)",
                 n, n, n, v->lr * n);
    } else {
        snprintf(buf, len, "differs from the reference");
    }
}

static int write_row(store *st, int64_t group, int64_t run_id, const scenario *v, variant_kind kind, int steps,
                     const figures *f, const char *why, char *err, size_t errlen)
{
    store_equivalence_row row = {.group_id = group,
                                 .run_id = run_id,
                                 .variant = variant_names[kind],
                                 .world_size = v->world_size,
                                 .nodes = v->nodes > 0 ? v->nodes : 0,
                                 .gpus_per_node = v->nodes > 0 ? v->gpus_per_node : 0,
                                 .loss_reduction = v->loss_reduction == LOSS_SUM ? "sum" : "mean",
                                 .loss_scale = v->loss_scale,
                                 .lr = v->lr,
                                 .steps = steps,
                                 .max_abs_diff = f->max_abs_diff,
                                 .rel_to_update = f->rel_to_update,
                                 .update_ratio = f->update_ratio,
                                 .replica_max_diff = f->replica_max_diff,
                                 .step_ms = f->step_ms,
                                 .overlap_pct = f->overlap_pct,
                                 .collectives_per_step = f->collectives_per_step,
                                 .verdict = why};
    return store_write_equivalence(st, &row, err, errlen);
}

static void capture_free(capture *c)
{
    for (int r = 0; r < SCENARIO_MAX_RANK_LIST; r++)
        free(c->w[r]);
    memset(c, 0, sizeof *c);
}

static int capture_alloc(capture *c, int64_t numel, int world)
{
    memset(c, 0, sizeof *c);
    c->numel = numel;
    for (int r = 0; r < world; r++)
        if (!(c->w[r] = calloc((size_t)numel, sizeof(float))))
            return -1;
    return 0;
}

/* Trains one variant and records its row; *ref holds the reference's weights once the
 * reference has run.  0, 1 (the run failed), or -1 with err. */
static int train_variant(const scenario *sc, variant_kind kind, store *st, const backend_ops *be,
                         const launch_options *base, int64_t *group, float **ref, const float *w0, char *err,
                         size_t errlen)
{
    scenario *v = malloc(sizeof *v);
    model m;
    capture c;
    if (!v)
        goto oom;
    if (make_variant(sc, kind, v, err, errlen) != 0 || model_build(v, &m, err, errlen) != 0) {
        scenario_free(v);
        free(v);
        return -1;
    }
    if (capture_alloc(&c, m.total_numel, v->world_size) != 0) {
        capture_free(&c);
        model_free(&m);
        scenario_free(v);
        free(v);
        goto oom;
    }
    launch_options opt = *base;
    opt.verify = false;
    opt.on_sync = capture_hook;
    opt.on_sync_user = &c;
    opt.label = v->name;
    launch_result res;
    int rc = launch_run(v, &m, st, be, &opt, &res, err, errlen);
    if (rc == 0) {
        figures f;
        if (kind == V_REFERENCE) {
            *group = res.run_id;
            *ref = c.w[0];
            c.w[0] = NULL;
            memset(&f, 0, sizeof f);
            f.update_ratio = 1;
            f.replica_max_diff = 0;
        } else {
            compare(&c, v->world_size, *ref, w0, &f);
        }
        char why[512];
        rc = timing_figures(st, res.run_id, &f, err, errlen);
        if (rc == 0) {
            verdict(v, kind, sc->world_size, &f, why, sizeof why);
            rc = write_row(st, *group, res.run_id, v, kind, v->warmup + v->iterations, &f, why, err, errlen);
        }
    } else if (rc == 1) {
        snprintf(err, errlen, "run %lld (%s) failed: %s", (long long)res.run_id, v->name, res.error);
    }
    capture_free(&c);
    model_free(&m);
    scenario_free(v);
    free(v);
    return rc;
oom:
    snprintf(err, errlen, "out of memory for the equivalence check");
    return -1;
}

int equivalence_run(const scenario *sc, store *st, const backend_ops *be, const launch_options *base,
                    int64_t *group_id, char *err, size_t errlen)
{
    *group_id = -1;
    if (store_ensure_equivalence_table(st, err, errlen) != 0)
        return -1;
    model m;
    if (model_build(sc, &m, err, errlen) != 0)
        return -1;
    float *w0 = malloc((size_t)m.total_numel * sizeof *w0);
    if (!w0) {
        model_free(&m);
        snprintf(err, errlen, "out of memory for the equivalence check");
        return -1;
    }
    real_training_initial_weights(sc, &m, w0);
    model_free(&m);
    float *ref = NULL;
    int rc = 0;
    for (int v = 0; v < V_COUNT && rc == 0; v++) {
        if ((v == V_LOSS_SCALED || v == V_LR_SCALED) && sc->loss_reduction != LOSS_SUM)
            continue;
        if (base->interrupted && atomic_load(base->interrupted)) {
            snprintf(err, errlen, "interrupted");
            rc = 1;
            break;
        }
        rc = train_variant(sc, (variant_kind)v, st, be, base, group_id, &ref, w0, err, errlen);
    }
    free(ref);
    free(w0);
    return rc;
}
