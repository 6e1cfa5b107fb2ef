// Test-only GPU faults (src/runners/faults.h). Unlike the other .cu files, which
// are compiled once into objects both library builds share, this file is
// compiled into each build: its switch is live only in lstmcheck_lib_faults
// and a no-op call in the product.
#include "cuda_util.h"

#include <string.h>

#include "runners/faults.h"

#ifdef LSTMCHECK_FAULTS
namespace {
// Far past the end: a write just past a buffer can land in the same 2 MiB
// page and go unseen but by memcheck; this one must fault.
constexpr size_t kFarPastEnd = (size_t)1 << 34; // floats: 64 GiB

__global__ void oob_write_kernel(float *p) { p[kFarPastEnd] = 1.0f; }

// The planted slowdown's clock: the device's nanosecond timer, read where the
// stream is, so that the host never waits for the GPU to know the time.
__device__ unsigned long long g_pass_began_ns;

__device__ unsigned long long globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void mark_pass_began_kernel() { g_pass_began_ns = globaltimer_ns(); }

// One thread holds the stream for `percent` of the time since the mark
// (none at 0): the pass takes that much longer and nothing else on the GPU
// is slowed.
__global__ void extra_wait_kernel(double percent)
{
    const unsigned long long now = globaltimer_ns();
    const double wait_ns = (double)(now - g_pass_began_ns) * percent / 100.0;
    while ((double)(globaltimer_ns() - now) < wait_ns) {
    }
}
} // namespace
#endif

extern "C" int lc_fault_gpu(const char *runner, float *buf, cudaStream_t stream, lc_error *err)
{
#ifdef LSTMCHECK_FAULTS
    if (FAULT_ON(FAULT_GPU_OOB_WRITE) && !strcmp(runner, "jit")) {
        oob_write_kernel<<<1, 1, 0, stream>>>(buf);
        CUDA_CHECK_LAUNCH();
    }
#else
    (void)runner;
    (void)buf;
    (void)stream;
    (void)err;
#endif
    return LC_OK;
}

// In the test build both kernels run in every pass, also with nothing
// planted: their launches then cost the unchanged runs what they cost the
// planted ones, and a planted level differs from 0 by its wait alone.
extern "C" int lc_extra_work_gpu_begin(lc_error *err)
{
#ifdef LSTMCHECK_FAULTS
    mark_pass_began_kernel<<<1, 1, 0, lc_cuda_stream()>>>();
    CUDA_CHECK_LAUNCH();
#else
    (void)err;
#endif
    return LC_OK;
}

extern "C" int lc_extra_work_gpu_end(lc_error *err)
{
#ifdef LSTMCHECK_FAULTS
    extra_wait_kernel<<<1, 1, 0, lc_cuda_stream()>>>(EXTRA_WORK_PERCENT());
    CUDA_CHECK_LAUNCH();
#else
    (void)err;
#endif
    return LC_OK;
}
