/* report_html_fig.c — the pieces every part of the HTML report is written with
 * (report_html_fig.h): escaped text, figures that carry their --json path, legends. */
#include "reports/report_html_fig.h"

#include <math.h>

void html_esc(FILE *out, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: putc(*p, out);
        }
    }
}

void html_fig_attrs(FILE *out, const char *path, double v)
{
    fprintf(out, " data-json=\"%s\" data-value=\"", path);
    if (isnan(v) || isinf(v))
        fputs("null\"", out);
    else
        fprintf(out, "%.17g\"", v);
}

void html_fig(FILE *out, const char *tag, const char *path, double v, int decimals)
{
    fprintf(out, "<%s class=\"num\"", tag);
    html_fig_attrs(out, path, v);
    if (isnan(v) || isinf(v))
        fprintf(out, ">-</%s>", tag);
    else
        fprintf(out, ">%.*f</%s>", decimals, v, tag);
}

void html_legend(FILE *out, const char *const *colours, const char *const *labels, size_t n)
{
    fputs("<div class=\"legend\">", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "<span><i style=\"background:%s\"></i>%s</span>", colours[i], labels[i]);
    fputs("</div>\n", out);
}
