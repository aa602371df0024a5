/* device.h — the executor interface the DDP engine runs on (one handle per rank).
 *
 * Contract: a rank owns two ordered streams, compute and comm, like CUDA gives real
 * DDP.  The host enqueues operations (dev_op) and returns at once; each stream runs its
 * operations strictly in order.  dev_record() returns an event that fires when every
 * operation enqueued on that stream so far has finished; dev_wait() makes a stream wait
 * for an event of another stream before running what comes after.  Collectives
 * (allreduce, broadcast) cross ranks: on rank r one starts when r's comm stream reaches
 * it and finishes only after every rank has reached it (a rank that arrives early waits
 * inside).  Each operation is recorded as a span by the executor.  After any failure
 * (a collective timeout, a dead peer, an abort) the rank's streams stop and
 * dev_synchronize() returns -1 with the reason in dev_error().  Buffers that operations
 * touch come from dev_alloc() (zeroed; device memory, which the host may not touch
 * directly: it copies in and out with dev_copy() and clears with dev_zero(), only while
 * the streams that use them are idle).  dev_alloc's memory is the caller's, given back
 * with dev_free().
 */
#ifndef DDPPROF_DEVICE_H
#define DDPPROF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler/span.h"

typedef enum { DEV_STREAM_COMPUTE = 0, DEV_STREAM_COMM, DEV_STREAM_COUNT } dev_stream;

typedef struct {
    int stream;
    uint64_t ticket; /* fires when the stream has completed this many operations */
} dev_event;

/* What an operation computes, beyond its modelled duration. */
typedef enum {
    WORK_NONE = 0,
    WORK_GRAD,       /* gradients of params [p0, p1) produced by backward */
    WORK_SCALE_COPY, /* dst[i] = src[i] * scale (src == dst: in place) */
    WORK_SGD,        /* every param -= lr * grad */
    WORK_ALLREDUCE,  /* SUM over ranks of buf (count elements of dtype), in place */
    WORK_BROADCAST,  /* int32 buf from rank u.coll.root to all */
    WORK_FAIL,       /* fails the stream: fault injection */
    /* Real training of the mlp preset (mlp_math.h); a backend that cannot run them
     * must refuse them at enqueue with a message saying so. */
    WORK_MLP_FORWARD,  /* layer u.mlp.layer's forward (the last layer: and the loss) */
    WORK_MLP_BACKWARD, /* layer u.mlp.layer's weight and bias gradients, input gradient */
} dev_work;

typedef enum { DEV_F32 = 0, DEV_F16, DEV_BF16, DEV_I32 } dev_dtype;
/* Bytes of one DEV_F32 element: every parameter, gradient and bucket (model.dtype = fp32),
 * the one place the 4 of "numel x 4 bytes" is written. */
#define FP32_BYTES 4

#define DEV_MAX_LAYER_PARAMS 8

/* A parameter's memory on the device. */
typedef struct {
    float *data;
    float *grad;
    int64_t numel;
} dev_param;

typedef struct dev_op {
    span_kind kind; /* recorded span kind */
    char name[SPAN_NAME];
    int iter;
    int layer;  /* -1 when not a layer op */
    int bucket; /* -1 when not a bucket op */
    int64_t seq; /* collective sequence number, -1 otherwise */
    int64_t bytes;
    uint64_t model_ns; /* modelled duration: the op lasts at least this long */
    /* compute = real: an m x n x k sgemm on scratch buffers before the work (m = 0: none) */
    struct { int64_t m, n, k; } gemm;
    /* > 1: after the real work, sleep until it has lasted `stretch` times as long
     * (a slower device running real work) */
    double stretch;
    dev_work work;
    /* Opens / closes the enclosing NVTX range of a phase ("rank 0 / backward")
     * around this op: set on a phase's first and last op. */
    bool phase_begin, phase_end;
    union {
        struct {
            int p0, np; /* params p0 .. p0+np-1, their grad buffers as of enqueue time */
            float *grad[DEV_MAX_LAYER_PARAMS];
            int64_t numel[DEV_MAX_LAYER_PARAMS];
            int micro_step;  /* which backward pass (seeds the values) */
            bool accumulate; /* += (gradient accumulation) instead of = */
            float scale;     /* loss-reduction factor */
        } grad;
        struct { float *dst; const float *src; int64_t n; float scale; } copy;
        struct { const dev_param *params; int n; float lr; } sgd;
        struct {
            void *buf;
            int64_t count;
            dev_dtype dtype;
            float prescale;
            int root; /* broadcast: the rank that sends */
        } coll;
        struct {
            struct mlp_step *step; /* the rank's activations (mlp_math.h) */
            int layer;
            const float *weight, *bias;
            float *grad_weight, *grad_bias; /* as of enqueue time */
            bool accumulate;
        } mlp;
    } u;
} dev_op;

