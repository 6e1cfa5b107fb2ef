// Runner "aten": the original's aten (cuDNN off): eager ATen ops, unfused.
// Forward per step: 2 cuBLAS GEMMs (x_t W_ih^T into gates[t], h W_hh^T into
// step, both B x 4H), then separate elementwise kernels: gates + step, + b_ih,
// + b_hh, sigmoid i, sigmoid f, tanh g, sigmoid o, f*c, i*g, sum, tanh(c),
// o*tanh(c) (12 launches). Backward per step: the same cell backward as a
// chain of elementwise kernels + 1 GEMM dgates W_hh; weight and input
// gradients as GEMMs over all T*B rows, bias gradients as one reduction.
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_GRADS;

int aten_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "aten", kCaps, LC_NEED_STEP | LC_NEED_SCRATCH, state, err);
}

int aten_forward(void *state, lc_error *err)
{
    return lc_forward_jit((lc_gpu_state *)state, /*unfused=*/true, err);
}

int aten_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/true, /*per_gate=*/false, err);
}

} // namespace

extern "C" const runner_ops runner_aten_ops = {
    .name = "aten",
    .device = "cuda",
    .description = "FP32 cuBLAS: per step 2 GEMMs + 12 unfused elementwise kernels (aten, cuDNN off)",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 1,
    .available = lc_cuda_available,
    .create = aten_create,
    .forward = aten_forward,
    .backward = aten_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
