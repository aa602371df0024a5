/* cuda_kernels.h — the cuda backend's own kernels (cuda_kernels.cu, built by nvcc), as
 * C functions that launch them on a stream.
 *
 * Contract: each returns the launch's cudaError_t as an int (0: launched); errors of
 * the kernel itself surface at the stream's next synchronisation.  Sizes are elements.
 * grad: g[i] = (accumulate ? g[i] : 0) + scale * ((base + i % 11) % 64 - 32), the values of
 * gradgen.h with base = cuda_grad_base().  scale_copy: dst[i] = src[i] * scale.  sgd:
 * w[i] -= lr * g[i].  stamp: one thread writes the GPU's global timer (ns) to *stamp;
 * spin_until: one thread that returns once that timer reads *stamp + ns or later (so
 * stamp, work, spin_until on one stream lasts at least ns).  to_half / from_half: fp32 (× prescale) to fp16 or bf16
 * and back, rounding to nearest even.  fill: the scratch pattern 0.001 · (i % 97 + 1).
 */
#ifndef DDPPROF_CUDA_KERNELS_H
#define DDPPROF_CUDA_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

int cuda_k_grad(cudaStream_t s, float *g, int64_t n, int64_t base, float scale, bool accumulate);
int cuda_k_scale_copy(cudaStream_t s, float *dst, const float *src, int64_t n, float scale);
int cuda_k_sgd(cudaStream_t s, float *w, const float *g, int64_t n, float lr);
int cuda_k_stamp(cudaStream_t s, uint64_t *stamp);
int cuda_k_spin_until(cudaStream_t s, const uint64_t *stamp, uint64_t ns);
int cuda_k_to_half(cudaStream_t s, void *dst, const float *src, int64_t n, float prescale, bool bf16);
int cuda_k_from_half(cudaStream_t s, float *dst, const void *src, int64_t n, bool bf16);
int cuda_k_fill(cudaStream_t s, float *p, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
