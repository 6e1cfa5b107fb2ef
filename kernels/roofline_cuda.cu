// The CUDA half of the machine's limit (src/device/roofline.h): the rate of
// one strict-FP32 cuBLAS SGEMM (the handle every runner uses), timed with
// events on the shared stream.
#include "cuda_util.h"

#include "device/roofline.h"

namespace {
constexpr int kSamples = 5;
constexpr float kSampleMs = 10.0f;   // one sample: as many calls as take this long
constexpr float kOneCallMs = 250.0f; // slower than this: that one call is the rate

struct sgemm_buffers {
    lc_device_pool pool;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    size_t na = 0, nb = 0, nc = 0;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~sgemm_buffers()
    {
        lc_device_free(&pool, a, na);
        lc_device_free(&pool, b, nb);
        lc_device_free(&pool, c, nc);
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
};

// calls SGEMMs of (m x k)(k x n), their time in ms into ms
static int time_calls(cublasHandle_t h, const sgemm_buffers &g, int m, int n, int k, int calls, float *ms,
                      lc_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    CUDA_CHECK(cudaEventRecord(g.start, lc_cuda_stream()));
    for (int i = 0; i < calls; i++) // column-major C^T = B^T A^T: the row-major product
        CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, g.b, n, g.a, k, &zero, g.c, n));
    CUDA_CHECK(cudaEventRecord(g.stop, lc_cuda_stream()));
    CUDA_CHECK(cudaEventSynchronize(g.stop));
    CUDA_CHECK(cudaEventElapsedTime(ms, g.start, g.stop));
    return LC_OK;
}
} // namespace

extern "C" lc_status roofline_cuda_sgemm_gflops(int m, int n, int k, double *gflops, lc_error *err)
{
    *gflops = 0;
    const int entered = lc_cuda_enter(err); // no device: LC_UNSUPPORTED; a broken setup: LC_ERROR
    if (entered != LC_OK)
        return (lc_status)entered;
    cublasHandle_t h = lc_cublas_handle(err);
    if (!h)
        return LC_ERROR;
    sgemm_buffers g;
    g.na = (size_t)m * k * sizeof(float), g.nb = (size_t)k * n * sizeof(float), g.nc = (size_t)m * n * sizeof(float);
    if (lc_device_alloc(&g.pool, (void **)&g.a, g.na, err) || lc_device_alloc(&g.pool, (void **)&g.b, g.nb, err) ||
        lc_device_alloc(&g.pool, (void **)&g.c, g.nc, err))
        return LC_ERROR;
    CUDA_CHECK(cudaMemsetAsync(g.a, 0x3c, g.na, lc_cuda_stream())); // 0.0115 in every element: no denormals
    CUDA_CHECK(cudaMemsetAsync(g.b, 0x3c, g.nb, lc_cuda_stream()));
    CUDA_CHECK(cudaEventCreate(&g.start));
    CUDA_CHECK(cudaEventCreate(&g.stop));
    float once = 0;
    if (time_calls(h, g, m, n, k, 1, &once, err) || time_calls(h, g, m, n, k, 1, &once, err)) // the first warms up
        return LC_ERROR;
    const double flops = 2.0 * m * (double)n * k;
    const int calls = once >= kSampleMs ? 1 : (int)(kSampleMs / (once > 1e-4f ? once : 1e-4f)) + 1;
    double best = flops / (once * 1e-3);
    for (int r = 0; once < kOneCallMs && r < kSamples; r++) {
        float ms = 0;
        if (time_calls(h, g, m, n, k, calls, &ms, err))
            return LC_ERROR;
        if (flops * calls / (ms * 1e-3) > best)
            best = flops * calls / (ms * 1e-3);
    }
    *gflops = best / 1e9;
    return LC_OK;
}
