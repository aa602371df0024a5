/* backend_common.c — what the backends share (backend_common.h). */
#include "engine/backend_common.h"

#include <time.h>

int backend_available_always(char *why, size_t whylen)
{
    (void)why, (void)whylen;
    return 1;
}

int backend_cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc == 0 ? 0 : -1;
}
