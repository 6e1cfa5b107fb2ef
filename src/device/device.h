/* Which devices exist on this machine. Built against the CUDA runtime when
 * CMake found nvcc (kernels/cuda_context.cu), else src/device/device_nocuda.c. */
#ifndef LSTMCHECK_DEVICE_H
#define LSTMCHECK_DEVICE_H

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the CUDA probe found on this machine. */
typedef enum device_cuda_state {
    DEVICE_CUDA_NONE = 0,   /* no NVIDIA driver or no device: GPU runners skip */
    DEVICE_CUDA_READY = 1,  /* a device this build can run on */
    /* A driver is there but CUDA does not work (driver older than the
     * runtime, no kernel image for the device, a context cannot be made):
     * an error for every GPU runner, never a skip. */
    DEVICE_CUDA_BROKEN = 2,
} device_cuda_state;

/* 1 when the build contains CUDA code. */
int device_cuda_built(void);
/* The probe, run once per process (the result is cached, and inherited by
 * forked children). It runs in a forked child of its own, so that asking
 * does not initialize CUDA in this process: a process that has initialized
 * CUDA cannot hand the GPU to children it forks (see isolate.h); with
 * LSTMCHECK_ISOLATE=0 it runs here. why says what was found, for every
 * state. */
device_cuda_state device_cuda_probe(lc_error *why);
/* Number of usable CUDA devices; 0 with the reason in why unless READY. */
int device_cuda_count(lc_error *why);
/* A one-line description of device 0 (name, SMs, compute capability), or
 * an empty string. From the probe: does not initialize CUDA here. */
void device_cuda_describe(char *buf, size_t n);
/* 1 once this process has made CUDA calls of its own (a runner, a timer,
 * the trace), after which forked children cannot use the GPU. */
int device_cuda_used_here(void);

#ifdef __cplusplus
}
#endif
#endif
