/* cuda_blas.h — cuBLAS, loaded when a rank's device is made rather than linked.
 *
 * Why: libcublas pulls in libcublasLt (half a gigabyte), and linking it made every
 * ddpprof process, cpu runs and `--version` included, spend seconds and 220 MB mapping
 * it at start-up.  Only a cuda rank needs it, so that rank loads it: cuda_blas_load()
 * dlopens libcublas.so.<major of the headers> (the executable's run path finds it in
 * $CUDA_HOME/lib64, the fallback is that directory by name) and resolves the four calls
 * the backend makes.  0, or -1 with err naming what is missing.  cuda_blas_unload()
 * drops the table's reference (safe on a table that failed to load); the library itself
 * stays loaded for the life of the process (RTLD_NODELETE).
 *
 * Ownership: a cuda_blas is its holder's (each cuda device has one): cuda_blas_load()
 * fills it and cuda_blas_unload() releases it; a cuBLAS handle made through it is the
 * caller's to destroy first.  cuda_blas_status() returns constant text that lives as
 * long as the process.
 */
#ifndef DDPPROF_CUDA_BLAS_H
#define DDPPROF_CUDA_BLAS_H

#include <stddef.h>

#include <cublas_api.h>

typedef struct {
    void *lib;
    cublasStatus_t (*create)(cublasHandle_t *handle);
    cublasStatus_t (*destroy)(cublasHandle_t handle);
    cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*sgemm)(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const float *alpha, const float *a, int lda, const float *b, int ldb,
                            const float *beta, float *c, int ldc);
    const char *(*status_string)(cublasStatus_t status);
} cuda_blas;

int cuda_blas_load(cuda_blas *b, char *err, size_t errlen);
void cuda_blas_unload(cuda_blas *b);
/* The status's name, whether or not the library loaded. */
const char *cuda_blas_status(const cuda_blas *b, cublasStatus_t status);

#endif
