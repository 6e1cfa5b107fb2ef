// LayerNorm over rows, fused or decomposed, and the pointwise pieces of the
// LayerNorm LSTM's cell (the layernorm model, model/model.h), strict FP32.
//
// LN(v) = (v - mean(v)) * rstd * w + b over each row's n elements, with
// rstd = 1 / sqrt(var(v) + eps) and var biased (over n), as nn.LayerNorm.
// The forward saves hat = (v - mean) * rstd and rstd; the backward is
//   dv = rstd * (d w - mean(d w) - hat * mean(d w hat)).
// Two ways to compute each, side by side (the two runners of
// runner_layernorm.cu):
//   LC_LN_FUSED       one kernel, a block per row (nn.LayerNorm's kernel)
//   LC_LN_DECOMPOSED  the original's decomposed LayerNorm, as separate
//                     operations: a row mean, a row variance, an elementwise
//                     normalize; backward two row means and an elementwise
//                     combine (3 kernels each way)
// Conventions as lstm_cells.cuh: row strides, optional inputs NULL, stream
// order, every launch checked, LC_OK or LC_ERROR; rows == 0 launches nothing.
#ifndef LSTMCHECK_LAYERNORM_CUH
#define LSTMCHECK_LAYERNORM_CUH

#include "lstm_cells.cuh"

enum lc_ln_kind {
    LC_LN_FUSED,
    LC_LN_DECOMPOSED,
};

struct lc_ln_fwd {
    int rows, n;
    const float *in; size_t ld_in;
    const float *w, *b; float eps;  // n each
    float *out; size_t ld_out;      // may alias in (same stride)
    float *hat; size_t ld_hat;      // saved (in - mean) * rstd
    float *rstd;                    // saved, one per row
    float *mean;                    // one per row: the decomposed kind's workspace
};

struct lc_ln_bwd {
    int rows, n;
    const float *d; size_t ld_d;    // gradient of the output
    const float *hat; size_t ld_hat;
    const float *rstd, *w;
    float *dx; size_t ld_dx;        // gradient of the input; may alias d (same stride)
    float *m1, *m2;                 // one per row each: the decomposed kind's workspace
};

int lc_ln_forward(lc_ln_kind kind, const lc_ln_fwd *a, cudaStream_t stream, lc_error *err);
int lc_ln_backward(lc_ln_kind kind, const lc_ln_bwd *a, cudaStream_t stream, lc_error *err);

// ---------------------------------------------------------------------------
// The LayerNorm LSTM's step around LN_c (rows x H, one thread per unit).
// Forward: the gates and the cell before LN_c are lc_cell_forward's with
// h = NULL (pre_a, pre_b: LN_i's and LN_h's outputs, no biases); LN_c then
// normalizes c in place, and
//   lc_ln_cell_hidden  h = o * tanh(c), from a's gates, c and h
int lc_ln_cell_hidden(const lc_cell_fwd *a, cudaStream_t stream, lc_error *err);

// Backward, with LN_c's backward between the two:
//   lc_ln_cell_d_cell  d_cell = dc + dh * o * (1 - tanh(c)^2), dh = dh_a + dh_b:
//                      the gradient of c_t, LN_c's output
//   lc_ln_cell_dgates  from dc_pre (LN_c's input gradient) and dh: the gates'
//                      gradients dgates, and dc_prev = dc_pre * f
struct lc_ln_cell_bwd {
    int rows, H;
    const float *gates; size_t ld_gates;   // activated i, f, g, o
    const float *c; size_t ld_c;           // c_t, after LN_c
    const float *c_prev; size_t ld_c_prev; // c_{t-1}, NULL: zero
    const float *dh_a; size_t ld_dh_a;     // NULL: zero
    const float *dh_b; size_t ld_dh_b;     // NULL: zero
    const float *dc; size_t ld_dc;         // gradient of c_t from later steps, NULL: zero
    float *d_cell; size_t ld_d_cell;       // out of the first
    const float *dc_pre; size_t ld_dc_pre; // in of the second
    float *dgates; size_t ld_dgates;       // out, rows x 4H
    float *dc_prev; size_t ld_dc_prev;     // out; may alias dc_pre
};
int lc_ln_cell_d_cell(const lc_ln_cell_bwd *a, cudaStream_t stream, lc_error *err);
int lc_ln_cell_dgates(const lc_ln_cell_bwd *a, cudaStream_t stream, lc_error *err);

#endif
