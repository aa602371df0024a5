/* report_text.c — the text report: a header per run and aligned tables with units.
 *
 * Contract (report.h): formats analysis_run structs only, computes nothing beyond
 * presentation.  Durations print in ms with 3 decimals (µs resolution), percentages
 * with 1, undefined figures (NAN) as "-".  Columns are sized to their widest cell so
 * the tables stay aligned for any model size.  Per-rank tables show the ranks a
 * rank_select chooses, or above 32 ranks their summary (rank_select.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/errmsg.h"
#include "reports/rank_select.h"
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
    char held[160];
    analysis_ranks_held(r, held, sizeof held);
    fprintf(out, "  backend     %s, world size %d%s%s%s%s\n", or_dash(r->backend), r->world_size,
            held[0] ? " (traced: " : "", held, held[0] ? ")" : "",
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
    if (r->host_steps > 0) {
        fprintf(out, "  host steps  mean ");
        print_ms(out, r->host_step_ms_mean);
        fprintf(out, " (ProfilerStep#N on the host, %d; the step above is the job's period on the device"
                     " timeline)\n", r->host_steps);
    }
    if (r->all_iterations && r->steps > 0)
        fprintf(out, "  note        no measured iteration recorded: figures include warm-up\n");
}

/* A column of a per-rank table: a figure of analysis_rank (a double, or the int
 * iterations), printed with `decimals`. */
typedef struct {
    const char *head;
    size_t offset;
    int decimals;
    bool is_int;
} rank_col;

#define RANK_DBL(head, field, dec) {head, offsetof(analysis_rank, field), dec, false}

static double rank_value(const analysis_rank *k, const rank_col *c)
{
    if (c->is_int) {
        int v;
        memcpy(&v, (const char *)k + c->offset, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, (const char *)k + c->offset, sizeof v);
    return v;
}

static void rank_row(table *t, size_t row, const analysis_rank *k, const rank_col *cols, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++)
        cell_num(t, row, c + 1, rank_value(k, &cols[c]), cols[c].decimals);
}

/* One per-rank table under `title`: a row per rank shown (rank_select.h), or above 32
 * ranks by default its summary (min, median, p90, max of each column over the ranks)
 * and the rows of the slowest and fastest rank, named. */
static int print_rank_table(FILE *out, const analysis_run *r, const rank_select *sel, const char *title,
                            const rank_col *cols, size_t ncols)
{
    const char *heads[16] = {"rank"};
    if (ncols + 1 > sizeof heads / sizeof heads[0])
        return -1;
    for (size_t c = 0; c < ncols; c++)
        heads[c + 1] = cols[c].head;
    bool summary = rank_select_summarise(sel, r->nranks);
    size_t slowest = 0, fastest = 0, nrows = 0;
    bool extremes = summary && rank_select_extremes(r, &slowest, &fastest);
    if (summary)
        nrows = RANK_NSTATS + (extremes ? 2 : 0);
    else
        for (size_t i = 0; i < r->nranks; i++)
            nrows += rank_select_shows(sel, r->ranks[i].rank);
    table t;
    if (table_init(&t, heads, ncols + 1, nrows) < 0)
        return -1;
    if (summary) {
        double *v = malloc((r->nranks ? r->nranks : 1) * sizeof *v);
        if (!v) {
            free(t.cells);
            return -1;
        }
        for (int stat = 0; stat < RANK_NSTATS; stat++) {
            cell(&t, (size_t)stat, 0, "%s", rank_summary_names[stat]);
            for (size_t c = 0; c < ncols; c++) {
                for (size_t i = 0; i < r->nranks; i++) /* a rank without spans has no figures */
                    v[i] = r->ranks[i].iterations > 0 ? rank_value(&r->ranks[i], &cols[c]) : NAN;
                cell_num(&t, (size_t)stat, c + 1, rank_summary_value(v, r->nranks, (rank_summary_stat)stat),
                         cols[c].decimals);
            }
        }
        free(v);
        if (extremes) {
            cell(&t, RANK_NSTATS, 0, "slowest %d", r->ranks[slowest].rank);
            rank_row(&t, RANK_NSTATS, &r->ranks[slowest], cols, ncols);
            cell(&t, RANK_NSTATS + 1, 0, "fastest %d", r->ranks[fastest].rank);
            rank_row(&t, RANK_NSTATS + 1, &r->ranks[fastest], cols, ncols);
        }
    } else {
        size_t row = 0;
        for (size_t i = 0; i < r->nranks; i++) {
            if (!rank_select_shows(sel, r->ranks[i].rank))
                continue;
            cell(&t, row, 0, "%d", r->ranks[i].rank);
            rank_row(&t, row++, &r->ranks[i], cols, ncols);
        }
    }
    fprintf(out, "\n  %s\n", title);
    if (summary) {
        char note[256];
        size_t recorded = 0;
        for (size_t i = 0; i < r->nranks; i++)
            recorded += r->ranks[i].iterations > 0;
        rank_summary_note(r->nranks, recorded, note, sizeof note);
        fprintf(out, "  %s\n", note);
    }
    table_print(out, &t);
    free(t.cells);
    return 0;
}

