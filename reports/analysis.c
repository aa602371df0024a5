/* analysis.c — computes the report figures of analysis.h from a results database.
 *
 * Contract: see analysis.h.  All per-span arithmetic happens in the store's view SQL
 * (store_view_select, restricted to one run with ?1 so only that run's spans are
 * read); this file averages the per-rank-iteration rows and assembles the structs.
 * The iteration_stats rows of a run are read once and aggregated here, since the
 * step statistics and the per-rank means both need them.
 */
#include "common/errmsg.h"
#include "reports/analysis.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store.h"

#define NS_PER_MS 1e6


static int db_fail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
    set_err(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
    return -1;
}

/* "WITH <name> AS (<view's one-run SELECT>) <tail>", the way every query here reads
 * a view: the filtered text keeps the read to one run's spans. */
static char *with_view(const char *name, const char *tail)
{
    const char *body = store_view_select(name, true);
    if (!body)
        return NULL;
    size_t n = strlen(name) + strlen(body) + strlen(tail) + 32;
    char *sql = malloc(n);
    if (sql)
        snprintf(sql, n, "WITH %s AS (%s) %s", name, body, tail);
    return sql;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **s, char *err, size_t errlen)
{
    if (!sql) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    if (sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "preparing report query");
    return 0;
}

static int bind_run(sqlite3 *db, sqlite3_stmt *s, int64_t run_id, char *err, size_t errlen)
{
    if (sqlite3_bind_int64(s, 1, run_id) != SQLITE_OK)
        return db_fail(db, err, errlen, "binding run id");
    return 0;
}

