/* cuda_blas.c — cuBLAS by dlopen (see cuda_blas.h). */
#include "engine/cuda/cuda_blas.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

#ifndef DDPPROF_CUDA_LIB_DIR
#define DDPPROF_CUDA_LIB_DIR "/usr/local/cuda/lib64"
#endif

static int resolve(cuda_blas *b, void **slot, const char *name, char *err, size_t errlen)
{
    dlerror();
    void *sym = dlsym(b->lib, name);
    if (!sym) {
        const char *why = dlerror();
        snprintf(err, errlen, "cuBLAS (%s) lacks %s: %s", CUBLAS_SONAME, name, why ? why : "not found");
        return -1;
    }
    *slot = sym;
    return 0;
}

int cuda_blas_load(cuda_blas *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    /* NODELETE: cuBLAS keeps C++ runtime state (an exception pool) that unloading would
     * orphan; once loaded it stays for the life of the process, and dlclose only drops
     * the reference. */
    const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
    b->lib = dlopen(CUBLAS_SONAME, flags);
    if (!b->lib) {
        char first[256];
        const char *why = dlerror();
        snprintf(first, sizeof first, "%s", why ? why : "not found");
        b->lib = dlopen(DDPPROF_CUDA_LIB_DIR "/" CUBLAS_SONAME, flags);
        if (!b->lib) {
            snprintf(err, errlen, "cannot load cuBLAS: %s", first);
            return -1;
        }
    }
    /* The _v2 names are what cublas_v2.h's macros call. */
    if (resolve(b, (void **)&b->create, "cublasCreate_v2", err, errlen) != 0 ||
        resolve(b, (void **)&b->destroy, "cublasDestroy_v2", err, errlen) != 0 ||
        resolve(b, (void **)&b->set_stream, "cublasSetStream_v2", err, errlen) != 0 ||
        resolve(b, (void **)&b->sgemm, "cublasSgemm_v2", err, errlen) != 0 ||
        resolve(b, (void **)&b->status_string, "cublasGetStatusString", err, errlen) != 0) {
        cuda_blas_unload(b);
        return -1;
    }
    return 0;
}

void cuda_blas_unload(cuda_blas *b)
{
    if (b->lib)
        dlclose(b->lib);
    memset(b, 0, sizeof *b);
}

const char *cuda_blas_status(const cuda_blas *b, cublasStatus_t status)
{
    if (b->status_string) {
        const char *s = b->status_string(status);
        if (s)
            return s;
    }
    return "cuBLAS error";
}
