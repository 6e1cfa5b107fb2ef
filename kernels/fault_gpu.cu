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