/* A text column as a malloc'ed string; NULL stays NULL. */
static int dup_col(sqlite3_stmt *s, int col, char **out, char *err, size_t errlen)
{
    const unsigned char *v = sqlite3_column_text(s, col);
    *out = NULL;
    if (!v)
        return 0;
    *out = strdup((const char *)v);
    if (!*out) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static double ms(double ns)
{
    return ns / NS_PER_MS;
}

/* ---- run header ------------------------------------------------------------------ */

/* A run still 'running' in the file is running only while its writer lives: one whose
 * writer is gone is reported 'abandoned', so it is never read as a good run. */
static int judge_running(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    if (!r->status || strcmp(r->status, "running") != 0)
        return 0;
    store_liveness state;
    char detail[512];
    if (store_run_liveness(db, r->id, &state, detail, sizeof detail, err, errlen) < 0)
        return -1;
    if (state == STORE_WRITER_GONE) {
        char *abandoned = strdup("abandoned");
        if (!abandoned) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        free(r->status);
        r->status = abandoned;
    }
    r->status_detail = strdup(detail);
    if (!r->status_detail) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int load_header(sqlite3 *db, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (prepare(db,
                "SELECT name, status, error, backend, world_size, model, total_params,"
                " iterations, warmup, bucket_cap_mb, source, started_at, finished_at, ranks,"
                /* [record] detail as the stored scenario (scenario_to_ini) says it */
                " instr(scenario, char(10) || 'detail = phase') > 0"
                " FROM run WHERE id = ?1",
                &s, err, errlen) < 0)
        return -1;
    int ret = -1;
    if (bind_run(db, s, id, err, errlen) < 0)
        goto out;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        set_err(err, errlen, "no run with id %" PRId64, id);
        goto out;
    }
    if (rc != SQLITE_ROW) {
        db_fail(db, err, errlen, "reading run");
        goto out;
    }
    r->id = id;
    if (dup_col(s, 0, &r->name, err, errlen) < 0 || dup_col(s, 1, &r->status, err, errlen) < 0 ||
        dup_col(s, 2, &r->error, err, errlen) < 0 || dup_col(s, 3, &r->backend, err, errlen) < 0 ||
        dup_col(s, 5, &r->model, err, errlen) < 0 || dup_col(s, 10, &r->source, err, errlen) < 0 ||
        dup_col(s, 11, &r->started_at, err, errlen) < 0 ||
        dup_col(s, 12, &r->finished_at, err, errlen) < 0 || dup_col(s, 13, &r->placement, err, errlen) < 0)
        goto out;
    r->world_size = sqlite3_column_int(s, 4);
    r->total_params = sqlite3_column_int64(s, 6);
    r->iterations_planned = sqlite3_column_int(s, 7);
    r->warmup_planned = sqlite3_column_int(s, 8);
    r->bucket_cap_mb = sqlite3_column_double(s, 9);
    r->phase_spans = sqlite3_column_int(s, 14) != 0;
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret < 0 ? ret : judge_running(db, r, err, errlen);
}

static int load_bucket_counts(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (prepare(db, "SELECT version, COUNT(*) FROM bucket WHERE run_id = ?1 GROUP BY version",
                &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    r->bucket_version = -1;
    if (bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int version = sqlite3_column_int(s, 0), n = sqlite3_column_int(s, 1);
        if (version == 0)
            r->buckets_initial = n;
        else if (version == 1)
            r->buckets_rebuilt = n;
        if (version > r->bucket_version)
            r->bucket_version = version;
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading buckets");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

/* Whether the run's statistics were stored when it ended (schema 4, store_stats.c):
 * then they are read instead of aggregating the spans through the views.  A run
 * still recording, or whose writer is gone, is always read from its spans. */
static int stats_stored(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    r->stored_stats = false;
    if (!r->status || !strcmp(r->status, "running") || !strcmp(r->status, "abandoned"))
        return 0;
    sqlite3_stmt *s = NULL;
    if (prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_stats'", &s,
                err, errlen) < 0)
        return -1;
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_DONE)
        return 0; /* an older schema, read as it is */
    if (rc != SQLITE_ROW)
        return db_fail(db, err, errlen, "reading schema");
    if (prepare(db, "SELECT 1 FROM run_stats WHERE run_id = ?1", &s, err, errlen) < 0)
        return -1;
    if (bind_run(db, s, r->id, err, errlen) < 0) {
        sqlite3_finalize(s);
        return -1;
    }
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, err, errlen, "reading run_stats");
    r->stored_stats = rc == SQLITE_ROW;
    return 0;
}

/* ---- iterations and ranks ----------------------------------------------------------- */

typedef struct {
    int rank, iter;
    bool warmup;
    int64_t step, compute, comm, overlap, exposed, wait, step_start;
} its_row;

#define ITS_COLUMNS                                                                  \
    "SELECT rank, iter, warmup, step_ns, compute_ns, comm_ns, overlap_ns,"            \
    " exposed_comm_ns, wait_ns, step_start_ns"

static int load_its(sqlite3 *db, const analysis_run *r, its_row **rows, size_t *nrows,
                    char *err, size_t errlen)
{
    int64_t id = r->id;
    *rows = NULL;
    *nrows = 0;
    char *sql = r->stored_stats
                    ? strdup(ITS_COLUMNS " FROM iteration_stat WHERE run_id = ?1 ORDER BY rank, iter")
                    : with_view("iteration_stats", ITS_COLUMNS " FROM iteration_stats ORDER BY rank, iter");
    sqlite3_stmt *s = NULL;
    int ret = prepare(db, sql, &s, err, errlen);
    free(sql);
    if (ret < 0)
        return -1;
    ret = -1;
    size_t cap = 0;
    int rc;
    if (bind_run(db, s, id, err, errlen) < 0)
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*nrows == cap) {
            cap = cap ? 2 * cap : 64;
            its_row *grown = realloc(*rows, cap * sizeof **rows);
            if (!grown) {
                set_err(err, errlen, "out of memory");
                goto out;
            }
            *rows = grown;
        }
        its_row *w = &(*rows)[(*nrows)++];
        w->rank = sqlite3_column_int(s, 0);
        w->iter = sqlite3_column_int(s, 1);
        w->warmup = sqlite3_column_int(s, 2) != 0;
        w->step = sqlite3_column_int64(s, 3);
        w->compute = sqlite3_column_int64(s, 4);
        w->comm = sqlite3_column_int64(s, 5);
        w->overlap = sqlite3_column_int64(s, 6);
        w->exposed = sqlite3_column_int64(s, 7);
        w->wait = sqlite3_column_int64(s, 8);
        w->step_start = sqlite3_column_int64(s, 9);
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading iteration_stats");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    if (ret < 0) {
        free(*rows);
        *rows = NULL;
        *nrows = 0;
    }
    return ret;
}

static bool counted(const analysis_run *r, const its_row *w)
{
    return r->all_iterations || !w->warmup;
}

typedef struct {
    int iter;
    bool warmup;
    int64_t step;
} iter_step;

static int cmp_iter_step(const void *a, const void *b)
{
    const iter_step *x = a, *y = b;
    return (x->iter > y->iter) - (x->iter < y->iter);
}

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* v: one entry per iteration (ascending), the job's step in each. */
static void pick_representative(analysis_run *r, const iter_step *v, size_t m)
{
    r->representative_iter = -1;
    int64_t *steps = malloc((m ? m : 1) * sizeof *steps);
    size_t k = 0;
    if (!steps)
        return; /* only the timeline's choice is lost; it then shows none */
    for (size_t i = 0; i < m; i++)
        if (r->all_iterations || !v[i].warmup)
            steps[k++] = v[i].step;
    if (k > 0) {
        qsort(steps, k, sizeof *steps, cmp_int64);
        int64_t median = steps[(k - 1) / 2], best = -1;
        for (size_t i = 0; i < m; i++) {
            if (!r->all_iterations && v[i].warmup)
                continue;
            int64_t d = v[i].step > median ? v[i].step - median : median - v[i].step;
            if (best < 0 || d < best) {
                best = d;
                r->representative_iter = v[i].iter;
            }
        }
    }
    free(steps);
}

