// The cuBLAS runners, side by side. Each is one row of data (a variant);
// one forward and one backward read the row. They re-create the original
// fastrnns runners of the same names (benchmarks/fastrnns runner.py,
// factory.py, cells.py; ATen's RNN.cpp for aten), launch for launch where
// it sets the speed: which GEMMs run per step and which once over all
// steps, a fused or an eager cell, and where autograd forms the weight and
// bias gradients. See docs/gpu-runners.md.
//
// Shared state, buffers and GEMM mapping: lstm_gpu_common.cuh; the cell
// kernels: lstm_cells.cuh. Everything is strict FP32 on one stream.
#include "runners/runner.h"
#include "lstm_gpu_common.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

enum input_proj {
    PROJ_PER_STEP,       // x_t W_ih^T per step (autograd: dx_t, dW_ih per step too)
    PROJ_ALL_STEPS,      // x W_ih^T once for all steps (its gradients once too)
    PROJ_ALL_STEPS_BIAS, // as PROJ_ALL_STEPS with b_ih added there (db_ih once too)
};
enum cell_kind {
    CELL_FUSED, // one kernel forward, one backward
    CELL_EAGER, // cells.py in eager PyTorch: one kernel per op (12 forward)
};
enum weight_grads {
    GRADS_PER_STEP,  // as autograd: every per-step GEMM gets its own backward GEMMs
    GRADS_ALL_STEPS, // ours: dW_ih, dW_hh, dx and the biases once over all T*B rows
};

constexpr unsigned kFull = RUNNER_BACKWARD | RUNNER_STATE_GRADS;
constexpr unsigned kStateOnly = RUNNER_BACKWARD | RUNNER_STATE_ONLY | RUNNER_STATE_GRADS;
constexpr unsigned kLayers = kFull | RUNNER_MULTILAYER;

struct cublas_variant {
    const char *name;
    input_proj proj;
    cell_kind cell;
    weight_grads grads;
    // ATen's fused backward returns one grad_bias for both biases: one
    // reduction feeds db_ih and db_hh. Autograd of "+ b_ih + b_hh" reduces
    // each bias on its own.
    bool shared_bias_grad;
    unsigned caps;
};

// clang-format off
//                                 name               input projection     cell        weight grads     1 db  caps
constexpr cublas_variant kAten =       {"aten",            PROJ_PER_STEP,       CELL_FUSED, GRADS_PER_STEP,  true,  kFull};
constexpr cublas_variant kPy =         {"py",              PROJ_PER_STEP,       CELL_EAGER, GRADS_PER_STEP,  false, kFull};
constexpr cublas_variant kJit =        {"jit",             PROJ_PER_STEP,       CELL_FUSED, GRADS_PER_STEP,  false, kFull};
constexpr cublas_variant kJitPremul =  {"jit_premul",      PROJ_ALL_STEPS,      CELL_FUSED, GRADS_PER_STEP,  false, kFull};
constexpr cublas_variant kJitPremulB = {"jit_premul_bias", PROJ_ALL_STEPS_BIAS, CELL_FUSED, GRADS_PER_STEP,  false, kFull};
constexpr cublas_variant kJitSimple =  {"jit_simple",      PROJ_PER_STEP,       CELL_FUSED, GRADS_PER_STEP,  false, kStateOnly};
constexpr cublas_variant kJitLayers =  {"jit_multilayer",  PROJ_PER_STEP,       CELL_FUSED, GRADS_PER_STEP,  false, kLayers};
constexpr cublas_variant kJitDropout = {"jit_dropout",     PROJ_PER_STEP,       CELL_FUSED, GRADS_PER_STEP,  false, kLayers};
constexpr cublas_variant kWgradAll =   {"jit_wgrad_all",   PROJ_ALL_STEPS_BIAS, CELL_FUSED, GRADS_ALL_STEPS, true,  kFull};
// clang-format on

struct cublas_runner {
    lc_gpu_state *g;
    const cublas_variant *v;
};

// Which gradients the backward forms per step (else once over all steps).
bool input_grads_per_step(const cublas_variant *v)
{
    return v->proj == PROJ_PER_STEP && v->grads == GRADS_PER_STEP;
}
bool b_ih_per_step(const cublas_variant *v)
{
    return v->grads == GRADS_PER_STEP && v->proj != PROJ_ALL_STEPS_BIAS;
}
bool b_hh_per_step(const cublas_variant *v) { return v->grads == GRADS_PER_STEP; }

