// Runner "cudnn_persist". The cudnn runner with cuDNN's persistent recurrent kernel
// (CUDNN_RNN_ALGO_PERSIST_STATIC), strict FP32. cuDNN accepts it for some
// shapes only: create() probes one forward + backward, and a NOT_SUPPORTED
// status there makes it RUNNER_UNSUPPORTED (the gate reports SKIP with
// cuDNN's reason).
// All of the cuDNN work is in cudnn_common.cu; this file is its table.
#include "cudnn_common.cuh"
#include "gpu_runners.h"

static const lc_cudnn_config cudnn_persist_config = {
    "cudnn_persist",
    CUDNN_RNN_ALGO_PERSIST_STATIC,
    CUDNN_FMA_MATH,
    0, // varlen
    1, // probe in create
};

static int cudnn_persist_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_cudnn_create(&cudnn_persist_config, p, state, err);
}

extern "C" const runner_ops runner_cudnn_persist_ops = {
    .name = "cudnn_persist",
    .device = "cuda",
    .description = "cuDNN 9 LSTM, persistent-kernel algorithm (PERSIST_STATIC), strict FP32",
    .caps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = lc_cuda_available,
    .create = cudnn_persist_create,
    .forward = lc_cudnn_forward,
    .backward = lc_cudnn_backward,
    .zero_grads = lc_cudnn_zero_grads,
    .read_results = lc_cudnn_read_results,
    .peak_device_bytes = lc_cudnn_peak_device_bytes,
    .destroy = lc_cudnn_destroy,
};
