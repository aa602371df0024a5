/* report_html.c — the HTML report: one self-contained page (inline CSS and SVG, no
 * script, nothing fetched) showing what the text and JSON reports say, drawn.
 *
 * Contract (report.h): built from the same analysis_run structs as the other
 * formats, plus the spans of each run's representative iteration (timeline.h).
 * Page: cross-run sections first — for runs of one sweep (names "base [key value]"
 * with one numeric key), step time and overlap against the swept value; for runs of
 * one scenario name on different backends, their figures side by side — then per
 * run: header, the timeline of its representative iteration (a lane per rank and
 * stream, each allreduce split at the last rank's arrival into wait and transfer),
 * each rank's step split into compute / exposed transfer / exposed wait / other,
 * the rank table, and each bucket's ready, launch delay, arrival skew and transfer.
 * Every figure carries its --json path (report_html_fig.h).
 */
#include "common/errmsg.h"
#include "reports/report.h"
#include "reports/report_html_fig.h"
#include "reports/report_html_svg.h"
#include "reports/run_config.h"
#include "reports/timeline.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char CSS[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "color:#1f2328;background:#f4f5f7;margin:0}"
    "header{background:#1f2d3d;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}"
    "header p{margin:4px 0 0;color:#c9d1d9}"
    "main{max-width:1180px;margin:0 auto;padding:16px 24px 40px}"
    "section.card{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12);"
    "padding:16px 22px;margin:18px 0}"
    "h2{font-size:19px;margin:0 0 6px}h3{font-size:15px;margin:18px 0 6px;color:#333}"
    ".meta{display:flex;flex-wrap:wrap;gap:6px 22px;color:#444;margin:6px 0 4px}"
    ".meta b{color:#1f2328}.status-complete{color:#1a7f37}.status-failed,.status-abandoned{color:#cf222e}"
    ".kpi{display:flex;gap:14px;margin:10px 0}.kpi div{background:#f6f8fa;border-radius:6px;"
    "padding:8px 14px}.kpi .num{font-size:20px;font-weight:600;display:block}"
    ".kpi small{color:#57606a}"
    "table{border-collapse:collapse;margin:6px 0 4px;font-variant-numeric:tabular-nums}"
    /* A table wider than its card (15 figures per rank) scrolls inside its box, so the page
     * keeps to a 1280 px laptop screen; its headers wrap at their words first. */
    ".tablebox{max-width:100%;overflow-x:auto}.tablebox th{white-space:normal;vertical-align:bottom}"
    "table.ranks th,table.ranks td{padding:4px 7px}"
    "th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;text-align:right}"
    "th{background:#f6f8fa;font-weight:600;color:#333}td:first-child,th:first-child{text-align:left}"
    ".legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:4px 0 6px;color:#444;font-size:13px}"
    ".legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;"
    "vertical-align:-1px}"
    ".note{color:#57606a;font-size:13px;margin:2px 0 8px}.error{color:#cf222e}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}"
    "svg text{font-family:inherit}svg .tick{font-size:11px;fill:#57606a}"
    "svg .axis{font-size:12px;fill:#333}svg .rank{font-size:12px;font-weight:600;fill:#1f2328}"
    "svg .sub{font-size:11px;fill:#57606a}svg .lane{font-size:10px;fill:#57606a}"
    "svg .inbar{font-size:11px;fill:#fff;font-weight:600}svg .ctitle{font-size:13px;font-weight:600}"
    "svg .grid{stroke:#e5e7eb;stroke-width:1}svg .band0{fill:#fafbfc}svg .band1{fill:#fff}"
    "svg rect[data-json]:hover,svg rect:hover{opacity:.8}";

/* ---- per run -------------------------------------------------------------------------- */

