// What the kernels of lstm_cells.cu and layernorm.cu share: their block
// size, a grid-stride loop's start and step, the strict FP32 sigmoid
// (expf, no fast-math intrinsic), and an LSTM unit's gate gradients.
#ifndef LSTMCHECK_KERNEL_COMMON_CUH
#define LSTMCHECK_KERNEL_COMMON_CUH

#include <stddef.h>

namespace lc_kernels {

constexpr int kThreads = 256;        // a multiple of 32 (layernorm.cu's warp reductions)
constexpr size_t kMaxBlocks = 16384; // grid-stride loops cover the rest

// Blocks of kThreads for n elements, at least 1 and at most kMaxBlocks.
inline unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    if (b > kMaxBlocks)
        b = kMaxBlocks;
    return (unsigned)(b ? b : 1);
}

__device__ __forceinline__ float sigmoid_f(float v) { return 1.0f / (1.0f + expf(-v)); }
__device__ __forceinline__ size_t grid_start() { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t grid_step() { return (size_t)gridDim.x * blockDim.x; }

// Unit k of a gate row g (i, f, g, o activated, blocks H wide) backward,
// given dct, the gradient of the cell c_t = f c_{t-1} + i g, and dh, that of
// h_t = o tanh(c_t) (tc = tanh(c_t); cp = c_{t-1}): the four gates'
// pre-activation gradients into dg; returns dct * f, c_{t-1}'s gradient.
__device__ __forceinline__ float gate_grads(const float *g, size_t H, size_t k, float dct, float dh,
                                            float tc, float cp, float *dg)
{
    const float gi = g[k], gf = g[H + k], gg = g[2 * H + k], go = g[3 * H + k];
    dg[k] = dct * gg * gi * (1.0f - gi);
    dg[H + k] = dct * cp * gf * (1.0f - gf);
    dg[2 * H + k] = dct * gi * (1.0f - gg * gg);
    dg[3 * H + k] = dh * tc * go * (1.0f - go);
    return dct * gf;
}

} // namespace lc_kernels

#endif
