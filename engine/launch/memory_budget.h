/* memory_budget.h — what a run or a benchmark will allocate, against what is free now.
 *
 * Contract: memory_run_estimate() adds up every large allocation of a run on the cpu
 * backend before it starts (per rank: parameters, gradients, buckets, the 16-bit copy
 * a comm hook makes of a bucket, the GEMM scratch of compute = real; once: the span
 * rings), itemised so the refusal can say what is big.  memory_available() reads
 * MemAvailable from /proc/meminfo: the memory the kernel can give now without
 * swapping, not the machine's total.  memory_check() compares the two and, when the
 * estimate does not fit, writes "needs about X GiB (...); Y GiB are available now".
 */
#ifndef DDPPROF_MEMORY_BUDGET_H
#define DDPPROF_MEMORY_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"

typedef struct {
    double params, grads, buckets, hook_copies, gemm_scratch, span_rings;
    double total; /* bytes */
} memory_estimate;

void memory_run_estimate(const scenario *sc, const model *m, memory_estimate *out);

/* bench allreduce: one buffer per rank plus the communicator's working copy. */
double memory_bench_estimate(int ranks, int64_t bytes);

/* Bytes available now (MemAvailable).  Returns 0, or -1 when it cannot be read. */
int memory_available(double *bytes);

/* 0 when `need` fits in what is available (or availability cannot be read);
 * -1 with the explanation in err otherwise.  `what` names the consumer. */
int memory_check(double need, const char *what, const char *detail, char *err, size_t errlen);

#endif
