// The cuDNN runners, side by side: each is one row (a cuDNN configuration)
// over the one implementation in cudnn_common.cu. See docs/cudnn-runners.md.
//
//   cudnn          the original's `cudnn` runner: cuDNN 9, standard algorithm, strict
//                  FP32 (CUDNN_FMA_MATH, no TF32 tensor cores): what PyTorch sets with
//                  torch.backends.cudnn.allow_tf32 = False. The project's default.
//   cudnn_tf32     TF32 allowed (CUDNN_DEFAULT_MATH): what PyTorch's cuDNN RNN sets for
//                  FP32 data by default (allow_tf32 True; aten/src/ATen/native/cudnn/RNN.cpp),
//                  so it pairs with the original's `cudnn` on an H100. TF32 tolerance.
//   cudnn_persist  the persistent recurrent kernel (PERSIST_STATIC), strict FP32. cuDNN
//                  takes it for some shapes only: create() probes one forward + backward,
//                  and a configuration refusal there is LC_UNSUPPORTED with cuDNN's reason.
//   vl_cudnn       the original's vl_cudnn: a padded time-major batch
//                  (SEQ_MAJOR_UNPACKED) with per-sequence lengths and padded I/O; outputs
//                  past a sequence's end are 0, hy/cy each sequence's last state.
//   cudnn_dropout  the original's cudnn_dropout: cudnn with cuDNN's own dropout between
//                  layers (p = 0.4 on the dropout model's problems). Its mask cannot be
//                  seen: the gate checks it at p = 0 (RUNNER_OWN_MASK) and its timing at
//                  p = 0.4 is labelled unchecked.
#include "cudnn_common.cuh"
#include "runners/runner.h"

namespace {

constexpr unsigned kCaps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS;

// clang-format off
//                                      name             algorithm                      math                varlen probe own_dropout
constexpr lc_cudnn_config kCudnn =        {"cudnn",         CUDNN_RNN_ALGO_STANDARD,       CUDNN_FMA_MATH,     0,     0,    0};
constexpr lc_cudnn_config kCudnnTf32 =    {"cudnn_tf32",    CUDNN_RNN_ALGO_STANDARD,       CUDNN_DEFAULT_MATH, 0,     0,    0};
constexpr lc_cudnn_config kCudnnPersist = {"cudnn_persist", CUDNN_RNN_ALGO_PERSIST_STATIC, CUDNN_FMA_MATH,     0,     1,    0};
constexpr lc_cudnn_config kVlCudnn =      {"vl_cudnn",      CUDNN_RNN_ALGO_STANDARD,       CUDNN_FMA_MATH,     1,     0,    0};
constexpr lc_cudnn_config kCudnnDropout = {"cudnn_dropout", CUDNN_RNN_ALGO_STANDARD,       CUDNN_FMA_MATH,     0,     0,    1};
// clang-format on

int cudnn_create(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    return lc_cudnn_create(static_cast<const lc_cudnn_config *>(self->impl), p, state, err);
}

} // namespace

// One runner_ops table per row; impl is the row.
#define LC_CUDNN_RUNNER(ops, config, caps_, model_, precision_, text)                              \
    extern "C" const runner_ops ops = {                                                            \
        .name = config.name, .device = LC_DEVICE_CUDA, .description = text, .caps = caps_,                 \
        .precision = precision_, .max_layers = 0, .available = lc_cuda_available,                  \
        .create = cudnn_create, .forward = lc_cudnn_forward, .backward = lc_cudnn_backward,        \
        .zero_grads = lc_cudnn_zero_grads, .read_results = lc_cudnn_read_results,                  \
        .peak_device_bytes = lc_cudnn_peak_device_bytes, .destroy = lc_cudnn_destroy,              \
        .impl = &config, .model = model_,                                                          \
    }

LC_CUDNN_RUNNER(runner_cudnn_ops, kCudnn, kCaps, RUNNER_MODEL_OF(cudnn), PRECISION_FP32,
                "cuDNN 9 LSTM, standard algorithm, strict FP32 (CUDNN_FMA_MATH)");
LC_CUDNN_RUNNER(runner_cudnn_tf32_ops, kCudnnTf32, kCaps, RUNNER_MODEL_OF(cudnn_tf32), PRECISION_TF32,
                "cuDNN 9 LSTM, standard algorithm, TF32 allowed (CUDNN_DEFAULT_MATH, as PyTorch by default)");
LC_CUDNN_RUNNER(runner_cudnn_persist_ops, kCudnnPersist, kCaps | RUNNER_LIBRARY_DECIDES, RUNNER_MODEL_OF(cudnn_persist),
                PRECISION_FP32,
                "cuDNN 9 LSTM, persistent-kernel algorithm (PERSIST_STATIC), strict FP32");
LC_CUDNN_RUNNER(runner_vl_cudnn_ops, kVlCudnn, kCaps | RUNNER_VARLEN, RUNNER_MODEL_OF(vl_cudnn), PRECISION_FP32,
                "cuDNN 9 LSTM on a padded variable-length batch (SEQ_MAJOR_UNPACKED, padded I/O), strict FP32");
LC_CUDNN_RUNNER(runner_cudnn_dropout_ops, kCudnnDropout, kCaps | RUNNER_OWN_MASK, RUNNER_MODEL_OF(cudnn_dropout),
                PRECISION_FP32,
                "cuDNN 9 LSTM with cuDNN's own dropout between layers (p=0.4), strict FP32; checked at p=0 only");
