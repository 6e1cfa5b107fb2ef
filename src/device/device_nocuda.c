/* Device queries for builds without CUDA. */
#include "device/device.h"
#include "device/machine.h"
#include "device/roofline.h"

#include <stdio.h>

#include <string.h>

int device_cuda_built(void) { return 0; }

device_cuda_state device_cuda_probe(lc_error *why)
{
    lc_error_set(why, "this build of lstmcheck has no CUDA support (nvcc was not found)");
    return DEVICE_CUDA_NONE;
}

int device_cuda_count(lc_error *why)
{
    device_cuda_probe(why);
    return 0;
}

void device_cuda_describe(char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
}

int device_cuda_used_here(void) { return 0; }

void machine_cuda_versions(char *cuda, size_t ncuda, char *cudnn, size_t ncudnn)
{
    snprintf(cuda, ncuda, "not built into this lstmcheck");
    snprintf(cudnn, ncudnn, "not built into this lstmcheck");
}

lc_status roofline_cuda_gemm_open(int m, int n, int k, void **gemm, lc_error *err)
{
    (void)m, (void)n, (void)k;
    *gemm = NULL;
    lc_error_set(err, "this build of lstmcheck has no CUDA support (nvcc was not found)");
    return LC_UNSUPPORTED;
}

lc_status roofline_cuda_gemm_time(void *gemm, int calls, double *seconds, lc_error *err)
{
    (void)gemm, (void)calls, (void)err;
    *seconds = 0;
    return LC_UNSUPPORTED;
}

void roofline_cuda_gemm_close(void *gemm)
{
    (void)gemm;
}
