// Runner "jit_multilayer": L layers of the jit cell; layer l's output
// sequence (hs + B*H of lc_gpu_layer) is layer l+1's input. Per layer and
// step: 2 GEMMs + 1 fused cell; backward per layer, top down, as jit, the
// input gradient of layer l feeding layer l-1's output gradient.
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_MULTILAYER | RUNNER_BACKWARD | RUNNER_STATE_GRADS;

int jit_multilayer_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "jit_multilayer", kCaps, LC_NEED_STEP, state, err);
}

int jit_multilayer_forward(void *state, lc_error *err)
{
    return lc_forward_jit((lc_gpu_state *)state, /*unfused=*/false, err);
}

int jit_multilayer_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/false, /*per_gate=*/false, err);
}

} // namespace

extern "C" const runner_ops runner_jit_multilayer_ops = {
    .name = "jit_multilayer",
    .device = "cuda",
    .description = "FP32 cuBLAS: L stacked jit layers, per layer and step 2 GEMMs + 1 fused cell",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 0,
    .available = lc_cuda_available,
    .create = jit_multilayer_create,
    .forward = jit_multilayer_forward,
    .backward = jit_multilayer_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
