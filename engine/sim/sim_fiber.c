/* sim_fiber.c — ucontext coroutines on stacks of one mapped region, each with a canary
 * at its low end (sim_fiber.h). */
#include "engine/sim/sim_fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_FIBER_ASAN 1
#endif
#endif

#ifdef SIM_FIBER_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif

/* The canary: this many bytes of this pattern at each stack's lowest address. */
#define CANARY_BYTES 64
#define CANARY_BYTE 0xA5

struct sim_fiber_pool {
    char *map; /* a guard page, then nfibers stacks of stack_bytes */
    size_t map_bytes, stack_bytes, nfibers, page;
};

struct sim_fiber {
    ucontext_t ctx, caller;
    void (*fn)(void *arg);
    void *arg;
    char *map; /* its stack in the pool's region; NULL once given back */
    size_t map_bytes;
    int done;
#ifdef SIM_FIBER_ASAN
    void *fake_stack;
    const void *caller_bottom;
    size_t caller_size;
#endif
};

static void switch_begin(sim_fiber *f, int to_fiber, void **save)
{
#ifdef SIM_FIBER_ASAN
    if (to_fiber)
        __sanitizer_start_switch_fiber(save, f->map, f->map_bytes);
    else
        __sanitizer_start_switch_fiber(save, f->caller_bottom, f->caller_size);
#else
    (void)f, (void)to_fiber, (void)save;
#endif
}

static void switch_end(sim_fiber *f, void *save, int on_fiber)
{
#ifdef SIM_FIBER_ASAN
    if (on_fiber)
        __sanitizer_finish_switch_fiber(save, &f->caller_bottom, &f->caller_size);
    else
        __sanitizer_finish_switch_fiber(save, NULL, NULL);
#else
    (void)f, (void)save, (void)on_fiber;
#endif
}

/* makecontext passes int arguments only: the pointer travels in two halves. */
static void trampoline(unsigned int hi, unsigned int lo)
{
    sim_fiber *f = (sim_fiber *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    switch_end(f, NULL, 1);
    f->fn(f->arg);
    f->done = 1;
    switch_begin(f, 0, NULL);
    /* uc_link returns to the caller. */
}

/* Kept apart from the allocation: getcontext() returns twice in the compiler's eyes,
 * and nothing of the caller must live across it. */
static __attribute__((noinline)) int init_context(sim_fiber *f)
{
    if (getcontext(&f->ctx) != 0)
        return -1;
    f->ctx.uc_stack.ss_sp = f->map;
    f->ctx.uc_stack.ss_size = f->map_bytes;
    f->ctx.uc_link = &f->caller;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->ctx, (void (*)(void))trampoline, 2, (unsigned int)(p >> 32), (unsigned int)(p & 0xffffffffu));
    return 0;
}

sim_fiber_pool *sim_fiber_pool_create(size_t nfibers, size_t stack_bytes)
{
    sim_fiber_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->page = (size_t)sysconf(_SC_PAGESIZE);
    p->nfibers = nfibers;
    p->stack_bytes = (stack_bytes + p->page - 1) / p->page * p->page;
    p->map_bytes = p->page + nfibers * p->stack_bytes;
    p->map = mmap(NULL, p->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                  -1, 0);
    if (p->map == MAP_FAILED || mprotect(p->map, p->page, PROT_NONE) != 0) {
        if (p->map != MAP_FAILED)
            munmap(p->map, p->map_bytes);
        free(p);
        return NULL;
    }
    return p;
}

void sim_fiber_pool_destroy(sim_fiber_pool *p)
{
    if (!p)
        return;
    munmap(p->map, p->map_bytes);
    free(p);
}

sim_fiber *sim_fiber_create(sim_fiber_pool *p, size_t index, void (*fn)(void *arg), void *arg)
{
    if (index >= p->nfibers)
        return NULL;
    sim_fiber *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->map = p->map + p->page + index * p->stack_bytes;
    f->map_bytes = p->stack_bytes;
    f->fn = fn;
    f->arg = arg;
    memset(f->map, CANARY_BYTE, CANARY_BYTES);
    if (init_context(f) != 0) {
        free(f);
        return NULL;
    }
    return f;
}

/* The stack's canary intact, or the process stops: the fiber wrote below its stack,
 * into the one below it. */
static void check_canary(const sim_fiber *f)
{
    for (size_t i = 0; i < CANARY_BYTES; i++)
        if ((unsigned char)f->map[i] != CANARY_BYTE) {
            fprintf(stderr, "ddpprof: a sim rank's host program overflowed its %zu KiB stack; stopping\n",
                    f->map_bytes / 1024);
            abort();
        }
}

/* Gives a finished fiber's stack pages back, keeping the region one mapping. */
static void release_stack(sim_fiber *f)
{
    if (f->map) {
        (void)madvise(f->map, f->map_bytes, MADV_DONTNEED); /* only memory is at stake */
        f->map = NULL;
    }
}

static int enter(sim_fiber *f)
{
    void *save = NULL;
    switch_begin(f, 1, &save);
    if (swapcontext(&f->caller, &f->ctx) != 0)
        return -1;
    switch_end(f, save, 0);
    check_canary(f);
    if (f->done)
        release_stack(f);
    return f->done ? 0 : 1;
}

int sim_fiber_start(sim_fiber *f) { return enter(f); }
int sim_fiber_resume(sim_fiber *f) { return f->done ? 0 : enter(f); }

void sim_fiber_yield(sim_fiber *f)
{
#ifdef SIM_FIBER_ASAN
    void *save = NULL;
    switch_begin(f, 0, &save);
    swapcontext(&f->ctx, &f->caller);
    switch_end(f, save, 1);
#else
    swapcontext(&f->ctx, &f->caller);
#endif
}

void sim_fiber_destroy(sim_fiber *f)
{
    if (!f)
        return;
    release_stack(f);
    free(f);
}
