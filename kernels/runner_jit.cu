// Runner "jit": the original's TorchScript LSTM cell.
// Forward per step: 2 cuBLAS GEMMs (x_t W_ih^T into gates[t], h W_hh^T into
// step, both B x 4H) + 1 fused pointwise cell kernel (adds both and both
// biases, activations, c, h). Backward per step: 1 fused pointwise backward
// + 1 GEMM dgates W_hh; weight and input gradients as GEMMs over all T*B
// rows, bias gradients as one reduction.
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_GRADS;

int jit_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "jit", kCaps, LC_NEED_STEP, state, err);
}

int jit_forward(void *state, lc_error *err)
{
    return lc_forward_jit((lc_gpu_state *)state, /*unfused=*/false, err);
}

int jit_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/false, /*per_gate=*/false, err);
}

} // namespace

extern "C" const runner_ops runner_jit_ops = {
    .name = "jit",
    .device = "cuda",
    .description = "FP32 cuBLAS: per step 2 GEMMs + 1 fused cell kernel (TorchScript jit)",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 1,
    .available = lc_cuda_available,
    .create = jit_create,
    .forward = jit_forward,
    .backward = jit_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
