/* cpu_bench_threads.c — one benchmark thread per rank, started and then released
 * together (cpu_bench_threads.h). */
#include "engine/cpu/cpu_bench_threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cpu_start_line_wait(cpu_start_line *start)
{
    pthread_mutex_lock(&start->mu);
    while (!start->go)
        pthread_cond_wait(&start->cv, &start->mu);
    int cancel = start->cancel;
    pthread_mutex_unlock(&start->mu);
    return cancel;
}

int cpu_bench_run_threads(int ranks, void *(*body)(void *), void *args, size_t arg_size, cpu_start_line *start,
                          const char *what, char *err, size_t errlen)
{
    pthread_t *th = calloc((size_t)ranks, sizeof *th);
    if (!th) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, started = 0;
    for (int r = 0; r < ranks; r++) {
        int prc = pthread_create(&th[r], NULL, body, (char *)args + (size_t)r * arg_size);
        if (prc != 0) {
            snprintf(err, errlen, "cannot start a %s thread: %s", what, strerror(prc));
            rc = -1;
            break;
        }
        started++;
    }
    /* Released only once all are started, so that none runs alone; cancelled when one
     * could not be, so that those started end without timing anything. */
    pthread_mutex_lock(&start->mu);
    start->go = 1;
    start->cancel = rc != 0;
    pthread_cond_broadcast(&start->cv);
    pthread_mutex_unlock(&start->mu);
    for (int r = 0; r < started; r++)
        if (pthread_join(th[r], NULL) != 0 && rc == 0) {
            snprintf(err, errlen, "cannot join a %s thread", what);
            rc = -1;
        }
    free(th);
    return rc;
}
