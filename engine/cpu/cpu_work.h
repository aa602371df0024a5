/* cpu_work.h — the real work of compute-stream operations on the CPU.
 *
 * Contract: cpu_work_run() performs op's work (BLAS GEMM, gradient production, scaled
 * copies, the SGD update) on the calling thread; collectives are not handled here.
 * A cpu_scratch holds the GEMM operands of one stream and grows on demand.
 */
#ifndef DDPPROF_CPU_WORK_H
#define DDPPROF_CPU_WORK_H

#include "engine/device.h"

typedef struct {
    float *a, *b, *c;
    size_t a_len, b_len, c_len;
} cpu_scratch;

/* Asked between slices of long work (a GEMM is split into slices of bounded length),
 * so an aborted run stops within a fraction of a second.  stop may be NULL. */
typedef struct {
    bool (*stop)(void *user);
    void *user;
} cpu_work_cancel;

/* Returns 0, or -1 with a message in err (allocation failure, cancelled: err empty). */
int cpu_work_run(const dev_op *op, int rank, cpu_scratch *scratch, const cpu_work_cancel *cancel, char *err,
                 size_t errlen);
void cpu_scratch_free(cpu_scratch *s);

#endif
