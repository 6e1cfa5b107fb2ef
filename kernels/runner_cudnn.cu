// Runner "cudnn". The vendor LSTM as the original's `cudnn` runner: cuDNN 9, standard
// algorithm, strict FP32 (CUDNN_FMA_MATH: no TF32 tensor cores), the math type PyTorch
// sets with torch.backends.cudnn.allow_tf32 = False. The project's default; PyTorch's
// own default (TF32 allowed) is cudnn_tf32.
// All of the cuDNN work is in cudnn_common.cu; this file is its table.
#include "cudnn_common.cuh"
#include "gpu_runners.h"

static const lc_cudnn_config cudnn_config = {
    "cudnn",
    CUDNN_RNN_ALGO_STANDARD,
    CUDNN_FMA_MATH,
    0, // varlen
    0, // probe in create
};

static int cudnn_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_cudnn_create(&cudnn_config, p, state, err);
}

extern "C" const runner_ops runner_cudnn_ops = {
    .name = "cudnn",
    .device = "cuda",
    .description = "cuDNN 9 LSTM, standard algorithm, strict FP32 (CUDNN_FMA_MATH)",
    .caps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = lc_cuda_available,
    .create = cudnn_create,
    .forward = lc_cudnn_forward,
    .backward = lc_cudnn_backward,
    .zero_grads = lc_cudnn_zero_grads,
    .read_results = lc_cudnn_read_results,
    .peak_device_bytes = lc_cudnn_peak_device_bytes,
    .destroy = lc_cudnn_destroy,
};
