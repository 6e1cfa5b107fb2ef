// CUDA-event timer on the shared stream (the CUDA half of src/device/timer.h).
#include "cuda_util.h"

#include <stdlib.h>

#include "device/timer.h"

namespace {
struct cuda_timer {
    cudaEvent_t start, stop;
};
} // namespace

extern "C" int cuda_timer_create(void **impl, lc_error *err)
{
    if (lc_cuda_enter(err) != LC_OK)
        return 1;
    // the timer records on the runners' stream: without it, it would time
    // the legacy default stream instead
    if (!lc_cuda_stream()) {
        lc_error_set(err, "cannot create the CUDA stream the timer records on");
        return 1;
    }
    cuda_timer *t = (cuda_timer *)calloc(1, sizeof *t);
    if (!t) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    cudaError_t rc = cudaEventCreate(&t->start);
    if (rc == cudaSuccess) {
        rc = cudaEventCreate(&t->stop);
        if (rc != cudaSuccess)
            cudaEventDestroy(t->start); // the first event must not leak
    }
    if (rc != cudaSuccess) {
        lc_error_set(err, "%s:%d: cudaEventCreate: %s", __FILE__, __LINE__, cudaGetErrorString(rc));
        free(t);
        return 1;
    }
    *impl = t;
    return 0;
}

extern "C" int cuda_timer_start(void *impl, lc_error *err)
{
    cuda_timer *t = (cuda_timer *)impl;
    cudaError_t rc = cudaEventRecord(t->start, lc_cuda_stream());
    if (rc != cudaSuccess) {
        lc_error_set(err, "cudaEventRecord: %s", cudaGetErrorString(rc));
        return 1;
    }
    return 0;
}

extern "C" int cuda_timer_stop(void *impl, double *ms, lc_error *err)
{
    cuda_timer *t = (cuda_timer *)impl;
    float elapsed = 0;
    cudaError_t rc = cudaEventRecord(t->stop, lc_cuda_stream());
    if (rc == cudaSuccess)
        rc = cudaEventSynchronize(t->stop);
    if (rc == cudaSuccess)
        rc = cudaEventElapsedTime(&elapsed, t->start, t->stop);
    if (rc != cudaSuccess) {
        lc_error_set(err, "CUDA timer: %s", cudaGetErrorString(rc));
        return 1;
    }
    *ms = elapsed;
    return 0;
}

extern "C" void cuda_timer_destroy(void *impl)
{
    cuda_timer *t = (cuda_timer *)impl;
    if (!t)
        return;
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    free(t);
}
