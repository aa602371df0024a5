/* report_html_svg.c — the HTML report's drawings as inline SVG (no script, no
 * fetch): the timeline of one iteration, each rank's step split into its four parts,
 * each bucket's way from ready to reduced, and line charts for sweeps.  Contract:
 * report_html_svg.h; bars that stand for a figure carry its data-json path
 * (report_html_fig.h). */
#include "reports/report_html_svg.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "reports/report_html_fig.h"

#define SVG_W 1120
#define LABEL_W 140
#define PLOT_W (SVG_W - LABEL_W - 20)

/* A round tick step giving about `target` ticks over `range`. */
static double nice_step(double range, int target)
{
    if (!(range > 0))
        return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void axis_ms(FILE *out, double x0, double width, double max_ms, double y_top,
                    double y_bottom)
{
    double step = nice_step(max_ms, 8);
    for (double t = 0; t <= max_ms + 1e-9; t += step) {
        double x = x0 + width * (max_ms > 0 ? t / max_ms : 0);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%g</text>\n",
                x, y_top, x, y_bottom, x, y_bottom + 14, t);
    }
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"end\">ms</text>\n",
            x0 + width, y_bottom + 28);
}

static void rect(FILE *out, double x, double y, double w, double h, const char *fill)
{
    fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"", x, y,
            w < 0.6 ? 0.6 : w, h, fill);
}

/* ---- timeline ------------------------------------------------------------------- */

static const char *span_colour(const char *kind)
{
    if (!strcmp(kind, "forward"))
        return COL_FORWARD;
    if (!strcmp(kind, "backward"))
        return COL_BACKWARD;
    if (!strcmp(kind, "copy_in") || !strcmp(kind, "copy_out"))
        return COL_COPY;
    if (!strcmp(kind, "optimizer"))
        return COL_OPTIMIZER;
    if (!strcmp(kind, "broadcast"))
        return COL_BROADCAST;
    return COL_HOST_WAIT;
}

static const double LANE_H[3] = {9, 16, 16}; /* host, compute, comm */
static const char *const LANE_NAME[3] = {"host", "compute", "comm"};

static void span_title(FILE *out, const timeline_span *t, const char *part, int64_t a, int64_t b)
{
    fputs("><title>", out);
    html_esc(out, t->kind);
    fputs(" ", out);
    html_esc(out, t->name);
    fprintf(out, "%s%s: %.3f ms</title></rect>\n", part[0] ? " — " : "", part, (double)(b - a) / 1e6);
}

void svg_timeline(FILE *out, const analysis_run *r, const timeline *tl)
{
    double lane_gap = 3, rank_gap = 12, top = 8;
    double rank_h = LANE_H[0] + LANE_H[1] + LANE_H[2] + 2 * lane_gap;
    double height = top + r->nranks * (rank_h + rank_gap) + 34;
    double span_ms = (double)(tl->t1_ns - tl->t0_ns) / 1e6;
    double scale = span_ms > 0 ? PLOT_W / ((double)(tl->t1_ns - tl->t0_ns)) : 0;
    fprintf(out, "<svg class=\"timeline\" data-iter=\"%d\" data-spans=\"%zu\" width=\"%d\" height=\"%.0f\""
                 " viewBox=\"0 0 %d %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            tl->iter, tl->n, SVG_W, height, SVG_W, height);
    double y_bottom = top + r->nranks * (rank_h + rank_gap) - rank_gap / 2;
    for (size_t i = 0; i < r->nranks; i++)
        fprintf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" class=\"band%zu\"/>\n",
                top + i * (rank_h + rank_gap) - 3, SVG_W, rank_h + 6, i % 2);
    axis_ms(out, LABEL_W, PLOT_W, span_ms, top - 4, y_bottom);
    for (size_t i = 0; i < r->nranks; i++) {
        double y = top + i * (rank_h + rank_gap);
        fprintf(out, "<text x=\"6\" y=\"%.1f\" class=\"rank\">rank %d</text>", y + 13, r->ranks[i].rank);
        if (!isnan(r->ranks[i].speed))
            fprintf(out, "<text x=\"6\" y=\"%.1f\" class=\"sub\">speed ×%g</text>", y + 27,
                    r->ranks[i].speed);
        double ly = y;
        for (int l = 0; l < 3; l++) {
            fprintf(out, "<text x=\"%d\" y=\"%.1f\" class=\"lane\" text-anchor=\"end\">%s</text>\n",
                    LABEL_W - 6, ly + LANE_H[l] - 2, LANE_NAME[l]);
            ly += LANE_H[l] + lane_gap;
        }
    }
    for (size_t k = 0; k < tl->n; k++) {
        const timeline_span *t = &tl->spans[k];
        size_t ri = 0;
        while (ri < r->nranks && r->ranks[ri].rank != t->rank)
            ri++;
        if (ri == r->nranks)
            continue;
        double y = top + ri * (rank_h + rank_gap);
        for (int l = 0; l < t->stream; l++)
            y += LANE_H[l] + lane_gap;
        double h = LANE_H[t->stream];
        double x = LABEL_W + (double)(t->start_ns - tl->t0_ns) * scale;
        if (!strcmp(t->kind, "allreduce") && t->last_arrival_ns >= t->start_ns) {
            double xa = LABEL_W + (double)(t->last_arrival_ns - tl->t0_ns) * scale;
            if (t->last_arrival_ns > t->start_ns) {
                rect(out, x, y, xa - x, h, COL_AR_WAIT);
                span_title(out, t, "waiting for the last rank", t->start_ns, t->last_arrival_ns);
            }
            rect(out, xa, y, (double)(t->end_ns - t->last_arrival_ns) * scale, h, COL_AR_TRANSFER);
            span_title(out, t, "transfer", t->last_arrival_ns, t->end_ns);
        } else {
            rect(out, x, y, (double)(t->end_ns - t->start_ns) * scale, h, span_colour(t->kind));
            span_title(out, t, "", t->start_ns, t->end_ns);
        }
    }
    fputs("</svg>\n", out);
}

