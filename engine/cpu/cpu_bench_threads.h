/* cpu_bench_threads.h — the cpu backend's benchmarks run one thread per rank, released
 * together from a start line so that they share the memory system and the cores as a
 * run's ranks do.
 *
 * Contract: each thread's body calls cpu_start_line_wait() before it times anything and
 * gives up (its own failure) when that returns nonzero.  cpu_bench_run_threads() starts
 * every thread, then releases them (or, when one could not be started, cancels those
 * that were), and joins them; the caller owns `args` and reads each thread's result
 * from it afterwards. */
#ifndef DDPPROF_CPU_BENCH_THREADS_H
#define DDPPROF_CPU_BENCH_THREADS_H

#include <pthread.h>
#include <stddef.h>

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go, cancel;
} cpu_start_line;

#define CPU_START_LINE_INIT {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER}

/* Blocks until the start line is released: 0 to go, nonzero when the benchmark was
 * cancelled. */
int cpu_start_line_wait(cpu_start_line *start);

/* Runs body(args + r * arg_size) for r in [0, ranks) on threads of their own, released
 * together from `start`.  0 once every thread has finished, or -1 with the reason in
 * err ("cannot start a <what> thread: ...", "cannot join a <what> thread"). */
int cpu_bench_run_threads(int ranks, void *(*body)(void *), void *args, size_t arg_size, cpu_start_line *start,
                          const char *what, char *err, size_t errlen);

#endif
