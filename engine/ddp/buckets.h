/* buckets.h — DDP's gradient bucket assignment (compute_bucket_assignment_by_size).
 *
 * Contract: given tensors (byte size and dtype key each) in the order to walk them and a
 * list of size limits, returns buckets exactly as PyTorch's reducer does: one open bucket
 * per dtype; a tensor is added, then the bucket is closed once its size reaches the
 * current limit (so a bucket overshoots by up to one tensor; tensors are never split);
 * each dtype walks the limits list on its own and the last limit repeats; leftover open
 * buckets are emitted at the end.  Without an explicit order (construction) the buckets
 * are sorted by their smallest tensor index; with one (rebuild, gradient-ready order)
 * they keep the order in which they were closed.
 */
#ifndef DDPPROF_BUCKETS_H
#define DDPPROF_BUCKETS_H

#include <stdint.h>

typedef struct {
    int nparams;
    int *params; /* tensor indices, in the order they were added */
    int64_t nbytes;
    int64_t size_limit;
} bucket_def;

typedef struct {
    int nbuckets;
    bucket_def *buckets;
} bucket_assignment;

/* tensor_bytes[i], dtype_key[i] (NULL = all one dtype) describe tensor i.  `order`
 * lists the tensor indices to walk (NULL = 0..n-1, and buckets get sorted).
 * Returns 0, or -1 on allocation failure or bad arguments. */
int bucket_assign(int n, const int64_t *tensor_bytes, const int *dtype_key, const int *order,
                  const int64_t *limits, int nlimits, bucket_assignment *out);

/* Reverses the bucket list in place (DDP reverses the construction assignment so that
 * bucket 0 holds the last-registered parameters). */
void bucket_reverse(bucket_assignment *a);

int bucket_assignment_copy(const bucket_assignment *src, bucket_assignment *dst);
void bucket_assignment_free(bucket_assignment *a);

#endif
