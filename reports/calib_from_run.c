/* calib_from_run.c — a measured run's spans, with each forward's and backward's model, for
 * calib_run_fit (see calib_from_run.h). */
#include "reports/calib_from_run.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "profiler/store_read_run_row.h"
#include "profiler/store_read_span_rows.h"
#include "reports/calib_disturbed.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "engine/cost/timing.h"
#include "engine/ddp/trainer.h"

typedef struct {
    run_span *v;
    size_t n, cap;
} span_list;

typedef struct {
    int64_t id;
    int world, warmup;
    char name[128], backend[32], status[32];
    char *scenario_text;
} run_row;

static int read_run(store *st, int64_t id, run_row *r, char *err, size_t errlen)
{
    store_run_row row;
    bool found;
    if (store_read_run_row(st, id, &row, &found, err, errlen) != 0)
        return -1;
    int rc = -1;
    if (!found) {
        snprintf(err, errlen, "no run %lld in the database", (long long)id);
    } else {
        *r = (run_row){.id = id, .world = row.world_size, .warmup = row.warmup};
        /* a NULL column reads "(null)", as printf has always shown it here */
        snprintf(r->name, sizeof r->name, "%s", row.name ? row.name : "(null)");
        snprintf(r->backend, sizeof r->backend, "%s", row.backend ? row.backend : "(null)");
        snprintf(r->status, sizeof r->status, "%s", row.status ? row.status : "(null)");
        r->scenario_text = row.scenario;
        row.scenario = NULL;
        if (strcmp(r->status, "complete") != 0)
            snprintf(err, errlen, "run %lld is %s, not complete: its costs are not a run's", (long long)id, r->status);
        else if (!r->scenario_text)
            snprintf(err, errlen, "run %lld stores no scenario", (long long)id);
        else
            rc = 0;
    }
    store_run_row_free(&row);
    return rc;
}

/* The run's scenario, loaded back from its stored text. */
static int load_scenario(const run_row *r, scenario *sc, char *err, size_t errlen)
{
    char origin[64], serr[SCENARIO_ERR] = "";
    snprintf(origin, sizeof origin, "run %lld's scenario", (long long)r->id);
    int rc = scenario_load_text(r->scenario_text, origin, sc, serr, sizeof serr);
    if (rc != 0)
        snprintf(err, errlen, "run %lld: its stored scenario does not load: %s", (long long)r->id, serr);
    return rc;
}

/* Forward and backward model of every (rank, layer), forwards first, then backwards:
 * the timing model without jitter, which a measured run's draws would not match anyway. */
static double *layer_models(const scenario *sc, const model *m)
{
    size_t per_pass = (size_t)sc->world_size * (size_t)(m->nlayers ? m->nlayers : 1);
    double *f = calloc(2 * per_pass, sizeof *f);
    if (!f || sc->compute != COMPUTE_MODEL)
        return f;
    scenario quiet;
    if (scenario_copy(&quiet, sc, NULL, 0) != 0) {
        free(f);
        return NULL;
    }
    quiet.jitter = 0;
    for (int r = 0; r < sc->world_size; r++) {
        timing_model tm;
        timing_init(&tm, &quiet, r);
        for (int l = 0; l < m->nlayers; l++) {
            f[(size_t)r * m->nlayers + l] = (double)timing_forward_ns(&tm, &m->layers[l]);
            f[per_pass + (size_t)r * m->nlayers + l] = (double)timing_backward_ns(&tm, &m->layers[l]);
        }
    }
    scenario_free(&quiet);
    return f;
}

static int push(span_list *l, const run_span *s)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 4096;
        run_span *nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = *s;
    return 0;
}

static int kind_of(const char *name)
{
    for (int k = 0; k < SPAN_KIND_COUNT; k++)
        if (strcmp(span_kind_name((span_kind)k), name) == 0)
            return k;
    return -1;
}

/* What read_span needs to turn a stored span into a run_span. */
typedef struct {
    const run_row *r;
    const scenario *sc;
    const model *m;
    const double *models;
    double host_bytes;
    span_list *out;
    char *err;
    size_t errlen;
} span_reader;

static int read_span(const store_span_row *row, void *ctx)
{
    span_reader *c = ctx;
    const run_row *r = c->r;
    const model *m = c->m;
    int kind = kind_of(row->kind ? row->kind : "");
    int rank = row->rank, layer = row->has_layer ? row->layer : -1;
    if (kind < 0 || rank < 0 || rank >= r->world)
        return 0;
    run_span s = {.run = r->id,
                  .world = r->world,
                  .rank = rank,
                  .iter = row->iter,
                  .stream = row->stream && strcmp(row->stream, "comm") == 0 ? STREAM_COMM : STREAM_COMPUTE,
                  .kind = (uint8_t)kind,
                  .bucket = row->has_bucket ? row->bucket : -1,
                  .seq = row->has_seq ? row->seq : -1,
                  .bytes = row->bytes,
                  .start_ns = row->start_ns,
                  .end_ns = row->end_ns,
                  .host_bytes = c->host_bytes};
    if ((kind == SPAN_FORWARD || kind == SPAN_BACKWARD) && layer >= 0 && layer < m->nlayers) {
        size_t at = (size_t)rank * m->nlayers + (size_t)layer; /* layer_models' layout */
        s.model_ns = c->models[kind == SPAN_FORWARD ? at : (size_t)r->world * m->nlayers + at];
    }
    if (kind == SPAN_BACKWARD)
        s.write_bytes = timing_write_bytes((double)s.bytes, trainer_accumulates(c->sc, s.iter));
    if (push(c->out, &s) != 0) {
        snprintf(c->err, c->errlen, "out of memory reading run %lld's spans", (long long)r->id);
        return -1;
    }
    return 0;
}