int cublas_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    const cublas_variant *v = static_cast<const cublas_variant *>(self->impl);
    *out = nullptr;
    LC_TRY(lc_gpu_check_model(self, p, err)); // jit_dropout: a dropout problem, masks and all
    cublas_runner *r = (cublas_runner *)calloc(1, sizeof *r);
    if (!r) {
        lc_error_set(err, "%s: out of host memory", v->name);
        return LC_ERROR;
    }
    r->v = v;
    unsigned needs = LC_NEED_STEP;
    if (v->cell == CELL_EAGER)
        needs |= LC_NEED_SCRATCH;
    const int rc = lc_gpu_create(p, v->name, v->caps, needs, (void **)&r->g, err);
    if (rc != LC_OK) {
        free(r);
        return rc;
    }
    *out = r;
    return LC_OK;
}

void cublas_destroy(void *state)
{
    cublas_runner *r = (cublas_runner *)state;
    if (!r)
        return;
    lc_gpu_destroy(r->g);
    free(r);
}

// The input projection of all steps up front (premul variants).
int project_all_steps(const cublas_runner *r, int l, lc_error *err)
{
    lc_gpu_state *s = r->g;
    if (r->v->proj == PROJ_ALL_STEPS)
        return lc_gemm_input_all(s, l, 0.0f, err);
    // gates = b_ih on every row, then gates += in W_ih^T
    LC_TRY(lc_bias_broadcast(s->T * s->B, 4 * s->H, s->layers[l].b_ih, s->layers[l].gates,
                             4 * (size_t)s->H, s->stream, err));
    return lc_gemm_input_all(s, l, 1.0f, err);
}

int cublas_forward(void *state, lc_error *err)
{
    cublas_runner *r = (cublas_runner *)state;
    lc_gpu_state *s = r->g;
    const cublas_variant *v = r->v;
    LC_TRY(lc_fault_gpu(v->name, s->step, s->stream, err)); // test build only
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    for (int l = 0; l < s->L; l++) {
        const lc_gpu_layer *ly = &s->layers[l];
        if (v->proj != PROJ_PER_STEP)
            LC_TRY(project_all_steps(r, l, err));
        for (int t = 0; t < s->T; t++) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            if (v->proj == PROJ_PER_STEP)
                LC_TRY(lc_gemm_input_step(s, l, t, lc_gates_at(s, l, t), 0.0f, err));
            LC_TRY(lc_gemm_recurrent_step(s, l, t, s->step, 0.0f, err));
            // the cell adds gates[t] + step and the biases not added yet
            lc_cell_fwd a = lc_step_cell(s, l, t);
            a.pre_b = s->step;
            a.ld_pre_b = 4 * (size_t)s->H;
            a.bias_a = v->proj == PROJ_ALL_STEPS_BIAS ? ly->b_hh : ly->b_ih;
            a.bias_b = v->proj == PROJ_ALL_STEPS_BIAS ? nullptr : ly->b_hh;
            if (v->cell == CELL_EAGER)
                LC_TRY(lc_cell_forward_unfused(&a, s->scratch, s->stream, err));
            else
                LC_TRY(lc_cell_forward(&a, s->stream, err));
        }
        LC_TRY(lc_gpu_drop_output(s, l, err)); // dropout model: the next layer's input
    }
    s->forward_done = 1;
    return lc_extra_work_gpu_end(err);
}

// Bias gradients of `rows` rows of dg: one reduction into both when the
// variant shares it, else one per bias.
int reduce_biases(const cublas_runner *r, int l, int rows, const float *dg, bool ih, bool hh,
                  lc_error *err)
{
    lc_gpu_state *s = r->g;
    lc_gpu_layer *ly = &s->layers[l];
    const int G = 4 * s->H;
    if (ih && hh && r->v->shared_bias_grad)
        return lc_bias_grad(rows, G, dg, (size_t)G, s->bias_ws, ly->db_ih, ly->db_hh, s->stream,
                            err);
    if (ih)
        LC_TRY(lc_bias_grad(rows, G, dg, (size_t)G, s->bias_ws, ly->db_ih, nullptr, s->stream, err));
    if (hh)
        LC_TRY(lc_bias_grad(rows, G, dg, (size_t)G, s->bias_ws, ly->db_hh, nullptr, s->stream, err));
    return LC_OK;
}

