/* sim_fiber.h — coroutines for the sim backend: each rank's host program runs on its own
 * small stack, switched to and from one scheduler on one OS thread.
 *
 * Contract: sim_fiber_start() runs fn(arg) on a fresh mmap'd stack until it calls
 * sim_fiber_yield() or returns; sim_fiber_resume() continues it from where it yielded.
 * Both return 1 while the fiber can be resumed and 0 once fn has returned (its stack is
 * then released).  A fiber yields only to the thread that last started or resumed it.
 * Under AddressSanitizer the switches are announced to it, so that it tracks stacks.
 */
#ifndef DDPPROF_SIM_FIBER_H
#define DDPPROF_SIM_FIBER_H

#include <stddef.h>

typedef struct sim_fiber sim_fiber;

/* NULL when the stack cannot be mapped. */
sim_fiber *sim_fiber_create(void (*fn)(void *arg), void *arg, size_t stack_bytes);
int sim_fiber_start(sim_fiber *f);
int sim_fiber_resume(sim_fiber *f);
/* Called on the fiber: back to whoever resumed it. */
void sim_fiber_yield(sim_fiber *f);
/* Releases a fiber (finished, or never to be resumed again). */
void sim_fiber_destroy(sim_fiber *f);

#endif
