// Shared CUDA state: the stream, the cuBLAS handle and the counted
// allocator. One process-wide instance, made on first use, after the probe
// (cuda_probe.cu) has said a device is usable.
#include "cuda_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cudaStream_t g_stream = nullptr;
static cublasHandle_t g_cublas = nullptr;

extern "C" cudaStream_t lc_cuda_stream(void)
{
    if (!g_stream && (lc_cuda_enter(nullptr) != LC_OK ||
                      cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess))
        g_stream = nullptr;
    return g_stream;
}

// The one switch for the cuBLAS math mode of every GEMM on the shared
// handle (the cuBLAS runners, vl_jit, vl_py, the control SGEMM). Both
// modes are plain FP32 for SGEMM (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH);
// PEDANTIC also pins the prescribed arithmetic and may be slower. Whether it stays
// is measured on the device (tests/perf/cublas_math.c, ci/gpu-proof.sh);
// LSTMCHECK_CUBLAS_MATH=default|pedantic switches it for that measurement.
extern "C" int lc_cublas_math(cublasMath_t *mode, const char **name, lc_error *err)
{
    const char *v = getenv("LSTMCHECK_CUBLAS_MATH");
    if (!v || !v[0] || !strcmp(v, "pedantic")) {
        *mode = CUBLAS_PEDANTIC_MATH;
        *name = "pedantic";
    } else if (!strcmp(v, "default")) {
        *mode = CUBLAS_DEFAULT_MATH;
        *name = "default";
    } else {
        lc_error_set(err, "LSTMCHECK_CUBLAS_MATH is '%s'; expected pedantic or default", v);
        return LC_ERROR;
    }
    return LC_OK;
}

extern "C" cublasHandle_t lc_cublas_handle(lc_error *err)
{
    if (g_cublas)
        return g_cublas;
    if (lc_cuda_enter(err) != LC_OK)
        return nullptr;
    cublasMath_t math;
    const char *math_name;
    if (lc_cublas_math(&math, &math_name, err) != LC_OK)
        return nullptr;
    cublasHandle_t h;
    cublasStatus_t rc = cublasCreate(&h);
    if (rc != CUBLAS_STATUS_SUCCESS) {
        lc_error_set(err, "cublasCreate: %s", cublasGetStatusString(rc));
        return nullptr;
    }
    // strict FP32 either way: no TF32 tensor-op shortcuts in these runners
    if ((rc = cublasSetMathMode(h, math)) != CUBLAS_STATUS_SUCCESS ||
        (rc = cublasSetStream(h, lc_cuda_stream())) != CUBLAS_STATUS_SUCCESS) {
        lc_error_set(err, "cuBLAS setup: %s", cublasGetStatusString(rc));
        cublasDestroy(h);
        return nullptr;
    }
    g_cublas = h;
    return g_cublas;
}

extern "C" int lc_device_alloc(lc_device_pool *pool, void **ptr, size_t bytes, lc_error *err)
{
    *ptr = nullptr;
    cudaError_t rc = cudaMalloc(ptr, bytes ? bytes : 1);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        *ptr = nullptr;
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        lc_error_set(err, "out of device memory: %zu bytes requested, %zu of %zu free (%s)", bytes,
                     free_b, total_b, cudaGetErrorString(rc));
        return LC_ERROR;
    }
    pool->current += bytes;
    if (pool->current > pool->peak)
        pool->peak = pool->current;
    return LC_OK;
}

extern "C" void lc_device_free(lc_device_pool *pool, void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    cudaFree(ptr);
    pool->current -= bytes;
}
