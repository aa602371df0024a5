/* rank_run.c — one rank: its device from the backend, the trainer on it. */
#include "engine/launch/rank_run.h"

#include <stdio.h>

int rank_run(rank_run_args *a, char *err, size_t errlen)
{
    device *dev = a->be->device_create(a->world, a->rank, err, errlen);
    if (!dev) {
        if (a->trainer.abort_run)
            a->trainer.abort_run(a->trainer.abort_user, err);
        return -1;
    }
    a->trainer.dev = dev;
    a->trainer.host_ring = a->be->host_ring(dev);
    int rc = trainer_run(&a->trainer, err, errlen);
    /* The trainer left both streams idle: nothing queued can touch its memory now. */
    a->be->device_destroy(dev);
    a->trainer.dev = NULL;
    return rc;
}
