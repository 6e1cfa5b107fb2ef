// The CUDA half of src/device/memstats.h: device free/total memory.
#include "cuda_util.h"

#include "device/memstats.h"

extern "C" int memstats_cuda_mem_info(size_t *free_bytes, size_t *total_bytes, lc_error *err)
{
    *free_bytes = *total_bytes = 0;
    if (lc_cuda_enter(err) != LC_OK)
        return 1;
    cudaError_t rc = cudaMemGetInfo(free_bytes, total_bytes);
    if (rc != cudaSuccess) {
        lc_error_set(err, "%s:%d: cudaMemGetInfo: %s", __FILE__, __LINE__, cudaGetErrorString(rc));
        cudaGetLastError();
        return 1;
    }
    return 0;
}
