/* run_list.c — one line per run of a database (run_list.h). */
#include "reports/run_list.h"

#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "reports/analysis.h"

static double step_ms(const analysis_run *r) { return r->steps > 0 ? r->step_ms_mean : NAN; }

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

static void write_text(const analysis_run *runs, size_t n, FILE *out)
{
    fprintf(out, "%5s  %-32s  %-14s  %-9s  %9s  %-19s  %9s  %9s\n", "run", "name", "backend", "status", "ranks",
            "started (UTC)", "step ms", "overlap %");
    for (size_t i = 0; i < n; i++) {
        const analysis_run *r = &runs[i];
        double step = step_ms(r), overlap = analysis_mean_overlap_pct(r);
        /* "2 of 128": an imported run holding a few ranks of its job. */
        char ranks[32];
        if (analysis_is_subset(r))
            snprintf(ranks, sizeof ranks, "%zu of %d", r->nranks, r->world_size);
        else
            snprintf(ranks, sizeof ranks, "%d", r->world_size);
        fprintf(out, "%5lld  %-32.32s  %-14.14s  %-9.9s  %9s  %-19.19s  ", (long long)r->id, or_dash(r->name),
                or_dash(r->backend), or_dash(r->status), ranks, or_dash(r->started_at));
        if (isnan(step))
            fprintf(out, "%9s  ", "-");
        else
            fprintf(out, "%9.3f  ", step);
        if (isnan(overlap))
            fprintf(out, "%9s\n", "-");
        else
            fprintf(out, "%9.1f\n", overlap);
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

/* How many runs db holds; -1 with err on an SQLite error. */
static int64_t count_runs(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM run", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    else
        snprintf(err, errlen, "counting runs: %s", sqlite3_errmsg(db));
    sqlite3_finalize(s);
    return n;
}

int run_list_write(sqlite3 *db, bool json, FILE *out, char *err, size_t errlen)
{
    int64_t count = count_runs(db, err, errlen);
    if (count < 0)
        return -1;
    analysis_run *runs = NULL;
    size_t n = 0;
    /* analysis_load refuses a database without runs; an empty list is the answer here. */
    if (count > 0 && analysis_load(db, -1, &runs, &n, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (json)
        rc = write_json(runs, n, out, err, errlen);
    else
        write_text(runs, n, out);
    analysis_free(runs, n);
    return rc;
}
