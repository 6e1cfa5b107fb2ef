// Shared LSTM device kernels with host launchers (strict FP32).
//
// Conventions for every launcher here:
// - Matrices are row-major; every `ld_*` is a row stride in elements (>= the
//   row's width). A "gate row" is 4H wide, in PyTorch's order i, f, g, o,
//   each block H wide: gate q of row r, unit k is at p[r * ld + q * H + k].
// - `rows` is the number of rows (batch entries) to process, so a runner
//   with a batch sorted by length can pass the shrinking count of active
//   rows per step; rows == 0 launches nothing and returns LC_OK.
// - Optional inputs are NULL pointers (meaning zero or absent, as stated).
// - Everything is enqueued on `stream`; each launch is checked with
//   CUDA_CHECK_LAUNCH(), so a launcher returns LC_OK or LC_ERROR with
//   file:line in err. Nothing synchronizes.
// - Aliasing: where stated, an output may be the same memory as an input
//   with the SAME stride (each element is read before it is written by the
//   same thread, or the steps are separate kernels in stream order).
#ifndef LSTMCHECK_LSTM_CELLS_CUH
#define LSTMCHECK_LSTM_CELLS_CUH

#include <stddef.h>

#include "cuda_util.h"

// Propagate a LC_ERROR (err already set by the callee).
#ifndef LC_TRY
#define LC_TRY(call)                                                                \
    do {                                                                            \
        if ((call) != LC_OK)                                                    \
            return LC_ERROR;                                                    \
    } while (0)
#endif

// ---------------------------------------------------------------------------
// One LSTM step, forward:
//   pre = pre_a + pre_b + bias_a + bias_b            (rows x 4H)
//   i, f, o = sigmoid(pre_i, pre_f, pre_o), g = tanh(pre_g)
//   c = f * c_prev + i * g, h = o * tanh(c)
// The activated gates (i, f, g, o) are saved in `gates` for the backward.
struct lc_cell_fwd {
    int rows, H;
    const float *pre_a; size_t ld_pre_a;   // rows x 4H, required
    const float *pre_b; size_t ld_pre_b;   // rows x 4H, NULL: absent
    const float *bias_a, *bias_b;          // 4H each, NULL: absent
    const float *c_prev; size_t ld_c_prev; // rows x H, NULL: zero
    float *gates; size_t ld_gates;         // out, rows x 4H; may alias pre_a or pre_b
    float *c; size_t ld_c;                 // out, rows x H; may alias c_prev
    float *h; size_t ld_h;                 // out, rows x H; NULL: not formed (fused only: the
                                           // LayerNorm cell normalizes c first, layernorm.cuh)
    float *h2; size_t ld_h2;               // out, second copy of h (e.g. y_t), NULL: absent
};

// ---------------------------------------------------------------------------
// One LSTM step, backward (given the saved activations of that step):
//   dh  = dh_a + dh_b                           (e.g. dy_t + recurrent dh)
//   tc  = tanh(c)
//   dct = dc + dh * o * (1 - tc^2)
//   dpre_i = dct * g * i(1-i), dpre_f = dct * c_prev * f(1-f),
//   dpre_g = dct * i * (1-g^2), dpre_o = dh * tc * o(1-o)
//   dc_prev = dct * f
// The recurrent part dh_{t-1} = dgates W_hh is a GEMM the runner does.
struct lc_cell_bwd {
    int rows, H;
    const float *gates; size_t ld_gates;   // activated i, f, g, o of the step
    const float *c; size_t ld_c;           // c_t
    const float *c_prev; size_t ld_c_prev; // c_{t-1}, NULL: zero
    const float *dh_a; size_t ld_dh_a;     // NULL: zero
    const float *dh_b; size_t ld_dh_b;     // NULL: zero
    const float *dc; size_t ld_dc;         // gradient of c_t from later steps, NULL: zero
    float *dgates; size_t ld_dgates;       // out, rows x 4H: gradient of the pre-activations
    float *dc_prev; size_t ld_dc_prev;     // out, rows x H; may alias dc
};

// Fused: one kernel each, one thread per (row, unit).
int lc_cell_forward(const lc_cell_fwd *a, cudaStream_t stream, lc_error *err);
int lc_cell_backward(const lc_cell_bwd *a, cudaStream_t stream, lc_error *err);

// Unfused: the same arithmetic as a chain of separate elementwise kernels
// (bias adds, three sigmoids, tanh, products, sums), like eager ATen.
// scratch: contiguous room for LC_UNFUSED_SCRATCH_ROWS * rows * H floats
// (used as rows x H matrices with stride H); must not overlap any argument.
enum { LC_UNFUSED_SCRATCH_ROWS = 3 };
int lc_cell_forward_unfused(const lc_cell_fwd *a, float *scratch, cudaStream_t stream,
                            lc_error *err);
int lc_cell_backward_unfused(const lc_cell_bwd *a, float *scratch, cudaStream_t stream,
                             lc_error *err);

// ---------------------------------------------------------------------------
// Elementwise building blocks on rows x cols views (the unfused kernels).
enum lc_ew_unary_op {
    LC_EW_COPY,    // out = a
    LC_EW_SIGMOID, // out = 1 / (1 + exp(-a))
    LC_EW_TANH,    // out = tanh(a)
};
enum lc_ew_binary_op {
    LC_EW_ADD,         // out = a + b
    LC_EW_MUL,         // out = a * b
    LC_EW_SIGMOID_BWD, // out = a * b * (1 - b)  (a: gradient, b: sigmoid output)
    LC_EW_TANH_BWD,    // out = a * (1 - b * b)  (a: gradient, b: tanh output)
};
// out may alias a (or b) with the same stride.
int lc_ew_unary(lc_ew_unary_op op, int rows, int cols, const float *a, size_t lda, float *out,
                size_t ldo, cudaStream_t stream, lc_error *err);
int lc_ew_binary(lc_ew_binary_op op, int rows, int cols, const float *a, size_t lda,
                 const float *b, size_t ldb, float *out, size_t ldo, cudaStream_t stream,
                 lc_error *err);
// out[r][j] += bias[j]
int lc_ew_add_bias(int rows, int cols, const float *bias, float *out, size_t ldo,
                   cudaStream_t stream, lc_error *err);
// out[r][j] = bias[j] (e.g. to start a GEMM with beta = 1 from the bias)
int lc_bias_broadcast(int rows, int cols, const float *bias, float *out, size_t ldo,
                      cudaStream_t stream, lc_error *err);
// out[r][j] = 0
int lc_ew_zero(int rows, int cols, float *out, size_t ldo, cudaStream_t stream, lc_error *err);

// ---------------------------------------------------------------------------
// Bias gradient: column sums of dg (rows x cols), ACCUMULATED:
//   db_a[j] += sum_r dg[r][j];  db_b[j] += the same sum (db_b NULL: absent).
// Deterministic (fixed summation order, no atomics). partial: workspace of
// LC_BIAS_GRAD_CHUNKS * cols floats.
enum { LC_BIAS_GRAD_CHUNKS = 64 };
int lc_bias_grad(int rows, int cols, const float *dg, size_t ld, float *partial, float *db_a,
                 float *db_b, cudaStream_t stream, lc_error *err);
// The same for a product: out[j] += sum_r a[r][j] * b[r][j] (a LayerNorm's
// weight gradient: its output gradient times its normalized input).
int lc_column_dot(int rows, int cols, const float *a, size_t lda, const float *b, size_t ldb,
                  float *partial, float *out, cudaStream_t stream, lc_error *err);

#endif