static void run_header(FILE *out, const analysis_run *r, size_t idx)
{
    fprintf(out, "<section class=\"card run\" id=\"run-%lld\" data-run-id=\"%lld\">\n<h2>Run %lld · ",
            (long long)r->id, (long long)r->id, (long long)r->id);
    html_esc(out, r->name);
    fputs("</h2>\n<div class=\"meta\"><span>status <b class=\"status-", out);
    html_esc(out, r->status);
    fputs("\">", out);
    html_esc(out, r->status);
    fputs("</b></span><span>backend <b>", out);
    html_esc(out, r->backend);
    fprintf(out, "</b></span><span>world size <b>%d</b></span><span>model <b>", r->world_size);
    html_esc(out, r->model);
    fprintf(out, "</b> (%lld parameters)</span><span>bucket cap <b>%g MiB</b></span>"
                 "<span>iterations <b>%d</b> measured, %d warm-up</span><span>buckets <b>%d</b>",
            (long long)r->total_params, r->bucket_cap_mb, r->iterations_measured,
            r->iterations_warmup, r->buckets_initial);
    if (r->buckets_rebuilt)
        fprintf(out, " → %d rebuilt", r->buckets_rebuilt);
    fputs("</span>", out);
    /* What was run: the command line's settings and sweep point, the verdict. */
    char over[1024];
    run_config_overrides_text(r->overrides, over, sizeof over);
    if (over[0]) {
        fprintf(out, "<span data-json=\"runs.%zu.overrides\">overrides <b>", idx);
        html_esc(out, over);
        fputs("</b></span>", out);
    }
    if (r->verified >= 0)
        fprintf(out, "<span data-json=\"runs.%zu.verified\">verified <b>%s</b></span>", idx,
                r->verified ? "yes, every synchronised step exact" : "no");
    fputs("</div>\n", out);
    if (r->error) {
        fputs("<p class=\"error\">", out);
        html_esc(out, r->error);
        fputs("</p>\n", out);
    }
    if (r->status_detail) {
        fputs("<p class=\"note\">", out);
        html_esc(out, r->status_detail);
        fputs("</p>\n", out);
    }
    /* An imported run: its files, its clocks, what to know about the source. */
    for (size_t i = 0; i < r->nsources; i++) {
        const analysis_source *f = &r->sources[i];
        fputs("<p class=\"note\">source ", out);
        html_esc(out, f->path);
        fputs(" (", out);
        html_esc(out, f->format);
        if (f->rank >= 0)
            fprintf(out, ", rank %d", f->rank);
        fprintf(out, ", %lld bytes, sha256 ", (long long)f->bytes);
        html_esc(out, f->sha256);
        fputs(")</p>\n", out);
    }
    if (r->clock_sync) {
        fputs("<p class=\"note\">clocks: ", out);
        html_esc(out, r->clock_sync);
        fputs("</p>\n", out);
    }
    if (r->notes) {
        fputs("<p class=\"note\">", out);
        html_esc(out, r->notes);
        fputs("</p>\n", out);
    }
    if (r->ranks_with_spans < r->nranks) {
        fprintf(out, "<p class=\"note\">spans stored for %zu of %zu ranks (record.spans_ranks; every rank's"
                     " statistics):", r->ranks_with_spans, r->nranks);
        size_t shown = 0;
        for (size_t i = 0; i < r->nranks && shown < 32; i++)
            if (r->ranks[i].spans)
                fprintf(out, "%s %d", shown++ ? "," : "", r->ranks[i].rank);
        fprintf(out, "%s</p>\n", shown < r->ranks_with_spans ? ", ..." : "");
    }
    if (r->nstragglers > 0) {
        char who[160];
        analysis_stragglers_text(r, who, sizeof who);
        fprintf(out, "<p class=\"note\">%s: %s — the other ranks wait %.3f ms per iteration for %s"
                     " (their mean wait ms)</p>\n",
                r->nstragglers > 1 ? "stragglers" : "straggler", who, r->straggler_others_wait_ms,
                r->nstragglers > 1 ? "them" : "it");
    }
    char path[96];
    fputs("<div class=\"kpi\">", out);
    static const char *const keys[] = {"step_ms_mean", "step_ms_min", "step_ms_max"};
    static const char *const labels[] = {"step time, mean (ms)", "fastest step (ms)", "slowest step (ms)"};
    double v[3] = {r->step_ms_mean, r->step_ms_min, r->step_ms_max};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "runs.%zu.%s", idx, keys[i]);
        fputs("<div>", out);
        html_fig(out, "span", path, v[i], 2);
        fprintf(out, "<small>%s</small></div>", labels[i]);
    }
    fprintf(out, "</div>\n<p class=\"note\">Job step = the slowest rank's, over %d %s iterations.</p>\n",
            r->steps, r->all_iterations ? "(warm-up included: none measured)" : "measured");
}

