/* NVTX ranges around the time steps of our own GPU runners, so nsys and the
 * built-in trace show each step. Off unless `profile` or `bench --trace`
 * turned them on (lc_nvtx_steps_on, defined in src/report/profiling.c): a timed
 * loop pays one load and branch per step. Compiles to nothing without CUDA.
 *
 *   for (int t = 0; t < T; t++) {
 *       LC_NVTX_STEP(t);            // C++: a range closed at the end of the scope
 *       ...
 *   }
 * or, in C, lc_nvtx_step_push(t) ... lc_nvtx_step_pop() on every path. */
#ifndef LSTMCHECK_NVTX_STEPS_H
#define LSTMCHECK_NVTX_STEPS_H

#ifdef __cplusplus
extern "C" {
#endif
extern int lc_nvtx_steps_on;
#ifdef __cplusplus
}
#endif

#if defined(__CUDACC__) || defined(LSTMCHECK_WITH_CUDA)
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static inline void lc_nvtx_step_push(int t)
{
    if (lc_nvtx_steps_on) {
        char name[32];
        snprintf(name, sizeof name, "step %d", t);
        nvtxRangePushA(name);
    }
}

static inline void lc_nvtx_step_pop(void)
{
    if (lc_nvtx_steps_on)
        nvtxRangePop();
}
#else
static inline void lc_nvtx_step_push(int t) { (void)t; }
static inline void lc_nvtx_step_pop(void) {}
#endif

#ifdef __cplusplus
/* A step range that closes on every way out of the scope (LC_TRY returns). */
struct lc_nvtx_step_scope {
    bool on;
    explicit lc_nvtx_step_scope(int t) : on(lc_nvtx_steps_on != 0) { if (on) lc_nvtx_step_push(t); }
    ~lc_nvtx_step_scope() { if (on) lc_nvtx_step_pop(); }
    lc_nvtx_step_scope(const lc_nvtx_step_scope &) = delete;
    lc_nvtx_step_scope &operator=(const lc_nvtx_step_scope &) = delete;
};
#define LC_NVTX_STEP(t) lc_nvtx_step_scope lc_nvtx_step_scope_(t)
#endif

#endif
