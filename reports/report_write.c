/* report_write.c — report_write() (report.h): a run's analysis (analysis.h) handed to one
 * formatter, then, for text, the equivalence runs' table.  Apart from analysis.c, so that
 * the formatters, which use the analysis's helpers, and the analysis do not call each
 * other. */
#include "common/errmsg.h"
#include "reports/analysis.h"
#include "reports/report.h"
#include "reports/report_equivalence.h"

int report_write(store *st, int64_t run_id, report_format fmt, FILE *out, char *err, size_t errlen)
{
    return report_write_ranks(st, run_id, fmt, NULL, out, err, errlen);
}

int report_write_ranks(store *st, int64_t run_id, report_format fmt, const rank_select *sel, FILE *out,
                       char *err, size_t errlen)
{
    if (fmt != REPORT_TEXT && fmt != REPORT_JSON && fmt != REPORT_HTML) {
        set_err(err, errlen, "unknown report format %d", (int)fmt);
        return -1;
    }
    analysis_run *runs;
    size_t n;
    if (analysis_load(st, run_id, &runs, &n, err, errlen) < 0)
        return -1;
    int rc = fmt == REPORT_JSON   ? report_json(out, runs, n, err, errlen)
             : fmt == REPORT_HTML ? report_html(out, st, runs, n, err, errlen)
                                  : report_text(out, runs, n, sel, err, errlen);
    if (rc == 0 && fmt == REPORT_TEXT)
        rc = report_equivalence_text(st, run_id, out, err, errlen);
    analysis_free(runs, n);
    return rc;
}
