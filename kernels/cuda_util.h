/* Checked CUDA and cuBLAS calls for runner code. Errors carry file and line
 * into the caller's lc_error and return LC_ERROR from the enclosing
 * function; nothing exits. Use inside functions that take `lc_error *err`
 * and clean up through their own destroy path. */
#ifndef LSTMCHECK_CUDA_UTIL_H
#define LSTMCHECK_CUDA_UTIL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "model/lstm.h"
#include "runners/runner.h"

#define CUDA_CHECK(call)                                                            \
    do {                                                                            \
        cudaError_t cuda_check_rc_ = (call);                                        \
        if (cuda_check_rc_ != cudaSuccess) {                                        \
            lc_error_set(err, "%s:%d: %s: %s", __FILE__, __LINE__, #call,           \
                         cudaGetErrorString(cuda_check_rc_));                       \
            return LC_ERROR;                                                    \
        }                                                                           \
    } while (0)

/* After every kernel launch: launch errors show up here, not later. */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(call)                                                          \
    do {                                                                            \
        cublasStatus_t cublas_check_rc_ = (call);                                   \
        if (cublas_check_rc_ != CUBLAS_STATUS_SUCCESS) {                            \
            lc_error_set(err, "%s:%d: %s: %s", __FILE__, __LINE__, #call,           \
                         cublasGetStatusString(cublas_check_rc_));                  \
            return LC_ERROR;                                                    \
        }                                                                           \
    } while (0)

#ifdef __cplusplus
extern "C" {
#endif

/* The one stream every GPU runner and the timer use. */
cudaStream_t lc_cuda_stream(void);
/* A cuBLAS handle on that stream with strict FP32 math (no TF32) in the
 * mode of lc_cublas_math, or NULL with err set. */
cublasHandle_t lc_cublas_handle(lc_error *err);
/* The cuBLAS math mode of that handle, and its name ("pedantic" or
 * "default"): the one place that decides it (see cuda_context.cu). */
int lc_cublas_math(cublasMath_t *mode, const char **name, lc_error *err);
/* The standard available() of a GPU runner, from the probe (src/device/device.h):
 * LC_OK with a usable device, LC_UNSUPPORTED without one, and
 * LC_ERROR when the CUDA setup is broken (an error, never a skip). */
int lc_cuda_available(lc_error *why);
/* Before this process's own first CUDA call: the same answer, and the
 * process is marked as a CUDA user (device_cuda_used_here). err may be NULL. */
int lc_cuda_enter(lc_error *err);

/* Test-only fault hook (src/runners/faults.h, kernels/fault_gpu.cu): a no-op in
 * the product build; in the test build FAULT_GPU_OOB_WRITE makes the
 * runner named "jit" write far out of bounds from buf on the stream. */
int lc_fault_gpu(const char *runner, float *buf, cudaStream_t stream, lc_error *err);
/* Test-only planted slowdown (EXTRA_WORK_PERCENT, src/runners/faults.h) of
 * a GPU runner's forward or backward, for perf_power: _begin, first in the
 * pass, marks the time on the shared stream; _end, last, holds the stream
 * for that percent of the time it spent since the mark (the device's own
 * clock: the host waits for nothing). Both launch a kernel in every pass of
 * the test build, also at 0%; no-ops in the product build. */
int lc_extra_work_gpu_begin(lc_error *err);
int lc_extra_work_gpu_end(lc_error *err);

/* Device allocations counted per runner instance, so each runner reports
 * the peak device memory it held. */
typedef struct lc_device_pool {
    size_t current, peak;
} lc_device_pool;
int lc_device_alloc(lc_device_pool *pool, void **ptr, size_t bytes, lc_error *err);
void lc_device_free(lc_device_pool *pool, void *ptr, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
