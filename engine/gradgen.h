/* gradgen.h — the gradient values backward produces on the cpu backend.
 *
 * Contract: a pure function of (rank, micro step, parameter, element), small integers
 * in [-32, 31], so sums over ranks and accumulation steps are exact in fp32 and a
 * test can recompute the average every rank must hold after a synchronised step.
 *
 * Ownership: nothing here allocates or takes a pointer.
 */
#ifndef DDPPROF_GRADGEN_H
#define DDPPROF_GRADGEN_H

#include <stdint.h>

static inline float gradgen_value(int rank, int micro_step, int param, int64_t elem)
{
    int64_t v = (int64_t)(rank + 1) * 7 + (int64_t)micro_step * 3 + (int64_t)param * 5 + elem % 11;
    return (float)(v % 64 - 32);
}

#endif
