/* report_text.c — the text report: a header per run and aligned tables with units.
 *
 * Contract (report.h): formats analysis_run structs only, computes nothing beyond
 * presentation.  Durations print in ms with 3 decimals (µs resolution), percentages
 * with 1, undefined figures (NAN) as "-".  Columns are sized to their widest cell so
 * the tables stay aligned for any model size.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/errmsg.h"
#include "reports/report.h"

#define CELL 48

typedef struct {
    size_t ncols, nrows;
    const char *const *heads;
    char (*cells)[CELL]; /* nrows * ncols */
} table;


static int table_init(table *t, const char *const *heads, size_t ncols, size_t nrows)
{
    t->heads = heads;
    t->ncols = ncols;
    t->nrows = nrows;
    t->cells = calloc(ncols * (nrows ? nrows : 1), sizeof *t->cells);
    return t->cells ? 0 : -1;
}

__attribute__((format(printf, 4, 5))) static void cell(table *t, size_t row, size_t col,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->cells[row * t->ncols + col], CELL, fmt, ap);
    va_end(ap);
}

static void cell_num(table *t, size_t row, size_t col, double v, int decimals)
{
    if (isnan(v))
        cell(t, row, col, "-");
    else
        cell(t, row, col, "%.*f", decimals, v);
}

