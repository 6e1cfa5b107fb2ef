// The LayerNorm LSTM runners (the layernorm model: the original fastrnns'
// LayerNormLSTMCell, custom_lstms.py), side by side: jit_layernorm with
// each LayerNorm one fused kernel, jit_layernorm_decom with each written as
// separate mean, variance and normalize operations (layernorm.cuh). Per
// layer and step, as the original's scripted cell:
//   forward   x_t W_ih^T and h_{t-1} W_hh^T (2 GEMMs), LN_i and LN_h on
//             them in place, the gates and the cell before LN_c, LN_c in
//             place, h = o tanh(c)
//   backward  the gradient of c_t, back through LN_c, the gates' gradients,
//             back through LN_i and LN_h (each from the same gradient: the
//             gates are their sum), then dh_{t-1} and, as autograd, the
//             weight and input gradients of the step's GEMMs; the
//             LayerNorms' parameter gradients once per layer over all steps
// The decomposed variant keeps LayerNorm's eps: the original's leaves it
// out, which computes another function (our planted fault ln_no_eps) that
// the gate rejects. Shared state, buffers and GEMM mapping:
// lstm_gpu_common.cuh (no b_ih, b_hh under this model; the LayerNorms'
// parameters in the layers' slots). Strict FP32 on one stream.
#include "runners/runner.h"
#include "layernorm.cuh"
#include "lstm_gpu_common.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

struct ln_variant {
    const char *name;
    lc_ln_kind kind;
};

// clang-format off
//                                 name                   each LayerNorm
constexpr ln_variant kFused =      {"jit_layernorm",       LC_LN_FUSED};
constexpr ln_variant kDecomposed = {"jit_layernorm_decom", LC_LN_DECOMPOSED};
// clang-format on

constexpr unsigned kCaps = RUNNER_BACKWARD | RUNNER_STATE_GRADS | RUNNER_MULTILAYER;

// What the backward reads of a layer's forward besides gates, hs and cs.
struct ln_tape {
    float *i_hat, *h_hat;            // (T, B, 4H): LN_i's, LN_h's normalized inputs
    float *c_hat;                    // (T, B, H): LN_c's
    float *rstd_i, *rstd_h, *rstd_c; // (T, B)
};

struct ln_runner {
    lc_gpu_state *g;
    const ln_variant *v;
    float eps;
    ln_tape *tape;  // L entries
    float *d_cell;  // (T, B, H): the gradient of each c_t (LN_c's output)
    float *dg_ih;   // (B, 4H): a step's gradient of x_t W_ih^T (g->step holds W_hh h_{t-1}'s)
    float *row_ws;  // 2B: the decomposed LayerNorm's per-row workspace
};

void ln_destroy(void *state)
{
    ln_runner *r = (ln_runner *)state;
    if (!r)
        return;
    lc_gpu_destroy(r->g); // frees the tape's device buffers too
    free(r->tape);
    free(r);
}

int tape_create(ln_runner *r, lc_error *err)
{
    lc_gpu_state *s = r->g;
    const size_t TB = (size_t)s->T * s->B, H = (size_t)s->H;
    r->tape = (ln_tape *)calloc((size_t)s->L, sizeof *r->tape);
    if (!r->tape) {
        lc_error_set(err, "%s: out of host memory", s->name);
        return LC_ERROR;
    }
    for (int l = 0; l < s->L; l++) {
        ln_tape *tp = &r->tape[l];
        LC_TRY(lc_gpu_alloc(s, &tp->i_hat, TB * 4 * H, err));
        LC_TRY(lc_gpu_alloc(s, &tp->h_hat, TB * 4 * H, err));
        LC_TRY(lc_gpu_alloc(s, &tp->c_hat, TB * H, err));
        LC_TRY(lc_gpu_alloc(s, &tp->rstd_i, TB, err));
        LC_TRY(lc_gpu_alloc(s, &tp->rstd_h, TB, err));
        LC_TRY(lc_gpu_alloc(s, &tp->rstd_c, TB, err));
    }
    LC_TRY(lc_gpu_alloc(s, &r->d_cell, TB * H, err));
    LC_TRY(lc_gpu_alloc(s, &r->dg_ih, (size_t)s->B * 4 * H, err));
    return lc_gpu_alloc(s, &r->row_ws, 2 * (size_t)s->B, err);
}

