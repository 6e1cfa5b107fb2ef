/* Device queries for builds without CUDA. */
#include "device.h"

#include <string.h>

int device_cuda_built(void) { return 0; }

int device_cuda_count(lc_error *why)
{
    lc_error_set(why, "this build of lstmcheck has no CUDA support (nvcc was not found)");
    return 0;
}

void device_cuda_describe(char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
}
