/* hta_figures.h — one rank's figures as Holistic Trace Analysis computes them, from
 * the device ops it keeps, in its whole microseconds (hta/analyzers/breakdown_analysis.py
 * get_temporal_breakdown, communication_analysis.py get_comm_comp_overlap,
 * hta/utils/utils.py merge_kernel_intervals; reference/import.md §2).
 *
 * Contract: the caller gives the ops HTA would keep (its step selection is the caller's:
 * it depends on where the ops come from), each already rounded as HTA rounds float µs
 * (start up, end down) and classed (computation, communication, memory, other).
 * hta_figures_compute merges each class as HTA does (sorted by start; a new group
 * where a start is after every earlier end) and fills the store's row: kernel = last
 * merged end - first start; idle = kernel - merged length of all; compute = merged
 * length of computation; non_compute = kernel - compute - idle; comm = merged length of
 * communication; comm_overlap = time where both run (HTA's +1/+2 sweep).  It reorders
 * the array.  0 with h filled, 1 when there is no op, -1 when out of memory.
 */
#ifndef DDPPROF_HTA_FIGURES_H
#define DDPPROF_HTA_FIGURES_H

#include <stddef.h>
#include <stdint.h>

/* One rank's figures as Holistic Trace Analysis computes them (hta_stat; whole µs):
 * its temporal breakdown (kernel_us from the first device op's start to the last's end,
 * idle_us not covered by any, compute_us covered by computation kernels, the rest
 * non_compute_us) and communication against computation (comm_us of communication,
 * comm_overlap_us of it under computation).  `steps` says which device ops count. */
typedef struct {
    int rank;
    const char *steps;
    int64_t kernel_us, idle_us, compute_us, non_compute_us, comm_us, comm_overlap_us;
} store_hta_stat;

enum { HTA_OP_COMPUTATION = 0, HTA_OP_COMMUNICATION, HTA_OP_MEMORY, HTA_OP_OTHER };

typedef struct {
    int64_t ts, end; /* µs */
    int cls;         /* HTA_OP_* */
} hta_op;

/* Whole µs as HTA rounds a float µs time: a start up, an end down. */
static inline int64_t hta_us_up(int64_t ns)
{
    return ns >= 0 ? (ns + 999) / 1000 : -((-ns) / 1000);
}
static inline int64_t hta_us_down(int64_t ns)
{
    return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

int hta_figures_compute(hta_op *ops, size_t n, store_hta_stat *h);

#endif