int ln_create(const runner_ops *self, const lstm_problem *p, void **out, lc_error *err)
{
    const ln_variant *v = static_cast<const ln_variant *>(self->impl);
    *out = nullptr;
    LC_TRY(lc_gpu_check_model(self, p, err));
    const lstm_model *m = lstm_model_get(p->model); // the layernorm model: its eps
    ln_runner *r = (ln_runner *)calloc(1, sizeof *r);
    if (!r) {
        lc_error_set(err, "%s: out of host memory", v->name);
        return LC_ERROR;
    }
    r->v = v;
    r->eps = (float)m->layernorm_eps;
    int rc = lc_gpu_create(p, v->name, kCaps, LC_NEED_STEP, (void **)&r->g, err);
    if (rc == LC_OK)
        rc = tape_create(r, err);
    if (rc != LC_OK) {
        ln_destroy(r);
        return rc;
    }
    *out = r;
    return LC_OK;
}

// LayerNorm of the B rows of v (n wide) in place, saving hat and rstd.
int layernorm_rows(const ln_runner *r, float *v, int n, const float *w, const float *b, float *hat,
                   float *rstd, lc_error *err)
{
    lc_ln_fwd a;
    memset(&a, 0, sizeof a);
    a.rows = r->g->B;
    a.n = n;
    a.in = a.out = v;
    a.ld_in = a.ld_out = a.ld_hat = (size_t)n;
    a.w = w;
    a.b = b;
    a.eps = r->eps;
    a.hat = hat;
    a.rstd = rstd;
    a.mean = r->row_ws;
    return lc_ln_forward(r->v->kind, &a, r->g->stream, err);
}

// Its backward: dx (B rows, n wide) from d, the saved hat and rstd.
int layernorm_rows_backward(const ln_runner *r, const float *d, int n, const float *w,
                            const float *hat, const float *rstd, float *dx, lc_error *err)
{
    lc_ln_bwd a;
    memset(&a, 0, sizeof a);
    a.rows = r->g->B;
    a.n = n;
    a.d = d;
    a.ld_d = a.ld_hat = a.ld_dx = (size_t)n;
    a.hat = hat;
    a.rstd = rstd;
    a.w = w;
    a.dx = dx;
    a.m1 = r->row_ws;
    a.m2 = r->row_ws + r->g->B;
    return lc_ln_backward(r->v->kind, &a, r->g->stream, err);
}

int forward_step(const ln_runner *r, int l, int t, lc_error *err)
{
    lc_gpu_state *s = r->g;
    const lc_gpu_layer *ly = &s->layers[l];
    const ln_tape *tp = &r->tape[l];
    const int H = s->H, G = 4 * s->H;
    const size_t B = (size_t)s->B, BH = B * H, BG = B * G;
    float *gates_t = lc_gates_at(s, l, t);
    LC_TRY(lc_gemm_input_step(s, l, t, gates_t, 0.0f, err));
    LC_TRY(lc_gemm_recurrent_step(s, l, t, s->step, 0.0f, err));
    LC_TRY(layernorm_rows(r, gates_t, G, ly->slot[LSTMCHECK_LN_I_WEIGHT], ly->slot[LSTMCHECK_LN_I_BIAS],
                          tp->i_hat + t * BG, tp->rstd_i + t * B, err));
    LC_TRY(layernorm_rows(r, s->step, G, ly->slot[LSTMCHECK_LN_H_WEIGHT], ly->slot[LSTMCHECK_LN_H_BIAS],
                          tp->h_hat + t * BG, tp->rstd_h + t * B, err));
    // the gates and the cell before LN_c (no biases; h after LN_c)
    lc_cell_fwd c = lc_step_cell(s, l, t); // pre_a = gates = gates_t, c_prev, c, h
    c.pre_b = s->step;
    c.ld_pre_b = (size_t)G;
    float *h = c.h;
    c.h = nullptr;
    LC_TRY(lc_cell_forward(&c, s->stream, err));
    LC_TRY(layernorm_rows(r, c.c, H, ly->slot[LSTMCHECK_LN_C_WEIGHT], ly->slot[LSTMCHECK_LN_C_BIAS],
                          tp->c_hat + t * BH, tp->rstd_c + t * B, err));
    c.h = h;
    return lc_ln_cell_hidden(&c, s->stream, err);
}

int ln_forward(void *state, lc_error *err)
{
    ln_runner *r = (ln_runner *)state;
    lc_gpu_state *s = r->g;
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    for (int l = 0; l < s->L; l++) {
        for (int t = 0; t < s->T; t++) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            LC_TRY(forward_step(r, l, t, err));
        }
    }
    s->forward_done = 1;
    return lc_extra_work_gpu_end(err);
}

