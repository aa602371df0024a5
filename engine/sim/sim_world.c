/* sim_world.c — the sim world's work list and its abort, what every part of the sim
 * (the scheduler, the devices, the collectives) uses to wake a rank or stop them all
 * (contract in sim_internal.h). */
#include "common/textcopy.h"
#include "engine/sim/sim_internal.h"

void sim_world_push_work(sim_world *w, int rank)
{
    sim_device *d = w->devs[rank];
    if (!d || d->in_worklist)
        return;
    d->in_worklist = true;
    w->worklist[(w->work_head + w->nwork++) % w->world_size] = rank;
}

void sim_world_abort(sim_world *w, const char *why)
{
    if (w->aborted)
        return;
    w->aborted = true;
    text_copy(w->abort_reason, sizeof w->abort_reason, why);
    for (int r = 0; r < w->world_size; r++)
        sim_world_push_work(w, r);
}