static int print_ranks(FILE *out, const analysis_run *r, const rank_select *sel)
{
    static const rank_col cols[] = {
        RANK_DBL("speed", speed, 2),
        {"iters", offsetof(analysis_rank, iterations), 0, true},
        RANK_DBL("step ms", step_ms, 3),
        RANK_DBL("compute ms", compute_ms, 3),
        RANK_DBL("comm ms", comm_ms, 3),
        RANK_DBL("overlap %", overlap_pct, 1),
        RANK_DBL("exposed comm ms", exposed_comm_ms, 3),
        RANK_DBL("wait ms", wait_ms, 3),
    };
    if (print_rank_table(out, r, sel,
                         "per rank (mean per iteration; overlap % is DDP's gradient overlap: bucket allreduces under"
                         " compute)",
                         cols, sizeof cols / sizeof cols[0]) < 0)
        return -1;
    if (r->nstragglers > 0) {
        char who[160];
        analysis_stragglers_text(r, who, sizeof who);
        fprintf(out, "  %-11s %s: the other ranks wait %.3f ms per iteration for %s (their mean wait ms)\n",
                r->nstragglers > 1 ? "stragglers" : "straggler", who, r->straggler_others_wait_ms,
                r->nstragglers > 1 ? "them" : "it");
    }

    /* Holistic Trace Analysis's figures, named as HTA names them. */
    bool any_hta = false;
    for (size_t i = 0; i < r->nranks; i++)
        any_hta |= !isnan(r->ranks[i].idle_pct);
    if (any_hta) {
        static const rank_col hcols[] = {
            RANK_DBL("comm_overlap_pct", comm_overlap_pct, 2),
            RANK_DBL("idle_pct", idle_pct, 2),
            RANK_DBL("compute_pct", compute_pct, 2),
            RANK_DBL("non_compute_pct", non_compute_pct, 2),
        };
        char title[512];
        snprintf(title, sizeof title,
                 "Holistic Trace Analysis's figures per rank (every communication kernel under computation;"
                 " the device's time as idle, computation, the rest)%s%s",
                 r->hta_steps ? "\n  device ops counted: " : "", r->hta_steps ? r->hta_steps : "");
        if (print_rank_table(out, r, sel, title, hcols, sizeof hcols / sizeof hcols[0]) < 0)
            return -1;
    } else {
        fprintf(out, "\n  Holistic Trace Analysis's figures: none (no device ops: HTA counts GPU kernels only)\n");
    }

    static const rank_col acols[] = {
        RANK_DBL("compute ms", attr_compute_ms, 3),
        RANK_DBL("exposed transfer ms", attr_exposed_transfer_ms, 3),
        RANK_DBL("exposed wait ms", attr_exposed_wait_ms, 3),
        RANK_DBL("other ms", attr_other_ms, 3),
        RANK_DBL("step ms", step_ms, 3),
    };
    /* A few ranks of a job: the exposed communication not spent waiting for a traced
     * rank holds the wait for the untraced ones as well as the transfer, which one
     * cannot tell apart without their traces. */
    static const rank_col subset_cols[] = {
        RANK_DBL("compute ms", attr_compute_ms, 3),
        RANK_DBL("exposed comm ms (transfer + untraced ranks' wait)", attr_exposed_transfer_ms, 3),
        RANK_DBL("exposed wait for traced ranks ms", attr_exposed_wait_ms, 3),
        RANK_DBL("other ms", attr_other_ms, 3),
        RANK_DBL("step ms", step_ms, 3),
    };
    bool subset = analysis_is_subset(r);
    if (print_rank_table(out, r, sel,
                         "step attribution per rank (mean per iteration; the four parts add up to the step; exposed"
                         " wait = the part of wait ms in exposed comm ms, exposed transfer = the rest of it)",
                         subset ? subset_cols : acols, 5) < 0)
        return -1;
    if (subset)
        fprintf(out, "  note        %zu of %d ranks traced: a traced rank's collective holds its wait for the others, so"
                     " its time is not the network's (no transfer or bus bandwidth without every rank)\n",
                r->nranks, r->world_size);
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
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].launch_delay_ms < 0) {
            /* Said where it is seen: a rank's allreduce began before the bucket's last
             * gradient was copied in, which DDP's order of events rules out, so the
             * clocks of the two streams disagree (an imported trace's, mostly). */
            fprintf(out, "  note        a launch delay below 0: the allreduce started before the bucket's last"
                         " copy-in ended on the rank's clock (streams' clocks apart)\n");
            break;
        }
    return 0;
}

int report_text(FILE *out, const analysis_run *runs, size_t nruns, const rank_select *sel, char *err,
                size_t errlen)
{
    for (size_t i = 0; i < nruns; i++) {
        if (i)
            fputc('\n', out);
        print_header(out, &runs[i]);
        if (print_ranks(out, &runs[i], sel) < 0 || print_buckets(out, &runs[i]) < 0) {
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