/* The run's measured spans (warm-up left out) on its device streams. */
static int read_spans(store *st, const run_row *r, const scenario *sc, const model *m, const double *models,
                      span_list *out, char *err, size_t errlen)
{
    span_reader c = {r, sc, m, models, timing_host_memory_bytes(sc, m->total_numel), out, err, errlen};
    store_span_filter measured = {.rank = -1, .iter = -1, .iter_from = r->warmup, .device_streams = true};
    return store_each_span(st, r->id, &measured, read_span, &c, err, errlen) != 0 ? -1 : 0;
}

static bool same_kind(const run_row *a, const run_row *b)
{
    return a->world == b->world && strcmp(a->name, b->name) == 0 && strcmp(a->backend, b->backend) == 0;
}

/* The runs learned from, those of one name, backend and world size together in the order
 * first given: a calibration measured in ten rounds names each of its points once, with
 * its ten run ids, rather than a hundred runs one by one. */
static void describe_runs(const run_row *runs, int nruns, strbuf *about)
{
    for (int i = 0; i < nruns; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = same_kind(&runs[j], &runs[i]);
        if (seen)
            continue;
        int count = 0;
        for (int j = i; j < nruns; j++)
            count += same_kind(&runs[j], &runs[i]);
        if (count == 1) {
            strbuf_addf(about, "%srun %lld \"%s\" (%s, %d ranks)", about->len ? ", " : "", (long long)runs[i].id,
                        runs[i].name, runs[i].backend, runs[i].world);
            continue;
        }
        strbuf_addf(about, "%s%d runs \"%s\" (%s, %d ranks: ", about->len ? ", " : "", count, runs[i].name,
                    runs[i].backend, runs[i].world);
        for (int j = i, k = 0; j < nruns; j++) {
            if (!same_kind(&runs[j], &runs[i]))
                continue;
            strbuf_addf(about, "%s%lld", k++ ? " " : "", (long long)runs[j].id);
        }
        strbuf_addch(about, ')');
    }
}

/* The run's spans onto `spans`, and its row (without its scenario text) into *label. */
static int gather_run(store *st, int64_t id, span_list *spans, bool *on_cpu, run_row *label, char *err,
                      size_t errlen)
{
    run_row r = {0};
    scenario *sc = calloc(1, sizeof *sc); /* zeroed: holds nothing until loaded */
    model m = {0};
    double *models = NULL;
    int rc = sc ? read_run(st, id, &r, err, errlen) : -1;
    if (rc == 0)
        rc = load_scenario(&r, sc, err, errlen);
    if (rc == 0 && sc->world_size != r.world) {
        snprintf(err, errlen, "run %lld: its scenario has %d ranks but the run %d", (long long)id, sc->world_size,
                 r.world);
        rc = -1;
    }
    if (rc == 0)
        rc = model_build(sc, &m, err, errlen);
    if (rc == 0 && !(models = layer_models(sc, &m))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0)
        rc = read_spans(st, &r, sc, &m, models, spans, err, errlen);
    if (rc == 0) {
        *on_cpu = *on_cpu && strcmp(r.backend, "cpu") == 0;
        *label = r;
        label->scenario_text = NULL;
    }
    model_free(&m);
    free(models);
    free(r.scenario_text);
    scenario_free(sc);
    free(sc);
    return rc;
}

/* The size in bytes of the cache at /sys/devices/system/cpu/cpu0/cache/index<i> and its
 * level (0: none there). */
static long sysfs_cache(int i, int *level)
{
    char path[96], text[32];
    long bytes = 0;
    *level = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (fscanf(f, "%d", level) != 1)
        *level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r")))
        return 0;
    char unit = 0;
    if (fgets(text, sizeof text, f) && sscanf(text, "%ld%c", &bytes, &unit) >= 1)
        bytes *= unit == 'K' ? 1024L : unit == 'M' ? 1048576L : 1L;
    fclose(f);
    return bytes;
}

/* This machine's last-level cache in MiB (0: unknown): the kernel's list of the caches,
 * which a virtual machine's CPUID may overstate (glibc's _SC_LEVEL3_CACHE_SIZE gave 320
 * MiB for a 32 MiB L3). */
static double machine_cache_mb(void)
{
    long best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        int level;
        long bytes = sysfs_cache(i, &level);
        if (bytes > 0 && level >= best_level) {
            best = bytes;
            best_level = level;
        }
    }
    return (double)best / 1048576.0;
}

