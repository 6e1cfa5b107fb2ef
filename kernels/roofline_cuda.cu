// The CUDA half of the machine's limit (src/device/roofline.h): one
// strict-FP32 cuBLAS SGEMM (the handle every runner uses), its calls timed
// with events on the shared stream. How it is sampled is roofline.c's.
#include "cuda_util.h"

#include <stdlib.h>

#include "device/roofline.h"

namespace {
struct cuda_gemm {
    int m, n, k;
    lc_device_pool pool;
    float *a, *b, *c;
    cudaEvent_t start, stop;
};

// the bytes of a (0: m x k), b (1: k x n) or c (2: m x n)
size_t bytes_of(const cuda_gemm *g, int which)
{
    const int rows[] = {g->m, g->k, g->m}, cols[] = {g->k, g->n, g->n};
    return (size_t)rows[which] * (size_t)cols[which] * sizeof(float);
}

int prepare(cuda_gemm *g, lc_error *err)
{
    float **buf[] = {&g->a, &g->b, &g->c};
    for (int i = 0; i < 3; i++)
        if (lc_device_alloc(&g->pool, (void **)buf[i], bytes_of(g, i), err))
            return LC_ERROR;
    // 0x3c3c3c3c is 0.0115 in every element: no denormals, no overflow
    CUDA_CHECK(cudaMemsetAsync(g->a, 0x3c, bytes_of(g, 0), lc_cuda_stream()));
    CUDA_CHECK(cudaMemsetAsync(g->b, 0x3c, bytes_of(g, 1), lc_cuda_stream()));
    CUDA_CHECK(cudaEventCreate(&g->start));
    CUDA_CHECK(cudaEventCreate(&g->stop));
    return LC_OK;
}
} // namespace

extern "C" void roofline_cuda_gemm_close(void *gemm)
{
    cuda_gemm *g = (cuda_gemm *)gemm;
    if (!g)
        return;
    float *buf[] = {g->a, g->b, g->c};
    for (int i = 0; i < 3; i++)
        lc_device_free(&g->pool, buf[i], bytes_of(g, i));
    if (g->start) cudaEventDestroy(g->start);
    if (g->stop) cudaEventDestroy(g->stop);
    free(g);
}

extern "C" lc_status roofline_cuda_gemm_open(int m, int n, int k, void **gemm, lc_error *err)
{
    *gemm = nullptr;
    const int entered = lc_cuda_enter(err); // no device: LC_UNSUPPORTED; a broken setup: LC_ERROR
    if (entered != LC_OK)
        return (lc_status)entered;
    cuda_gemm *g = (cuda_gemm *)calloc(1, sizeof *g);
    if (!g) {
        lc_error_set(err, "out of host memory");
        return LC_ERROR;
    }
    g->m = m, g->n = n, g->k = k;
    if (prepare(g, err) != LC_OK) {
        roofline_cuda_gemm_close(g);
        return LC_ERROR;
    }
    *gemm = g;
    return LC_OK;
}

extern "C" lc_status roofline_cuda_gemm_time(void *gemm, int calls, double *seconds, lc_error *err)
{
    const cuda_gemm *g = (const cuda_gemm *)gemm;
    cublasHandle_t h = lc_cublas_handle(err);
    if (!h)
        return LC_ERROR;
    const float one = 1.0f, zero = 0.0f;
    float ms = 0;
    CUDA_CHECK(cudaEventRecord(g->start, lc_cuda_stream()));
    for (int i = 0; i < calls; i++) // column-major C^T = B^T A^T: the row-major product
        CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m, g->k, &one, g->b, g->n, g->a, g->k, &zero,
                                 g->c, g->n));
    CUDA_CHECK(cudaEventRecord(g->stop, lc_cuda_stream()));
    CUDA_CHECK(cudaEventSynchronize(g->stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, g->start, g->stop));
    *seconds = ms * 1e-3;
    return LC_OK;
}
