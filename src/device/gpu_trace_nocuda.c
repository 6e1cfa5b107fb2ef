/* GPU activity collection in builds without CUDA: nothing to collect. The
 * CUDA build compiles kernels/cupti_trace.cu instead. */
#include "device/gpu_trace.h"

#ifndef LSTMCHECK_WITH_CUDA

#define NOT_BUILT "GPU trace: lstmcheck was built without CUDA (no CUPTI)"

int gpu_trace_built(void) { return 0; }

int gpu_trace_start(trace_buffer *t, lc_error *err)
{
    (void)t;
    lc_error_set(err, NOT_BUILT);
    return 1;
}

int gpu_trace_flush(lc_error *err)
{
    lc_error_set(err, NOT_BUILT);
    return 1;
}

int gpu_trace_stop(lc_error *err)
{
    lc_error_set(err, NOT_BUILT);
    return 1;
}

int gpu_trace_timestamp(uint64_t *ns, lc_error *err)
{
    *ns = 0;
    lc_error_set(err, NOT_BUILT);
    return 1;
}

#else
typedef int gpu_trace_nocuda_unused; /* ISO C: no empty translation units */
#endif
