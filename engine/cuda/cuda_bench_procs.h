/* cuda_bench_procs.h — the allreduce benchmark with ranks as processes, for
 * cuda_bench.c to hand a benchmark to when its ranks outnumber the GPUs, and for a
 * rank process to recognise itself (see cuda_bench.h).
 *
 * Ownership: `spec` is borrowed for the call.  cuda_bench_processes() closes the pipes
 * and reaps the rank processes it started before it returns.  cuda_bench_child() closes
 * the fd it answers on, destroys its communicator and frees its buffer, but leaves its
 * CUDA stream and two events to the rank process's exit. */
#ifndef DDPPROF_CUDA_BENCH_PROCS_H
#define DDPPROF_CUDA_BENCH_PROCS_H

#include <stddef.h>
#include <stdint.h>

/* Set in the rank processes of a benchmark whose ranks share GPUs: "RANK FD NCCL-ID". */
#define CUDA_BENCH_CHILD_ENV "DDPPROF_CUDA_BENCH_CHILD"

/* When CUDA_BENCH_CHILD_ENV names this process a rank: runs it and reports to its parent. */
int cuda_bench_child(const char *spec, int ranks, int ngpus, int64_t bytes, int iters, int warmup, double *us,
                     char *err, size_t errlen);
/* Starts `ranks` rank processes and averages their times. */
int cuda_bench_processes(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                         size_t errlen);

#endif