// The cell's backward arguments at step t of layer l: the state gradients
// enter at the last step (this layer's dhy, dcy), dc carries to step t-1.
lc_ln_cell_bwd cell_backward_args(const ln_runner *r, int l, int t)
{
    const lc_gpu_state *s = r->g;
    const lc_gpu_layer *ly = &s->layers[l];
    const size_t H = (size_t)s->H, G = 4 * H, BH = (size_t)s->B * H;
    const float *dseq = l == s->L - 1 ? s->dy : s->d_out; // gradient into the layer's outputs
    const bool last = t == s->T - 1;
    lc_ln_cell_bwd c;
    memset(&c, 0, sizeof c);
    c.rows = s->B;
    c.H = s->H;
    c.gates = lc_gates_at(s, l, t);
    c.c = ly->cs + (t + 1) * BH;
    c.c_prev = ly->cs + t * BH;
    c.dh_a = dseq ? dseq + t * BH : nullptr;
    c.dh_b = last ? (s->dhy ? s->dhy + l * BH : nullptr) : s->dh;
    c.dc = last ? (s->dcy ? s->dcy + l * BH : nullptr) : s->dc;
    c.d_cell = r->d_cell + t * BH;
    c.dc_pre = s->dc; // LN_c's backward writes it after d_cell has read dc
    c.dgates = s->dgates + t * (size_t)s->B * G;
    c.dc_prev = t == 0 ? s->dc0 + l * BH : s->dc;
    c.ld_gates = c.ld_dgates = G;
    c.ld_c = c.ld_c_prev = c.ld_dh_a = c.ld_dh_b = c.ld_dc = c.ld_d_cell = c.ld_dc_pre =
        c.ld_dc_prev = H;
    return c;
}

// The cell, LN_c, LN_i and LN_h of step t backward: dgates_t, dg_ih, and
// dg_hh in g->step.
int pointwise_backward_step(const ln_runner *r, int l, int t, lc_error *err)
{
    lc_gpu_state *s = r->g;
    const lc_gpu_layer *ly = &s->layers[l];
    const ln_tape *tp = &r->tape[l];
    const int H = s->H, G = 4 * s->H;
    const size_t B = (size_t)s->B, BH = B * H, BG = B * G;
    const lc_ln_cell_bwd c = cell_backward_args(r, l, t);
    LC_TRY(lc_ln_cell_d_cell(&c, s->stream, err));
    LC_TRY(layernorm_rows_backward(r, c.d_cell, H, ly->slot[LSTMCHECK_LN_C_WEIGHT], tp->c_hat + t * BH,
                                   tp->rstd_c + t * B, s->dc, err));
    LC_TRY(lc_ln_cell_dgates(&c, s->stream, err));
    LC_TRY(layernorm_rows_backward(r, c.dgates, G, ly->slot[LSTMCHECK_LN_I_WEIGHT], tp->i_hat + t * BG,
                                   tp->rstd_i + t * B, r->dg_ih, err));
    return layernorm_rows_backward(r, c.dgates, G, ly->slot[LSTMCHECK_LN_H_WEIGHT], tp->h_hat + t * BG,
                                   tp->rstd_h + t * B, s->step, err);
}

// Step t's GEMMs, as autograd forms them per step: dh_{t-1}, dW_hh, dW_ih
// and the input gradient (dx, or the layer below's d_out[t], which this
// step's cell has read already).
int gemms_backward_step(const ln_runner *r, int l, int t, lc_error *err)
{
    lc_gpu_state *s = r->g;
    lc_gpu_layer *ly = &s->layers[l];
    const int B = s->B, H = s->H, G = 4 * s->H, In = ly->in_size;
    const size_t BH = (size_t)B * H;
    const float *dg_hh = s->step;
    float *dh_out = t == 0 ? s->dh0 + (size_t)l * BH : s->dh;
    LC_TRY(lc_gemm(s, false, false, B, H, G, 1.0f, dg_hh, G, ly->w_hh, H, 0.0f, dh_out, H, err));
    LC_TRY(lc_gemm(s, true, false, G, H, B, 1.0f, dg_hh, G, ly->hs + (size_t)t * BH, H, 1.0f,
                   ly->dw_hh, H, err));
    const float *in_t = lc_layer_input(s, l) + (size_t)t * B * In;
    float *d_in_t = (l == 0 ? s->dx : s->d_out) + (size_t)t * B * In;
    LC_TRY(lc_gemm(s, true, false, G, In, B, 1.0f, r->dg_ih, G, in_t, In, 1.0f, ly->dw_ih, In, err));
    return lc_gemm(s, false, false, B, In, G, 1.0f, r->dg_ih, G, ly->w_ih, In, 0.0f, d_in_t, In, err);
}

