/* calib_report.h — what `ddpprof calibrate` prints and writes.
 *
 * Contract: calib_fit_all() fits the ring model to the allreduce measurements and, when
 * copies were measured, the memory bandwidth of the copies (each copy moves 2 × bytes:
 * read and write, as engine/cost/timing.c counts a memory-bound op): copy-in and copy-out
 * alone, and mem_bw_gbps, their harmonic mean, the one bandwidth at which a copy-in
 * plus a copy-out of the same bytes take the time they took (the model has one).  calib_print() writes
 * every measurement with the model's prediction and residual (absolute, relative) and
 * the fits.  calib_ini_text() is a scenario fragment any scenario can `include`:
 *   [network] algorithm = ring, latency_us, bandwidth_gbps
 *   [device]  mem_bw_gbps (only when copies were measured),
 *             op_overhead_us and op_wakeup_us (only when the dispatch cost was
 *             measured: the excess per op of untimed ops, and what timed ops cost
 *             beyond that; neither below 0)
 * with comments saying how and where it was measured.  Caller frees the text.
 */
#ifndef DDPPROF_CALIB_REPORT_H
#define DDPPROF_CALIB_REPORT_H

#include <stdio.h>

#include "engine/predict/calibrate.h"
#include "engine/predict/calibrate_run.h"

typedef struct {
    ring_fit ring;
    bool have_copy;
    double copy_in_gbps, copy_out_gbps, mem_bw_gbps; /* mem_bw: both kinds together */
    double copy_rms_rel;
    bool have_dispatch;
    double op_overhead_us, op_wakeup_us;
} calib_fit;

int calib_fit_all(const calib_data *d, calib_fit *f, char *err, size_t errlen);

/* The model's time of one copy of `bytes` (fp32, read + write) at `gbps`. */
double calib_copy_model_us(double gbps, int64_t bytes);

void calib_print(FILE *out, const calib_plan *p, const calib_data *d, const calib_fit *f);

/* `about` is a free-form line put in a comment (backend, machine). */
char *calib_ini_text(const calib_plan *p, const calib_data *d, const calib_fit *f, const char *about);
/* The fragment learned from measured runs (calibrate --from): [network] algorithm =
 * measured with the runs' bucket allreduces (and `ring`'s latency and bandwidth when
 * given), [device] the figures learned; what was not learned is left out. */
char *calib_run_ini_text(const calib_run_costs *c, const ring_fit *ring, const char *about);

#endif
