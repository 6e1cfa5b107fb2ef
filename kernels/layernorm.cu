// LayerNorm, fused and decomposed side by side, and the LayerNorm LSTM's
// pointwise cell pieces (see layernorm.cuh for the contract). Strict FP32:
// expf/tanhf/sqrtf, no fast-math intrinsics; every reduction in a fixed
// order (the same result on every run).
#include "layernorm.cuh"
#include "kernel_common.cuh"

using namespace lc_kernels; // kernel_common.cuh

namespace {

// The sum of v over the block, in every thread; red: 32 floats of shared
// memory. Each warp adds the warp sums in the same order, so every thread
// gets the same value.
__device__ float block_sum(float v, float *red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    __syncthreads(); // red may still be read from the previous call
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The mean over a row of a * w * c, w a per-column vector and c a row of a
// matrix (NULL: 1), by one block.
__device__ float row_mean(int n, const float *a, const float *w, const float *c, float *red)
{
    float s = 0.0f;
    for (int k = (int)threadIdx.x; k < n; k += (int)blockDim.x)
        s += a[k] * (w ? w[k] : 1.0f) * (c ? c[k] : 1.0f);
    return block_sum(s, red) / (float)n;
}

// 1 / sqrt(var + eps) of a row with the given mean, by one block.
__device__ float row_rstd(int n, const float *a, float mean, float eps, float *red)
{
    float q = 0.0f;
    for (int k = (int)threadIdx.x; k < n; k += (int)blockDim.x) {
        const float d = a[k] - mean;
        q += d * d;
    }
    return 1.0f / sqrtf(block_sum(q, red) / (float)n + eps);
}

// ---- fused: a block per row --------------------------------------------
// The reads of a row all finish inside the last block_sum, before any
// thread writes: out (dx) may alias in (d).
__global__ void ln_forward_fused_kernel(lc_ln_fwd a)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = a.in + r * a.ld_in;
    const float mean = row_mean(a.n, x, nullptr, nullptr, red);
    const float rs = row_rstd(a.n, x, mean, a.eps, red);
    for (int k = (int)threadIdx.x; k < a.n; k += (int)blockDim.x) {
        const float h = (x[k] - mean) * rs;
        a.hat[r * a.ld_hat + k] = h;
        a.out[r * a.ld_out + k] = h * a.w[k] + a.b[k];
    }
    if (threadIdx.x == 0)
        a.rstd[r] = rs;
}

__global__ void ln_backward_fused_kernel(lc_ln_bwd a)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *d = a.d + r * a.ld_d, *hat = a.hat + r * a.ld_hat;
    const float m1 = row_mean(a.n, d, a.w, nullptr, red);
    const float m2 = row_mean(a.n, d, a.w, hat, red);
    const float rs = a.rstd[r];
    for (int k = (int)threadIdx.x; k < a.n; k += (int)blockDim.x)
        a.dx[r * a.ld_dx + k] = rs * (d[k] * a.w[k] - m1 - hat[k] * m2);
}

// ---- decomposed: one operation per kernel --------------------------------
// out[r] = mean of a * w * c over row r (w, c NULL: 1)
__global__ void row_mean_kernel(int n, const float *a, size_t lda, const float *w, const float *c,
                                size_t ldc, float *out)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float m = row_mean(n, a + r * lda, w, c ? c + r * ldc : nullptr, red);
    if (threadIdx.x == 0)
        out[r] = m;
}

__global__ void row_rstd_kernel(int n, const float *a, size_t lda, const float *mean, float eps,
                                float *rstd)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float rs = row_rstd(n, a + r * lda, mean[r], eps, red);
    if (threadIdx.x == 0)
        rstd[r] = rs;
}

__global__ void normalize_kernel(lc_ln_fwd a)
{
    const size_t n = (size_t)a.n, total = (size_t)a.rows * n;
    for (size_t idx = grid_start(); idx < total; idx += grid_step()) {
        const size_t r = idx / n, k = idx - r * n;
        const float h = (a.in[r * a.ld_in + k] - a.mean[r]) * a.rstd[r];
        a.hat[r * a.ld_hat + k] = h;
        a.out[r * a.ld_out + k] = h * a.w[k] + a.b[k];
    }
}

__global__ void combine_kernel(lc_ln_bwd a)
{
    const size_t n = (size_t)a.n, total = (size_t)a.rows * n;
    for (size_t idx = grid_start(); idx < total; idx += grid_step()) {
        const size_t r = idx / n, k = idx - r * n;
        const float d = a.d[r * a.ld_d + k], h = a.hat[r * a.ld_hat + k];
        a.dx[r * a.ld_dx + k] = a.rstd[r] * (d * a.w[k] - a.m1[r] - h * a.m2[r]);
    }
}

// ---- the cell ------------------------------------------------------------
__global__ void ln_cell_hidden_kernel(lc_cell_fwd a)
{
    const size_t H = (size_t)a.H, n = (size_t)a.rows * H;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / H, k = idx - r * H;
        a.h[r * a.ld_h + k] = a.gates[r * a.ld_gates + 3 * H + k] * tanhf(a.c[r * a.ld_c + k]);
    }
}

