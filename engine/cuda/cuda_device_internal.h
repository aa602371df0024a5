/* cuda_device_internal.h — the cuda device's state, shared by its files only:
 * cuda_device.c (the host clock, failing the device: what the others lean on),
 * cuda_device_ops.c (device.h entry points, memory), cuda_device_life.c (creation,
 * abort, destroy), cuda_launch.c (an op's GPU work), cuda_poller.c (retiring ops into
 * spans, the watchdog).
 *
 * Ownership: a cuda_device owns what it holds: the op slots (malloc), its CUDA streams
 * and events, the GEMM scratch, the half-precision copy and the stamps (cudaMalloc; the
 * scratch and the copy grown by cuda_launch.c), the cuBLAS table and handle, the NCCL
 * communicator, the CUPTI collector and the poller thread.  cuda_device_create() makes
 * them and cuda_device_destroy() (cuda_device_life.c) releases them, also after a
 * create that failed half-way.  cfg.rec, cfg.nvtx, cfg.owner and the span rings
 * (st[].ring, host_ring) are borrowed: the recorder and the backend's world must
 * outlive the device.  dev_alloc() memory is the caller's (device.h). */
#ifndef DDPPROF_CUDA_DEVICE_INTERNAL_H
#define DDPPROF_CUDA_DEVICE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "engine/cuda/cuda_blas.h"
#include "engine/cuda/cuda_device.h"
#include "engine/cuda/cuda_plan.h"
#include "engine/cuda/cupti_collect.h"

/* Ops in flight per stream before enqueue waits for the oldest to complete. */
#define CUDA_SLOTS 4096
/* Clock anchors: a new one at most every CUDA_ANCHOR_NS, reused after CUDA_ANCHORS. */
#define CUDA_ANCHORS 256
#define CUDA_ANCHOR_NS 50000000

typedef struct {
    span meta;               /* the op's span, times filled at retirement */
    cudaEvent_t start, end;  /* timing events around its work */
    bool coll, fail;
    /* CUPTI sees no GPU work of this op (cuda_plan_runs_no_kernel): its span comes from
     * its CUDA events even when CUPTI gives the other ops' spans. */
    bool events_span;
    char fail_msg[SPAN_NAME + 64];
    int anchor;              /* the clock anchor current when it was enqueued */
    uint64_t anchor_gen;
    bool start_seen;         /* watchdog: the stream has reached it */
    int64_t start_seen_ns;
} cuda_slot;

typedef struct {
    cudaStream_t s;
    cuda_slot *slots; /* CUDA_SLOTS, op #t (1-based) in slots[(t - 1) % CUDA_SLOTS] */
    _Atomic uint64_t enqueued; /* written by the host thread only, after the slot */
    uint64_t retired;  /* written by the poller under mu */
    span_ring *ring;
} cuda_stream;

typedef struct {
    cudaEvent_t ev;
    int64_t host_ns;
    uint64_t gen;
} cuda_anchor;

typedef struct cuda_device {
    device base;
    cuda_device_config cfg;
    int gpu;
    cuda_placement place;
    cuda_stream st[DEV_STREAM_COUNT];
    cudaStream_t clock_stream;
    cudaStream_t xfer_stream; /* the host's copies in and out of device memory */
    cuda_blas blas_lib; /* cuBLAS, loaded by this device */
    cublasHandle_t blas;
    bool blas_ok;
    ncclComm_t comm;
    bool comm_ok;
    atomic_bool comm_aborted;
    /* compute scratch (GEMM operands) and the comm stream's half-precision copy */
    float *gemm_a, *gemm_b, *gemm_c;
    size_t gemm_a_len, gemm_b_len, gemm_c_len;
    void *half;
    size_t half_bytes;
    uint64_t *stamps; /* device memory: one GPU-timer stamp per stream (spin floors) */

    cuda_anchor anchors[CUDA_ANCHORS];
    int anchor_cur;
    uint64_t anchor_gen;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool failed;
    char error[512];
    atomic_bool abort_requested;
    char abort_why[512]; /* set before abort_requested */
    bool stop;
    int waiters; /* host threads waiting for the poller (synchronize, a full slot ring) */
    pthread_t poller;
    bool poller_running;

    cupti_collect *cupti; /* NULL: spans from CUDA events */
    span_ring *host_ring;
} cuda_device;

extern const device_ops cuda_device_ops;

/* Fails the device with `msg` (first reason wins), wakes every waiter and asks the
 * poller to abort the communicator.  Takes mu. */
void cuda_device_fail(cuda_device *d, const char *msg);
bool cuda_device_failed(cuda_device *d);
/* The op's GPU work on its stream, between its timing events.  0, or -1 with err. */
int cuda_launch_op(cuda_device *d, dev_stream s, const dev_op *op, const cuda_op_plan *plan, char *err,
                   size_t errlen);
/* A fresh clock anchor when the current one is older than CUDA_ANCHOR_NS (host thread). */
int cuda_anchor_refresh(cuda_device *d, bool force, char *err, size_t errlen);
/* The poller thread's body. */
void *cuda_poller_main(void *arg);
/* Aborts the communicator once (any thread). */
void cuda_comm_abort_once(cuda_device *d);

#endif
