/* report_html_svg.h — the HTML report's drawings (report_html_svg.c), for the page
 * (report_html.c) to place: inline SVG whose bars that stand for a figure carry its
 * data-json path (report_html_fig.h).  Nothing outside reports/report_html*.c
 * includes it.
 *
 * Ownership: nothing here allocates; every pointer (the run, the timeline, the series
 * and their arrays) is borrowed for the call. */
#ifndef DDPPROF_REPORT_HTML_SVG_H
#define DDPPROF_REPORT_HTML_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "reports/analysis.h"
#include "reports/timeline.h"

/* Run `idx` of the report (its index in runs[]), drawn with the figures of `r`. */
void svg_timeline(FILE *out, const analysis_run *r, const timeline *tl);
void svg_attribution(FILE *out, const analysis_run *r, size_t idx);
void svg_buckets(FILE *out, const analysis_run *r, size_t idx);

/* A line chart of y against x for several series sharing the x values. */
typedef struct {
    const char *label;
    const char *colour;
    const double *y;
    char (*paths)[96]; /* data-json of each point */
} chart_series;

void svg_line_chart(FILE *out, const char *title, const char *xlabel, const char *ylabel,
                    const double *x, size_t nx, const chart_series *series, size_t nseries);

#endif
