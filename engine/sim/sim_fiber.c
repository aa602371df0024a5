/* sim_fiber.c — ucontext coroutines on mmap'd stacks with a guard page. */
#include "engine/sim/sim_fiber.h"

#include <stdint.h>
#include <stdlib.h>
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

struct sim_fiber {
    ucontext_t ctx, caller;
    void (*fn)(void *arg);
    void *arg;
    char *map; /* guard page + stack */
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
        __sanitizer_start_switch_fiber(save, f->map + sysconf(_SC_PAGESIZE), f->map_bytes - (size_t)sysconf(_SC_PAGESIZE));
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
static __attribute__((noinline)) int init_context(sim_fiber *f, size_t page)
{
    if (getcontext(&f->ctx) != 0)
        return -1;
    f->ctx.uc_stack.ss_sp = f->map + page;
    f->ctx.uc_stack.ss_size = f->map_bytes - page;
    f->ctx.uc_link = &f->caller;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->ctx, (void (*)(void))trampoline, 2, (unsigned int)(p >> 32), (unsigned int)(p & 0xffffffffu));
    return 0;
}

sim_fiber *sim_fiber_create(void (*fn)(void *arg), void *arg, size_t stack_bytes)
{
    sim_fiber *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    f->map_bytes = ((stack_bytes + page - 1) / page + 1) * page;
    f->map = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                  -1, 0);
    f->fn = fn;
    f->arg = arg;
    if (f->map == MAP_FAILED || mprotect(f->map, page, PROT_NONE) != 0 || init_context(f, page) != 0) {
        if (f->map != MAP_FAILED)
            munmap(f->map, f->map_bytes);
        free(f);
        return NULL;
    }
    return f;
}

static int enter(sim_fiber *f)
{
    void *save = NULL;
    switch_begin(f, 1, &save);
    if (swapcontext(&f->caller, &f->ctx) != 0)
        return -1;
    switch_end(f, save, 0);
    if (f->done && f->map) {
        munmap(f->map, f->map_bytes);
        f->map = NULL;
    }
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
    if (f->map)
        munmap(f->map, f->map_bytes);
    free(f);
}
