/* cuda_launch.c — one op's GPU work on its stream (cuda_plan.h says what work): cuBLAS
 * GEMMs on device scratch, the backend's kernels, NCCL collectives, between the op's
 * two timing events.  Every call's status is checked and a failure names the call. */
#include "engine/cuda/cuda_device_internal.h"

#include <limits.h>
#include <stdio.h>

#include "engine/cuda/cuda_kernels.h"

#define TRY_CUDA(what, call)                                                                                  \
    do {                                                                                                      \
        cudaError_t rc_ = (call);                                                                             \
        if (rc_ != cudaSuccess) {                                                                             \
            snprintf(err, errlen, "%s: %s (%s)", what, cudaGetErrorString(rc_), op->name);                    \
            return -1;                                                                                        \
        }                                                                                                     \
    } while (0)

#define TRY_KERNEL(what, call) TRY_CUDA(what, (cudaError_t)(call))

#define TRY_NCCL(what, call)                                                                                  \
    do {                                                                                                      \
        ncclResult_t rc_ = (call);                                                                            \
        if (rc_ != ncclSuccess) {                                                                             \
            snprintf(err, errlen, "%s: %s (%s, seq %lld)", what, ncclGetErrorString(rc_), op->name,           \
                     (long long)op->seq);                                                                     \
            return -1;                                                                                        \
        }                                                                                                     \
    } while (0)

/* Grows a scratch buffer; cudaFree and cudaMalloc synchronise the device, so work in
 * flight never sees its buffer go.  New scratch gets the fill pattern (NaN or denormal
 * garbage would change the GEMM's speed). */
static int grow(cudaStream_t s, float **p, size_t *len, size_t want, char *err, size_t errlen)
{
    if (*len >= want)
        return 0;
    cudaError_t rc = cudaFree(*p);
    *p = NULL;
    *len = 0;
    if (rc == cudaSuccess)
        rc = cudaMalloc((void **)p, want * sizeof(float));
    if (rc != cudaSuccess) {
        snprintf(err, errlen, "cudaMalloc of %zu bytes of GEMM scratch: %s", want * sizeof(float),
                 cudaGetErrorString(rc));
        *p = NULL;
        return -1;
    }
    int krc = cuda_k_fill(s, *p, (int64_t)want);
    if (krc != 0) {
        snprintf(err, errlen, "filling GEMM scratch: %s", cudaGetErrorString((cudaError_t)krc));
        return -1;
    }
    *len = want;
    return 0;
}

static int sgemm_rows(cuda_device *d, int64_t m, int64_t n, int64_t k, const dev_op *op, char *err, size_t errlen)
{
    const float one = 1.0f, zero = 0.0f;
    /* Row-major C (m x n) = A (m x k) B (k x n) is column-major C^T = B^T A^T. */
    cublasStatus_t bs = d->blas_lib.sgemm(d->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, d->gemm_b,
                                    (int)n, d->gemm_a, (int)k, &zero, d->gemm_c, (int)n);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasSgemm %lldx%lldx%lld: %s (%s)", (long long)m, (long long)n, (long long)k,
                 cuda_blas_status(&d->blas_lib, bs), op->name);
        return -1;
    }
    return 0;
}

static int run_gemms(cuda_device *d, cudaStream_t s, const dev_op *op, const cuda_op_plan *p, char *err,
                     size_t errlen)
{
    int64_t m = p->gemm_m, n = p->gemm_n, k = p->gemm_k;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
        snprintf(err, errlen, "a %lldx%lldx%lld GEMM exceeds cuBLAS's int dimensions (%s)", (long long)m,
                 (long long)n, (long long)k, op->name);
        return -1;
    }
    if (grow(s, &d->gemm_a, &d->gemm_a_len, (size_t)(m * k), err, errlen) != 0 ||
        grow(s, &d->gemm_b, &d->gemm_b_len, (size_t)(k * n), err, errlen) != 0 ||
        grow(s, &d->gemm_c, &d->gemm_c_len, (size_t)(m * n), err, errlen) != 0)
        return -1;
    for (int r = 0; r < p->gemm_repeats; r++)
        if (sgemm_rows(d, m, n, k, op, err, errlen) != 0)
            return -1;
    if (p->gemm_tail_m > 0 && sgemm_rows(d, p->gemm_tail_m, n, k, op, err, errlen) != 0)
        return -1;
    return 0;
}

static int run_compute(cuda_device *d, cudaStream_t s, const dev_op *op, const cuda_op_plan *p, char *err,
                       size_t errlen)
{
    /* model_ns is a floor on the whole op (device.h): stamp, work, spin to the floor. */
    uint64_t *stamp = d->stamps + DEV_STREAM_COMPUTE;
    if (p->spin_ns > 0)
        TRY_KERNEL("stamp kernel launch", cuda_k_stamp(s, stamp));
    if (p->gemm_m > 0 && run_gemms(d, s, op, p, err, errlen) != 0)
        return -1;
    for (int j = 0; j < p->grad_kernels; j++)
        TRY_KERNEL("gradient kernel launch",
                   cuda_k_grad(s, op->u.grad.grad[j], op->u.grad.numel[j],
                               cuda_grad_base(d->base.rank, op->u.grad.micro_step, op->u.grad.p0 + j),
                               op->u.grad.scale, op->u.grad.accumulate));
    if (p->scale_copy)
        TRY_KERNEL("scale-copy kernel launch",
                   cuda_k_scale_copy(s, op->u.copy.dst, op->u.copy.src, op->u.copy.n, op->u.copy.scale));
    for (int j = 0; j < p->sgd_kernels; j++) {
        const dev_param *pr = &op->u.sgd.params[j];
        TRY_KERNEL("SGD kernel launch", cuda_k_sgd(s, pr->data, pr->grad, pr->numel, op->u.sgd.lr));
    }
    if (p->spin_ns > 0)
        TRY_KERNEL("spin kernel launch", cuda_k_spin_until(s, stamp, p->spin_ns));
    return 0;
}

