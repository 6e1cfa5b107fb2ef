// Runner "naive": the original's slow, obviously-correct `py` loop.
// Forward per step: 8 small cuBLAS GEMMs, one per gate and per input
// (x_t W_ih[q]^T and h W_hh[q]^T, each B x H, q = i, f, g, o), then the same
// 12 unfused elementwise kernels as aten. Backward per step: the unfused cell
// backward + 4 per-gate GEMMs for dh; weight and input gradients as per-gate
// GEMMs over all T*B rows; bias gradients as one reduction.
#include "gpu_runners.h"
#include "lstm_gpu_common.cuh"

namespace {

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_GRADS;

int naive_create(const lstm_problem *p, void **state, lc_error *err)
{
    return lc_gpu_create(p, "naive", kCaps, LC_NEED_STEP | LC_NEED_SCRATCH, state, err);
}

int naive_forward(void *state, lc_error *err)
{
    lc_gpu_state *s = (lc_gpu_state *)state;
    const int B = s->B, H = s->H, G = 4 * s->H;
    for (int l = 0; l < s->L; l++) {
        const lc_gpu_layer *ly = &s->layers[l];
        const int In = ly->in_size;
        const float *in = lc_layer_input(s, l);
        for (int t = 0; t < s->T; t++) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            const float *in_t = in + (size_t)t * B * In;
            const float *h_prev = ly->hs + (size_t)t * B * H; // hs[t] = h_{t-1}
            float *g_t = lc_gates_at(s, l, t);
            // gate block q: (B x In) W_ih[q]^T and (B x H) W_hh[q]^T, each into
            // columns q*H .. q*H+H-1 of a B x 4H matrix
            for (int q = 0; q < 4; q++)
                LC_TRY(lc_gemm(s, false, true, B, H, In, 1.0f, in_t, In,
                               ly->w_ih + (size_t)q * H * In, In, 0.0f, g_t + (size_t)q * H, G,
                               err));
            for (int q = 0; q < 4; q++)
                LC_TRY(lc_gemm(s, false, true, B, H, H, 1.0f, h_prev, H,
                               ly->w_hh + (size_t)q * H * H, H, 0.0f, s->step + (size_t)q * H, G,
                               err));
            lc_cell_fwd a = lc_step_cell(s, l, t);
            a.pre_b = s->step;
            a.ld_pre_b = (size_t)G;
            a.bias_a = ly->b_ih;
            a.bias_b = ly->b_hh;
            LC_TRY(lc_cell_forward_unfused(&a, s->scratch, s->stream, err));
        }
    }
    s->forward_done = 1;
    return RUNNER_OK;
}

int naive_backward(void *state, lc_error *err)
{
    return lc_gpu_backward((lc_gpu_state *)state, /*unfused=*/true, /*per_gate=*/true, err);
}

} // namespace

extern "C" const runner_ops runner_naive_ops = {
    .name = "naive",
    .device = "cuda",
    .description = "FP32 cuBLAS: per step 8 per-gate GEMMs + 12 unfused elementwise kernels (py)",
    .caps = kCaps,
    .precision = PRECISION_FP32,
    .max_layers = 1,
    .available = lc_cuda_available,
    .create = naive_create,
    .forward = naive_forward,
    .backward = naive_backward,
    .zero_grads = lc_gpu_zero_grads,
    .read_results = lc_gpu_read_results,
    .peak_device_bytes = lc_gpu_peak_device_bytes,
    .destroy = lc_gpu_destroy,
};
