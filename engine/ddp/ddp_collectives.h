/* ddp_collectives.h — the collectives PyTorch DDP (1.13) issues besides the gradient
 * buckets, so that the timeline holds every one of them with PyTorch's bytes.
 *
 * Contract (each on the comm stream, the compute stream waiting for it, numbered in the
 * reducer's collective sequence; the span name ends with the dtype PyTorch sends):
 *  - construction (ddp_construction, from reducer_init): _verify_param_shape_across_
 *    processes, an allgather of the parameter count (int64, 8 bytes) and a broadcast of
 *    every parameter's sizes and strides (int64, 2 x dims each); then _sync_module_states,
 *    rank 0's parameters and buffers broadcast in 250 MiB chunks per dtype (float32:
 *    parameters then running statistics; int64: num_batches_tracked);
 *  - before each forward that follows a synchronised one (and the first), with
 *    ddp.broadcast_buffers and a model that has buffers: the buffers from rank 0
 *    (float32, then int64);
 *  - the rebuild (ddp_sync_bucket_indices): rank 0's bucket order with the bucket count
 *    appended ((nparams + 1) x int32), then the bucket sizes (nbuckets x int32);
 *  - the unused-parameter bitmap (ddp_used_map): one int32 per parameter, allreduced.
 * The allgather is carried out as an int32 allreduce of one slot per rank (what an
 * allgather of one value is), recorded with PyTorch's 8 bytes.
 */
#ifndef DDPPROF_DDP_COLLECTIVES_H
#define DDPPROF_DDP_COLLECTIVES_H

#include <stddef.h>

#include "engine/ddp/reducer_state.h"

/* PyTorch's broadcast_bucket_size for module states and buffers. */
#define DDP_BROADCAST_CHUNK_BYTES ((int64_t)250 * 1024 * 1024)

int ddp_construction(reducer *r, char *err, size_t errlen);
int ddp_sync_buffers(reducer *r, char *err, size_t errlen);
/* Fills *out with the rebuilt assignment every rank adopts (rank 0's).  With the world's
 * shared tables (r->shared), *layout is set to the shared layout when it was planned from
 * the same order, and *out is then a shallow copy of its assignment (not to be freed);
 * else *layout is NULL and *out is this rank's own. */
int ddp_sync_bucket_indices(reducer *r, bucket_assignment *out, const bucket_layout **layout, char *err,
                            size_t errlen);
int ddp_used_map(reducer *r, char *err, size_t errlen);
/* join's post-hook: agree on the authoritative rank, then its parameters (the data) and
 * buffers to every rank (_sync_final_model). */
int ddp_sync_final_model(reducer *r, int root, char *err, size_t errlen);

/* Bytes of the largest collective above for model m (for the processes' staging area). */
int64_t ddp_collectives_max_bytes(const model *m);

#endif
