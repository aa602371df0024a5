/* report_html_fig.h — what the HTML report's pages and drawings are written with:
 * escaped text, figure cells that carry their --json path, legends, and the colours of
 * the kinds of time.  Nothing outside reports/report_html*.c includes it; the public
 * contract is report.h.
 *
 * Every figure shown is an element with data-json="<path into the --json report>"
 * (e.g. "runs.0.ranks.2.attribution.compute_ms") and data-value="<the number, full
 * precision>" or "null", so a reader (or a test) can check the page against the JSON
 * report figure by figure. */
#ifndef DDPPROF_REPORT_HTML_FIG_H
#define DDPPROF_REPORT_HTML_FIG_H

#include <stddef.h>
#include <stdio.h>

/* Colours of the drawings and legends, one per kind of time. */
#define COL_FORWARD "#4e79a7"
#define COL_BACKWARD "#59a14f"
#define COL_COPY "#a0cbe8"
#define COL_OPTIMIZER "#b07aa1"
#define COL_HOST_WAIT "#d9d9d9"
#define COL_AR_WAIT "#e15759"
#define COL_AR_TRANSFER "#f28e2b"
#define COL_BROADCAST "#9c755f"
#define COL_COMPUTE "#4e79a7"
#define COL_OTHER "#bab0ac"
#define COL_READY "#cfe2f3"
#define COL_LAUNCH "#edc948"

void html_esc(FILE *out, const char *s);
/* <tag class="num" data-json=path data-value=v>v with `decimals`</tag>; "-" for NAN. */
void html_fig(FILE *out, const char *tag, const char *path, double v, int decimals);
/* data-json / data-value attributes alone, for SVG elements. */
void html_fig_attrs(FILE *out, const char *path, double v);

/* A legend of (colour, label) pairs, n of them. */
void html_legend(FILE *out, const char *const *colours, const char *const *labels, size_t n);

#endif
