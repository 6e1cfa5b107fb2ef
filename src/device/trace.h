/* The built-in trace: an event buffer that host ranges (from the harness
 * hooks) and GPU activity records (from CUPTI, kernels/cupti_trace.cu) feed,
 * a Chrome trace writer (JSON "traceEvents" of "ph":"X" complete events that
 * Perfetto and chrome://tracing open), and the arithmetic of GPU utilization
 * and GEMM share. Pure C: nothing here needs CUDA.
 *
 * Times are nanoseconds on one clock per trace (CUPTI's when GPU activity is
 * collected, else CLOCK_MONOTONIC); the writer turns them into microseconds
 * relative to the earliest event. Every function takes the buffer's lock, so
 * CUPTI's worker thread and the main thread may add events at once. */
#ifndef LSTMCHECK_TRACE_H
#define LSTMCHECK_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trace_kind {
    TRACE_HOST_RANGE = 0, /* a harness / command range on the host */
    TRACE_KERNEL = 1,     /* a GPU kernel */
    TRACE_MEMCPY = 2,
    TRACE_MEMSET = 3,
    TRACE_MARKER = 4,     /* an NVTX range as CUPTI recorded it */
} trace_kind;

/* Lanes of the Chrome trace ("pid" / "tid"). */
enum {
    TRACE_PID_HOST = 1,   /* tid 1: the ranges lstmcheck records itself */
    TRACE_PID_NVTX = 2,   /* tid: the OS thread that pushed the NVTX range */
    TRACE_PID_GPU = 100,  /* + device id; tid: CUDA stream id */
};

/* How a kernel was launched (CUPTI's record), written as its args. */
typedef struct trace_launch {
    int grid[3], block[3]; /* block[0] == 0: not known */
    unsigned registers;    /* per thread */
    int shared_bytes;      /* static and dynamic */
} trace_launch;

typedef struct trace_event {
    uint64_t start_ns, end_ns;
    const char *name;  /* interned in the buffer */
    const char *args;  /* interned JSON object text (made by base/json), or NULL */
    uint64_t bytes;    /* memcpy / memset size, else 0 */
    trace_launch launch; /* kernels, when known */
    int kind;          /* trace_kind */
    uint32_t pid, tid;
} trace_event;

typedef struct trace_buffer trace_buffer;

/* clock: a short name written into the trace ("cupti", "CLOCK_MONOTONIC"). */
trace_buffer *trace_create(const char *clock, lc_error *err);
void trace_destroy(trace_buffer *t);

/* Copies name and args into the buffer. 0 on success; on out of memory the
 * event is dropped, counted, and 1 returned. */
int trace_add(trace_buffer *t, const trace_event *e);
/* Host ranges on lane (TRACE_PID_HOST, 1): push returns the event's index
 * (-1 when dropped); pop closes the innermost open range. Properly nested
 * by construction. A range still open at write time ends at the last event. */
long trace_host_push(trace_buffer *t, const char *name, uint64_t now_ns);
void trace_host_pop(trace_buffer *t, uint64_t now_ns);
/* Replace the args (a JSON object's text) of event i. */
void trace_set_args(trace_buffer *t, long i, const char *args_json);
/* A lane's name ("stream 7"), written as thread_name metadata. */
void trace_name_lane(trace_buffer *t, uint32_t pid, uint32_t tid, const char *name);
/* Records CUPTI reported as dropped (written into the trace's otherData). */
void trace_note_dropped(trace_buffer *t, uint64_t n);

size_t trace_count(trace_buffer *t);
/* Copy of event i (name/args stay valid while the buffer lives). */
int trace_get(trace_buffer *t, size_t i, trace_event *out);
uint64_t trace_dropped(trace_buffer *t);

/* The Chrome trace as one malloc'ed NUL-terminated string (*len without the
 * NUL). Events sorted by (pid, tid, start, longest first), so ranges on one
 * lane come parent before child. NULL with err on out of memory. */
char *trace_to_json(trace_buffer *t, size_t *len, lc_error *err);
/* trace_to_json written atomically (temporary file + rename). */
int trace_write_json(trace_buffer *t, const char *path, lc_error *err);

/* ---- utilization arithmetic ---- */
typedef struct trace_interval {
    uint64_t start, end; /* end >= start */
} trace_interval;

/* Length of the union of the intervals after clipping each to [lo, hi):
 * overlapping time is counted once. Sorts iv in place. */
uint64_t trace_union_ns(trace_interval *iv, size_t n, uint64_t lo, uint64_t hi);

/* 1 when a kernel name is a matrix-multiply or convolution kernel, by a
 * case-insensitive substring: gemm, gemv, cutlass, wgrad, dgrad, conv,
 * xmma (sm90_xmma...), matmul, splitkreduce. */
int trace_is_gemm_kernel(const char *name);

typedef struct trace_gpu_stats {
    uint64_t window_ns;     /* hi - lo */
    uint64_t busy_ns;       /* union of kernel intervals in the window */
    uint64_t gemm_ns;       /* union of GEMM kernel intervals in the window */
    size_t kernels, gemm_kernels; /* kernels overlapping the window */
    double utilization;     /* busy / window (0 for an empty window) */
    double gemm_share;      /* gemm / busy (0 without kernels) */
} trace_gpu_stats;

/* Kernels of every device overlapping [lo, hi). 0 on success; 1 with err
 * on out of memory. */
int trace_gpu_stats_window(trace_buffer *t, uint64_t lo, uint64_t hi, trace_gpu_stats *out,
                           lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