/* ---- step attribution ------------------------------------------------------------- */

void svg_attribution(FILE *out, const analysis_run *r, size_t idx)
{
    double max = 0;
    for (size_t i = 0; i < r->nranks; i++)
        if (r->ranks[i].step_ms > max)
            max = r->ranks[i].step_ms;
    double bar_h = 22, gap = 10, top = 6;
    double height = top + r->nranks * (bar_h + gap) + 30;
    fprintf(out, "<svg class=\"attribution\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\""
                 " xmlns=\"http://www.w3.org/2000/svg\">\n",
            SVG_W, height, SVG_W, height);
    double y_bottom = top + r->nranks * (bar_h + gap) - gap / 2;
    axis_ms(out, LABEL_W, PLOT_W, max, top - 2, y_bottom);
    static const char *const keys[] = {"compute_ms", "exposed_transfer_ms", "exposed_wait_ms",
                                       "other_ms"};
    static const char *const labels[] = {"compute", "exposed transfer", "exposed wait", "other"};
    static const char *const colours[] = {COL_COMPUTE, COL_AR_TRANSFER, COL_AR_WAIT, COL_OTHER};
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        double y = top + i * (bar_h + gap);
        fprintf(out, "<text x=\"6\" y=\"%.1f\" class=\"rank\">rank %d</text>\n", y + 15, k->rank);
        double parts[4] = {k->attr_compute_ms, k->attr_exposed_transfer_ms,
                           k->attr_exposed_wait_ms, k->attr_other_ms};
        double x = LABEL_W;
        for (int p = 0; p < 4; p++) {
            if (isnan(parts[p]) || !(max > 0))
                continue;
            double w = PLOT_W * (parts[p] > 0 ? parts[p] : 0) / max;
            char path[96];
            snprintf(path, sizeof path, "runs.%zu.ranks.%zu.attribution.%s", idx, i, keys[p]);
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"",
                    x, y, w, bar_h, colours[p]);
            html_fig_attrs(out, path, parts[p]);
            fprintf(out, "><title>rank %d %s: %.3f ms</title></rect>\n", k->rank, labels[p], parts[p]);
            if (w > 46)
                fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"inbar\" text-anchor=\"middle\">%.1f</text>\n",
                        x + w / 2, y + 15, parts[p]);
            x += w;
        }
    }
    fputs("</svg>\n", out);
}

/* ---- buckets -------------------------------------------------------------------------- */