typedef struct device device;

typedef struct device_ops {
    int (*enqueue)(device *d, dev_stream s, const dev_op *op);
    dev_event (*record)(device *d, dev_stream s);
    int (*wait)(device *d, dev_stream s, dev_event ev);
    int (*synchronize)(device *d, dev_stream s);
    int64_t (*now_ns)(device *d);
    const char *(*error)(device *d);
    /* Zeroed memory that this device's operations read and write (cuda: cudaMalloc).
     * NULL: the heap (calloc / free). */
    void *(*alloc)(device *d, size_t bytes);
    void (*release)(device *d, void *p);
    /* Copies `bytes` between host memory and alloc's memory, either way or within it,
     * and clears alloc's memory; both return once done (0) or -1 with dev_error() set.
     * The host calls them only while the streams that use the memory are idle.  NULL:
     * memcpy / memset (the heap is the device's memory). */
    int (*copy)(device *d, void *dst, const void *src, size_t bytes);
    int (*zero)(device *d, void *p, size_t bytes);
} device_ops;

struct device {
    const device_ops *ops;
    int rank;
    int world_size;
    /* The executor only models time (virtual devices): ops carry no buffers, so the
     * engine allocates no parameter, gradient or bucket memory for them. */
    bool no_buffers;
    /* The executor records no name for a compute op or a copy (SPAN_FORWARD, _BACKWARD,
     * _COPY_IN, _COPY_OUT; a simulator in phase detail): callers may leave those ops'
     * names empty, sparing a copy per op.  Not for an op that fails (WORK_FAIL): its
     * error names it. */
    bool drops_op_names;
};

/* Starts an op as `(dev_op){.kind, .work, .iter, .layer, .bucket, .seq, .bytes}` would,
 * the name empty, but leaves the union alone: the caller sets the member its work reads,
 * and no executor reads another.  For the ops made by the thousand per rank and step
 * (the reducer's copies in and out), where zeroing all of dev_op's 328 bytes was about
 * 3 % of a large simulation's time. */
static inline void dev_op_start(dev_op *op, span_kind kind, dev_work work, int iter, int layer, int bucket,
                                int64_t seq, int64_t bytes)
{
    op->kind = kind;
    op->name[0] = '\0';
    op->iter = iter;
    op->layer = layer;
    op->bucket = bucket;
    op->seq = seq;
    op->bytes = bytes;
    op->model_ns = 0;
    op->gemm.m = op->gemm.n = op->gemm.k = 0;
    op->stretch = 0;
    op->work = work;
    op->phase_begin = op->phase_end = false;
}

static inline int dev_enqueue(device *d, dev_stream s, const dev_op *op) { return d->ops->enqueue(d, s, op); }
static inline dev_event dev_record(device *d, dev_stream s) { return d->ops->record(d, s); }
static inline int dev_wait(device *d, dev_stream s, dev_event ev) { return d->ops->wait(d, s, ev); }
static inline int dev_synchronize(device *d, dev_stream s) { return d->ops->synchronize(d, s); }
static inline int64_t dev_now_ns(device *d) { return d->ops->now_ns(d); }
static inline const char *dev_error(device *d) { return d->ops->error(d); }
void *dev_alloc(device *d, size_t bytes);
void dev_free(device *d, void *p);
/* Host <-> device copies and clearing (device_ops.copy / .zero): 0, or -1 with
 * dev_error() saying why. */
int dev_copy(device *d, void *dst, const void *src, size_t bytes);
int dev_zero(device *d, void *p, size_t bytes);

#endif