/* Right-aligned columns, two spaces apart, indented under the run header. */
static void table_print(FILE *out, const table *t)
{
    size_t w[32] = {0};
    for (size_t c = 0; c < t->ncols && c < 32; c++) {
        w[c] = strlen(t->heads[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t n = strlen(t->cells[r * t->ncols + c]);
            if (n > w[c])
                w[c] = n;
        }
    }
    fputs("  ", out);
    for (size_t c = 0; c < t->ncols; c++)
        fprintf(out, "%s%*s", c ? "  " : "", (int)w[c], t->heads[c]);
    fputc('\n', out);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs("  ", out);
        for (size_t c = 0; c < t->ncols; c++)
            fprintf(out, "%s%*s", c ? "  " : "", (int)w[c], t->cells[r * t->ncols + c]);
        fputc('\n', out);
    }
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static void print_ms(FILE *out, double v)
{
    if (isnan(v))
        fputs("-", out);
    else
        fprintf(out, "%.3f ms", v);
}

/* The command line's settings and sweep point ("section.key=value, ..."), the sweep
 * the run belongs to, and --verify's verdict. */
static void print_provenance(FILE *out, const analysis_run *r)
{
    json_t *o = r->overrides ? json_loads(r->overrides, 0, NULL) : NULL;
    if (json_is_object(o) && json_object_size(o) > 0) {
        fputs("  overrides   ", out);
        const char *k;
        json_t *v;
        bool first = true;
        json_object_foreach(o, k, v)
        {
            fprintf(out, "%s%s=%s", first ? "" : ", ", k, json_is_string(v) ? json_string_value(v) : "?");
            first = false;
        }
        fputs("\n", out);
    } else if (r->overrides) {
        fprintf(out, "  overrides   %s\n", r->overrides); /* not an object: shown as stored */
    }
    json_decref(o);
    if (r->sweep >= 0)
        fprintf(out, "  sweep       a point of the sweep from run %" PRId64 "\n", r->sweep);
    if (r->verified >= 0)
        fprintf(out, "  verified    %s\n",
                r->verified ? "yes: every synchronised step's gradients were exactly the average over ranks"
                            : "no: not every synchronised step was checked and exact");
}

static void print_header(FILE *out, const analysis_run *r)
{
    fprintf(out, "run %" PRId64 ": %s\n", r->id, or_dash(r->name));
    const char *status = or_dash(r->status);
    if (r->status_detail && strcmp(status, "running") == 0)
        fprintf(out, "  status      running (not finished; %s)\n", r->status_detail);
    else if (r->status_detail)
        fprintf(out, "  status      %s (%s)\n", status, r->status_detail);
    else if (strcmp(status, "running") == 0)
        fprintf(out, "  status      running (not finished: still running, or interrupted)\n");
    else
        fprintf(out, "  status      %s\n", status);
    if (r->error)
        fprintf(out, "  error       %s\n", r->error);
    fprintf(out, "  backend     %s, world size %d%s\n", or_dash(r->backend), r->world_size,
            r->phase_spans ? ", spans per phase (record.detail = phase: bucket readiness not recorded)" : "");
    if (r->ranks_with_spans < r->nranks) {
        /* A run of many ranks stored the spans of chosen ranks only. */
        fprintf(out, "  spans       stored for %zu of %zu ranks (record.spans_ranks; every rank's statistics):", r->ranks_with_spans,
                r->nranks);
        size_t shown = 0;
        for (size_t i = 0; i < r->nranks && shown < 32; i++)
            if (r->ranks[i].spans)
                fprintf(out, "%s %d", shown++ ? "," : "", r->ranks[i].rank);
        fprintf(out, "%s\n", shown < r->ranks_with_spans ? ", ..." : "");
    }
    /* Only a note worth reading: plain "threads" / "processes" say nothing new. */
    if (r->placement && strchr(r->placement, ';'))
        fprintf(out, "  ranks       %s\n", r->placement);
    if (r->nsources > 0) {
        /* An imported run: its files, how its clocks were joined, what to know. */
        for (size_t i = 0; i < r->nsources; i++) {
            const analysis_source *f = &r->sources[i];
            char rank[64] = "";
            if (f->rank >= 0)
                snprintf(rank, sizeof rank, "rank %d (%s), ", f->rank, or_dash(f->rank_from));
            fprintf(out, "  %s %s (%s%s, %" PRId64 " bytes, sha256 %.16s...)\n", i ? "           " : "source     ",
                    or_dash(f->path), rank, or_dash(f->format), f->bytes, or_dash(f->sha256));
        }
        if (r->clock_sync)
            fprintf(out, "  clocks      %s\n", r->clock_sync);
        for (const char *n = r->notes; n && *n;) {
            const char *nl = strchr(n, '\n');
            int len = nl ? (int)(nl - n) : (int)strlen(n);
            fprintf(out, "  note        %.*s\n", len, n);
            n = nl ? nl + 1 : n + len;
        }
        fprintf(out, "  started     %s, finished %s\n", or_dash(r->started_at), or_dash(r->finished_at));
        fprintf(out, "  iterations  %d (the trace's steps)\n", r->iterations_measured + r->iterations_warmup);
        fprintf(out, "  buckets     %d as DDP launched them first, %d rebuilt\n", r->buckets_initial,
                r->buckets_rebuilt);
    } else {
        fprintf(out, "  model       %s, %" PRId64 " params\n", or_dash(r->model), r->total_params);
        if (r->source && *r->source)
            fprintf(out, "  scenario    %s\n", r->source);
        fprintf(out, "  started     %s, finished %s\n", or_dash(r->started_at), or_dash(r->finished_at));
        fprintf(out, "  iterations  %d measured, %d warm-up recorded (scenario: %d + %d warm-up)\n",
                r->iterations_measured, r->iterations_warmup, r->iterations_planned, r->warmup_planned);
        fprintf(out, "  buckets     %d initial, %d rebuilt (bucket_cap_mb %g)\n", r->buckets_initial,
                r->buckets_rebuilt, r->bucket_cap_mb);
    }
    print_provenance(out, r);
    fprintf(out, "  step time   mean ");
    print_ms(out, r->step_ms_mean);
    fprintf(out, ", min ");
    print_ms(out, r->step_ms_min);
    fprintf(out, ", max ");
    print_ms(out, r->step_ms_max);
    fprintf(out, " (slowest rank per iteration, over %d iteration%s)\n", r->steps,
            r->steps == 1 ? "" : "s");
    if (r->all_iterations && r->steps > 0)
        fprintf(out, "  note        no measured iteration recorded: figures include warm-up\n");
}

static int print_ranks(FILE *out, const analysis_run *r)
{
    static const char *const heads[] = {"rank",    "speed",           "iters",  "step ms",
                                        "compute ms", "comm ms",      "overlap %",
                                        "exposed comm ms", "wait ms"};
    table t;
    if (table_init(&t, heads, sizeof heads / sizeof heads[0], r->nranks) < 0)
        return -1;
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        cell(&t, i, 0, "%d", k->rank);
        cell_num(&t, i, 1, k->speed, 2);
        cell(&t, i, 2, "%d", k->iterations);
        cell_num(&t, i, 3, k->step_ms, 3);
        cell_num(&t, i, 4, k->compute_ms, 3);
        cell_num(&t, i, 5, k->comm_ms, 3);
        cell_num(&t, i, 6, k->overlap_pct, 1);
        cell_num(&t, i, 7, k->exposed_comm_ms, 3);
        cell_num(&t, i, 8, k->wait_ms, 3);
    }
    fprintf(out, "\n  per rank (mean per iteration; overlap %% is DDP's gradient overlap: bucket allreduces under compute)\n");
    table_print(out, &t);
    free(t.cells);
    if (r->straggler_rank >= 0)
        fprintf(out, "  straggler   rank %d: the other ranks wait %.3f ms per iteration for it (mean)\n",
                r->straggler_rank, r->straggler_others_wait_ms);

    /* Holistic Trace Analysis's figures, named as HTA names them. */
    bool any_hta = false;
    for (size_t i = 0; i < r->nranks; i++)
        any_hta |= !isnan(r->ranks[i].idle_pct);
    if (any_hta) {
        static const char *const hheads[] = {"rank", "comm_overlap_pct", "idle_pct", "compute_pct",
                                             "non_compute_pct"};
        if (table_init(&t, hheads, sizeof hheads / sizeof hheads[0], r->nranks) < 0)
            return -1;
        for (size_t i = 0; i < r->nranks; i++) {
            const analysis_rank *k = &r->ranks[i];
            cell(&t, i, 0, "%d", k->rank);
            cell_num(&t, i, 1, k->comm_overlap_pct, 2);
            cell_num(&t, i, 2, k->idle_pct, 2);
            cell_num(&t, i, 3, k->compute_pct, 2);
            cell_num(&t, i, 4, k->non_compute_pct, 2);
        }
        fprintf(out, "\n  Holistic Trace Analysis's figures per rank (every communication kernel under computation;"
                     " the device's time as idle, computation, the rest)\n");
        if (r->hta_steps)
            fprintf(out, "  device ops counted: %s\n", r->hta_steps);
        table_print(out, &t);
        free(t.cells);
    } else {
        fprintf(out, "\n  Holistic Trace Analysis's figures: none (no device ops: HTA counts GPU kernels only)\n");
    }

    static const char *const aheads[] = {"rank", "compute ms", "exposed transfer ms",
                                         "straggler wait ms", "other ms", "step ms"};
    if (table_init(&t, aheads, sizeof aheads / sizeof aheads[0], r->nranks) < 0)
        return -1;
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        cell(&t, i, 0, "%d", k->rank);
        cell_num(&t, i, 1, k->attr_compute_ms, 3);
        cell_num(&t, i, 2, k->attr_exposed_transfer_ms, 3);
        cell_num(&t, i, 3, k->attr_straggler_wait_ms, 3);
        cell_num(&t, i, 4, k->attr_other_ms, 3);
        cell_num(&t, i, 5, k->step_ms, 3);
    }
    fprintf(out, "\n  step attribution per rank (mean per iteration)\n");
    table_print(out, &t);
    free(t.cells);
    return 0;
}

