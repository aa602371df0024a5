/* calib_disturbed.c — measured runs left out of calibration as disturbed
 * (calib_disturbed.h). */
#include "calib_disturbed.h"

#include <stdio.h>
#include <stdlib.h>

#include "median.h"

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

int calib_run_step_ns(sqlite3 *db, int64_t run, int warmup, double *step_ns, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT avg(last - first), count(*) FROM (SELECT min(start_ns) AS first, max(end_ns) AS last "
                           "FROM span WHERE run_id = ? AND iter >= ? GROUP BY iter)",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, warmup);
    int rc = -1;
    if (sqlite3_step(st) != SQLITE_ROW)
        snprintf(err, errlen, "run %lld: %s", (long long)run, sqlite3_errmsg(db));
    else if (sqlite3_column_int64(st, 1) == 0)
        snprintf(err, errlen, "run %lld has no spans after its %d warm-up iterations", (long long)run, warmup);
    else {
        *step_ns = sqlite3_column_double(st, 0);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}
