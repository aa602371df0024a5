/* sim_fiber.h — coroutines for the sim backend: each rank's host program runs on its own
 * small stack, switched to and from one scheduler on one OS thread.
 *
 * Contract: a pool maps the stacks of `nfibers` fibers as one region (one mapping, not
 * one per fiber: the kernel's limit on mappings, vm.max_map_count, 65530 by default,
 * would stop a world at 32,765 ranks with a stack and a guard page each), pages
 * touched only as a stack grows.  Instead of a guard page per stack, each stack's
 * lowest bytes hold a canary, checked whenever its fiber switches back: a fiber that
 * overflowed its stack stops the process with a message (the stack below is another
 * fiber's, already overwritten), where a guard page would have stopped it with SIGSEGV;
 * the region's lowest page is a guard still.  sim_fiber_start() runs fn(arg) on stack
 * `index` of the pool until it calls sim_fiber_yield() or returns; sim_fiber_resume()
 * continues it from where it yielded.  Both return 1 while the fiber can be resumed and
 * 0 once fn has returned (its stack's pages are then given back).  A fiber yields only
 * to the thread that last started or resumed it.  Under AddressSanitizer the switches
 * are announced to it, so that it tracks stacks.  The pool outlives its fibers.
 */
#ifndef DDPPROF_SIM_FIBER_H
#define DDPPROF_SIM_FIBER_H

#include <stddef.h>

typedef struct sim_fiber sim_fiber;
typedef struct sim_fiber_pool sim_fiber_pool;

/* NULL when the region cannot be mapped. */
sim_fiber_pool *sim_fiber_pool_create(size_t nfibers, size_t stack_bytes);
void sim_fiber_pool_destroy(sim_fiber_pool *p);
/* Fiber on stack `index` (< nfibers, one fiber per stack at a time); NULL when out of
 * memory. */
sim_fiber *sim_fiber_create(sim_fiber_pool *p, size_t index, void (*fn)(void *arg), void *arg);
int sim_fiber_start(sim_fiber *f);
int sim_fiber_resume(sim_fiber *f);
/* Called on the fiber: back to whoever resumed it. */
void sim_fiber_yield(sim_fiber *f);
/* Releases a fiber (finished, or never to be resumed again). */
void sim_fiber_destroy(sim_fiber *f);

#endif
