/* span_select.c — the ranks that keep their spans (span_select.h). */
#include "profiler/span_select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool span_select_keeps_all(const char *list, int world)
{
    return world <= SPAN_SELECT_ALL_UP_TO || (list && strcmp(list, "all") == 0);
}

static bool is_auto(const char *list) { return !list || !list[0] || strcmp(list, "auto") == 0; }

/* Calls on_rank for each rank of a comma-separated list; -1 with err at the first bad
 * element. */
static int each_listed(const char *list, int world, bool *keep, char *err, size_t errlen)
{
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "'%.*s' is not a rank (give all, auto, or ranks such as 0,17,4095)",
                     (int)(len < 40 ? len : 40), p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *end;
        errno = 0;
        long r = strtol(item, &end, 10);
        if (*end != '\0' || errno != 0 || item[0] == '-' || item[0] == '+' || item[0] == ' ') {
            snprintf(err, errlen, "'%s' is not a rank (give all, auto, or ranks such as 0,17,4095)",
                     item);
            return -1;
        }
        if (r >= world) {
            snprintf(err, errlen, "rank %ld is not a rank of run.world_size %d (ranks are 0..%d)",
                     r, world, world - 1);
            return -1;
        }
        if (keep)
            keep[r] = true;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int span_select_check(const char *list, int world, char *err, size_t errlen)
{
    if (is_auto(list) || strcmp(list, "all") == 0)
        return 0;
    return each_listed(list, world, NULL, err, errlen);
}

typedef struct {
    double speed;
    int rank;
} ranked;

/* Slowest first; a tie goes to the lower rank. */
static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->speed != y->speed)
        return x->speed < y->speed ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int span_select_choose(const char *list, int world, const double *speed, bool *keep, char *err, size_t errlen)
{
    if (span_select_check(list, world, err, errlen) != 0)
        return -1;
    bool all = span_select_keeps_all(list, world);
    for (int r = 0; r < world; r++)
        keep[r] = all;
    if (all)
        return world;
    ranked *order = malloc((size_t)world * sizeof *order);
    if (!order) {
        snprintf(err, errlen, "out of memory choosing the ranks that keep spans");
        return -1;
    }
    for (int r = 0; r < world; r++)
        order[r] = (ranked){speed ? speed[r] : 1.0, r};
    qsort(order, (size_t)world, sizeof *order, cmp_ranked);
    /* The slowest, the quantiles, the median and the fastest of the speed order. */
    static const double quantiles[] = {0.0, 0.10, 0.25, 0.50, 0.75, 0.90, 1.0};
    for (size_t q = 0; q < sizeof quantiles / sizeof quantiles[0]; q++)
        keep[order[(size_t)(quantiles[q] * (world - 1) + 0.5)].rank] = true;
    free(order);
    keep[0] = true;
    if (!is_auto(list) && each_listed(list, world, keep, err, errlen) != 0)
        return -1;
    int n = 0;
    for (int r = 0; r < world; r++)
        n += keep[r];
    return n;
}
