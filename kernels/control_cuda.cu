// The CUDA control workload: a fixed-shape cuBLAS SGEMM on the shared
// stream (the CUDA half of src/device/control.h).
#include "cuda_util.h"

#include <stdlib.h>

#include "device/control.h"
#include "model/inputs.h"

namespace {
struct cuda_control {
    int n;
    float *a, *b, *c;
    lc_device_pool pool;
};
} // namespace

extern "C" void cuda_control_destroy(void *impl)
{
    cuda_control *c = (cuda_control *)impl;
    if (!c)
        return;
    size_t bytes = (size_t)c->n * c->n * sizeof(float);
    lc_device_free(&c->pool, c->a, bytes);
    lc_device_free(&c->pool, c->b, bytes);
    lc_device_free(&c->pool, c->c, bytes);
    free(c);
}

// Uniform values in [-1, 1): a GEMM on zeros draws less power than one on
// real data, so the GPU would clock differently for the control than for
// the runners it is meant to track.
static int upload_random(float *dev, size_t count, float *host, int kind, lc_error *err)
{
    lc_rng rng;
    lc_rng_init(&rng, 17, kind, -1);
    for (size_t i = 0; i < count; i++)
        host[i] = (float)(2.0 * lc_rng_uniform(&rng) - 1.0);
    CUDA_CHECK(cudaMemcpyAsync(dev, host, count * sizeof(float), cudaMemcpyHostToDevice,
                               lc_cuda_stream()));
    CUDA_CHECK(cudaStreamSynchronize(lc_cuda_stream())); // host is pageable and reused
    return LC_OK;
}

static int control_alloc(cuda_control *c, lc_error *err)
{
    const size_t count = (size_t)c->n * c->n, bytes = count * sizeof(float);
    if (lc_device_alloc(&c->pool, (void **)&c->a, bytes, err) ||
        lc_device_alloc(&c->pool, (void **)&c->b, bytes, err) ||
        lc_device_alloc(&c->pool, (void **)&c->c, bytes, err))
        return LC_ERROR;
    float *host = (float *)malloc(bytes);
    if (!host) {
        lc_error_set(err, "out of host memory for the control workload");
        return LC_ERROR;
    }
    // the two operands: distinct streams of the input generator
    const int rc = upload_random(c->a, count, host, INPUT_X, err) == LC_OK &&
                           upload_random(c->b, count, host, INPUT_W_IH, err) == LC_OK
                       ? LC_OK
                       : LC_ERROR;
    free(host);
    return rc;
}

extern "C" int cuda_control_create(void **impl, int n, lc_error *err)
{
    if (lc_cuda_enter(err) != LC_OK)
        return 1;
    cuda_control *c = (cuda_control *)calloc(1, sizeof *c);
    if (!c) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    c->n = n;
    if (control_alloc(c, err) != LC_OK) {
        cuda_control_destroy(c);
        return 1;
    }
    *impl = c;
    return 0;
}

extern "C" int cuda_control_launch(void *impl, lc_error *err)
{
    cuda_control *c = (cuda_control *)impl;
    cublasHandle_t h = lc_cublas_handle(err);
    if (!h)
        return 1;
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->n, c->n, &one, c->a, c->n, c->b,
                             c->n, &zero, c->c, c->n));
    return 0;
}
