/* run_list.c — one line per run of a database (run_list.h). */
#include "reports/run_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "profiler/store_read_run.h"
#include "reports/analysis.h"

static double step_ms(const analysis_run *r) { return r->steps > 0 ? r->step_ms_mean : NAN; }

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* "11-28 15:33" of "2026-11-28T15:33:10.123Z": the day and minute a reader tells runs
 * apart by (the JSON keeps the whole time), short so that the names fit. */
static void short_start(const char *iso, char *out, size_t n)
{
    if (iso && strlen(iso) >= 16 && iso[10] == 'T')
        snprintf(out, n, "%.5s %.5s", iso + 5, iso + 11);
    else
        snprintf(out, n, "%s", or_dash(iso));
}

/* The ranks column: the world size, or "2 of 128" for an imported run holding a few
 * ranks of its job. */
static const char *ranks_cell(const analysis_run *r, char *buf, size_t n)
{
    if (analysis_is_subset(r))
        snprintf(buf, n, "%zu of %d", r->nranks, r->world_size);
    else
        snprintf(buf, n, "%d", r->world_size);
    return buf;
}

/* Columns as wide as their widest cell, the name last and whole: a sweep point's name
 * ends with its point, which a cut name would lose. */
static void write_text(const analysis_run *runs, size_t n, FILE *out)
{
    int wid = 3, wb = (int)strlen("backend"), ws = (int)strlen("status"), wstep = (int)strlen("step ms");
    int wr = (int)strlen("ranks");
    for (size_t i = 0; i < n; i++) {
        char cell[32];
        int id = snprintf(cell, sizeof cell, "%lld", (long long)runs[i].id);
        int b = (int)strlen(or_dash(runs[i].backend)), st = (int)strlen(or_dash(runs[i].status));
        int sp = isnan(step_ms(&runs[i])) ? 1 : snprintf(cell, sizeof cell, "%.3f", step_ms(&runs[i]));
        int rk = (int)strlen(ranks_cell(&runs[i], cell, sizeof cell));
        wid = id > wid ? id : wid;
        wb = b > wb ? b : wb;
        ws = st > ws ? st : ws;
        wstep = sp > wstep ? sp : wstep;
        wr = rk > wr ? rk : wr;
    }
    fprintf(out, "%*s  %-*s  %-*s  %*s  %-11s  %*s  %9s  %s\n", wid, "run", wb, "backend", ws, "status", wr, "ranks",
            "started UTC", wstep, "step ms", "overlap %", "name");
    for (size_t i = 0; i < n; i++) {
        const analysis_run *r = &runs[i];
        double step = step_ms(r), overlap = analysis_mean_overlap_pct(r);
        char started[32], ranks[32];
        short_start(r->started_at, started, sizeof started);
        fprintf(out, "%*lld  %-*s  %-*s  %*s  %-11s  ", wid, (long long)r->id, wb, or_dash(r->backend), ws,
                or_dash(r->status), wr, ranks_cell(r, ranks, sizeof ranks), started);
        if (isnan(step))
            fprintf(out, "%*s  ", wstep, "-");
        else
            fprintf(out, "%*.3f  ", wstep, step);
        if (isnan(overlap))
            fprintf(out, "%9s  ", "-");
        else
            fprintf(out, "%9.1f  ", overlap);
        fprintf(out, "%s\n", or_dash(r->name));
    }
}

static json_t *num(double v) { return isnan(v) || isinf(v) ? json_null() : json_real(v); }

static json_t *text_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static int write_json(const analysis_run *runs, size_t n, FILE *out, char *err, size_t errlen)
{
    json_t *list = json_array();
    json_t *doc = list ? json_pack("{s:o}", "runs", list) : NULL;
    if (!doc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const analysis_run *r = &runs[i];
        json_error_t je;
        json_t *held = json_array();
        for (size_t k = 0; held && k < r->nranks; k++)
            if (json_array_append_new(held, json_integer(r->ranks[k].rank)) != 0) {
                json_decref(held);
                held = NULL;
            }
        json_t *row = held ? json_pack_ex(&je, 0, "{s:I, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o}", "id",
                                          (json_int_t)r->id, "name", text_or_null(r->name), "backend",
                                          text_or_null(r->backend), "status", text_or_null(r->status), "world_size",
                                          r->world_size, "ranks_traced", held, "started_at",
                                          text_or_null(r->started_at), "step_ms", num(step_ms(r)), "overlap_pct",
                                          num(analysis_mean_overlap_pct(r)))
                           : NULL;
        if (!row || json_array_append_new(list, row) != 0) {
            snprintf(err, errlen, "building the JSON list: %s", row ? "out of memory" : je.text);
            json_decref(doc);
            return -1;
        }
    }
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (rc != 0 || fputc('\n', out) == EOF) {
        snprintf(err, errlen, "writing the JSON list");
        return -1;
    }
    return 0;
}

int run_list_write(store *st, bool json, FILE *out, char *err, size_t errlen)
{
    store_run_ids ids;
    if (store_read_run_ids(st, &ids, err, errlen) != 0)
        return -1;
    analysis_run *runs = NULL;
    size_t n = 0;
    /* analysis_load refuses a database without runs; an empty list is the answer here. */
    if (ids.count > 0 && analysis_load(st, -1, &runs, &n, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (json)
        rc = write_json(runs, n, out, err, errlen);
    else
        write_text(runs, n, out);
    analysis_free(runs, n);
    return rc;
}
