/* compare_json.c — the comparison of two runs as JSON (compare.h), built with jansson;
 * undefined figures are null. */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "reports/compare.h"
#include "reports/compare_match.h"
#include "common/errmsg.h"

static json_t *num(double v) { return isnan(v) || isinf(v) ? json_null() : json_real(v); }

/* {a, b, diff, rel_pct} */
static json_t *quad(double a, double b)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "a", num(a), "b", num(b), "diff",
                     num(isnan(a) || isnan(b) ? NAN : b - a), "rel_pct", num(compare_rel_pct(a, b)));
}

static double field(const void *base, size_t offset)
{
    double v;
    memcpy(&v, (const char *)base + offset, sizeof v);
    return v;
}

static json_t *run_json(const analysis_run *r)
{
    return json_pack("{s:I, s:s?, s:s?, s:s?, s:i, s:s?, s:I, s:i}", "id", (json_int_t)r->id, "name", r->name,
                     "backend", r->backend, "status", r->status, "world_size", r->world_size, "model", r->model,
                     "buckets", (json_int_t)r->nbuckets, "steps", r->steps);
}

/* Sets key to value, stealing it; -1 when either is missing. */
static int put(json_t *obj, const char *key, json_t *value)
{
    return obj && value ? json_object_set_new(obj, key, value) : (json_decref(value), -1);
}

static json_t *ranks_json(const analysis_run *a, const analysis_run *b, const compare_match_t *m)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < m->nranks; i++) {
        const analysis_rank *x = &a->ranks[m->rank_pairs[i][0]], *y = &b->ranks[m->rank_pairs[i][1]];
        json_t *o = json_pack("{s:i}", "rank", x->rank);
        int rc = o ? 0 : -1;
        for (size_t k = 0; rc == 0 && k < compare_nrank_metrics; k++)
            rc = put(o, compare_rank_metrics[k].name, quad(field(x, compare_rank_metrics[k].offset),
                                                           field(y, compare_rank_metrics[k].offset)));
        if (rc != 0 || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *buckets_json(const analysis_run *a, const analysis_run *b, const compare_match_t *m)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < m->nbuckets; i++) {
        const analysis_bucket *x = &a->buckets[m->bucket_pairs[i][0]], *y = &b->buckets[m->bucket_pairs[i][1]];
        json_t *o = json_pack("{s:i}", "idx", x->idx);
        int rc = o ? put(o, "bytes", quad((double)x->bytes, (double)y->bytes)) : -1;
        for (size_t k = 0; rc == 0 && k < compare_nbucket_metrics; k++)
            rc = put(o, compare_bucket_metrics[k].name, quad(field(x, compare_bucket_metrics[k].offset),
                                                             field(y, compare_bucket_metrics[k].offset)));
        if (rc != 0 || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

int compare_json(FILE *out, const analysis_run *a, const analysis_run *b, const compare_match_t *m, char *err,
                 size_t errlen)
{
    json_t *root = json_object(), *notes = json_array();
    int rc = root && notes ? 0 : -1;
    for (int i = 0; rc == 0 && i < m->nnotes; i++)
        rc = json_array_append_new(notes, json_string(m->notes[i]));
    if (rc == 0)
        rc = put(root, "a", run_json(a));
    if (rc == 0)
        rc = put(root, "b", run_json(b));
    if (rc == 0)
        rc = put(root, "step_ms", quad(a->step_ms_mean, b->step_ms_mean));
    if (rc == 0)
        rc = put(root, "ranks", ranks_json(a, b, m));
    if (rc == 0)
        rc = put(root, "buckets", buckets_json(a, b, m));
    if (rc == 0) {
        rc = put(root, "not_compared", notes);
        notes = NULL;
    }
    json_decref(notes);
    if (rc != 0) {
        json_decref(root);
        set_err(err, errlen, "building the JSON comparison: out of memory");
        return -1;
    }
    rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing the comparison failed");
        return -1;
    }
    return 0;
}
