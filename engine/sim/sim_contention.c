/* sim_contention.c — compute slowed while its rank's comm stream is busy (sim_contention.h). */
#include "engine/sim/sim_contention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sim_busy_note(sim_busy *b, int64_t from_ns, int64_t to_ns)
{
    if (to_ns <= from_ns)
        return 0;
    if (b->head > 0 && b->head + b->count == b->cap) {
        memmove(b->v, b->v + b->head, b->count * sizeof *b->v);
        b->head = 0;
    }
    if (b->head + b->count == b->cap) {
        size_t ncap = b->cap ? 2 * b->cap : 16;
        sim_interval *nv = realloc(b->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        b->v = nv;
        b->cap = ncap;
    }
    b->v[b->head + b->count++] = (sim_interval){from_ns, to_ns};
    return 0;
}

int64_t sim_busy_end(sim_busy *b, int64_t start_ns, uint64_t dur_ns, double slowdown)
{
    while (b->count > 0 && b->v[b->head].to_ns <= start_ns) {
        b->head++;
        b->count--;
    }
    if (b->count == 0)
        b->head = 0;
    int64_t t = start_ns;
    double left = (double)dur_ns; /* work still to do, in ns at full speed */
    double stretch = 1.0 + slowdown;
    for (size_t i = 0; i < b->count && left > 0; i++) {
        const sim_interval *iv = &b->v[b->head + i];
        if (iv->from_ns > t) {
            double free_run = (double)(iv->from_ns - t);
            if (left <= free_run)
                break;
            left -= free_run;
            t = iv->from_ns;
        }
        double busy = (double)(iv->to_ns - t);
        if (left * stretch <= busy) {
            return t + (int64_t)llround(left * stretch);
        }
        left -= busy / stretch;
        t = iv->to_ns;
    }
    return t + (int64_t)llround(left);
}

bool sim_busy_covers(const sim_busy *b, int64_t t_ns)
{
    for (size_t i = 0; i < b->count; i++) {
        const sim_interval *iv = &b->v[b->head + i];
        if (iv->from_ns >= t_ns)
            return false;
        if (t_ns <= iv->to_ns)
            return true;
    }
    return false;
}

void sim_busy_free(sim_busy *b)
{
    free(b->v);
    *b = (sim_busy){0};
}
