/* launcher.c — one run end to end: its records, its span writer, its ranks, its end. */
#include "common/textcopy.h"
#include "engine/launch/launcher.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "engine/backend.h"
#include "engine/launch/launch_threads.h"
#include "profiler/recorder.h"
#include "engine/launch/run_record.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int launch_run(const scenario *sc, const model *m, store *st, const backend_ops *be, const launch_options *opt,
               launch_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (run_record_begin(st, sc, m, be->name, &res->run_id, err, errlen) != 0)
        return -1;

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
    if (recorder_create(opt->record ? st : NULL, res->run_id, nrings, &rec) != 0 ||
        recorder_start(rec) != 0) {
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
    if (rebuilt_valid) {
        if (run_record_assignment(st, res->run_id, 1, &rebuilt, err, errlen) != 0 && !failure[0])
            text_copy(failure, sizeof failure, err);
        bucket_assignment_free(&rebuilt);
    }
    int out = 0;
    if (run_record_finish(st, res->run_id, failure, err, errlen) != 0)
        out = -1;
    res->complete = failure[0] == '\0';
    text_copy(res->error, sizeof res->error, failure);
    if (out == 0 && !res->complete)
        out = 1;
    recorder_destroy(rec);
    prof_nvtx_destroy(&nvtx);
    return out;
}
