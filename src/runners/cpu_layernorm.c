/* The cpu runner's LayerNorm arithmetic (see cpu_layernorm.h). Built with
 * -ffast-math as runner_cpu.c: the cell's expf/tanhf vectorize; the
 * numerics gate checks the result. */
#include "runners/cpu_layernorm.h"

#include "runners/faults.h"

#include <math.h>
#include <string.h>

/* the variance over n, biased as nn.LayerNorm's (a planted fault: over
 * n - 1, torch.std's default) */
static float variance_divisor(int n)
{
    return FAULT_ON(FAULT_LN_VAR_UNBIASED) && n > 1 ? (float)(n - 1) : (float)n;
}

void cpu_ln_rows(float *v, float *hat, float *rstd, int rows, int n, const float *w, const float *b, float eps)
{
    const float eps_used = FAULT_ON(FAULT_LN_NO_EPS) ? 0.0f : eps;
    for (int r = 0; r < rows; r++) {
        float *x = v + (size_t)r * n, *xh = hat + (size_t)r * n;
        float mean = 0, var = 0;
        for (int k = 0; k < n; k++)
            mean += x[k];
        mean /= (float)n;
        for (int k = 0; k < n; k++)
            var += (x[k] - mean) * (x[k] - mean);
        const float rs = 1.0f / sqrtf(var / variance_divisor(n) + eps_used);
        for (int k = 0; k < n; k++) {
            xh[k] = (x[k] - mean) * rs;
            x[k] = xh[k] * w[k] + b[k];
        }
        rstd[r] = rs;
    }
}

/* one row: d = rstd (d w - mean(d w) - hat mean(d w hat)), into dst */
static void ln_row_backward(float *dst, const float *d, const float *restrict hat, float rstd, int n,
                            const float *restrict w)
{
    float m1 = 0, m2 = 0;
    for (int k = 0; k < n; k++) {
        m1 += d[k] * w[k];
        m2 += d[k] * w[k] * hat[k];
    }
    m1 /= (float)n;
    m2 /= (float)n;
    for (int k = 0; k < n; k++)
        dst[k] = rstd * (d[k] * w[k] - m1 - hat[k] * m2);
}

void cpu_ln_rows_backward(float *d, const float *hat, const float *rstd, int rows, int n, const float *w)
{
    for (int r = 0; r < rows; r++)
        ln_row_backward(d + (size_t)r * n, d + (size_t)r * n, hat + (size_t)r * n, rstd[r], n, w);
}

void cpu_ln_cell_forward(int H, const lstm_layernorm *ln, float *restrict g, const float *restrict c_in,
                         float *restrict c_out, float *restrict c_hat, float *rstd_c, float *restrict h_out)
{
    for (int k = 0; k < H; k++) {
        float gi = sigmoidf_(g[k]), gf = sigmoidf_(g[H + k]);
        float gg = tanhf(g[2 * H + k]), go = sigmoidf_(g[3 * H + k]);
        g[k] = gi;
        g[H + k] = gf;
        g[2 * H + k] = gg;
        g[3 * H + k] = go;
        c_out[k] = gf * c_in[k] + gi * gg;
    }
    if (FAULT_ON(FAULT_LN_CELL_SKIPPED)) {
        memcpy(c_hat, c_out, (size_t)H * sizeof(float));
        *rstd_c = 1.0f;
    } else
        cpu_ln_rows(c_out, c_hat, rstd_c, 1, H, ln->c_weight, ln->c_bias, (float)ln->eps);
    for (int k = 0; k < H; k++)
        h_out[k] = g[3 * H + k] * tanhf(c_out[k]);
}

void cpu_ln_cell_backward(int H, const lstm_layernorm *ln, const float *restrict g, const float *restrict ct,
                          const float *restrict c_hat, float rstd_c, const float *restrict cp,
                          const float *restrict d_out, const float *restrict dh, float *restrict dc,
                          float *restrict dg, float *restrict d_cell)
{
    for (int k = 0; k < H; k++) {
        float tc = tanhf(ct[k]);
        d_cell[k] = dc[k] + (dh[k] + d_out[k]) * g[3 * H + k] * (1.0f - tc * tc);
    }
    /* dc: the gradient of the cell before LN_c (a runner that skips LN_c
     * in its forward skips it here too: consistently wrong) */
    if (FAULT_ON(FAULT_LN_CELL_SKIPPED))
        memcpy(dc, d_cell, (size_t)H * sizeof(float));
    else
        ln_row_backward(dc, d_cell, c_hat, rstd_c, H, ln->c_weight);
    for (int k = 0; k < H; k++) {
        float gi = g[k], gf = g[H + k], gg = g[2 * H + k], go = g[3 * H + k];
        float tc = tanhf(ct[k]);
        float dct = dc[k];
        dg[k] = dct * gg * gi * (1.0f - gi);
        dg[H + k] = dct * cp[k] * gf * (1.0f - gf);
        dg[2 * H + k] = dct * gi * (1.0f - gg * gg);
        dg[3 * H + k] = (dh[k] + d_out[k]) * tc * go * (1.0f - go);
        dc[k] = dct * gf;
    }
}

void cpu_ln_param_grads(const float *d, const float *hat, int rows, int step_rows, int n, float *dw, float *db)
{
    /* a planted fault sums the weight's over the last step only */
    const int weight_from = FAULT_ON(FAULT_LN_WGRAD_LAST_STEP) ? rows - step_rows : 0;
    for (int r = 0; r < rows; r++) {
        const float *dr = d + (size_t)r * n, *hr = hat + (size_t)r * n;
        for (int k = 0; k < n; k++)
            db[k] += dr[k];
        for (int k = 0; r >= weight_from && k < n; k++)
            dw[k] += dr[k] * hr[k];
    }
}