static ncclDataType_t nccl_type(cuda_wire_type w)
{
    switch (w) {
    case CUDA_WIRE_F16: return ncclFloat16;
    case CUDA_WIRE_BF16: return ncclBfloat16;
    case CUDA_WIRE_I32: return ncclInt32;
    case CUDA_WIRE_F32: break;
    }
    return ncclFloat32;
}

static int run_collective(cuda_device *d, cudaStream_t s, const dev_op *op, const cuda_op_plan *p, char *err,
                          size_t errlen)
{
    void *buf = op->u.coll.buf;
    /* The communicator is gone once aborted (the device has failed by then). */
    if (!d->comm_ok || cuda_device_failed(d) || atomic_load(&d->comm_aborted)) {
        snprintf(err, errlen, "%s (seq %lld): the communicator was aborted", op->name, (long long)op->seq);
        return -1;
    }
    if (p->coll == CUDA_COLL_BROADCAST) {
        TRY_NCCL("ncclBroadcast", ncclBroadcast(buf, buf, (size_t)p->count, ncclInt32, 0, d->comm, s));
        return 0;
    }
    if (!p->convert) {
        TRY_NCCL("ncclAllReduce",
                 ncclAllReduce(buf, buf, (size_t)p->count, nccl_type(p->wire), ncclSum, d->comm, s));
        return 0;
    }
    bool bf16 = p->wire == CUDA_WIRE_BF16;
    size_t want = (size_t)p->count * 2;
    if (d->half_bytes < want) {
        TRY_CUDA("cudaFree(half copy)", cudaFree(d->half));
        d->half = NULL;
        d->half_bytes = 0;
        TRY_CUDA("cudaMalloc(half copy)", cudaMalloc(&d->half, want));
        d->half_bytes = want;
    }
    TRY_KERNEL("fp32-to-half kernel launch", cuda_k_to_half(s, d->half, buf, p->count, p->prescale, bf16));
    TRY_NCCL("ncclAllReduce",
             ncclAllReduce(d->half, d->half, (size_t)p->count, nccl_type(p->wire), ncclSum, d->comm, s));
    TRY_KERNEL("half-to-fp32 kernel launch", cuda_k_from_half(s, buf, d->half, p->count, bf16));
    return 0;
}

int cuda_launch_op(cuda_device *d, dev_stream s, const dev_op *op, const cuda_op_plan *plan, char *err,
                   size_t errlen)
{
    cuda_stream *st = &d->st[s];
    cuda_slot *slot = &st->slots[atomic_load(&st->enqueued) % CUDA_SLOTS];
    TRY_CUDA("cudaEventRecord(start)", cudaEventRecord(slot->start, st->s));
    int rc = 0;
    if (plan->coll != CUDA_COLL_NONE)
        rc = run_collective(d, st->s, op, plan, err, errlen);
    else if (!plan->fail)
        rc = run_compute(d, st->s, op, plan, err, errlen);
    if (rc != 0)
        return -1;
    TRY_CUDA("cudaEventRecord(end)", cudaEventRecord(slot->end, st->s));
    return 0;
}

int cuda_anchor_refresh(cuda_device *d, bool force, char *err, size_t errlen)
{
    const dev_op named = {.name = "clock anchor"};
    const dev_op *op = &named;
    int64_t now = cuda_host_clock_ns();
    if (!force && now - d->anchors[d->anchor_cur].host_ns < CUDA_ANCHOR_NS)
        return 0;
    int next = (d->anchor_cur + 1) % CUDA_ANCHORS;
    cudaEvent_t ev = d->anchors[next].ev;
    /* A GPU time-sliced with other processes may answer late: up to three tries for a
     * tight reading.  Re-recording moves the event, so the last reading is the one. */
    int64_t best_mid = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t before = cuda_host_clock_ns();
        TRY_CUDA("cudaEventRecord(anchor)", cudaEventRecord(ev, d->clock_stream));
        TRY_CUDA("cudaEventSynchronize(anchor)", cudaEventSynchronize(ev));
        int64_t after = cuda_host_clock_ns();
        best_mid = before + (after - before) / 2;
        if (after - before < 100000)
            break;
    }
    pthread_mutex_lock(&d->mu);
    d->anchors[next].host_ns = best_mid;
    d->anchors[next].gen = ++d->anchor_gen;
    d->anchor_cur = next;
    pthread_mutex_unlock(&d->mu);
    return 0;
}
