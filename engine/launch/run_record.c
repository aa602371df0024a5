/* run_record.c — the run, rank, param and bucket rows of one run (see run_record.h). */
#include "engine/launch/run_record.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/ddp/bucket_plan.h"

static void shape_text(const model_param *p, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < p->ndims; d++) {
        int w = snprintf(out + len, outlen - len, "%s%lld", d ? "x" : "", (long long)p->shape[d]);
        if (w < 0 || (size_t)w >= outlen - len)
            break;
        len += (size_t)w;
    }
}

int run_record_assignment(store *st, int64_t run_id, int version, const bucket_assignment *a, char *err,
                          size_t errlen)
{
    store_bucket *sb = calloc((size_t)(a->nbuckets ? a->nbuckets : 1), sizeof *sb);
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int b = 0; b < a->nbuckets; b++) {
        sb[b].nbytes = a->buckets[b].nbytes;
        sb[b].size_limit = a->buckets[b].size_limit;
        sb[b].nparams = a->buckets[b].nparams;
        sb[b].params = a->buckets[b].params;
    }
    int rc = store_write_buckets(st, run_id, version, sb, a->nbuckets, err, errlen);
    free(sb);
    return rc;
}

static int record_model(store *st, int64_t run_id, const scenario *sc, const model *m, char *err, size_t errlen)
{
    for (int p = 0; p < m->nparams; p++) {
        char shape[96];
        shape_text(&m->params[p], shape, sizeof shape);
        if (store_write_param(st, run_id, p, m->params[p].name, m->params[p].numel, shape,
                              m->layers[m->params[p].layer].name, err, errlen) != 0)
            return -1;
    }
    bucket_assignment initial;
    if (bucket_plan_initial(m, sc, &initial) != 0) {
        snprintf(err, errlen, "out of memory computing the bucket assignment");
        return -1;
    }
    int rc = run_record_assignment(st, run_id, 0, &initial, err, errlen);
    bucket_assignment_free(&initial);
    return rc;
}

int run_record_begin(store *st, const scenario *sc, const model *m, const char *backend, const bool *rank_spans,
                     int64_t *run_id, char *err, size_t errlen)
{
    int world = sc->world_size;
    double *speeds = calloc((size_t)world, sizeof *speeds);
    char *ini = scenario_to_ini(sc);
    if (!speeds || !ini) {
        free(speeds);
        free(ini);
        snprintf(err, errlen, "out of memory describing the run");
        return -1;
    }
    for (int r = 0; r < world; r++)
        speeds[r] = scenario_rank_speed(sc, r);
    store_run_info info = {.name = sc->name,
                           .source = sc->source,
                           .scenario_ini = ini,
                           .backend = backend,
                           .model = m->name,
                           .world_size = world,
                           .iterations = sc->iterations,
                           .warmup = sc->warmup,
                           .total_params = m->total_numel,
                           .bucket_cap_mb = sc->bucket_cap_mb,
                           .rank_speed = speeds,
                           .rank_spans = rank_spans};
    int rc = store_begin_run(st, &info, run_id, err, errlen);
    free(ini);
    free(speeds);
    if (rc != 0)
        return -1;
    if (record_model(st, *run_id, sc, m, err, errlen) != 0) {
        char ignored[256];
        store_finish_run(st, *run_id, err, ignored, sizeof ignored);
        return -1;
    }
    return 0;
}

int run_record_finish(store *st, int64_t run_id, const char *failure, char *err, size_t errlen)
{
    return store_finish_run(st, run_id, failure && failure[0] ? failure : NULL, err, errlen);
}
