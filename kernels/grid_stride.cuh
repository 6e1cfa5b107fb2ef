// What the elementwise kernels of lstm_cells.cu and layernorm.cu share:
// their block size, a grid-stride loop's start and step, and the strict
// FP32 sigmoid (expf, no fast-math intrinsic).
#ifndef LSTMCHECK_GRID_STRIDE_CUH
#define LSTMCHECK_GRID_STRIDE_CUH

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

} // namespace lc_kernels

#endif
