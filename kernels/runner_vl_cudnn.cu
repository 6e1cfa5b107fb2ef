// Runner "vl_cudnn". Variable-length batches through cuDNN, as the original's vl_cudnn: the
// padded time-major batch (CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED) with
// per-sequence lengths and CUDNN_RNN_PADDED_IO_ENABLED; outputs past a
// sequence's end are filled with 0, hy/cy are each sequence's last state.
// Strict FP32, standard algorithm.
// All of the cuDNN work is in cudnn_common.cu; this file is its table.
#include "cudnn_common.cuh"
#include "gpu_runners.h"

static const lc_cudnn_config vl_cudnn_config = {
    "vl_cudnn",
    CUDNN_RNN_ALGO_STANDARD,
    CUDNN_FMA_MATH,
    1, // varlen
    0, // probe in create
};

static int vl_cudnn_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_cudnn_create(&vl_cudnn_config, p, state, err);
}

extern "C" const runner_ops runner_vl_cudnn_ops = {
    .name = "vl_cudnn",
    .device = "cuda",
    .description = "cuDNN 9 LSTM on a padded variable-length batch (SEQ_MAJOR_UNPACKED, padded I/O), strict FP32",
    .caps = RUNNER_MULTILAYER | RUNNER_VARLEN | RUNNER_BACKWARD | RUNNER_STATE_GRADS,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = lc_cuda_available,
    .create = vl_cudnn_create,
    .forward = lc_cudnn_forward,
    .backward = lc_cudnn_backward,
    .zero_grads = lc_cudnn_zero_grads,
    .read_results = lc_cudnn_read_results,
    .peak_device_bytes = lc_cudnn_peak_device_bytes,
    .destroy = lc_cudnn_destroy,
};
