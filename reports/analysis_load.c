/* analysis_load.c — analysis_load() and analysis_free() of analysis.h.
 *
 * Reads a run's header (what was run, how it ended, whether its writer lives), then
 * drives the parts of analysis_internal.h in order (iterations and ranks in
 * analysis_steps.c, imports in analysis_imports.c, buckets in analysis_buckets.c,
 * stragglers in analysis_stragglers.c) inside one read transaction.  Above the parts, so
 * that they build on analysis.c's helpers without a circle.  Ownership: analysis_load's
 * array and everything its runs point at are the caller's, freed by analysis_free; on
 * failure nothing is left. */
#include "common/errmsg.h"
#include "reports/analysis.h"
#include "reports/analysis_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_layout.h"
#include "profiler/store_read_run.h"
#include "profiler/store_read_run_row.h"
#include "profiler/store_read_stats.h"

/* ---- run header ------------------------------------------------------------------ */

/* A run still 'running' in the file is running only while its writer lives: one whose
 * writer is gone is reported 'abandoned', so it is never read as a good run. */
static int judge_running(store *st, analysis_run *r, char *err, size_t errlen)
{
    if (!r->status || strcmp(r->status, "running") != 0)
        return 0;
    store_liveness state;
    char detail[512];
    if (store_run_liveness(st, r->id, &state, detail, sizeof detail, err, errlen) < 0)
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

/* Moves a text the row owns into the run. */
static char *take(char **text)
{
    char *t = *text;
    *text = NULL;
    return t;
}

/* The run's row: what was run, how it ended, where it came from (an import's clock
 * alignment and notes) and its provenance (overrides, --verify, sweep). */
static int load_header(store *st, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    store_run_row row;
    bool found;
    if (store_read_run_row(st, id, &row, &found, err, errlen) < 0)
        return -1;
    if (!found) {
        store_run_row_free(&row);
        set_err(err, errlen, "no run with id %" PRId64, id);
        return -1;
    }
    r->id = id;
    r->name = take(&row.name);
    r->status = take(&row.status);
    r->error = take(&row.error);
    r->backend = take(&row.backend);
    r->model = take(&row.model);
    r->source = take(&row.source);
    r->started_at = take(&row.started_at);
    r->finished_at = take(&row.finished_at);
    r->placement = take(&row.placement);
    r->clock_sync = take(&row.clock_sync);
    r->notes = take(&row.notes);
    r->overrides = take(&row.overrides);
    r->scenario = take(&row.scenario);
    r->world_size = row.world_size;
    r->total_params = row.total_params;
    r->iterations_planned = row.iterations;
    r->warmup_planned = row.warmup;
    r->bucket_cap_mb = isnan(row.bucket_cap_mb) ? 0 : row.bucket_cap_mb; /* an import's NULL reads as 0 */
    r->verified = row.verified;
    r->sweep = row.sweep;
    /* [record] detail as the stored scenario (scenario_to_ini) says it */
    r->phase_spans = r->scenario && strstr(r->scenario, "\ndetail = phase");
    store_run_row_free(&row);
    return judge_running(st, r, err, errlen);
}

static int count_version(int version, int nbuckets, void *ctx)
{
    analysis_run *r = ctx;
    if (version == 0)
        r->buckets_initial = nbuckets;
    else if (version == 1)
        r->buckets_rebuilt = nbuckets;
    if (version > r->bucket_version)
        r->bucket_version = version;
    return 0;
}

static int load_bucket_counts(store *st, analysis_run *r, char *err, size_t errlen)
{
    r->bucket_version = -1;
    return store_each_bucket_version(st, r->id, count_version, r, err, errlen);
}

/* Whether the run's statistics were stored when it ended (schema 4, store_stats.c):
 * then they are read instead of aggregating the spans through the views.  A run
 * still recording, or whose writer is gone, is always read from its spans. */
static int stats_stored(store *st, analysis_run *r, char *err, size_t errlen)
{
    r->stored_stats = false;
    if (!r->status || !strcmp(r->status, "running") || !strcmp(r->status, "abandoned"))
        return 0;
    return store_run_has_stored_stats(st, r->id, &r->stored_stats, err, errlen);
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


static int load_run(store *st, int64_t id, analysis_run *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->step_ms_mean = r->step_ms_min = r->step_ms_max = r->host_step_ms_mean = NAN;
    r->representative_iter = -1;
    its_row *rows = NULL;
    size_t n = 0;
    if (load_header(st, id, r, err, errlen) < 0 || load_bucket_counts(st, r, err, errlen) < 0 ||
        stats_stored(st, r, err, errlen) < 0 ||
        analysis_load_its(st, r, &rows, &n, err, errlen) < 0 ||
        analysis_step_stats(r, rows, n, err, errlen) < 0 ||
        analysis_rank_stats(st, r, rows, n, err, errlen) < 0 ||
        analysis_load_hta(st, r, err, errlen) < 0 || analysis_load_sources(st, r, err, errlen) < 0 ||
        analysis_bucket_stats(st, r, rows, n, err, errlen) < 0) {
        free(rows);
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    free(rows);
    if (analysis_find_stragglers(r, err, errlen) < 0) {
        free_run(r);
        memset(r, 0, sizeof *r);
        return -1;
    }
    return 0;
}

/* The ids asked for: run_id, or every run's (-1). */
static int run_ids(store *st, int64_t run_id, int64_t **ids, size_t *n, char *err, size_t errlen)
{
    if (run_id == -1) {
        if (store_read_run_id_list(st, ids, n, err, errlen) != 0)
            return -1;
        if (*n == 0) {
            set_err(err, errlen, "no runs in DB");
            return -1;
        }
        return 0;
    }
    *n = 0;
    if (!(*ids = malloc(sizeof **ids))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    **ids = run_id;
    *n = 1;
    return 0;
}

int analysis_load(store *st, int64_t run_id, analysis_run **runs, size_t *nruns, char *err, size_t errlen)
{
    *runs = NULL;
    *nruns = 0;
    int64_t *ids = NULL;
    size_t n = 0, loaded = 0;
    analysis_run *out = NULL;
    /* One read transaction, so that a writer committing meanwhile cannot make the
     * figures come from two states of the file; a caller already inside a
     * transaction has that guarantee from its own. */
    bool own_tx;
    if (store_begin_read_unless_open(st, &own_tx, err, errlen) != 0)
        return -1;
    if (run_ids(st, run_id, &ids, &n, err, errlen) < 0)
        goto fail;
    out = calloc(n, sizeof *out);
    if (!out) {
        set_err(err, errlen, "out of memory");
        goto fail;
    }
    for (; loaded < n; loaded++)
        if (load_run(st, ids[loaded], &out[loaded], err, errlen) < 0)
            goto fail;
    if (own_tx && store_end_read(st, err, errlen) != 0)
        goto fail;
    free(ids);
    *runs = out;
    *nruns = n;
    return 0;
fail:
    free(ids);
    analysis_free(out, loaded);
    if (own_tx) {
        char ignored[64]; /* the first error is the one reported */
        store_end_read(st, ignored, sizeof ignored);
    }
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
