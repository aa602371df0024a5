/* cuda_device.c — what every file of the cuda device leans on (cuda_device_internal.h):
 * the backend's host clock, and failing the device, where the first reason wins and
 * every waiter wakes.  The entry points are in cuda_device_ops.c, an op's GPU work in
 * cuda_launch.c, creation and end in cuda_device_life.c, retirement in cuda_poller.c. */
#include "common/textcopy.h"
#include "engine/cuda/cuda_device_internal.h"

#include <time.h>

int64_t cuda_host_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cuda_device_fail(cuda_device *d, const char *msg)
{
    pthread_mutex_lock(&d->mu);
    if (!d->failed) {
        d->failed = true;
        text_copy(d->error, sizeof d->error, msg);
        /* As on cpu, a rank's failure ends its collectives: the poller aborts the
         * communicator, so that no NCCL kernel of this rank waits for peers forever. */
        if (!d->abort_why[0])
            text_copy(d->abort_why, sizeof d->abort_why, msg);
    }
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    atomic_store(&d->abort_requested, true);
}

bool cuda_device_failed(cuda_device *d)
{
    pthread_mutex_lock(&d->mu);
    bool f = d->failed;
    pthread_mutex_unlock(&d->mu);
    return f;
}