void svg_buckets(FILE *out, const analysis_run *r, size_t idx)
{
    double max = 0;
    for (size_t i = 0; i < r->nbuckets; i++) {
        const analysis_bucket *b = &r->buckets[i];
        double end = 0, parts[4] = {b->ready_ms, b->launch_delay_ms, b->arrival_skew_ms, b->transfer_ms};
        for (int p = 0; p < 4; p++)
            if (!isnan(parts[p]) && parts[p] > 0)
                end += parts[p];
        if (end > max)
            max = end;
    }
    double bar_h = 16, gap = 8, top = 6;
    double height = top + r->nbuckets * (bar_h + gap) + 30;
    fprintf(out, "<svg class=\"buckets\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\""
                 " xmlns=\"http://www.w3.org/2000/svg\">\n",
            SVG_W, height, SVG_W, height);
    axis_ms(out, LABEL_W, PLOT_W, max, top - 2, top + r->nbuckets * (bar_h + gap) - gap / 2);
    static const char *const keys[] = {"ready_ms", "launch_delay_ms", "arrival_skew_ms", "transfer_ms"};
    static const char *const labels[] = {"ready (since step start)", "launch delay", "arrival skew",
                                         "transfer"};
    static const char *const colours[] = {COL_READY, COL_LAUNCH, COL_AR_WAIT, COL_AR_TRANSFER};
    for (size_t i = 0; i < r->nbuckets; i++) {
        const analysis_bucket *b = &r->buckets[i];
        double y = top + i * (bar_h + gap);
        fprintf(out, "<text x=\"6\" y=\"%.1f\" class=\"rank\">bucket %d</text>\n", y + 12, b->idx);
        double parts[4] = {b->ready_ms, b->launch_delay_ms, b->arrival_skew_ms, b->transfer_ms};
        double x = LABEL_W;
        for (int p = 0; p < 4 && max > 0; p++) {
            if (isnan(parts[p]))
                continue;
            double w = PLOT_W * (parts[p] > 0 ? parts[p] : 0) / max;
            char path[96];
            snprintf(path, sizeof path, "runs.%zu.buckets.%zu.%s", idx, i, keys[p]);
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"",
                    x, y, w, bar_h, colours[p]);
            html_fig_attrs(out, path, parts[p]);
            fprintf(out, "><title>bucket %d %s: %.3f ms</title></rect>\n", b->idx, labels[p], parts[p]);
            x += w;
        }
    }
    fputs("</svg>\n", out);
}

/* ---- line charts ------------------------------------------------------------------------ */

void svg_line_chart(FILE *out, const char *title, const char *xlabel, const char *ylabel,
                    const double *x, size_t nx, const chart_series *series, size_t nseries)
{
    const double w = 540, h = 300, l = 64, rgt = 16, t = 30, b = 46;
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    for (size_t i = 0; i < nx; i++) {
        xmin = fmin(xmin, x[i]);
        xmax = fmax(xmax, x[i]);
        for (size_t s = 0; s < nseries; s++)
            if (!isnan(series[s].y[i]))
                ymax = fmax(ymax, series[s].y[i]);
    }
    /* Swept values that grow geometrically (bucket sizes) read better on a log axis. */
    bool logx = xmin > 0 && xmax / xmin >= 20;
    double lx0 = logx ? log10(xmin) : xmin, lx1 = logx ? log10(xmax) : xmax;
    if (lx1 <= lx0)
        lx1 = lx0 + 1;
    double ystep = nice_step(ymax, 5), ytop = ystep * ceil(ymax / ystep);
    if (!(ytop > 0))
        ytop = 1;
    double pw = w - l - rgt, ph = h - t - b;
    fprintf(out, "<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\""
                 " xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"%.0f\" y=\"18\" class=\"ctitle\">",
            w, h, w, h, l);
    html_esc(out, title);
    fputs("</text>\n", out);
    for (double v = 0; v <= ytop + 1e-9; v += ystep) {
        double y = t + ph * (1 - v / ytop);
        fprintf(out, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>"
                     "<text x=\"%.0f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%g</text>\n",
                l, y, l + pw, y, l - 6, y + 4, v);
    }
    for (size_t i = 0; i < nx; i++) {
        double px = l + pw * ((logx ? log10(x[i]) : x[i]) - lx0) / (lx1 - lx0);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/>"
                     "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\" text-anchor=\"middle\">%g</text>\n",
                px, t, px, t + ph, px, t + ph + 15, x[i]);
    }
    fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\">", l + pw / 2, h - 8);
    html_esc(out, xlabel);
    fprintf(out, "%s</text><text x=\"14\" y=\"%.0f\" class=\"axis\" text-anchor=\"middle\""
                 " transform=\"rotate(-90 14 %.0f)\">",
            logx ? " (log scale)" : "", t + ph / 2, t + ph / 2);
    html_esc(out, ylabel);
    fputs("</text>\n", out);
    for (size_t s = 0; s < nseries; s++) {
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", series[s].colour);
        for (size_t i = 0; i < nx; i++)
            if (!isnan(series[s].y[i]))
                fprintf(out, "%.1f,%.1f ", l + pw * ((logx ? log10(x[i]) : x[i]) - lx0) / (lx1 - lx0),
                        t + ph * (1 - series[s].y[i] / ytop));
        fputs("\"/>\n", out);
        for (size_t i = 0; i < nx; i++) {
            if (isnan(series[s].y[i]))
                continue;
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"",
                    l + pw * ((logx ? log10(x[i]) : x[i]) - lx0) / (lx1 - lx0),
                    t + ph * (1 - series[s].y[i] / ytop), series[s].colour);
            html_fig_attrs(out, series[s].paths[i], series[s].y[i]);
            fputs("><title>", out);
            html_esc(out, series[s].label);
            fprintf(out, " at %g: %.3f</title></circle>\n", x[i], series[s].y[i]);
        }
    }
    fputs("</svg>\n", out);
}