static void timeline_section(FILE *out, store *st, const analysis_run *r)
{
    if (r->representative_iter < 0 || r->nranks == 0)
        return;
    int *ranks = malloc(r->nranks * sizeof *ranks);
    if (!ranks)
        return;
    for (size_t i = 0; i < r->nranks; i++)
        ranks[i] = r->ranks[i].rank;
    timeline tl;
    char err[256];
    fprintf(out, "<h3>Timeline of iteration %d</h3>\n<p class=\"note\">The measured iteration whose"
                 " job step is closest to the median. A lane per rank and stream; each allreduce"
                 " is split where the last rank arrived: before, this rank waits for stragglers;"
                 " after, the transfer.</p>\n",
            r->representative_iter);
    if (timeline_load(st, r->id, r->representative_iter, ranks, r->nranks, &tl, err, sizeof err) < 0) {
        fputs("<p class=\"error\">", out);
        html_esc(out, err);
        fputs("</p>\n", out);
    } else {
        static const char *const colours[] = {COL_FORWARD, COL_BACKWARD, COL_COPY, COL_OPTIMIZER,
                                              COL_AR_WAIT, COL_AR_TRANSFER, COL_BROADCAST, COL_HOST_WAIT};
        static const char *const labels[] = {"forward", "backward", "bucket copy in/out", "optimizer",
                                             "allreduce: waiting for stragglers", "allreduce: transfer",
                                             "broadcast", "host waiting"};
        html_legend(out, colours, labels, 8);
        svg_timeline(out, r, &tl);
        timeline_free(&tl);
    }
    free(ranks);
}

static void rank_section(FILE *out, const analysis_run *r, size_t idx)
{
    static const char *const colours[] = {COL_COMPUTE, COL_AR_TRANSFER, COL_AR_WAIT, COL_OTHER};
    static const char *const labels[] = {"compute", "exposed transfer", "exposed wait", "other"};
    fputs("<h3>Where each rank's step goes</h3>\n<p class=\"note\">Means per measured iteration, ms."
          " Exposed transfer and exposed wait are the communication the compute stream does"
          " not hide.</p>\n", out);
    html_legend(out, colours, labels, 4);
    svg_attribution(out, r, idx);
    fputs("<div class=\"tablebox\"><table class=\"ranks\"><tr><th>rank</th><th>speed</th><th>step ms</th><th>compute ms</th>"
          "<th>comm ms</th><th>overlap %</th><th>exposed comm ms</th><th>wait ms</th>"
          "<th>exposed transfer ms</th><th>exposed wait ms</th><th>other ms</th>"
          "<th title=\"Holistic Trace Analysis: every communication kernel under computation kernels\">"
          /* <wbr>: HTA's names may break at their underscores, so the table fits its card */
          "comm_<wbr>overlap_<wbr>pct (HTA)</th><th>idle_<wbr>pct (HTA)</th><th>compute_<wbr>pct (HTA)</th>"
          "<th>non_<wbr>compute_<wbr>pct (HTA)</th></tr>\n", out);
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        char p[96];
        fprintf(out, "<tr><td>%d</td>", k->rank);
#define FIG(key, val, dec)                                                   \
    do {                                                                     \
        snprintf(p, sizeof p, "runs.%zu.ranks.%zu.%s", idx, i, key);         \
        html_fig(out, "td", p, val, dec);                                    \
    } while (0)
        FIG("speed", k->speed, 2);
        FIG("step_ms", k->step_ms, 3);
        FIG("compute_ms", k->compute_ms, 3);
        FIG("comm_ms", k->comm_ms, 3);
        FIG("overlap_pct", k->overlap_pct, 1);
        FIG("exposed_comm_ms", k->exposed_comm_ms, 3);
        FIG("wait_ms", k->wait_ms, 3);
        FIG("attribution.exposed_transfer_ms", k->attr_exposed_transfer_ms, 3);
        FIG("attribution.exposed_wait_ms", k->attr_exposed_wait_ms, 3);
        FIG("attribution.other_ms", k->attr_other_ms, 3);
        FIG("comm_overlap_pct", k->comm_overlap_pct, 2);
        FIG("idle_pct", k->idle_pct, 2);
        FIG("compute_pct", k->compute_pct, 2);
        FIG("non_compute_pct", k->non_compute_pct, 2);
#undef FIG
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n", out);
    if (r->hta_steps) {
        fputs("<p class=\"note\">overlap % is DDP's gradient overlap (bucket allreduces under compute); the"
              " (HTA) columns are Holistic Trace Analysis's figures, computed as HTA computes them over: ", out);
        html_esc(out, r->hta_steps);
        fputs("</p>\n", out);
    }
}

