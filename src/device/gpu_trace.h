/* GPU activity for the built-in trace: CUPTI's Activity API collects
 * kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), memcpy, memset and NVTX
 * ranges (CUPTI_ACTIVITY_KIND_MARKER) into a trace_buffer. The CUDA half is
 * kernels/cupti_trace.cu; without CUDA, src/device/gpu_trace_nocuda.c reports
 * "built without CUDA". One collection at a time per process. */
#ifndef LSTMCHECK_GPU_TRACE_H
#define LSTMCHECK_GPU_TRACE_H

#include <stdint.h>

#include "device/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build can collect GPU activity. */
int gpu_trace_built(void);
/* Start collecting into t. Points NVTX at CUPTI (NVTX_INJECTION64_PATH,
 * unless already set) so NVTX ranges become marker records: call it before
 * the process's first NVTX call. 0 (LC_OK) on success; with err, an
 * lc_status: LC_UNSUPPORTED without a CUDA device (not here), else
 * LC_ERROR. */
int gpu_trace_start(trace_buffer *t, lc_error *err);
/* Deliver every completed record to the buffer; returns when done. */
int gpu_trace_flush(lc_error *err);
/* Flush everything, stop collecting and detach from the buffer. */
int gpu_trace_stop(lc_error *err);
/* CUPTI's clock (ns), the one the activity records use. */
int gpu_trace_timestamp(uint64_t *ns, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
