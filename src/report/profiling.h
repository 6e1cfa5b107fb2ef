/* The profiling layer shared by `profile` and `bench --trace`: harness hooks
 * that mark runner, iteration, forward and backward as NVTX ranges and as
 * host ranges of the built-in trace; GPU activity through CUPTI
 * (gpu_trace.h); per runner the GPU utilization and GEMM share of its timed
 * region, and memory statistics (memstats.h). */
#ifndef LSTMCHECK_PROFILING_H
#define LSTMCHECK_PROFILING_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "perf/harness.h"
#include "device/memstats.h"
#include "device/trace.h"
#include "runners/group.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Step ranges in our GPU runners (kernels/nvtx_steps.h) when nonzero. */
extern int lc_nvtx_steps_on;

typedef struct prof_runner_stats {
    int have_window;          /* at least one timed iteration was seen */
    int have_gpu_stats;       /* GPU activity was collected */
    trace_gpu_stats gpu;
    memstats_device before;   /* before the runner's instance was created */
    memstats_device after;    /* at the end of its last timed iteration */
    memstats_summary summary; /* over the timed iterations */
} prof_runner_stats;

/* A runner's timed region, kept for the table of operations. */
typedef struct prof_window {
    const char *runner;   /* the runner's name (lives as long as the session's runners) */
    runner_group group;   /* a runner may run in two groups (--variable-lstms) */
    trace_interval *parts; /* its timed iterations, in order */
    size_t nparts;
} prof_window;

typedef struct prof_session {
    trace_buffer *trace;      /* NULL: no built-in trace */
    int gpu_trace;            /* CUPTI collects into trace */
    int nvtx;                 /* NVTX ranges on */
    int device_mem;           /* query device memory (cuda sessions) */
    harness_hooks hooks;
    /* the runner in progress */
    long runner_event;
    const char *runner_name;
    runner_group runner_group;
    int runner_on_gpu;
    memstats_device before;
    int depth, in_timed;
    uint64_t iter_start;       /* of the timed iteration in progress */
    trace_interval *iters;     /* the timed iterations so far: the runner's region */
    size_t niters, cap_iters;
    memstats_device *iter_mem; /* per timed iteration */
    int niter_mem, cap_iter_mem;
    /* each timed runner's region, in order */
    prof_window *windows;
    int nwindows, cap_windows;
    /* the first error a hook met (hooks cannot return one) */
    int failed;
    lc_error err;
} prof_session;

/* device: the session's. with_trace: collect the built-in
 * trace (host ranges; GPU activity through CUPTI on cuda). nvtx: emit NVTX
 * ranges (and step ranges in the GPU runners). Starts CUPTI before anything
 * else runs, so call it before the first runner. LC_OK, or with err
 * LC_UNSUPPORTED (no CUDA device for the GPU trace) or LC_ERROR. */
lc_status prof_begin(prof_session *p, lc_device device, int with_trace, int nvtx, lc_error *err);
/* Hooks for harness_config.hooks. */
const harness_hooks *prof_hooks(prof_session *p);
/* Ranges of the command's own (the gate, the runner). */
long prof_push(prof_session *p, const char *name);
void prof_pop(prof_session *p);
/* Around one runner's harness_run: begin pushes "runner <name>" and takes
 * the device memory before; end pops it, flushes GPU activity and fills out
 * (res may be NULL when the harness failed). GPU utilization and GEMM share
 * are given for CUDA runners only. 0, or 1 with err. */
int prof_runner_begin(prof_session *p, const runner_ops *r, runner_group group, lc_error *err);
int prof_runner_end(prof_session *p, const harness_result *res, prof_runner_stats *out,
                    lc_error *err);
/* Stop collecting and write the trace (when one was collected) to path. */
int prof_finish(prof_session *p, const char *path, lc_error *err);
void prof_free(prof_session *p);

/* The table of operations of each timed runner: over its timed iterations,
 * what its operations took (trace.h: host operations of the CPU runners;
 * kernels, memcpy, memset and CUDA API calls through CUPTI). One value,
 * read by the printers of report/op_table.h. */
typedef struct prof_op_table {
    const char *runner;
    runner_group group;
    int iterations;
    trace_op_table ops;
} prof_op_table;

typedef struct prof_op_report {
    prof_op_table *tables;
    int n;
} prof_op_report;

/* After the last runner (its GPU activity flushed by prof_runner_end):
 * the tables of the session's trace. 0, or 1 with err (no trace, out of
 * memory). */
int prof_op_report_make(prof_session *p, prof_op_report *out, lc_error *err);
void prof_op_report_free(prof_op_report *r);

/* Nanoseconds on the trace's clock (CUPTI's when GPU activity is collected,
 * else CLOCK_MONOTONIC). */
uint64_t prof_now_ns(prof_session *p);

/* The original's output name:
 * <dir>/prof_<names joined by ->_s<T>-l<L>-i<I>-h<H>-b<B>_<MMDDYY-HHMM>.<ext>
 * 0, or 1 with err when it does not fit in n. */
int prof_output_name(char *buf, size_t n, const char *dir, const char *const *names, int nnames,
                     const lstm_shape *s, const struct tm *when, const char *ext, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