static void bucket_section(FILE *out, const analysis_run *r, size_t idx)
{
    if (r->nbuckets == 0)
        return;
    static const char *const colours[] = {COL_READY, COL_LAUNCH, COL_AR_WAIT, COL_AR_TRANSFER};
    static const char *const labels[] = {"until ready (last gradient copied in)", "launch delay",
                                         "arrival skew", "transfer"};
    fprintf(out, "<h3>Buckets (assignment version %d)</h3>\n<p class=\"note\">From the step's start:"
                 " when each bucket is ready, how long it waits to launch behind lower buckets, how far"
                 " apart the ranks arrive, and the transfer once all are there. Means, ms.</p>\n",
            r->bucket_version);
    html_legend(out, colours, labels, 4);
    svg_buckets(out, r, idx);
    fputs("<div class=\"tablebox\"><table class=\"buckets\"><tr><th>bucket</th><th>bytes</th><th>params</th><th>collectives</th>"
          "<th>ready ms</th><th>launch delay ms</th><th>arrival skew ms</th><th>transfer ms</th>"
          "<th>busbw GB/s</th></tr>\n", out);
    for (size_t i = 0; i < r->nbuckets; i++) {
        const analysis_bucket *b = &r->buckets[i];
        char p[96];
        fprintf(out, "<tr><td>%d</td>", b->idx);
#define FIG(key, val, dec)                                                   \
    do {                                                                     \
        snprintf(p, sizeof p, "runs.%zu.buckets.%zu.%s", idx, i, key);       \
        html_fig(out, "td", p, val, dec);                                    \
    } while (0)
        FIG("bytes", (double)b->bytes, 0);
        FIG("nparams", b->nparams, 0);
        FIG("collectives", b->collectives, 0);
        FIG("ready_ms", b->ready_ms, 3);
        FIG("launch_delay_ms", b->launch_delay_ms, 3);
        FIG("arrival_skew_ms", b->arrival_skew_ms, 3);
        FIG("transfer_ms", b->transfer_ms, 3);
        FIG("busbw_gbps", b->busbw_gbps, 2);
#undef FIG
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n", out);
}

/* ---- across runs -------------------------------------------------------------------------- */

/* "base [key value]" (scenario_sweep_point's, or "[key=value]" in files written before)
 * with one key and a numeric value: 1, with the parts filled. */
static int sweep_point(const char *name, char *base, size_t nb, char *key, size_t nk, double *value)
{
    const char *open = name ? strrchr(name, '[') : NULL;
    size_t len = name ? strlen(name) : 0;
    if (!open || open == name || open[-1] != ' ' || name[len - 1] != ']' || strchr(open, ','))
        return 0;
    const char *eq = strchr(open, '=');
    if (!eq)
        eq = strchr(open, ' ');
    if (!eq)
        return 0;
    char *end;
    *value = strtod(eq + 1, &end);
    if (end != name + len - 1 || end == eq + 1)
        return 0;
    snprintf(base, nb, "%.*s", (int)(open - 1 - name), name);
    snprintf(key, nk, "%.*s", (int)(eq - open - 1), open + 1);
    return 1;
}

static const char *const SERIES_COLOURS[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                             "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};

static void sweep_charts(FILE *out, const analysis_run *runs, const size_t *members, size_t m,
                         const char *key)
{
    double *x = calloc(m, sizeof *x), *step = calloc(m, sizeof *step);
    size_t nranks = runs[members[0]].nranks;
    if (nranks > 8)
        nranks = 8;
    double *ov = calloc(m * (nranks ? nranks : 1), sizeof *ov);
    char (*step_paths)[96] = calloc(m, sizeof *step_paths);
    char (*ov_paths)[96] = calloc(m * (nranks ? nranks : 1), sizeof *ov_paths);
    if (!x || !step || !ov || !step_paths || !ov_paths)
        goto out;
    for (size_t i = 0; i < m; i++) {
        const analysis_run *r = &runs[members[i]];
        char b[8], k[8];
        sweep_point(r->name, b, sizeof b, k, sizeof k, &x[i]);
        step[i] = r->step_ms_mean;
        snprintf(step_paths[i], 96, "runs.%zu.step_ms_mean", members[i]);
        for (size_t j = 0; j < nranks; j++) {
            ov[j * m + i] = j < r->nranks ? r->ranks[j].overlap_pct : NAN;
            snprintf(ov_paths[j * m + i], 96, "runs.%zu.ranks.%zu.overlap_pct", members[i], j);
        }
    }
    chart_series s1 = {"step time", SERIES_COLOURS[0], step, step_paths};
    chart_series so[8];
    char labels[8][32];
    for (size_t j = 0; j < nranks; j++) {
        snprintf(labels[j], sizeof labels[j], "rank %d", runs[members[0]].ranks[j].rank);
        so[j] = (chart_series){labels[j], SERIES_COLOURS[j], ov + j * m, ov_paths + j * m};
    }
    fputs("<div class=\"charts\"><div>", out);
    svg_line_chart(out, "Job step time, mean", key, "ms", x, m, &s1, 1);
    fputs("</div><div>", out);
    svg_line_chart(out, "Overlap of communication with compute, per rank", key, "%", x, m, so, nranks);
    html_legend(out, SERIES_COLOURS, (const char *const[]){labels[0], labels[1], labels[2], labels[3],
                                                           labels[4], labels[5], labels[6], labels[7]},
                nranks);
    fputs("</div></div>\n", out);
out:
    free(x);
    free(step);
    free(ov);
    free(step_paths);
    free(ov_paths);
}

static int cmp_by_value(const void *a, const void *b, void *ctx)
{
    const double *v = ctx;
    double x = v[*(const size_t *)a], y = v[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* Every group of >= 2 runs sharing base and key, in order of first appearance. */
static void sweep_sections(FILE *out, const analysis_run *runs, size_t n)
{
    bool *done = calloc(n ? n : 1, sizeof *done);
    size_t *members = calloc(n ? n : 1, sizeof *members);
    double *values = calloc(n ? n : 1, sizeof *values);
    if (!done || !members || !values)
        goto out;
    for (size_t i = 0; i < n; i++) {
        char base[256], key[128], b2[256], k2[128];
        double v;
        if (done[i] || !sweep_point(runs[i].name, base, sizeof base, key, sizeof key, &v))
            continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++) {
            if (!done[j] && sweep_point(runs[j].name, b2, sizeof b2, k2, sizeof k2, &values[j]) &&
                !strcmp(base, b2) && !strcmp(key, k2) &&
                !strcmp(runs[i].backend ? runs[i].backend : "", runs[j].backend ? runs[j].backend : "")) {
                members[m++] = j;
                done[j] = true;
            }
        }
        if (m < 2)
            continue;
        qsort_r(members, m, sizeof *members, cmp_by_value, values);
        fputs("<section class=\"card sweep\"><h2>Sweep of ", out);
        html_esc(out, key);
        fputs(": ", out);
        html_esc(out, base);
        fprintf(out, " (%zu runs, backend ", m);
        html_esc(out, runs[i].backend);
        fputs(")</h2>\n", out);
        sweep_charts(out, runs, members, m, key);
        fputs("</section>\n", out);
    }
out:
    free(done);
    free(members);
    free(values);
}

/* The rows of the scenario keys in which the runs members[0..m) differ, each run's
 * value (an imported run records no scenario: then a row says so instead). */
static void config_diff_rows(FILE *out, const analysis_run *runs, const size_t *members, size_t m)
{
    const char *texts[64];
    size_t nt = m < 64 ? m : 64;
    for (size_t k = 0; k < nt; k++)
        texts[k] = runs[members[k]].scenario;
    run_config_key *diff = NULL;
    int nd = 0;
    for (size_t k = 0; k < nt && nd == 0; k++)
        if (!texts[k]) { /* an imported run: no scenario to compare */
            fprintf(out, "<tr class=\"differs\"><td colspan=\"99\">(run %lld records no scenario: the"
                         " configurations are not compared)</td></tr>\n",
                    (long long)runs[members[k]].id);
            nd = -2;
        }
    if (nd == 0)
        nd = run_config_diff(texts, nt, &diff);
    if (nd == -1)
        fputs("<tr class=\"differs\"><td colspan=\"99\">(configurations not compared: out of memory)</td></tr>\n",
              out);
    for (int d = 0; d < nd; d++) {
        fputs("<tr class=\"differs\"><td>differs: ", out);
        html_esc(out, diff[d].key);
        fputs("</td>", out);
        for (size_t k = 0; k < m; k++) {
            fputs("<td>", out);
            html_esc(out, k < nt && diff[d].values[k] ? diff[d].values[k] : "-");
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    if (nd > 0)
        run_config_diff_free(diff, nd, nt);
}

/* The rows of the figures of runs members[0..m): the job's step, then each rank's. */
static void figure_rows(FILE *out, const analysis_run *runs, const size_t *members, size_t m, size_t maxr)
{
    fputs("<tr><td>job step ms, mean</td>", out);
    char p[96];
    for (size_t k = 0; k < m; k++) {
        snprintf(p, sizeof p, "runs.%zu.step_ms_mean", members[k]);
        html_fig(out, "td", p, runs[members[k]].step_ms_mean, 3);
    }
    fputs("</tr>\n", out);
    static const char *const keys[] = {"step_ms", "compute_ms", "overlap_pct", "exposed_comm_ms", "wait_ms"};
    static const char *const names[] = {"step ms", "compute ms", "overlap %", "exposed comm ms", "wait ms"};
    for (size_t rk = 0; rk < maxr; rk++)
        for (int f = 0; f < 5; f++) {
            fprintf(out, "<tr><td>rank %zu %s</td>", rk, names[f]);
            for (size_t k = 0; k < m; k++) {
                const analysis_run *r = &runs[members[k]];
                if (rk >= r->nranks) {
                    fputs("<td>-</td>", out);
                    continue;
                }
                const analysis_rank *a = &r->ranks[rk];
                double v[5] = {a->step_ms, a->compute_ms, a->overlap_pct, a->exposed_comm_ms, a->wait_ms};
                snprintf(p, sizeof p, "runs.%zu.ranks.%zu.%s", members[k], rk, keys[f]);
                html_fig(out, "td", p, v[f], f == 2 ? 1 : 3);
            }
            fputs("</tr>\n", out);
        }
}

/* Runs of one name recorded by different backends, side by side. */
static void backend_sections(FILE *out, const analysis_run *runs, size_t n)
{
    bool *done = calloc(n ? n : 1, sizeof *done);
    size_t *members = calloc(n ? n : 1, sizeof *members);
    if (!done || !members)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (done[i] || !runs[i].name)
            continue;
        size_t m = 0;
        bool several = false;
        for (size_t j = i; j < n; j++)
            if (!done[j] && runs[j].name && !strcmp(runs[i].name, runs[j].name)) {
                /* the latest run of each backend */
                size_t k = 0;
                while (k < m && strcmp(runs[members[k]].backend ? runs[members[k]].backend : "",
                                       runs[j].backend ? runs[j].backend : ""))
                    k++;
                members[k] = j;
                if (k == m)
                    m++;
                several |= k > 0;
                done[j] = true;
            }
        if (m < 2 || !several)
            continue;
        fputs("<section class=\"card backends\"><h2>", out);
        html_esc(out, runs[i].name);
        fputs(" on each backend</h2>\n", out);
        fputs("<p class=\"note\">The latest run of each backend; rows marked \"differs\" are the scenario keys"
              " in which their configurations are not the same.</p>\n<table><tr><th>figure</th>",
              out);
        size_t maxr = 0;
        for (size_t k = 0; k < m; k++) {
            fputs("<th>", out);
            html_esc(out, runs[members[k]].backend);
            fprintf(out, " (run %lld)</th>", (long long)runs[members[k]].id);
            if (runs[members[k]].nranks > maxr)
                maxr = runs[members[k]].nranks;
        }
        fputs("</tr>\n", out);
        /* Side by side only as what they are: the scenario keys in which the runs'
         * effective configurations differ, each run's value. */
        config_diff_rows(out, runs, members, m);
        figure_rows(out, runs, members, m, maxr);
        fputs("</table></section>\n", out);
    }
out:
    free(done);
    free(members);
}

int report_html(FILE *out, store *st, const analysis_run *runs, size_t nruns, char *err,
                size_t errlen)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<meta name=\"viewport\" content=\"width=device-width\">"
                 "<title>ddpprof report</title>\n<style>%s</style></head>\n<body>\n"
                 "<header><h1>ddpprof report</h1><p>Overlap of computation and gradient"
                 " communication, %zu run%s</p></header>\n<main>\n",
            CSS, nruns, nruns == 1 ? "" : "s");
    sweep_sections(out, runs, nruns);
    backend_sections(out, runs, nruns);
    for (size_t i = 0; i < nruns; i++) {
        run_header(out, &runs[i], i);
        timeline_section(out, st, &runs[i]);
        rank_section(out, &runs[i], i);
        bucket_section(out, &runs[i], i);
        fputs("</section>\n", out);
    }
    fputs("</main></body></html>\n", out);
    if (fflush(out) != 0 || ferror(out)) {
        set_err(err, errlen, "writing report failed");
        return -1;
    }
    return 0;
}
