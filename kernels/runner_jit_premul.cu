// Runner "jit_premul": the input projection premultiplied.
// Forward: 1 cuBLAS GEMM x W_ih^T for all T steps up front (T*B x 4H), then
// per step 1 GEMM h W_hh^T (B x 4H) + 1 fused cell kernel that adds
// gates[t] + step + b_ih + b_hh. Backward as jit.
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_GRADS;

int jit_premul_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "jit_premul", kCaps, LC_NEED_STEP, state, err);
}

int jit_premul_forward(void *state, lc_error *err)
{
    lc_gpu_state *s = (lc_gpu_state *)state;
    for (int l = 0; l < s->L; l++) {
        const lc_gpu_layer *ly = &s->layers[l];
        LC_TRY(lc_gemm_input_all(s, l, 0.0f, err)); // gates = in W_ih^T, all steps
        for (int t = 0; t < s->T; t++) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            LC_TRY(lc_gemm_recurrent_step(s, l, t, s->step, 0.0f, err));
            lc_cell_fwd a = lc_step_cell(s, l, t);
            a.pre_b = s->step;
            a.ld_pre_b = 4 * (size_t)s->H;
            a.bias_a = ly->b_ih;
            a.bias_b = ly->b_hh;
            LC_TRY(lc_cell_forward(&a, s->stream, err));
        }
    }
    s->forward_done = 1;
    return RUNNER_OK;
}

int jit_premul_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/false, /*per_gate=*/false, err);
}

} // namespace

extern "C" const runner_ops runner_jit_premul_ops = {
    .name = "jit_premul",
    .device = "cuda",
    .description = "FP32 cuBLAS: 1 input GEMM for all steps, per step 1 GEMM + fused cell with both biases",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 1,
    .available = lc_cuda_available,
    .create = jit_premul_create,
    .forward = jit_premul_forward,
    .backward = jit_premul_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
