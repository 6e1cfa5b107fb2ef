// Runner "cudnn_tf32". The cudnn runner with TF32 allowed: CUDNN_DEFAULT_MATH, the math
// type PyTorch's cuDNN RNN sets for FP32 data when torch.backends.cudnn.allow_tf32 is
// True (its default; aten/src/ATen/native/cudnn/RNN.cpp), so it pairs with the
// original's `cudnn` runner as PyTorch runs it on an H100. Checked with the TF32
// tolerance (unit roundoff 2^-11). All of the cuDNN work is in cudnn_common.cu; this
// file is its table.
#include "cudnn_common.cuh"
#include "gpu_runners.h"

static const lc_cudnn_config cudnn_tf32_config = {
    "cudnn_tf32",
    CUDNN_RNN_ALGO_STANDARD,
    CUDNN_DEFAULT_MATH,
    0, // varlen
    0, // probe in create
};

static int cudnn_tf32_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_cudnn_create(&cudnn_tf32_config, p, state, err);
}

extern "C" const runner_ops runner_cudnn_tf32_ops = {
    .name = "cudnn_tf32",
    .device = "cuda",
    .description = "cuDNN 9 LSTM, standard algorithm, TF32 allowed (CUDNN_DEFAULT_MATH, as PyTorch by default)",
    .caps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_TF32,
    .max_layers = 0,
    .available = lc_cuda_available,
    .create = cudnn_tf32_create,
    .forward = lc_cudnn_forward,
    .backward = lc_cudnn_backward,
    .zero_grads = lc_cudnn_zero_grads,
    .read_results = lc_cudnn_read_results,
    .peak_device_bytes = lc_cudnn_peak_device_bytes,
    .destroy = lc_cudnn_destroy,
};
