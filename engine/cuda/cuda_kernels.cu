/* cuda_kernels.cu — the element-wise and timing kernels of the cuda backend (see
 * cuda_kernels.h).  Grid-stride loops over 64-bit indices: a bucket can exceed 2^31
 * elements. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "engine/cuda/cuda_kernels.h"

namespace {

constexpr int kThreads = 256;

/* Enough blocks to fill any current GPU, never more than the work needs. */
unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b > 65535)
        b = 65535;
    return b < 1 ? 1u : (unsigned)b;
}

__device__ __forceinline__ int64_t first_index() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t stride() { return (int64_t)gridDim.x * blockDim.x; }

__global__ void grad_kernel(float *g, int64_t n, int64_t base, float scale, bool accumulate)
{
    for (int64_t i = first_index(); i < n; i += stride()) {
        float v = scale * (float)((base + i % 11) % 64 - 32);
        g[i] = accumulate ? g[i] + v : v;
    }
}

__global__ void scale_copy_kernel(float *dst, const float *src, int64_t n, float scale)
{
    for (int64_t i = first_index(); i < n; i += stride())
        dst[i] = src[i] * scale;
}

__global__ void sgd_kernel(float *w, const float *g, int64_t n, float lr)
{
    for (int64_t i = first_index(); i < n; i += stride())
        w[i] = w[i] - lr * g[i];
}

__device__ __forceinline__ uint64_t global_timer_ns()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void stamp_kernel(uint64_t *stamp) { *stamp = global_timer_ns(); }

__global__ void spin_until_kernel(const uint64_t *stamp, uint64_t ns)
{
    uint64_t deadline = *stamp + ns;
    while (global_timer_ns() < deadline)
        __nanosleep(256); /* yields issue slots to whatever shares the SM */
}

__global__ void to_half_kernel(__half *dst, const float *src, int64_t n, float prescale)
{
    for (int64_t i = first_index(); i < n; i += stride())
        dst[i] = __float2half_rn(src[i] * prescale);
}

__global__ void to_bf16_kernel(__nv_bfloat16 *dst, const float *src, int64_t n, float prescale)
{
    for (int64_t i = first_index(); i < n; i += stride())
        dst[i] = __float2bfloat16_rn(src[i] * prescale);
}

__global__ void from_half_kernel(float *dst, const __half *src, int64_t n)
{
    for (int64_t i = first_index(); i < n; i += stride())
        dst[i] = __half2float(src[i]);
}

__global__ void from_bf16_kernel(float *dst, const __nv_bfloat16 *src, int64_t n)
{
    for (int64_t i = first_index(); i < n; i += stride())
        dst[i] = __bfloat162float(src[i]);
}

__global__ void fill_kernel(float *p, int64_t n)
{
    for (int64_t i = first_index(); i < n; i += stride())
        p[i] = 0.001f * (float)(i % 97 + 1);
}

int launched() { return (int)cudaGetLastError(); }

} // namespace

extern "C" int cuda_k_grad(cudaStream_t s, float *g, int64_t n, int64_t base, float scale, bool accumulate)
{
    if (n <= 0)
        return 0;
    grad_kernel<<<blocks_for(n), kThreads, 0, s>>>(g, n, base, scale, accumulate);
    return launched();
}

extern "C" int cuda_k_scale_copy(cudaStream_t s, float *dst, const float *src, int64_t n, float scale)
{
    if (n <= 0)
        return 0;
    scale_copy_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, src, n, scale);
    return launched();
}

extern "C" int cuda_k_sgd(cudaStream_t s, float *w, const float *g, int64_t n, float lr)
{
    if (n <= 0)
        return 0;
    sgd_kernel<<<blocks_for(n), kThreads, 0, s>>>(w, g, n, lr);
    return launched();
}

extern "C" int cuda_k_stamp(cudaStream_t s, uint64_t *stamp)
{
    stamp_kernel<<<1, 1, 0, s>>>(stamp);
    return launched();
}

extern "C" int cuda_k_spin_until(cudaStream_t s, const uint64_t *stamp, uint64_t ns)
{
    spin_until_kernel<<<1, 1, 0, s>>>(stamp, ns);
    return launched();
}

extern "C" int cuda_k_to_half(cudaStream_t s, void *dst, const float *src, int64_t n, float prescale, bool bf16)
{
    if (n <= 0)
        return 0;
    if (bf16)
        to_bf16_kernel<<<blocks_for(n), kThreads, 0, s>>>((__nv_bfloat16 *)dst, src, n, prescale);
    else
        to_half_kernel<<<blocks_for(n), kThreads, 0, s>>>((__half *)dst, src, n, prescale);
    return launched();
}

extern "C" int cuda_k_from_half(cudaStream_t s, float *dst, const void *src, int64_t n, bool bf16)
{
    if (n <= 0)
        return 0;
    if (bf16)
        from_bf16_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, (const __nv_bfloat16 *)src, n);
    else
        from_half_kernel<<<blocks_for(n), kThreads, 0, s>>>(dst, (const __half *)src, n);
    return launched();
}

extern "C" int cuda_k_fill(cudaStream_t s, float *p, int64_t n)
{
    if (n <= 0)
        return 0;
    fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n);
    return launched();
}