static int print_buckets(FILE *out, const analysis_run *r)
{
    if (r->nbuckets == 0) {
        fprintf(out, "\n  buckets: none recorded\n");
        return 0;
    }
    static const char *const heads[] = {"bucket",      "bytes",          "params",
                                        "allreduces",  "ready ms",       "launch delay ms",
                                        "arrival skew ms", "transfer ms", "busbw GB/s"};
    table t;
    if (table_init(&t, heads, sizeof heads / sizeof heads[0], r->nbuckets) < 0)
        return -1;
    for (size_t i = 0; i < r->nbuckets; i++) {
        const analysis_bucket *b = &r->buckets[i];
        cell(&t, i, 0, "%d", b->idx);
        cell(&t, i, 1, "%" PRId64, b->bytes);
        cell(&t, i, 2, "%d", b->nparams);
        cell(&t, i, 3, "%d", b->collectives);
        cell_num(&t, i, 4, b->ready_ms, 3);
        cell_num(&t, i, 5, b->launch_delay_ms, 3);
        cell_num(&t, i, 6, b->arrival_skew_ms, 3);
        cell_num(&t, i, 7, b->transfer_ms, 3);
        cell_num(&t, i, 8, b->busbw_gbps, 2);
    }
    if (r->bucket_version >= 0)
        fprintf(out, "\n  per bucket (assignment version %d: %s)\n", r->bucket_version,
                r->bucket_version == 0 ? "initial" : "rebuilt");
    else
        fprintf(out, "\n  per bucket (no assignment recorded; from the collectives)\n");
    table_print(out, &t);
    free(t.cells);
    return 0;
}

int report_text(FILE *out, const analysis_run *runs, size_t nruns, char *err, size_t errlen)
{
    for (size_t i = 0; i < nruns; i++) {
        if (i)
            fputc('\n', out);
        print_header(out, &runs[i]);
        if (print_ranks(out, &runs[i]) < 0 || print_buckets(out, &runs[i]) < 0) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
    }
    if (fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing report failed");
        return -1;
    }
    return 0;
}
