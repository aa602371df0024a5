/* fit_ring.h — the alpha-beta model of a ring allreduce, fitted to measurements.
 *
 * Contract: t(S, n) = 2(n-1)·alpha + 2(n-1)/n · S / B, for S bytes reduced in place over
 * n ranks (alpha: the latency of one ring step, B: the bandwidth of each link).
 * fit_ring() finds alpha >= 0 and B > 0 by least squares on the relative residual
 * (t_model - t) / t, so that a 64 KiB allreduce weighs as much as a 100 MiB one; when the
 * unconstrained optimum has alpha < 0 it refits B alone with alpha = 0 and says so
 * (alpha_clamped).  It refuses, with a message saying what to measure, samples that
 * cannot determine both terms: fewer than two distinct sizes, fewer than two world
 * sizes, a world size below 2, a size or time that is not positive.
 * fit_memcpy() fits t = moved / bw through the origin (the model's memory-bound op,
 * engine/cost/timing.c) the same way.  Units: bytes, microseconds, GB/s = 1e9 B/s.
 *
 * Ownership: the samples are borrowed for the call; fit_ring_world()'s copy of its
 * world size's samples is freed before it returns, and the results are values.
 */
#ifndef DDPPROF_FIT_RING_H
#define DDPPROF_FIT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t bytes;
    int ranks;
    double us; /* measured time of one allreduce */
} ring_sample;

typedef struct {
    double alpha_us;
    double bandwidth_gbps;
    bool alpha_clamped;  /* the unconstrained fit gave alpha < 0 */
    double rms_rel;      /* sqrt(mean(((model - t) / t)^2)) */
    double max_abs_rel;  /* max |model - t| / t */
    size_t n;
} ring_fit;

/* The model's time in microseconds. */
double ring_model_us(double alpha_us, double bandwidth_gbps, int64_t bytes, int ranks);

/* 0, or -1 with err saying why the samples cannot be fitted. */
int fit_ring(const ring_sample *s, size_t n, ring_fit *out, char *err, size_t errlen);
/* The same fit over the samples of one world size only (a diagnostic: how far alpha
 * and B move with the number of ranks); needs two sizes at that world size. */
int fit_ring_world(const ring_sample *s, size_t n, int ranks, ring_fit *out, char *err, size_t errlen);

typedef struct {
    int64_t moved; /* bytes read plus bytes written */
    double us;
} copy_sample;

/* bandwidth_gbps of t = moved / bw and the RMS relative residual; 0, or -1 with err
 * (no samples, a size or time that is not positive). */
int fit_memcpy(const copy_sample *s, size_t n, double *bandwidth_gbps, double *rms_rel, char *err, size_t errlen);

#endif