/* Iteration counts and the job's step time (the slowest rank's, per iteration). */
static int step_stats(analysis_run *r, const its_row *rows, size_t n, char *err, size_t errlen)
{
    r->step_ms_mean = r->step_ms_min = r->step_ms_max = NAN;
    if (n == 0)
        return 0;
    iter_step *v = malloc(n * sizeof *v);
    if (!v) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (iter_step){rows[i].iter, rows[i].warmup, rows[i].step};
    qsort(v, n, sizeof *v, cmp_iter_step);

    /* Collapse to one entry per iteration holding the slowest rank's step. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[m - 1].iter == v[i].iter) {
            if (v[i].step > v[m - 1].step)
                v[m - 1].step = v[i].step;
        } else {
            v[m++] = v[i];
        }
    }
    for (size_t i = 0; i < m; i++) {
        if (v[i].warmup)
            r->iterations_warmup++;
        else
            r->iterations_measured++;
    }
    r->all_iterations = r->iterations_measured == 0 && r->iterations_warmup > 0;

    double sum = 0;
    for (size_t i = 0; i < m; i++) {
        if (!r->all_iterations && v[i].warmup)
            continue;
        double step = ms((double)v[i].step);
        sum += step;
        if (r->steps == 0 || step < r->step_ms_min)
            r->step_ms_min = step;
        if (r->steps == 0 || step > r->step_ms_max)
            r->step_ms_max = step;
        r->steps++;
    }
    if (r->steps > 0)
        r->step_ms_mean = sum / r->steps;
    pick_representative(r, v, m);
    free(v);
    return 0;
}

typedef struct {
    int rank;
    double speed;
    bool spans;
} rank_speed;

static int load_speeds(sqlite3 *db, int64_t id, rank_speed **out, size_t *n, char *err,
                       size_t errlen)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = NULL;
    /* rank.spans is schema 8's; in an older file every rank's spans are stored. */
    if (sqlite3_prepare_v2(db, "SELECT rank, speed, spans FROM rank WHERE run_id = ?1 ORDER BY rank", -1, &s, NULL) !=
            SQLITE_OK &&
        prepare(db, "SELECT rank, speed, NULL FROM rank WHERE run_id = ?1 ORDER BY rank", &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    size_t cap = 0;
    if (bind_run(db, s, id, err, errlen) < 0)
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            rank_speed *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                set_err(err, errlen, "out of memory");
                goto out;
            }
            *out = grown;
        }
        (*out)[*n].rank = sqlite3_column_int(s, 0);
        (*out)[*n].speed =
            sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
        (*out)[*n].spans = sqlite3_column_type(s, 2) == SQLITE_NULL || sqlite3_column_int(s, 2) != 0;
        (*n)++;
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading ranks");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    if (ret < 0) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return ret;
}

static void finish_rank(analysis_rank *k, const int64_t sums[7])
{
    /* sums: step, compute, comm, overlap, exposed, wait, exposed wait */
    double n = k->iterations;
    if (k->iterations == 0) {
        k->step_ms = k->compute_ms = k->comm_ms = k->exposed_comm_ms = k->wait_ms = NAN;
        k->overlap_pct = NAN;
        k->attr_compute_ms = k->attr_exposed_transfer_ms = k->attr_exposed_wait_ms =
            k->attr_other_ms = NAN;
        return;
    }
    k->step_ms = ms((double)sums[0]) / n;
    k->compute_ms = ms((double)sums[1]) / n;
    k->comm_ms = ms((double)sums[2]) / n;
    k->overlap_pct = sums[2] > 0 ? 100.0 * (double)sums[3] / (double)sums[2] : NAN;
    k->exposed_comm_ms = ms((double)sums[4]) / n;
    k->wait_ms = ms((double)sums[5]) / n;
    /* Differences in integer ns, so that a zero part prints as 0 and not as rounding
     * noise of the means. */
    k->attr_compute_ms = k->compute_ms;
    k->attr_exposed_wait_ms = ms((double)sums[6]) / n;
    k->attr_exposed_transfer_ms = ms((double)(sums[4] - sums[6])) / n;
    k->attr_other_ms = ms((double)(sums[0] - sums[1] - sums[4])) / n;
}

/* Ranks are those of the rank table plus any that recorded spans without a row
 * there, so a malformed run still shows every rank it has data for. */
