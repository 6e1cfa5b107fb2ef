// Runner "jit_simple": the original's flat-argument jit LSTM that returns
// only (hy, cy). Same launches as jit (per step 2 GEMMs + 1 fused cell);
// y is not reported, and the backward is seeded by dhy alone (the problem
// of a RUNNER_STATE_ONLY runner carries no dy; dcy is ignored if present).
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_ONLY;

int jit_simple_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "jit_simple", kCaps, LC_NEED_STEP, state, err);
}

int jit_simple_forward(void *state, lc_error *err)
{
    return lc_forward_jit((lc_gpu_state *)state, /*unfused=*/false, err);
}

int jit_simple_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/false, /*per_gate=*/false, err);
}

} // namespace

extern "C" const runner_ops runner_jit_simple_ops = {
    .name = "jit_simple",
    .device = "cuda",
    .description = "FP32 cuBLAS: jit cell returning only (hy, cy); gradient from hy only",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 1,
    .available = lc_cuda_available,
    .create = jit_simple_create,
    .forward = jit_simple_forward,
    .backward = jit_simple_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