// The cell backward of step t: dgates_t, and dc carried to step t-1.
int cell_backward_step(const cublas_runner *r, int l, int t, lc_error *err)
{
    lc_gpu_state *s = r->g;
    const lc_gpu_layer *ly = &s->layers[l];
    const size_t BH = (size_t)s->B * s->H, G = 4 * (size_t)s->H;
    const float *dseq = l == s->L - 1 ? s->dy : s->d_out; // NULL: a state-only runner
    lc_cell_bwd a;
    memset(&a, 0, sizeof a);
    a.rows = s->B;
    a.H = s->H;
    a.gates = ly->gates + (size_t)t * s->B * G;
    a.ld_gates = G;
    a.c = ly->cs + (size_t)(t + 1) * BH; // c_t
    a.c_prev = ly->cs + (size_t)t * BH;  // c_{t-1}
    a.dh_a = dseq ? dseq + (size_t)t * BH : nullptr;
    // the state gradients enter at the last step: this layer's dhy and dcy
    const bool last = t == s->T - 1;
    a.dh_b = last ? (s->dhy ? s->dhy + (size_t)l * BH : nullptr) : s->dh;
    a.dc = last ? (s->dcy ? s->dcy + (size_t)l * BH : nullptr) : s->dc;
    a.dgates = s->dgates + (size_t)t * s->B * G;
    a.ld_dgates = G;
    a.dc_prev = t == 0 ? s->dc0 + (size_t)l * BH : s->dc;
    a.ld_c = a.ld_c_prev = a.ld_dh_a = a.ld_dh_b = a.ld_dc = a.ld_dc_prev = (size_t)s->H;
    if (r->v->cell == CELL_EAGER)
        return lc_cell_backward_unfused(&a, s->scratch, s->stream, err);
    return lc_cell_backward(&a, s->stream, err);
}

// Step t's GEMMs after the cell: dh_{t-1}, and what autograd forms per step.
int gemms_backward_step(const cublas_runner *r, int l, int t, lc_error *err)
{
    lc_gpu_state *s = r->g;
    lc_gpu_layer *ly = &s->layers[l];
    const int B = s->B, H = s->H, G = 4 * s->H, In = ly->in_size;
    const size_t BH = (size_t)B * H;
    const float *dg_t = s->dgates + (size_t)t * B * G;
    // dh_{t-1} (B x H) = dgates_t W_hh; the cell has consumed s->dh (stream order)
    float *dh_out = t == 0 ? s->dh0 + (size_t)l * BH : s->dh;
    LC_TRY(lc_gemm(s, false, false, B, H, G, 1.0f, dg_t, G, ly->w_hh, H, 0.0f, dh_out, H, err));
    if (r->v->grads == GRADS_PER_STEP) // dW_hh += dgates_t^T h_{t-1}  (hs[t] = h_{t-1})
        LC_TRY(lc_gemm(s, true, false, G, H, B, 1.0f, dg_t, G, ly->hs + (size_t)t * BH, H, 1.0f,
                       ly->dw_hh, H, err));
    if (input_grads_per_step(r->v)) {
        const float *in_t = lc_layer_input(s, l) + (size_t)t * B * In;
        // dW_ih += dgates_t^T in_t; the input gradient of step t into dx or
        // the layer below's d_out[t], which this step's cell has read already
        float *d_in_t = (l == 0 ? s->dx : s->d_out) + (size_t)t * B * In;
        LC_TRY(lc_gemm(s, true, false, G, In, B, 1.0f, dg_t, G, in_t, In, 1.0f, ly->dw_ih, In, err));
        LC_TRY(lc_gemm(s, false, false, B, In, G, 1.0f, dg_t, G, ly->w_ih, In, 0.0f, d_in_t, In,
                       err));
    }
    return reduce_biases(r, l, B, dg_t, b_ih_per_step(r->v), b_hh_per_step(r->v), err);
}

// What the variant forms once over all T*B rows (dgates holds every step).
int grads_all_steps(const cublas_runner *r, int l, lc_error *err)
{
    lc_gpu_state *s = r->g;
    lc_gpu_layer *ly = &s->layers[l];
    const int H = s->H, G = 4 * s->H, TB = s->T * s->B, In = ly->in_size;
    if (r->v->grads == GRADS_ALL_STEPS) // dW_hh += dgates^T h_prev; hs[0..T-1] are the h_{t-1}
        LC_TRY(lc_gemm(s, true, false, G, H, TB, 1.0f, s->dgates, G, ly->hs, H, 1.0f, ly->dw_hh, H,
                       err));
    if (!input_grads_per_step(r->v)) {
        // dW_ih += dgates^T in; input gradient dgates W_ih into dx or the
        // layer below's d_out, which this layer's steps no longer read
        LC_TRY(lc_gemm(s, true, false, G, In, TB, 1.0f, s->dgates, G, lc_layer_input(s, l), In,
                       1.0f, ly->dw_ih, In, err));
        LC_TRY(lc_gemm(s, false, false, TB, In, G, 1.0f, s->dgates, G, ly->w_ih, In, 0.0f,
                       l == 0 ? s->dx : s->d_out, In, err));
    }
    return reduce_biases(r, l, TB, s->dgates, !b_ih_per_step(r->v), !b_hh_per_step(r->v), err);
}

