/* Which devices exist on this machine. Built against the CUDA runtime when
 * CMake found nvcc (kernels/device_cuda.cu), else src/device_nocuda.c. */
#ifndef LSTMCHECK_DEVICE_H
#define LSTMCHECK_DEVICE_H

#include "lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the build contains CUDA code. */
int device_cuda_built(void);
/* Number of usable CUDA devices; 0 with the reason in why when none
 * (no driver, no device, or a build without CUDA). Never fails harder. */
int device_cuda_count(lc_error *why);
/* A one-line description of device 0 (name, SMs, compute capability), or
 * an empty string. */
void device_cuda_describe(char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
