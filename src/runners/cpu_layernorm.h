/* The cpu runner's LayerNorm arithmetic (the LayerNorm model, FP32): rows
 * of LN forward and backward, the LayerNorm cell, and the LayerNorms'
 * parameter gradients. runner_cpu.c calls them where the model has
 * LayerNorm (lstm_layernorm_of: eps > 0); its GEMMs stay its own. */
#ifndef LSTMCHECK_CPU_LAYERNORM_H
#define LSTMCHECK_CPU_LAYERNORM_H

#include <stddef.h>

#include "model/lstm.h"

#include <math.h>

/* the cells' sigmoid (runner_cpu.c's and the LayerNorm cell's). Below
 * -88, e^-v overflows to Inf, and under -ffast-math 1 / Inf is a reciprocal
 * estimate refined by a Newton step, 0 * Inf: NaN. Clamped there, the
 * result is 0 or a denormal, as sigmoid's is; a NaN still passes (the
 * comparison is false). */
static inline float sigmoidf_(float v)
{
    v = v < -88.0f ? -88.0f : v;
    return 1.0f / (1.0f + expf(-v));
}

/* rows vectors of n at v, each replaced by LN(v) = hat * w + b with
 * hat = (v - mean) * rstd, rstd = 1/sqrt(var + eps); hat and rstd kept
 * (the tape of the backward). */
void cpu_ln_rows(float *v, float *hat, float *rstd, int rows, int n, const float *w, const float *b, float eps);

/* Its backward over rows: d, the gradient of LN's output, becomes that of
 * its input. */
void cpu_ln_rows_backward(float *d, const float *hat, const float *rstd, int rows, int n, const float *w);

/* The LayerNorm cell of one sequence: g (4H) holds LN_i + LN_h of the
 * step and becomes the activated gates; from the cell before, c_in,
 * c_out = LN_c(f c_in + i g) (with c_hat, *rstd_c for the backward) and
 * h_out = o tanh(c_out). */
void cpu_ln_cell_forward(int H, const lstm_layernorm *ln, float *restrict g, const float *restrict c_in,
                         float *restrict c_out, float *restrict c_hat, float *rstd_c, float *restrict h_out);

/* Its backward: from the saved gates, c_t (LN_c's output, with c_hat,
 * rstd_c) and c_{t-1}, dh + d_out and dc -> dg (the gradient of
 * LN_i + LN_h), d_cell (that of c_t, for LN_c's parameters); dc becomes
 * the gradient of c_{t-1}. */
void cpu_ln_cell_backward(int H, const lstm_layernorm *ln, const float *restrict g, const float *restrict ct,
                          const float *restrict c_hat, float rstd_c, const float *restrict cp,
                          const float *restrict d_out, const float *restrict dh, float *restrict dc,
                          float *restrict dg, float *restrict d_cell);

/* One LayerNorm's parameter gradients over rows (vectors of n), the steps
 * of step_rows rows each in order: dw += sum(d * hat), db += sum(d),
 * where d is its output's gradient. */
void cpu_ln_param_grads(const float *d, const float *hat, int rows, int step_rows, int n, float *dw, float *db);

#endif
