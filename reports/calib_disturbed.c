/* calib_disturbed.c — measured runs left out of calibration as disturbed
 * (calib_disturbed.h). */
#include "reports/calib_disturbed.h"

#include <stdlib.h>

#include "engine/predict/median.h"

int calib_disturbed(const double *step_ns, const int *point, size_t n, bool *leave_out, double *ratio)
{
    double *same = malloc((n ? n : 1) * sizeof *same);
    if (!same)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (point[j] == point[i])
                same[k++] = step_ns[j];
        double med = k >= CALIB_DISTURBED_MIN_RUNS ? median_sort(same, k) : 0;
        leave_out[i] = med > 0 && step_ns[i] > CALIB_DISTURBED_FACTOR * med;
        if (ratio)
            ratio[i] = med > 0 ? step_ns[i] / med : 0;
    }
    free(same);
    return 0;
}

double calib_mean_step_ns(const run_span *s, size_t n)
{
    int lo = 0, hi = -1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || s[i].iter < lo)
            lo = s[i].iter;
        if (s[i].iter > hi)
            hi = s[i].iter;
    }
    if (n == 0)
        return 0;
    size_t iters = (size_t)(hi - lo) + 1;
    int64_t *first = malloc(iters * sizeof *first), *last = malloc(iters * sizeof *last);
    double sum = 0;
    size_t seen = 0;
    if (first && last) {
        for (size_t k = 0; k < iters; k++)
            first[k] = INT64_MAX, last[k] = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)(s[i].iter - lo);
            first[k] = s[i].start_ns < first[k] ? s[i].start_ns : first[k];
            last[k] = s[i].end_ns > last[k] ? s[i].end_ns : last[k];
        }
        for (size_t k = 0; k < iters; k++)
            if (last[k] >= first[k]) {
                sum += (double)(last[k] - first[k]);
                seen++;
            }
    }
    free(first);
    free(last);
    return seen ? sum / (double)seen : 0;
}