static int rank_stats(sqlite3 *db, analysis_run *r, const its_row *rows, size_t n, char *err,
                      size_t errlen)
{
    rank_speed *sp;
    size_t nsp;
    if (load_speeds(db, r->id, &sp, &nsp, err, errlen) < 0)
        return -1;
    size_t cap = nsp + n;
    r->ranks = calloc(cap ? cap : 1, sizeof *r->ranks);
    if (!r->ranks) {
        free(sp);
        set_err(err, errlen, "out of memory");
        return -1;
    }
    size_t i = 0, j = 0; /* sp and rows are both ordered by rank */
    while (i < nsp || j < n) {
        int rank = i < nsp && (j >= n || sp[i].rank <= rows[j].rank) ? sp[i].rank : rows[j].rank;
        analysis_rank *k = &r->ranks[r->nranks++];
        k->rank = rank;
        k->speed = NAN;
        k->spans = true; /* a rank outside the rank table has spans: it is there by them */
        if (i < nsp && sp[i].rank == rank) {
            k->spans = sp[i].spans;
            k->speed = sp[i++].speed;
        }
        r->ranks_with_spans += k->spans;
        int64_t sums[7] = {0};
        for (; j < n && rows[j].rank == rank; j++) {
            const its_row *w = &rows[j];
            if (!counted(r, w))
                continue;
            int64_t strag = w->exposed < w->wait ? w->exposed : w->wait;
            int64_t add[7] = {w->step, w->compute, w->comm, w->overlap, w->exposed, w->wait, strag};
            for (int c = 0; c < 7; c++)
                sums[c] += add[c];
            k->iterations++;
        }
        finish_rank(k, sums);
    }
    free(sp);
    return 0;
}

/* ---- imported runs, HTA's figures, the straggler ---------------------------------------- */

static int has_schema_item(sqlite3 *db, const char *sql, const char *a, const char *b, bool *yes, char *err,
                           size_t errlen)
{
    sqlite3_stmt *s = NULL;
    if (prepare(db, sql, &s, err, errlen) < 0)
        return -1;
    if (sqlite3_bind_text(s, 1, a, -1, SQLITE_STATIC) != SQLITE_OK ||
        (b && sqlite3_bind_text(s, 2, b, -1, SQLITE_STATIC) != SQLITE_OK)) {
        sqlite3_finalize(s);
        return db_fail(db, err, errlen, "binding schema query");
    }
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(db, err, errlen, "reading schema");
    return 0;
}

static int has_table(sqlite3 *db, const char *name, bool *yes, char *err, size_t errlen)
{
    return has_schema_item(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", name, NULL, yes,
                           err, errlen);
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? round(10000.0 * (double)part / (double)whole) / 100.0 : NAN;
}