int cublas_backward(void *state, lc_error *err)
{
    cublas_runner *r = (cublas_runner *)state;
    lc_gpu_state *s = r->g;
    if (!s->forward_done) {
        lc_error_set(err, "%s: backward before forward", s->name);
        return LC_ERROR;
    }
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    for (int l = s->L - 1; l >= 0; l--) {
        for (int t = s->T - 1; t >= 0; t--) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            LC_TRY(cell_backward_step(r, l, t, err));
            LC_TRY(gemms_backward_step(r, l, t, err));
        }
        LC_TRY(grads_all_steps(r, l, err));
        if (l > 0) // dropout model: d_out back through the mask between l-1 and l
            LC_TRY(lc_gpu_drop_gradient(s, l - 1, err));
    }
    s->backward_done = 1;
    return lc_extra_work_gpu_end(err);
}

int cublas_zero_grads(void *state, lc_error *err)
{
    return lc_gpu_zero_grads(((cublas_runner *)state)->g, err);
}

int cublas_read_results(void *state, lstm_results *res, lc_error *err)
{
    return lc_gpu_read_results(((cublas_runner *)state)->g, res, err);
}

size_t cublas_peak_device_bytes(void *state)
{
    return state ? lc_gpu_peak_device_bytes(((cublas_runner *)state)->g) : 0;
}

} // namespace

// One runner_ops table per variant, runner_<name>_ops; impl is the variant,
// the model the roster's (runners/runners.def).
#define LC_CUBLAS_RUNNER(id, variant, layers, text)                                               \
    extern "C" const runner_ops runner_##id##_ops = {                                             \
        .name = variant.name, .device = LC_DEVICE_CUDA, .description = text,                      \
        .caps = variant.caps, .precision = PRECISION_FP32, .max_layers = layers,                  \
        .available = lc_cuda_available, .create = cublas_create, .forward = cublas_forward,       \
        .backward = cublas_backward, .zero_grads = cublas_zero_grads,                             \
        .read_results = cublas_read_results, .peak_device_bytes = cublas_peak_device_bytes,       \
        .destroy = cublas_destroy, .impl = &variant, .model = RUNNER_MODEL_OF(id),                \
    }

LC_CUBLAS_RUNNER(aten, kAten, 1,
                 "FP32 cuBLAS, nn.LSTM with cuDNN off: per step 2 GEMMs + ATen's fused cell; "
                 "gradients per step as autograd");
LC_CUBLAS_RUNNER(py, kPy, 1,
                 "FP32 cuBLAS, the eager cells.py cell: per step 2 GEMMs + 12 elementwise "
                 "kernels; gradients per step as autograd");
LC_CUBLAS_RUNNER(jit, kJit, 1,
                 "FP32 cuBLAS, TorchScript jit: per step 2 GEMMs + 1 fused cell; gradients per "
                 "step as autograd");
LC_CUBLAS_RUNNER(jit_premul, kJitPremul, 1,
                 "FP32 cuBLAS: x W_ih^T for all steps in 1 GEMM, per step 1 GEMM + fused cell "
                 "(both biases)");
LC_CUBLAS_RUNNER(jit_premul_bias, kJitPremulB, 1,
                 "FP32 cuBLAS: x W_ih^T + b_ih for all steps in 1 GEMM, per step 1 GEMM + fused "
                 "cell (b_hh)");
LC_CUBLAS_RUNNER(jit_simple, kJitSimple, 1,
                 "FP32 cuBLAS: the jit cell returning only (hy, cy); gradient from hy and cy");
LC_CUBLAS_RUNNER(jit_multilayer, kJitLayers, 0,
                 "FP32 cuBLAS: L stacked jit layers, per layer and step 2 GEMMs + 1 fused cell");
LC_CUBLAS_RUNNER(jit_wgrad_all, kWgradAll, 1,
                 "FP32 cuBLAS, not an original runner: jit_premul_bias forward; weight, input "
                 "and bias gradients once over all steps");
LC_CUBLAS_RUNNER(jit_dropout, kJitDropout, 0,
                 "FP32 cuBLAS: jit_multilayer with the dropout model's mask (p = 0.4, an input "
                 "drawn from the seed) on every layer's output but the last");
