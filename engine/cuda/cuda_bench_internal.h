/* cuda_bench_internal.h — shared by cuda_bench.c (ranks as GPUs of this process) and
 * cuda_bench_procs.c (ranks as processes, sharing GPUs). */
#ifndef DDPPROF_CUDA_BENCH_INTERNAL_H
#define DDPPROF_CUDA_BENCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define MAX_RANKS 64

typedef struct {
    ncclComm_t comm[MAX_RANKS];
    cudaStream_t stream[MAX_RANKS];
    float *buf[MAX_RANKS];
    cudaEvent_t start[MAX_RANKS], end[MAX_RANKS];
    int ranks;
    int64_t count;
} bench_state;

/* Times `iters` rounds after `warmup` (each round: one allreduce per rank, grouped);
 * *us the mean over ranks of the time per round.  0, or -1 with err. */
int cuda_bench_measure(bench_state *b, int iters, int warmup, double *us, char *err, size_t errlen);
/* When CUDA_BENCH_CHILD_ENV names this process a rank: runs it and reports to its parent. */
int cuda_bench_child(const char *spec, int ranks, int ngpus, int64_t bytes, int iters, int warmup, double *us,
                     char *err, size_t errlen);
/* Starts `ranks` rank processes and averages their times. */
int cuda_bench_processes(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                         size_t errlen);

/* Set in the rank processes of a benchmark whose ranks share GPUs: "RANK FD NCCL-ID". */
#define CUDA_BENCH_CHILD_ENV "DDPPROF_CUDA_BENCH_CHILD"

#endif