// The LayerNorms' parameter gradients of layer l over all T*B rows: each
// bias gets the column sums of its output gradient, each weight those
// times its normalized input. LN_i's and LN_h's outputs are summed, so
// both get dgates; LN_c's gets d_cell.
int layernorm_param_grads(const ln_runner *r, int l, lc_error *err)
{
    lc_gpu_state *s = r->g;
    lc_gpu_layer *ly = &s->layers[l];
    const ln_tape *tp = &r->tape[l];
    const int TB = s->T * s->B, H = s->H, G = 4 * s->H;
    float *const *d = ly->dslot;
    LC_TRY(lc_bias_grad(TB, G, s->dgates, G, s->bias_ws, d[LSTMCHECK_LN_I_BIAS], d[LSTMCHECK_LN_H_BIAS],
                        s->stream, err));
    LC_TRY(lc_column_dot(TB, G, s->dgates, G, tp->i_hat, G, s->bias_ws, d[LSTMCHECK_LN_I_WEIGHT],
                         s->stream, err));
    LC_TRY(lc_column_dot(TB, G, s->dgates, G, tp->h_hat, G, s->bias_ws, d[LSTMCHECK_LN_H_WEIGHT],
                         s->stream, err));
    LC_TRY(lc_bias_grad(TB, H, r->d_cell, H, s->bias_ws, d[LSTMCHECK_LN_C_BIAS], nullptr, s->stream,
                        err));
    return lc_column_dot(TB, H, r->d_cell, H, tp->c_hat, H, s->bias_ws, d[LSTMCHECK_LN_C_WEIGHT],
                         s->stream, err);
}

int ln_backward(void *state, lc_error *err)
{
    ln_runner *r = (ln_runner *)state;
    lc_gpu_state *s = r->g;
    if (!s->forward_done) {
        lc_error_set(err, "%s: backward before forward", s->name);
        return LC_ERROR;
    }
    LC_TRY(lc_extra_work_gpu_begin(err)); // test build only: perf_power's planted slowdown
    for (int l = s->L - 1; l >= 0; l--) {
        for (int t = s->T - 1; t >= 0; t--) {
            LC_NVTX_STEP(t); // a "step <t>" range when profiling (nvtx_steps.h)
            LC_TRY(pointwise_backward_step(r, l, t, err));
            LC_TRY(gemms_backward_step(r, l, t, err));
        }
        LC_TRY(layernorm_param_grads(r, l, err));
    }
    s->backward_done = 1;
    return lc_extra_work_gpu_end(err);
}

int ln_zero_grads(void *state, lc_error *err) { return lc_gpu_zero_grads(((ln_runner *)state)->g, err); }

int ln_read_results(void *state, lstm_results *res, lc_error *err)
{
    return lc_gpu_read_results(((ln_runner *)state)->g, res, err);
}

size_t ln_peak_device_bytes(void *state)
{
    return state ? lc_gpu_peak_device_bytes(((ln_runner *)state)->g) : 0;
}

} // namespace

// One runner_ops table per variant, runner_<name>_ops; impl is the variant.
#define LC_LAYERNORM_RUNNER(id, variant, text)                                                    \
    extern "C" const runner_ops runner_##id##_ops = {                                             \
        .name = variant.name, .device = LC_DEVICE_CUDA, .description = text,                      \
        .caps = kCaps, .precision = PRECISION_FP32, .max_layers = 0,                              \
        .available = lc_cuda_available, .create = ln_create, .forward = ln_forward,               \
        .backward = ln_backward, .zero_grads = ln_zero_grads,                                     \
        .read_results = ln_read_results, .peak_device_bytes = ln_peak_device_bytes,               \
        .destroy = ln_destroy, .impl = &variant, .model = RUNNER_MODEL_OF(id),                    \
    }

LC_LAYERNORM_RUNNER(jit_layernorm, kFused,
                    "FP32 cuBLAS, the LayerNorm LSTM: per step 2 GEMMs, 3 fused LayerNorm kernels "
                    "and 2 pointwise ones");
LC_LAYERNORM_RUNNER(jit_layernorm_decom, kDecomposed,
                    "FP32 cuBLAS, the LayerNorm LSTM with each LayerNorm as mean, variance and "
                    "normalize kernels (the original's decomposed one, with eps)");
