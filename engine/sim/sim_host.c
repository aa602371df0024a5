/* sim_host.c — the cores of one host shared by its ranks' memory-bound ops (sim_host.h). */
#include "sim_host.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Below this share of a core an op is taken not to run (the rest of a core left by
 * rounding the use of others). */
#define MIN_RATE 1e-9

int sim_host_init(sim_host *h, double cores, int members)
{
    *h = (sim_host){.cores = cores, .members = members};
    h->last_start = malloc((size_t)(members > 0 ? members : 1) * sizeof *h->last_start);
    if (!h->last_start)
        return -1;
    for (int m = 0; m < members; m++)
        h->last_start[m] = INT64_MIN;
    return 0;
}

void sim_host_free(sim_host *h)
{
    free(h->steps);
    free(h->last_start);
    *h = (sim_host){0};
}

int64_t sim_host_busy_until(const sim_host *h)
{
    /* Every op ends at a step of its own and the last step's use is 0. */
    return h->count > 0 ? h->steps[h->count - 1].at_ns : INT64_MIN;
}

/* Index of the last step at or before t, or -1 when t is before them all. */
static ptrdiff_t step_at(const sim_host *h, int64_t t)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)h->count - 1, found = -1;
    while (lo <= hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (h->steps[mid].at_ns <= t) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

/* Makes a step begin at exactly t (same use as before it); its index, or -1 when out of
 * memory. */
static ptrdiff_t split_at(sim_host *h, int64_t t)
{
    ptrdiff_t i = step_at(h, t);
    if (i >= 0 && h->steps[i].at_ns == t)
        return i;
    if (h->count == h->cap) {
        size_t ncap = h->cap ? 2 * h->cap : 64;
        sim_host_step *ns = realloc(h->steps, ncap * sizeof *ns);
        if (!ns)
            return -1;
        h->steps = ns;
        h->cap = ncap;
    }
    size_t at = (size_t)(i + 1);
    memmove(h->steps + at + 1, h->steps + at, (h->count - at) * sizeof *h->steps);
    h->steps[at] = (sim_host_step){t, i >= 0 ? h->steps[i].used : 0.0};
    h->count++;
    return (ptrdiff_t)at;
}

static double rate_of(const sim_host *h, double used)
{
    double r = h->cores - used;
    return r > 1.0 ? 1.0 : r;
}

/* Drops the steps before the last one at or before every member's last start: no op
 * starts earlier any more.  Looks once per `members` ops and drops only when that frees
 * half of them, so both cost O(1) per op, amortised. */
static void forget_past(sim_host *h)
{
    if (++h->placed < h->members)
        return;
    h->placed = 0;
    int64_t floor = INT64_MAX;
    for (int m = 0; m < h->members; m++)
        if (h->last_start[m] < floor)
            floor = h->last_start[m];
    ptrdiff_t keep = step_at(h, floor);
    if (keep <= 0 || (size_t)keep * 2 < h->count)
        return;
    memmove(h->steps, h->steps + keep, (h->count - (size_t)keep) * sizeof *h->steps);
    h->count -= (size_t)keep;
}

int sim_host_place(sim_host *h, int member, int64_t start_ns, uint64_t work_ns, int64_t *end_ns)
{
    *end_ns = start_ns;
    if (work_ns == 0)
        return 0;
    if (member >= 0 && member < h->members && h->last_start[member] < start_ns)
        h->last_start[member] = start_ns;
    ptrdiff_t first = split_at(h, start_ns);
    if (first < 0)
        return -1;
    /* The last step's use is 0 (every op ends at a step of its own), so this ends. */
    double left = (double)work_ns;
    int64_t t = start_ns;
    for (size_t j = (size_t)first; j < h->count; j++) {
        double rate = rate_of(h, h->steps[j].used);
        bool last = j + 1 == h->count;
        double room = last ? INFINITY : (double)(h->steps[j + 1].at_ns - t);
        if (rate > MIN_RATE && left <= rate * room) {
            *end_ns = t + (int64_t)ceil(left / rate);
            break;
        }
        if (rate > MIN_RATE)
            left -= rate * room;
        t = h->steps[j + 1].at_ns;
    }
    ptrdiff_t end = split_at(h, *end_ns);
    if (end < 0)
        return -1;
    for (ptrdiff_t j = first; j < end; j++)
        h->steps[j].used += rate_of(h, h->steps[j].used) > MIN_RATE ? rate_of(h, h->steps[j].used) : 0.0;
    forget_past(h);
    return 0;
}
