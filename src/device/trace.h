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
    TRACE_HOST_OP = 5,    /* an operation a CPU runner did (trace_op_end): a GEMM, a cell, a copy */
    TRACE_API = 6,        /* a CUDA runtime API call as CUPTI recorded it */
} trace_kind;

/* Lanes of the Chrome trace ("pid" / "tid"). */
enum {
    TRACE_PID_HOST = 1,   /* tid 1: the ranges lstmcheck records itself */
    TRACE_PID_NVTX = 2,   /* tid: the OS thread that pushed the NVTX range */
    TRACE_PID_API = 3,    /* tid: the OS thread that made the CUDA call */
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

/* A region: disjoint intervals in order, [start, end) each; a runner's
 * timed iterations (what lies between them, the checks of drawn
 * iterations, is not in it). */
uint64_t trace_region_ns(const trace_interval *parts, size_t nparts);
/* 1 when t lies in a part. */
int trace_region_holds(const trace_interval *parts, size_t nparts, uint64_t t);
/* The length of the union of iv clipped to the region, into *out:
 * overlapping time is counted once (iv unchanged). 0, or 1 on out of
 * memory. */
int trace_union_in_region(const trace_interval *iv, size_t n, const trace_interval *parts, size_t nparts,
                          uint64_t *out);

/* 1 when a kernel name is a matrix-multiply or convolution kernel, by a
 * case-insensitive substring: gemm, gemv, cutlass, wgrad, dgrad, conv,
 * xmma (sm90_xmma...), matmul, splitkreduce. */
int trace_is_gemm_kernel(const char *name);

typedef struct trace_gpu_stats {
    uint64_t window_ns;     /* the region's length */
    uint64_t busy_ns;       /* union of kernel intervals in the region */
    uint64_t gemm_ns;       /* union of GEMM kernel intervals in the region */
    size_t kernels, gemm_kernels; /* kernels overlapping the region */
    double utilization;     /* busy / window (0 for an empty region) */
    double gemm_share;      /* gemm / busy (0 without kernels) */
} trace_gpu_stats;

/* Kernels of every device over a region (above). 0 on success; 1 with err
 * on out of memory. */
int trace_gpu_stats_region(trace_buffer *t, const trace_interval *parts, size_t nparts, trace_gpu_stats *out,
                           lc_error *err);

/* ---- operation spans and the per-operation table (trace_ops.c) ---- */

/* While a buffer is attached, the CPU runners record their own operations
 * (GEMMs, cells, copies, fused steps, barriers) into it as TRACE_HOST_OP
 * events: lane (TRACE_PID_HOST, 1 + lc_parallel_rank()), so the calling
 * thread's operations nest inside its ranges and each team member has a
 * lane of its own. Detached (NULL), a span costs one load and a branch.
 * now: the trace's clock. One buffer at a time per process. */
void trace_ops_attach(trace_buffer *t, uint64_t (*now)(void));
/* What the inline checks read (trace_ops.c): not to be used otherwise. */
extern trace_buffer *trace_ops_attached_;
uint64_t trace_op_clock_(void);
void trace_op_record_(const char *name, uint64_t start);
/* The span's start, 0 when nothing is attached. */
static inline uint64_t trace_op_begin(void)
{
    return __atomic_load_n(&trace_ops_attached_, __ATOMIC_ACQUIRE) ? trace_op_clock_() : 0;
}
/* Records [start, now) as operation name (a string that says what it is,
 * "gemm.recurrent"); nothing when start is 0 or nothing is attached. */
static inline void trace_op_end(const char *name, uint64_t start)
{
    if (start)
        trace_op_record_(name, start);
}
/* stmt as the operation name: a leaf (no operation inside another). */
#define TRACE_OP(name, stmt)                              \
    do {                                                  \
        const uint64_t trace_op_start_ = trace_op_begin(); \
        stmt;                                             \
        trace_op_end(name, trace_op_start_);              \
    } while (0)

/* One operation of the table: the events of one kind and name. */
typedef struct trace_op_row {
    char *name;
    int kind;           /* trace_kind: TRACE_HOST_OP, TRACE_KERNEL, TRACE_MEMCPY, TRACE_MEMSET, TRACE_API */
    uint64_t calls;
    uint64_t total_ns;  /* the sum of the events' durations */
    uint32_t lanes;     /* the threads (host, API) or streams (GPU) it ran on */
} trace_op_row;

/* The operations that started in a region, by total time, longest first
 * (ties by kind, then name). The region is a runner's timed iterations:
 * shares are of their wall time, and operations on several threads or
 * streams at once add up past it. */
typedef struct trace_op_table {
    uint64_t window_ns;       /* the region's length */
    uint64_t main_covered_ns; /* the union of the calling thread's operations (lane 1), clipped to the region */
    trace_op_row *rows;
    size_t n;
} trace_op_table;

/* 1 for the kinds the table counts: operations, kernels, memcpy, memset,
 * API calls (not the ranges of lstmcheck or NVTX, which hold them). */
int trace_kind_is_operation(int kind);
/* The table of a region: every operation event whose start lies in it,
 * counted whole. 0, or 1 with err on out of memory. */
int trace_op_table_region(trace_buffer *t, const trace_interval *parts, size_t nparts, trace_op_table *out,
                          lc_error *err);
void trace_op_table_free(trace_op_table *tab);
/* The kind as the trace's "cat" and the table's column say it: "op",
 * "kernel", "memcpy", "memset", "api", "nvtx", "host". */
const char *trace_kind_name(int kind);

#ifdef __cplusplus
}
#endif
#endif
