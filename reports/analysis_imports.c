/* analysis_imports.c — the figures of analysis.h that imported runs bring: Holistic
 * Trace Analysis's per-rank percentages (table hta_stat), the files a run was read from
 * (table source_file) and the host's ProfilerStep#N ranges.
 *
 * Contract: see analysis_internal.h.  Needs the store's read API
 * (profiler/store_read_import.h, store_read_spans.h).  Ownership: the texts and the
 * sources[] copied here are the run's (freed by analysis_free). */
#include "common/errmsg.h"
#include "reports/analysis_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/store_read_import.h"
#include "profiler/store_read_spans.h"

/* A copy of s (NULL stays NULL) into *out; -1 with err when out of memory. */
static int dup_text(const char *s, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!s)
        return 0;
    if (!(*out = strdup(s))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static double pct(int64_t part, int64_t whole)
{
    return whole > 0 ? round(10000.0 * (double)part / (double)whole) / 100.0 : NAN;
}

typedef struct {
    analysis_run *r;
    char *err;
    size_t errlen;
} load_ctx;

/* hta_stat (schema 5): HTA rounds its percentages to 2 decimals; so do we. */
static int add_hta(const store_hta_stat *h, void *ctx)
{
    load_ctx *c = ctx;
    analysis_run *r = c->r;
    if (!r->hta_steps && dup_text(h->steps, &r->hta_steps, c->err, c->errlen) < 0)
        return -1;
    for (size_t i = 0; i < r->nranks; i++) {
        analysis_rank *k = &r->ranks[i];
        if (k->rank != h->rank)
            continue;
        k->idle_pct = pct(h->idle_us, h->kernel_us);
        k->compute_pct = pct(h->compute_us, h->kernel_us);
        k->non_compute_pct = pct(h->non_compute_us, h->kernel_us);
        k->comm_overlap_pct = pct(h->comm_overlap_us, h->comm_us);
    }
    return 0;
}

int analysis_load_hta(store *st, analysis_run *r, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->nranks; i++)
        r->ranks[i].comm_overlap_pct = r->ranks[i].idle_pct = r->ranks[i].compute_pct =
            r->ranks[i].non_compute_pct = NAN;
    load_ctx c = {r, err, errlen};
    return store_each_hta_stat(st, r->id, add_hta, &c, err, errlen);
}

static int add_source(const store_source_file *f, void *ctx)
{
    load_ctx *c = ctx;
    analysis_run *r = c->r;
    if (r->nsources % 8 == 0) {
        analysis_source *g = realloc(r->sources, (r->nsources + 8) * sizeof *g);
        if (!g) {
            set_err(c->err, c->errlen, "out of memory");
            return -1;
        }
        r->sources = g;
    }
    analysis_source *s = &r->sources[r->nsources++];
    memset(s, 0, sizeof *s);
    s->bytes = f->bytes;
    s->rank = f->rank;
    return dup_text(f->path, &s->path, c->err, c->errlen) < 0 ||
                   dup_text(f->sha256, &s->sha256, c->err, c->errlen) < 0 ||
                   dup_text(f->format, &s->format, c->err, c->errlen) < 0 ||
                   dup_text(f->rank_from, &s->rank_from, c->err, c->errlen) < 0
               ? -1
               : 0;
}

/* The files an imported run was read from, and the host's ProfilerStep#N ranges. */
int analysis_load_sources(store *st, analysis_run *r, char *err, size_t errlen)
{
    load_ctx c = {r, err, errlen};
    if (store_each_source_file(st, r->id, add_source, &c, err, errlen) != 0)
        return -1;
    if (r->nsources == 0)
        return 0;
    double mean_ns;
    if (store_read_span_kind_mean(st, r->id, "profiler_step", &r->host_steps, &mean_ns, err, errlen) != 0)
        return -1;
    r->host_step_ms_mean = r->host_steps > 0 ? ms(mean_ns) : NAN;
    return 0;
}