__device__ __forceinline__ float cell_dh(const lc_ln_cell_bwd &a, size_t r, size_t k)
{
    return (a.dh_a ? a.dh_a[r * a.ld_dh_a + k] : 0.0f) + (a.dh_b ? a.dh_b[r * a.ld_dh_b + k] : 0.0f);
}

__global__ void ln_cell_d_cell_kernel(lc_ln_cell_bwd a)
{
    const size_t H = (size_t)a.H, n = (size_t)a.rows * H;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / H, k = idx - r * H;
        const float go = a.gates[r * a.ld_gates + 3 * H + k];
        const float tc = tanhf(a.c[r * a.ld_c + k]);
        const float dc = a.dc ? a.dc[r * a.ld_dc + k] : 0.0f;
        a.d_cell[r * a.ld_d_cell + k] = dc + cell_dh(a, r, k) * go * (1.0f - tc * tc);
    }
}

__global__ void ln_cell_dgates_kernel(lc_ln_cell_bwd a)
{
    const size_t H = (size_t)a.H, n = (size_t)a.rows * H;
    for (size_t idx = grid_start(); idx < n; idx += grid_step()) {
        const size_t r = idx / H, k = idx - r * H;
        const float tc = tanhf(a.c[r * a.ld_c + k]);
        const float dct = a.dc_pre[r * a.ld_dc_pre + k]; // read before dc_prev is written
        const float cp = a.c_prev ? a.c_prev[r * a.ld_c_prev + k] : 0.0f;
        float *dg = a.dgates + r * a.ld_dgates;
        a.dc_prev[r * a.ld_dc_prev + k] =
            gate_grads(a.gates + r * a.ld_gates, H, k, dct, cell_dh(a, r, k), tc, cp, dg);
    }
}

} // namespace

int lc_ln_forward(lc_ln_kind kind, const lc_ln_fwd *a, cudaStream_t stream, lc_error *err)
{
    if (a->rows <= 0 || a->n <= 0)
        return LC_OK;
    const unsigned rows = (unsigned)a->rows;
    if (kind == LC_LN_FUSED) {
        ln_forward_fused_kernel<<<rows, kThreads, 0, stream>>>(*a);
        CUDA_CHECK_LAUNCH();
        return LC_OK;
    }
    row_mean_kernel<<<rows, kThreads, 0, stream>>>(a->n, a->in, a->ld_in, nullptr, nullptr, 0, a->mean);
    CUDA_CHECK_LAUNCH();
    row_rstd_kernel<<<rows, kThreads, 0, stream>>>(a->n, a->in, a->ld_in, a->mean, a->eps, a->rstd);
    CUDA_CHECK_LAUNCH();
    normalize_kernel<<<blocks_for((size_t)a->rows * a->n), kThreads, 0, stream>>>(*a);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

int lc_ln_backward(lc_ln_kind kind, const lc_ln_bwd *a, cudaStream_t stream, lc_error *err)
{
    if (a->rows <= 0 || a->n <= 0)
        return LC_OK;
    const unsigned rows = (unsigned)a->rows;
    if (kind == LC_LN_FUSED) {
        ln_backward_fused_kernel<<<rows, kThreads, 0, stream>>>(*a);
        CUDA_CHECK_LAUNCH();
        return LC_OK;
    }
    row_mean_kernel<<<rows, kThreads, 0, stream>>>(a->n, a->d, a->ld_d, a->w, nullptr, 0, a->m1);
    CUDA_CHECK_LAUNCH();
    row_mean_kernel<<<rows, kThreads, 0, stream>>>(a->n, a->d, a->ld_d, a->w, a->hat, a->ld_hat, a->m2);
    CUDA_CHECK_LAUNCH();
    combine_kernel<<<blocks_for((size_t)a->rows * a->n), kThreads, 0, stream>>>(*a);
    CUDA_CHECK_LAUNCH();
    return LC_OK;
}

// The three cell launchers: one thread per (row, unit).
#define LC_LN_CELL_LAUNCHER(fn, args_type, kernel)                                                \
    int fn(const args_type *a, cudaStream_t stream, lc_error *err)                                \
    {                                                                                             \
        const size_t n = (size_t)a->rows * (size_t)a->H;                                          \
        if (n == 0)                                                                               \
            return LC_OK;                                                                         \
        kernel<<<blocks_for(n), kThreads, 0, stream>>>(*a);                                       \
        CUDA_CHECK_LAUNCH();                                                                      \
        return LC_OK;                                                                             \
    }
LC_LN_CELL_LAUNCHER(lc_ln_cell_hidden, lc_cell_fwd, ln_cell_hidden_kernel)
LC_LN_CELL_LAUNCHER(lc_ln_cell_d_cell, lc_ln_cell_bwd, ln_cell_d_cell_kernel)
LC_LN_CELL_LAUNCHER(lc_ln_cell_dgates, lc_ln_cell_bwd, ln_cell_dgates_kernel)