/* Names in `about` (appended) the runs left out, with their steps over their point's
 * median. */
static void name_left_out(const int64_t *runs, int nruns, const bool *leave_out, const double *ratio, strbuf *about)
{
    for (int i = 0, named = 0; i < nruns; i++) {
        if (!leave_out[i])
            continue;
        if (named++ == 0)
            strbuf_addf(about, "; left out as disturbed (a mean step over %gx the median of its point's runs):",
                        CALIB_DISTURBED_FACTOR);
        strbuf_addf(about, "%s run %lld (%.2fx)", named > 1 ? "," : "", (long long)runs[i], ratio[i]);
    }
}

/* text into about[aboutlen]; a text too long for it is cut before a character and ends in
 * "..." (the caller's buffer holds a thousand runs' ids: beyond them, the list is cut). */
static void copy_about(char *about, size_t aboutlen, const strbuf *text)
{
    static const char more[] = "...";
    if (aboutlen == 0)
        return;
    if (text->len < aboutlen) {
        memcpy(about, text->buf, text->len + 1);
        return;
    }
    if (aboutlen < sizeof more) {
        about[0] = '\0';
        return;
    }
    size_t keep = aboutlen - sizeof more;
    while (keep > 0 && ((unsigned char)text->buf[keep] & 0xC0) == 0x80)
        keep--; /* text->buf[keep], the first byte left out, continues a character */
    memcpy(about, text->buf, keep);
    memcpy(about + keep, more, sizeof more);
}

/* Which of the runs gathered (run i's spans from first[i] to first[i + 1]) to leave out
 * as disturbed (calib_disturbed.h), their steps over their point's median into ratio. */
static int judge_runs(const span_list *spans, const size_t *first, const run_row *rows, int nruns, bool *leave_out,
                      double *ratio)
{
    size_t n = nruns > 0 ? (size_t)nruns : 1;
    double *step = calloc(n, sizeof *step);
    int *point = calloc(n, sizeof *point);
    int rc = step && point ? 0 : -1;
    for (int i = 0; i < nruns && rc == 0; i++) {
        step[i] = calib_mean_step_ns(spans->v + first[i], first[i + 1] - first[i]);
        point[i] = i;
        for (int j = 0; j < i; j++)
            if (same_kind(&rows[j], &rows[i])) {
                point[i] = point[j];
                break;
            }
    }
    if (rc == 0)
        rc = calib_disturbed(step, point, (size_t)nruns, leave_out, ratio);
    free(step);
    free(point);
    return rc;
}

/* Drops the spans of the runs left out, and their rows, keeping the others in order;
 * how many rows are kept. */
static int drop_left_out(span_list *spans, const size_t *first, run_row *rows, int nruns, const bool *leave_out)
{
    size_t to = 0;
    int kept = 0;
    for (int i = 0; i < nruns; i++) {
        if (leave_out[i])
            continue;
        size_t len = first[i + 1] - first[i];
        memmove(spans->v + to, spans->v + first[i], len * sizeof *spans->v);
        to += len;
        rows[kept++] = rows[i];
    }
    spans->n = to;
    return kept;
}

int calib_from_runs(store *st, const int64_t *runs, int nruns, double host_cores, double cache_mb,
                    calib_run_costs *out, char *about, size_t aboutlen, char *err, size_t errlen)
{
    span_list spans = {0};
    if (aboutlen)
        about[0] = '\0';
    size_t n = nruns > 0 ? (size_t)nruns : 1;
    run_row *rows = calloc(n, sizeof *rows);
    size_t *first = calloc(n + 1, sizeof *first);
    bool *leave_out = calloc(n, sizeof *leave_out);
    double *ratio = calloc(n, sizeof *ratio);
    int rc = rows && first && leave_out && ratio ? 0 : -1;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    bool on_cpu = true;
    for (int i = 0; i < nruns && rc == 0; i++) {
        rc = gather_run(st, runs[i], &spans, &on_cpu, &rows[i], err, errlen);
        first[i + 1] = spans.n;
    }
    if (rc == 0 && judge_runs(&spans, first, rows, nruns, leave_out, ratio) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        strbuf text = STRBUF_INIT;
        describe_runs(rows, drop_left_out(&spans, first, rows, nruns, leave_out), &text);
        name_left_out(runs, nruns, leave_out, ratio, &text);
        if (text.failed) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else {
            copy_about(about, aboutlen, &text);
        }
        strbuf_release(&text);
    }
    free(rows);
    free(first);
    free(leave_out);
    free(ratio);
    if (host_cores < 0)
        host_cores = on_cpu ? (double)sysconf(_SC_NPROCESSORS_ONLN) : 0;
    if (cache_mb < 0)
        cache_mb = on_cpu ? machine_cache_mb() : 0;
    if (rc == 0)
        rc = calib_run_fit(spans.v, spans.n, host_cores, cache_mb, out, err, errlen);
    free(spans.v);
    return rc;
}
