/* launcher.c — one run end to end: its records, its span writer, its ranks, its end. */
#include "common/textcopy.h"
#include "engine/launch/launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "engine/backend.h"
#include "engine/launch/launch_threads.h"
#include "profiler/recorder.h"
#include "engine/launch/run_record.h"
#include "profiler/span_select.h"
#include "profiler/stats_live.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Which ranks keep their spans (record.spans_ranks), and the statistics of every rank
 * as the spans come, where not every rank keeps them: *keep and *live stay NULL when
 * every rank does (or nothing is stored). */
static int choose_span_ranks(const scenario *sc, const launch_options *opt, bool **keep, stats_live **live,
                             char *err, size_t errlen)
{
    *keep = NULL;
    *live = NULL;
    int world = sc->world_size;
    if (!opt->record || span_select_keeps_all(sc->spans_ranks, world))
        return 0;
    double *speeds = malloc((size_t)world * sizeof *speeds);
    *keep = malloc((size_t)world * sizeof **keep);
    *live = stats_live_create(world);
    if (!speeds || !*keep || !*live) {
        snprintf(err, errlen, "out of memory choosing the ranks that keep spans among %d", world);
        goto fail;
    }
    for (int r = 0; r < world; r++)
        speeds[r] = scenario_rank_speed(sc, r);
    if (span_select_choose(sc->spans_ranks, world, speeds, *keep, err, errlen) < 0)
        goto fail;
    free(speeds);
    return 0;
fail:
    free(speeds);
    free(*keep);
    stats_live_free(*live);
    *keep = NULL;
    *live = NULL;
    return -1;
}

int launch_run(const scenario *sc, const model *m, store *st, const backend_ops *be, const launch_options *opt,
               launch_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    bool *keep;
    stats_live *live;
    if (choose_span_ranks(sc, opt, &keep, &live, err, errlen) != 0)
        return -1;
    if (run_record_begin(st, sc, m, be->name, keep, &res->run_id, err, errlen) != 0) {
        free(keep);
        stats_live_free(live);
        return -1;
    }

    /* Ranks are threads already: BLAS's own thread pool would oversubscribe the cores
     * (and busy-wait), so each BLAS call runs on its caller's thread. */
    openblas_set_num_threads(1);

    char failure[512] = "";
    recorder *rec = NULL;
    prof_nvtx nvtx;
    prof_nvtx_init(&nvtx);
    bucket_assignment rebuilt;
    bool rebuilt_valid = false;
    double t_start = now_s();
    int nrings = be->span_rings > 0 ? be->span_rings : sc->world_size * BACKEND_RINGS_PER_RANK;
    if (recorder_create(opt->record ? st : NULL, res->run_id, nrings, &rec) != 0)
        rec = NULL;
    else if (keep)
        recorder_keep_spans(rec, keep, sc->world_size, live);
    if (!rec || recorder_start(rec) != 0) {
        snprintf(failure, sizeof failure, "cannot start the span writer (memory or threads)");
    } else {
        launch_threads_args la = {.sc = sc, .m = m, .be = be, .rec = rec, .nvtx = &nvtx, .opt = opt};
        launch_threads(&la, failure, sizeof failure, &rebuilt, &rebuilt_valid);
    }
    res->wall_s = now_s() - t_start;

    char rec_err[512] = "";
    if (rec && recorder_stop(rec, rec_err, sizeof rec_err) != 0 && !failure[0])
        text_copy(failure, sizeof failure, rec_err);
    if (rec)
        res->spans = recorder_written(rec);
    /* Every span is in: the waits can be added up, and the store takes the figures
     * from here (a live out of memory leaves them to the stored spans). */
    if (live) {
        (void)stats_live_finish(live);
        store_set_live_stats(st, res->run_id, live);
    }
    if (rebuilt_valid) {
        if (run_record_assignment(st, res->run_id, 1, &rebuilt, err, errlen) != 0 && !failure[0])
            text_copy(failure, sizeof failure, err);
        bucket_assignment_free(&rebuilt);
    }
    int out = 0;
    if (run_record_finish(st, res->run_id, failure, err, errlen) != 0)
        out = -1;
    store_set_live_stats(st, res->run_id, NULL);
    stats_live_free(live);
    free(keep);
    res->complete = failure[0] == '\0';
    text_copy(res->error, sizeof res->error, failure);
    if (out == 0 && !res->complete)
        out = 1;
    recorder_destroy(rec);
    prof_nvtx_destroy(&nvtx);
    return out;
}
