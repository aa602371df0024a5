/* fit_ring.c — weighted least squares for the ring allreduce's alpha-beta model and for
 * the memory bandwidth of a copy (fit_ring.h).
 *
 * With x1 = 2(n-1) and x2 = 2(n-1)/n · S the model is linear, t = a·x1 + c·x2 with
 * a = alpha and c = 1/B.  Dividing each row by its measured t makes the residual
 * relative: minimise sum((a·x1/t + c·x2/t - 1)^2), a 2x2 normal system.
 */
#include "engine/predict/fit_ring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* us per byte at `gbps` GB/s */
static double us_per_byte(double gbps) { return 1.0 / (gbps * 1e3); }

double ring_model_us(double alpha_us, double bandwidth_gbps, int64_t bytes, int ranks)
{
    if (ranks < 2)
        return 0.0;
    double steps = 2.0 * (ranks - 1);
    return steps * alpha_us + steps / ranks * (double)bytes * us_per_byte(bandwidth_gbps);
}

static int check_samples(const ring_sample *s, size_t n, bool need_two_worlds, char *err, size_t errlen)
{
    if (n == 0) {
        snprintf(err, errlen, "no measurements to fit");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i].ranks < 2) {
            snprintf(err, errlen, "measurement %zu: %d rank(s): an allreduce over fewer than 2 ranks moves nothing",
                     i + 1, s[i].ranks);
            return -1;
        }
        if (s[i].bytes <= 0 || !(s[i].us > 0) || !isfinite(s[i].us)) {
            snprintf(err, errlen, "measurement %zu: size %lld bytes, time %g us: both must be positive", i + 1,
                     (long long)s[i].bytes, s[i].us);
            return -1;
        }
    }
    bool two_sizes = false, two_worlds = false;
    for (size_t i = 1; i < n; i++) {
        two_sizes |= s[i].bytes != s[0].bytes;
        two_worlds |= s[i].ranks != s[0].ranks;
    }
    if (!two_sizes) {
        snprintf(err, errlen,
                 "every measurement has the same size (%lld bytes): latency and bandwidth cannot be told apart; "
                 "measure at least two sizes, far apart (e.g. 64K and 100M)",
                 (long long)s[0].bytes);
        return -1;
    }
    if (!two_worlds && need_two_worlds) {
        snprintf(err, errlen,
                 "every measurement has the same world size (%d ranks): the model's dependence on the number "
                 "of ranks is not measured; give at least two world sizes (e.g. --ranks 2,4)",
                 s[0].ranks);
        return -1;
    }
    return 0;
}

static void residuals(const ring_sample *s, size_t n, ring_fit *f)
{
    double sum2 = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        double rel = (ring_model_us(f->alpha_us, f->bandwidth_gbps, s[i].bytes, s[i].ranks) - s[i].us) / s[i].us;
        sum2 += rel * rel;
        if (fabs(rel) > worst)
            worst = fabs(rel);
    }
    f->rms_rel = sqrt(sum2 / (double)n);
    f->max_abs_rel = worst;
    f->n = n;
}

static int fit_checked(const ring_sample *s, size_t n, ring_fit *out, char *err, size_t errlen);

int fit_ring(const ring_sample *s, size_t n, ring_fit *out, char *err, size_t errlen)
{
    if (check_samples(s, n, true, err, errlen) != 0)
        return -1;
    return fit_checked(s, n, out, err, errlen);
}

int fit_ring_world(const ring_sample *s, size_t n, int ranks, ring_fit *out, char *err, size_t errlen)
{
    ring_sample *mine = malloc((n ? n : 1) * sizeof *mine);
    if (!mine) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].ranks == ranks)
            mine[m++] = s[i];
    int rc = check_samples(mine, m, false, err, errlen);
    if (rc == 0)
        rc = fit_checked(mine, m, out, err, errlen);
    free(mine);
    return rc;
}

static int fit_checked(const ring_sample *s, size_t n, ring_fit *out, char *err, size_t errlen)
{
    /* Normal equations of the relative residual: rows u = x1/t, v = x2/t, target 1. */
    double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
    for (size_t i = 0; i < n; i++) {
        double steps = 2.0 * (s[i].ranks - 1);
        double u = steps / s[i].us, v = steps / s[i].ranks * (double)s[i].bytes / s[i].us;
        suu += u * u, suv += u * v, svv += v * v, su += u, sv += v;
    }
    double det = suu * svv - suv * suv;
    double a = 0, c = 0;
    bool clamped = false;
    /* Relative to its terms, a determinant this small means the columns are parallel
     * (every sample has the same S/n ratio): the system cannot separate the terms. */
    if (!(fabs(det) > 1e-12 * suu * svv)) {
        snprintf(err, errlen,
                 "the measurements cannot separate latency from bandwidth (sizes and world sizes vary "
                 "together); measure more sizes");
        return -1;
    }
    a = (su * svv - sv * suv) / det;
    c = (sv * suu - su * suv) / det;
    if (a < 0) {
        /* The best non-negative fit then lies on a = 0: one term, c = sv / svv. */
        a = 0;
        c = sv / svv;
        clamped = true;
    }
    if (!(c > 0)) {
        snprintf(err, errlen, "the fitted bandwidth is not positive (time does not grow with size?): "
                              "measure larger sizes");
        return -1;
    }
    out->alpha_us = a;
    out->bandwidth_gbps = 1.0 / (c * 1e3);
    out->alpha_clamped = clamped;
    residuals(s, n, out);
    return 0;
}

int fit_memcpy(const copy_sample *s, size_t n, double *bandwidth_gbps, double *rms_rel, char *err, size_t errlen)
{
    if (n == 0) {
        snprintf(err, errlen, "no copy measurements to fit");
        return -1;
    }
    double sv = 0, svv = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].moved <= 0 || !(s[i].us > 0) || !isfinite(s[i].us)) {
            snprintf(err, errlen, "copy measurement %zu: %lld bytes in %g us: both must be positive", i + 1,
                     (long long)s[i].moved, s[i].us);
            return -1;
        }
        double v = (double)s[i].moved / s[i].us;
        sv += v, svv += v * v;
    }
    double c = sv / svv; /* us per byte */
    double sum2 = 0;
    for (size_t i = 0; i < n; i++) {
        double rel = (c * (double)s[i].moved - s[i].us) / s[i].us;
        sum2 += rel * rel;
    }
    *bandwidth_gbps = 1.0 / (c * 1e3);
    *rms_rel = sqrt(sum2 / (double)n);
    return 0;
}
