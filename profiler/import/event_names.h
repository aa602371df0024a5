/* event_names.h — what the names in a PyTorch or Nsight trace say about DDP: which host
 * op is a phase of the training step, which kernel is NCCL's and which collective it
 * runs, which host op is gloo's collective.
 *
 * Contract: pure functions of a name (no state).  Sources: PyTorch 1.13-2.x's
 * record_function names (DistributedDataParallel.forward, autograd's evaluate_function,
 * reducer::mul_out, copy_bucket_to_grad, Optimizer.step#...), NCCL's kernel names of
 * both schemes (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_AllReduce_Sum_f32_RING_LL,
 * any case), record_param_comms' "Collective name" values, ProcessGroupGloo's
 * "gloo:all_reduce"; see reference/import.md §1.6-1.8.
 *
 * Ownership: nothing here allocates or keeps a pointer; every name is borrowed for the
 * call.
 */
#ifndef DDPPROF_EVENT_NAMES_H
#define DDPPROF_EVENT_NAMES_H

#include <stdbool.h>

#include "profiler/span.h"

/* The phase a host op is (SPAN_FORWARD, SPAN_BACKWARD, SPAN_COPY_IN, SPAN_COPY_OUT,
 * SPAN_OPTIMIZER), or -1 for any other op. */
int name_phase(const char *name);
/* ProfilerStep#N: true with *n. */
bool name_profiler_step(const char *name, long long *n);
/* A communication kernel: its name starts with "nccl" (any case) or holds "ncclKernel". */
bool name_is_nccl_kernel(const char *name);
/* The collective of an NCCL kernel name (the token after ncclKernel_/ncclDevKernel_);
 * SPAN_COLLECTIVE when the name does not say (ncclDevKernel_Generic). */
span_kind name_nccl_kind(const char *name);
/* The collective of a "Collective name" arg ("allreduce", "all_gather", "_allgather_base",
 * "send", ...), or -1 when it names none. */
int name_coll_kind(const char *coll);
/* gloo:<op> host ops, the communication of a CPU-only job: true with its kind. */
bool name_gloo(const char *name, span_kind *kind);
/* record_param_comms and c10d::<collective>_: the host ops that launch a collective. */
bool name_is_collective_launch(const char *name);

/* Holistic Trace Analysis's classes of a GPU event's name (hta/utils/utils.py
 * get_kernel_type): COMM matches (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*) (case as
 * written), MEMORY ^Memcpy|^Memset|^dma, else COMPUTATION unless it matches one of
 * the names that are neither (Sync, Stream Wait Event, cuda*LaunchKernel, ...): OTHER. */
typedef enum { HTA_COMPUTATION = 0, HTA_COMMUNICATION, HTA_MEMORY, HTA_OTHER } hta_class;
hta_class name_hta_class(const char *name);

#endif
