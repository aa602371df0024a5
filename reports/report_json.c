/* report_json.c — the JSON report: {"runs": [...]} with unit-suffixed keys.
 *
 * Contract (report.h): formats analysis_run structs only.  Keys carry their unit
 * (_ms, _pct, _gbps, bytes); undefined figures (NAN) and absent texts are null, since
 * JSON has no NaN.  Built with jansson; an allocation failure anywhere fails the whole
 * report rather than writing a partial document.
 */
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>

#include <jansson.h>

#include "common/errmsg.h"
#include "reports/report.h"


/* A number, or null where the figure is undefined. */
static json_t *num(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

/* subset: the run holds a few of its job's ranks; the exposed communication beyond the
 * wait for traced ranks is then the transfer and the wait for the untraced ones
 * together (exposed_transfer_or_untraced_wait_ms), and exposed_transfer_ms is null. */
static json_t *rank_json(const analysis_rank *k, bool subset, json_error_t *je)
{
    json_t *o = json_pack_ex(je, 0,
                        "{s:i, s:o, s:b, s:i, s:o, s:o, s:o, s:o, s:o, s:o,"
                        " s:{s:o, s:o, s:o, s:o}, s:o, s:o, s:o, s:o}",
                        "rank", k->rank, "speed", num(k->speed), "spans", k->spans, "iterations", k->iterations,
                        "step_ms", num(k->step_ms), "compute_ms", num(k->compute_ms), "comm_ms",
                        num(k->comm_ms), "overlap_pct", num(k->overlap_pct), "exposed_comm_ms",
                        num(k->exposed_comm_ms), "wait_ms", num(k->wait_ms), "attribution",
                        "compute_ms", num(k->attr_compute_ms), "exposed_transfer_ms",
                        num(k->attr_exposed_transfer_ms), "exposed_wait_ms",
                        num(k->attr_exposed_wait_ms), "other_ms", num(k->attr_other_ms),
                        "comm_overlap_pct", num(k->comm_overlap_pct), "idle_pct", num(k->idle_pct),
                        "compute_pct", num(k->compute_pct), "non_compute_pct", num(k->non_compute_pct));
    json_t *a = o ? json_object_get(o, "attribution") : NULL;
    if (subset && a &&
        (json_object_set_new(a, "exposed_transfer_or_untraced_wait_ms", num(k->attr_exposed_transfer_ms)) != 0 ||
         json_object_set_new(a, "exposed_transfer_ms", json_null()) != 0)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *bucket_json(const analysis_bucket *b, json_error_t *je)
{
    return json_pack_ex(je, 0, "{s:i, s:I, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o}", "idx",
                        b->idx, "bytes", (json_int_t)b->bytes, "nparams", b->nparams,
                        "collectives", b->collectives, "ready_samples", b->ready_samples,
                        "ready_ms", num(b->ready_ms), "launch_delay_ms", num(b->launch_delay_ms),
                        "arrival_skew_ms", num(b->arrival_skew_ms), "transfer_ms",
                        num(b->transfer_ms), "busbw_gbps", num(b->busbw_gbps));
}

/* The ranks whose spans are stored, null when every rank's are. */
static json_t *spans_ranks_json(const analysis_run *r)
{
    if (r->ranks_with_spans == r->nranks)
        return json_null();
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nranks; i++)
        if (r->ranks[i].spans && json_array_append_new(a, json_integer(r->ranks[i].rank)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *sources_json(const analysis_run *r, json_error_t *je)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nsources; i++) {
        const analysis_source *f = &r->sources[i];
        json_t *o = json_pack_ex(je, 0, "{s:s?, s:I, s:s?, s:s?, s:o, s:s?}", "path", f->path, "bytes",
                                 (json_int_t)f->bytes, "sha256", f->sha256, "format", f->format, "rank",
                                 f->rank >= 0 ? json_integer(f->rank) : json_null(), "rank_from", f->rank_from);
        if (json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *run_json(const analysis_run *r, json_error_t *je)
{
    json_t *ranks = json_array(), *buckets = json_array();
    if (!ranks || !buckets)
        goto fail;
    for (size_t i = 0; i < r->nranks; i++)
        if (json_array_append_new(ranks, rank_json(&r->ranks[i], analysis_is_subset(r), je)) != 0)
            goto fail;
    for (size_t i = 0; i < r->nbuckets; i++)
        if (json_array_append_new(buckets, bucket_json(&r->buckets[i], je)) != 0)
            goto fail;
    /* "s?" packs NULL strings as null; "o" steals the arrays even on failure. */
    json_t *run = json_pack_ex(
        je, 0,
        "{s:I, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:i, s:s?, s:I, s:s?, s:s?, s:s?,"
        " s:i, s:i, s:o, s:i, s:i, s:b, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:i, s:o, s:o, s:s}",
        "id", (json_int_t)r->id, "name", r->name, "status", r->status, "status_detail",
        r->status_detail, "error", r->error,
        "backend", r->backend, "placement", r->placement, "world_size", r->world_size, "model", r->model, "total_params",
        (json_int_t)r->total_params, "source", r->source, "started_at", r->started_at,
        "finished_at", r->finished_at, "iterations_planned", r->iterations_planned,
        "warmup_planned", r->warmup_planned, "bucket_cap_mb", num(r->bucket_cap_mb),
        "iterations_measured", r->iterations_measured, "iterations_warmup", r->iterations_warmup,
        "all_iterations", r->all_iterations, "buckets_initial", r->buckets_initial,
        "buckets_rebuilt", r->buckets_rebuilt, "bucket_version", r->bucket_version, "steps",
        r->steps, "step_ms_mean", num(r->step_ms_mean), "step_ms_min", num(r->step_ms_min),
        "step_ms_max", num(r->step_ms_max), "representative_iter", r->representative_iter, "ranks", ranks, "buckets",
        buckets, "record_detail", r->phase_spans ? "phase" : "op");
    if (!run)
        return NULL;
    /* Added apart: json_pack's format has room for 32 pairs at most per call. */
    /* overrides: the stored JSON object ({} for none, and in a file older than schema 7;
     * null where the text is not JSON); verified: true, false or null (not asked). */
    json_t *over = r->overrides ? json_loads(r->overrides, 0, NULL) : json_object();
    json_t *stragglers = json_array();
    for (size_t i = 0; stragglers && i < r->nstragglers; i++)
        if (json_array_append_new(stragglers, json_integer(r->stragglers[i])) != 0) {
            json_decref(stragglers);
            stragglers = NULL;
        }
    json_t *extra = json_pack_ex(je, 0, "{s:o, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "spans_ranks",
                                 spans_ranks_json(r), "hta_steps", r->hta_steps,
                                 "clock_sync", r->clock_sync, "notes", r->notes, "source_files",
                                 sources_json(r, je), "straggler_rank",
                                 r->straggler_rank >= 0 ? json_integer(r->straggler_rank) : json_null(),
                                 "stragglers", stragglers ? stragglers : json_null(),
                                 "straggler_others_wait_ms", num(r->straggler_others_wait_ms), "overrides",
                                 over ? over : json_null(), "verified",
                                 r->verified < 0 ? json_null() : json_boolean(r->verified),
                                 "sweep", r->sweep >= 0 ? json_integer(r->sweep) : json_null());
    /* ranks_traced: the ranks the run holds (an imported trace may hold a few of its
     * world; every rank otherwise). */
    json_t *held = json_array();
    for (size_t i = 0; held && i < r->nranks; i++)
        if (json_array_append_new(held, json_integer(r->ranks[i].rank)) != 0) {
            json_decref(held);
            held = NULL;
        }
    if (extra && (!held || json_object_set_new(extra, "ranks_traced", held) != 0 ||
                  json_object_set_new(extra, "host_step_ms_mean", num(r->host_step_ms_mean)) != 0 ||
                  json_object_set_new(extra, "host_steps", json_integer(r->host_steps)) != 0)) {
        json_decref(extra);
        extra = NULL;
    }
    if (!extra || json_object_update(run, extra) != 0) {
        json_decref(extra);
        json_decref(run);
        return NULL;
    }
    json_decref(extra);
    return run;
fail:
    json_decref(ranks);
    json_decref(buckets);
    return NULL;
}

int report_json(FILE *out, const analysis_run *runs, size_t nruns, char *err, size_t errlen)
{
    json_error_t je = {0};
    json_t *arr = json_array();
    if (!arr)
        goto oom;
    for (size_t i = 0; i < nruns; i++)
        if (json_array_append_new(arr, run_json(&runs[i], &je)) != 0)
            goto oom;
    json_t *root = json_pack_ex(&je, 0, "{s:o}", "runs", arr);
    if (!root)
        goto fail_msg;
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing report failed");
        return -1;
    }
    return 0;
oom:
    json_decref(arr);
fail_msg:
    set_err(err, errlen, "building JSON report: %s", je.text[0] ? je.text : "out of memory");
    return -1;
}