/* hta_stat (schema 5): HTA rounds its percentages to 2 decimals; so do we. */
static int load_hta(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->nranks; i++)
        r->ranks[i].comm_overlap_pct = r->ranks[i].idle_pct = r->ranks[i].compute_pct =
            r->ranks[i].non_compute_pct = NAN;
    bool yes;
    if (has_table(db, "hta_stat", &yes, err, errlen) < 0)
        return -1;
    if (!yes)
        return 0;
    sqlite3_stmt *s = NULL;
    if (prepare(db,
                "SELECT rank, steps, kernel_us, idle_us, compute_us, non_compute_us, comm_us, comm_overlap_us"
                " FROM hta_stat WHERE run_id = ?1 ORDER BY rank",
                &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    if (bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int rank = sqlite3_column_int(s, 0);
        if (!r->hta_steps && dup_col(s, 1, &r->hta_steps, err, errlen) < 0)
            goto out;
        int64_t kernel = sqlite3_column_int64(s, 2), comm = sqlite3_column_int64(s, 6);
        for (size_t i = 0; i < r->nranks; i++) {
            analysis_rank *k = &r->ranks[i];
            if (k->rank != rank)
                continue;
            k->idle_pct = pct(sqlite3_column_int64(s, 3), kernel);
            k->compute_pct = pct(sqlite3_column_int64(s, 4), kernel);
            k->non_compute_pct = pct(sqlite3_column_int64(s, 5), kernel);
            k->comm_overlap_pct = pct(sqlite3_column_int64(s, 7), comm);
        }
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading hta_stat");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

/* run.overrides, verified and sweep (schema 7), and the scenario text. */
static int load_provenance(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    r->verified = -1;
    r->sweep = -1;
    bool v7;
    if (has_schema_item(db, "SELECT 1 FROM pragma_table_info('run') WHERE name = ?1", "overrides", NULL, &v7, err,
                        errlen) < 0)
        return -1;
    sqlite3_stmt *s = NULL;
    if (prepare(db,
                v7 ? "SELECT scenario, overrides, verified, sweep FROM run WHERE id = ?1"
                   : "SELECT scenario, NULL, NULL, NULL FROM run WHERE id = ?1",
                &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    if (bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (dup_col(s, 0, &r->scenario, err, errlen) < 0 || dup_col(s, 1, &r->overrides, err, errlen) < 0)
            goto out;
        if (sqlite3_column_type(s, 2) != SQLITE_NULL)
            r->verified = sqlite3_column_int(s, 2) != 0;
        if (sqlite3_column_type(s, 3) != SQLITE_NULL)
            r->sweep = sqlite3_column_int64(s, 3);
    } else if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading run");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

static int load_sources(sqlite3 *db, analysis_run *r, char *err, size_t errlen)
{
    bool yes;
    if (has_table(db, "source_file", &yes, err, errlen) < 0)
        return -1;
    if (!yes)
        return 0;
    sqlite3_stmt *s = NULL;
    if (prepare(db, "SELECT clock_sync, notes FROM run WHERE id = ?1", &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    if (bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    if ((rc = sqlite3_step(s)) == SQLITE_ROW &&
        (dup_col(s, 0, &r->clock_sync, err, errlen) < 0 || dup_col(s, 1, &r->notes, err, errlen) < 0))
        goto out;
    sqlite3_finalize(s);
    s = NULL;
    if (prepare(db, "SELECT path, sha256, format, rank_from, bytes, rank FROM source_file WHERE run_id = ?1"
                    " ORDER BY idx",
                &s, err, errlen) < 0 ||
        bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    size_t cap = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (r->nsources == cap) {
            cap = cap ? 2 * cap : 8;
            analysis_source *g = realloc(r->sources, cap * sizeof *g);
            if (!g) {
                set_err(err, errlen, "out of memory");
                goto out;
            }
            r->sources = g;
        }
        analysis_source *f = &r->sources[r->nsources++];
        memset(f, 0, sizeof *f);
        if (dup_col(s, 0, &f->path, err, errlen) < 0 || dup_col(s, 1, &f->sha256, err, errlen) < 0 ||
            dup_col(s, 2, &f->format, err, errlen) < 0 || dup_col(s, 3, &f->rank_from, err, errlen) < 0)
            goto out;
        f->bytes = sqlite3_column_int64(s, 4);
        f->rank = sqlite3_column_type(s, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 5);
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading source files");
        goto out;
    }
    sqlite3_finalize(s);
    s = NULL;
    if (r->nsources > 0) {
        if (prepare(db, "SELECT AVG(end_ns - start_ns), COUNT(*) FROM span WHERE run_id = ?1 AND kind = 'profiler_step'",
                    &s, err, errlen) < 0 ||
            bind_run(db, s, r->id, err, errlen) < 0)
            goto out;
        if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
            db_fail(db, err, errlen, "reading the host's steps");
            goto out;
        }
        r->host_steps = sqlite3_column_int(s, 1);
        r->host_step_ms_mean = r->host_steps > 0 ? ms(sqlite3_column_double(s, 0)) : NAN;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

/* Every rank the others wait for (analysis.h): a rank whose wait is near the least is
 * one the others wait for, so two equally slow ranks are both named. */
/* The others' wait that names a straggler: a share of the step (a real job's stragglers
 * cost a few percent of it: ranks of an 8-GPU V100 job waiting 1.5 ms for two late ones)
 * and a multiple of the stragglers' own wait (what sets them apart from noise). */
#define STRAGGLER_MIN_STEP_SHARE 0.01
#define STRAGGLER_MIN_RATIO 4.0

static int find_stragglers(analysis_run *r, char *err, size_t errlen)
{
    r->straggler_rank = -1;
    r->straggler_others_wait_ms = NAN;
    double least = NAN, most = NAN, least_step = NAN;
    size_t n = 0;
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        n++;
        if (isnan(least) || k->wait_ms < least) {
            least = k->wait_ms;
            least_step = k->step_ms;
        }
        if (isnan(most) || k->wait_ms > most)
            most = k->wait_ms;
    }
    if (n < 2 || !(most > least))
        return 0;
    double near_least = least + 0.25 * (most - least), others = 0, slow_most = 0;
    size_t nothers = 0;
    r->stragglers = malloc(n * sizeof *r->stragglers);
    if (!r->stragglers) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < r->nranks; i++) {
        const analysis_rank *k = &r->ranks[i];
        if (k->iterations == 0 || isnan(k->wait_ms))
            continue;
        if (k->wait_ms <= near_least) {
            r->stragglers[r->nstragglers++] = k->rank;
            slow_most = k->wait_ms > slow_most ? k->wait_ms : slow_most;
        } else {
            others += k->wait_ms;
            nothers++;
        }
    }
    others /= (double)nothers; /* most > near_least: at least one rank is not a straggler */
    if (!(others >= STRAGGLER_MIN_STEP_SHARE * least_step && others >= STRAGGLER_MIN_RATIO * slow_most)) {
        free(r->stragglers);
        r->stragglers = NULL;
        r->nstragglers = 0;
        return 0;
    }
    r->straggler_rank = r->stragglers[0];
    r->straggler_others_wait_ms = others;
    return 0;
}

/* ---- buckets ------------------------------------------------------------------------ */

static analysis_bucket *bucket_slot(analysis_run *r, size_t *cap, int idx, char *err,
                                    size_t errlen)
{
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].idx == idx)
            return &r->buckets[i];
    if (r->nbuckets == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        analysis_bucket *grown = realloc(r->buckets, *cap * sizeof *grown);
        if (!grown) {
            set_err(err, errlen, "out of memory");
            return NULL;
        }
        r->buckets = grown;
    }
    analysis_bucket *b = &r->buckets[r->nbuckets++];
    *b = (analysis_bucket){.idx = idx,
                           .ready_ms = NAN,
                           .launch_delay_ms = NAN,
                           .arrival_skew_ms = NAN,
                           .transfer_ms = NAN,
                           .busbw_gbps = NAN};
    return b;
}

static int cmp_bucket(const void *a, const void *b)
{
    const analysis_bucket *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static double col_or_nan(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

/* rows are ordered by (rank, iter). */
static const its_row *find_its(const its_row *rows, size_t n, int rank, int iter)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const its_row *w = &rows[mid];
        if (w->rank == rank && w->iter == iter)
            return w;
        if (w->rank < rank || (w->rank == rank && w->iter < iter))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int bucket_stats(sqlite3 *db, analysis_run *r, const its_row *rows, size_t nrows,
                        char *err, size_t errlen)
{
    size_t cap = 0;
    sqlite3_stmt *s = NULL;
    int ret = -1, rc;
    bool all = r->all_iterations;

    /* The latest assignment, as the bucket table holds it. */
    if (prepare(db, "SELECT idx, nbytes, nparams FROM bucket WHERE run_id = ?1 AND version = ?2",
                &s, err, errlen) < 0)
        return -1;
    if (bind_run(db, s, r->id, err, errlen) < 0 ||
        (sqlite3_bind_int(s, 2, r->bucket_version) != SQLITE_OK &&
         db_fail(db, err, errlen, "binding version")))
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        analysis_bucket *b = bucket_slot(r, &cap, sqlite3_column_int(s, 0), err, errlen);
        if (!b)
            goto out;
        b->bytes = sqlite3_column_int64(s, 1);
        b->nparams = sqlite3_column_int(s, 2);
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading buckets");
        goto out;
    }
    sqlite3_finalize(s);
    s = NULL;

    /* Collective timings of the counted iterations. */
#define COLLECTIVE_QUERY(TABLE, RUN)                                                    \
    "SELECT bucket, COUNT(*), AVG(arrival_skew_ns), AVG(transfer_ns), AVG(bytes), AVG(busbw_gbps) FROM " TABLE \
    " WHERE " RUN "bucket IS NOT NULL AND (?2 OR iter >= ?3) GROUP BY bucket"
    char *sql = r->stored_stats ? strdup(COLLECTIVE_QUERY("collective_stat", "run_id = ?1 AND "))
                                : with_view("collective", COLLECTIVE_QUERY("collective", ""));
#undef COLLECTIVE_QUERY
    rc = prepare(db, sql, &s, err, errlen);
    free(sql);
    if (rc < 0)
        goto out;
    if (bind_run(db, s, r->id, err, errlen) < 0 ||
        ((sqlite3_bind_int(s, 2, all) != SQLITE_OK ||
          sqlite3_bind_int(s, 3, r->warmup_planned) != SQLITE_OK) &&
         db_fail(db, err, errlen, "binding collective query")))
        goto out;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        analysis_bucket *b = bucket_slot(r, &cap, sqlite3_column_int(s, 0), err, errlen);
        if (!b)
            goto out;
        b->collectives = sqlite3_column_int(s, 1);
        b->arrival_skew_ms = ms(col_or_nan(s, 2));
        /* A few ranks of a job: the last arrival is not known. */
        b->transfer_ms = analysis_is_subset(r) ? NAN : ms(col_or_nan(s, 3));
        double bytes = col_or_nan(s, 4);
        if (b->nparams == 0 && b->bytes == 0 && !isnan(bytes))
            b->bytes = (int64_t)llround(bytes);
        /* Each collective's bus bandwidth as the store computes it, averaged: the figure
         * `select avg(busbw_gbps) from collective` gives, defined once. */
        b->busbw_gbps = analysis_is_subset(r) ? NAN : col_or_nan(s, 5); /* a few ranks: no transfer known */
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading collectives");
        goto out;
    }
    sqlite3_finalize(s);
    s = NULL;

    /* Ready and launch delay, per rank-iteration.  A bucket is ready when its last
     * gradient has been copied in; the rank arrives at its allreduce after that.  The
     * step start comes from the iteration_stats rows already read, rather than from a
     * second evaluation of the view. */
    sql = r->stored_stats
              ? strdup("SELECT bucket, rank, iter, ready_ns, arrival_ns FROM bucket_ready_stat"
                       " WHERE run_id = ?1 ORDER BY bucket")
              : with_view("collective_arrival",
                    ", x AS ("
                    "  SELECT rank, iter, bucket, MAX(end_ns) AS ready_ns, NULL AS arrival_ns"
                    "  FROM span WHERE run_id = ?1 AND kind = 'copy_in' AND bucket IS NOT NULL"
                    "  GROUP BY rank, iter, bucket"
                    "  UNION ALL SELECT rank, iter, bucket, NULL, MIN(arrival_ns)"
                    "  FROM collective_arrival WHERE bucket IS NOT NULL"
                    "  GROUP BY rank, iter, bucket)"
                    " SELECT bucket, rank, iter, MAX(ready_ns), MIN(arrival_ns) FROM x"
                    " GROUP BY bucket, rank, iter HAVING MAX(ready_ns) IS NOT NULL"
                    " ORDER BY bucket");
    rc = prepare(db, sql, &s, err, errlen);
    free(sql);
    if (rc < 0)
        goto out;
    if (bind_run(db, s, r->id, err, errlen) < 0)
        goto out;
    analysis_bucket *b = NULL;
    double ready_sum = 0, delay_sum = 0;
    int delay_n = 0;
    for (;;) {
        rc = sqlite3_step(s);
        int idx = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
        if (b && (rc != SQLITE_ROW || idx != b->idx)) { /* rows come grouped by bucket */
            b->ready_ms = b->ready_samples ? ms(ready_sum / b->ready_samples) : NAN;
            b->launch_delay_ms = delay_n ? ms(delay_sum / delay_n) : NAN;
            b = NULL;
        }
        if (rc != SQLITE_ROW)
            break;
        const its_row *w = find_its(rows, nrows, sqlite3_column_int(s, 1), sqlite3_column_int(s, 2));
        if (!w || !counted(r, w))
            continue;
        if (!b) {
            if (!(b = bucket_slot(r, &cap, idx, err, errlen)))
                goto out;
            ready_sum = delay_sum = 0;
            delay_n = 0;
            b->ready_samples = 0;
        }
        int64_t ready = sqlite3_column_int64(s, 3);
        ready_sum += (double)(ready - w->step_start);
        b->ready_samples++;
        if (sqlite3_column_type(s, 4) != SQLITE_NULL) {
            delay_sum += (double)(sqlite3_column_int64(s, 4) - ready);
            delay_n++;
        }
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "reading bucket ready times");
        goto out;
    }
    if (r->nbuckets > 1)
        qsort(r->buckets, r->nbuckets, sizeof *r->buckets, cmp_bucket);
    ret = 0;
out:
    sqlite3_finalize(s);
    return ret;
}

/* ---- entry points --------------------------------------------------------------------- */

static void free_run(analysis_run *r)
{
    free(r->name);
    free(r->status);
    free(r->status_detail);
    free(r->error);
    free(r->backend);
    free(r->placement);
    free(r->model);
    free(r->source);
    free(r->started_at);
    free(r->finished_at);
    free(r->ranks);
    free(r->stragglers);
    free(r->buckets);
    free(r->hta_steps);
    free(r->clock_sync);
    free(r->notes);
    free(r->overrides);
    free(r->scenario);
    for (size_t i = 0; i < r->nsources; i++) {
        free(r->sources[i].path);
        free(r->sources[i].sha256);
        free(r->sources[i].format);
        free(r->sources[i].rank_from);
    }
    free(r->sources);
}

static int load_run(sqlite3 *db, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->step_ms_mean = r->step_ms_min = r->step_ms_max = r->host_step_ms_mean = NAN;
    r->representative_iter = -1;
    its_row *rows = NULL;
    size_t n = 0;
    if (load_header(db, id, r, err, errlen) < 0 || load_bucket_counts(db, r, err, errlen) < 0 ||
        stats_stored(db, r, err, errlen) < 0 || load_its(db, r, &rows, &n, err, errlen) < 0 || step_stats(r, rows, n, err, errlen) < 0 ||
        rank_stats(db, r, rows, n, err, errlen) < 0 || load_hta(db, r, err, errlen) < 0 ||
        load_sources(db, r, err, errlen) < 0 || load_provenance(db, r, err, errlen) < 0 || bucket_stats(db, r, rows, n, err, errlen) < 0) {
        free(rows);
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    free(rows);
    if (find_stragglers(r, err, errlen) < 0) {
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    return 0;
}

static int run_ids(sqlite3 *db, int64_t run_id, int64_t **ids, size_t *n, char *err,
                   size_t errlen)
{
    *ids = NULL;
    *n = 0;
    if (run_id != -1) {
        *ids = malloc(sizeof **ids);
        if (!*ids) {
            set_err(err, errlen, "out of memory");
            return -1;
        }
        **ids = run_id;
        *n = 1;
        return 0;
    }
    sqlite3_stmt *s = NULL;
    if (prepare(db, "SELECT id FROM run ORDER BY id", &s, err, errlen) < 0)
        return -1;
    int ret = -1, rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(*ids, cap * sizeof *grown);
            if (!grown) {
                set_err(err, errlen, "out of memory");
                goto out;
            }
            *ids = grown;
        }
        (*ids)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    if (rc != SQLITE_DONE) {
        db_fail(db, err, errlen, "listing runs");
        goto out;
    }
    if (*n == 0) {
        set_err(err, errlen, "no runs in DB");
        goto out;
    }
    ret = 0;
out:
    sqlite3_finalize(s);
    if (ret < 0) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return ret;
}

int analysis_load(sqlite3 *db, int64_t run_id, analysis_run **runs, size_t *nruns, char *err,
                  size_t errlen)
{
    *runs = NULL;
    *nruns = 0;
    int64_t *ids = NULL;
    size_t n = 0, loaded = 0;
    analysis_run *out = NULL;
    /* One read transaction, so that a writer committing meanwhile cannot make the
     * figures come from two states of the file; a caller already inside a
     * transaction has that guarantee from its own. */
    bool own_tx = sqlite3_get_autocommit(db) != 0;
    if (own_tx && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "starting read transaction");
    if (run_ids(db, run_id, &ids, &n, err, errlen) < 0)
        goto fail;
    out = calloc(n, sizeof *out);
    if (!out) {
        set_err(err, errlen, "out of memory");
        goto fail;
    }
    for (; loaded < n; loaded++)
        if (load_run(db, ids[loaded], &out[loaded], err, errlen) < 0)
            goto fail;
    if (own_tx && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        db_fail(db, err, errlen, "ending read transaction");
        goto fail;
    }
    free(ids);
    *runs = out;
    *nruns = n;
    return 0;
fail:
    free(ids);
    analysis_free(out, loaded);
    if (own_tx && !sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* the first error is reported */
    return -1;
}

void analysis_free(analysis_run *runs, size_t nruns)
{
    if (!runs)
        return;
    for (size_t i = 0; i < nruns; i++)
        free_run(&runs[i]);
    free(runs);
}

/* The mean over ranks of each rank's overlap; NAN when no rank communicated. */
double analysis_mean_overlap_pct(const analysis_run *r)
{
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < r->nranks; k++) {
        if (!isnan(r->ranks[k].overlap_pct)) {
            sum += r->ranks[k].overlap_pct;
            n++;
        }
    }
    return n ? sum / n : NAN;
}

bool analysis_is_subset(const analysis_run *r)
{
    return r->nranks > 0 && (int)r->nranks < r->world_size;
}

char *analysis_ranks_held(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    if (!analysis_is_subset(r))
        return buf;
    /* Room for the tail ", ... N ranks of W" whatever the list's length. */
    size_t at = 0, room = n > 40 ? n - 40 : 0;
    int w = snprintf(buf, n, "rank%s ", r->nranks == 1 ? "" : "s");
    at = w > 0 ? (size_t)w : 0;
    size_t i = 0;
    for (; i < r->nranks && at < room; i++) {
        w = snprintf(buf + at, n - at, "%s%d", i ? ", " : "", r->ranks[i].rank);
        if (w < 0 || (size_t)w >= n - at)
            break;
        at += (size_t)w;
    }
    if (i < r->nranks)
        snprintf(buf + at, n - at, ", ... (%zu ranks) of %d", r->nranks, r->world_size);
    else
        snprintf(buf + at, n - at, " of %d", r->world_size);
    return buf;
}

void analysis_stragglers_text(const analysis_run *r, char *buf, size_t n)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    size_t len = 0, shown = r->nstragglers > 8 ? 8 : r->nstragglers;
    for (size_t i = 0; i < shown && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%d", i == 0 ? (r->nstragglers > 1 ? "ranks " : "rank ") : ", ",
                         r->stragglers[i]);
        /* Cut (the callers' 160 bytes hold the at most 142 written): len passes n, what
         * fitted stays and nothing more is written. */
        len += w > 0 ? (size_t)w : 0;
    }
    if (r->nstragglers > shown && len < n)
        snprintf(buf + len, n - len, ", ... (%zu ranks)", r->nstragglers);
}
