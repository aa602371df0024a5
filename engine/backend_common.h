/* backend_common.h — pieces of a backend (backend.h) that more than one backend needs,
 * written once here rather than in each backend's folder.
 *
 * Contract: plain functions without state; a backend calls them or puts them in its
 * backend_ops table.
 *
 * Ownership: nothing here allocates or keeps a pointer; `why` and `cv` are the caller's
 * (an initialised cv is destroyed by its owner with pthread_cond_destroy). */
#ifndef DDPPROF_BACKEND_COMMON_H
#define DDPPROF_BACKEND_COMMON_H

#include <pthread.h>
#include <stddef.h>

/* backend_ops.available for a backend that needs nothing of the machine (threads on
 * its cores, or virtual time): always 1, `why` untouched. */
int backend_available_always(char *why, size_t whylen);

/* Initialises `cv` to time its waits on CLOCK_MONOTONIC, the clock every deadline of a
 * backend is reckoned on (pthread_cond_timedwait uses CLOCK_REALTIME otherwise, which
 * jumps when the wall clock is set).  0, or -1 when it could not be initialised. */
int backend_cond_init_monotonic(pthread_cond_t *cv);

#endif
