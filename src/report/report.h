/* Output of `bench`: the original's table on stderr and its JSON formats
 * (oss, pep) on stdout, plus a fuller JSON of our own. */
#ifndef LSTMCHECK_REPORT_H
#define LSTMCHECK_REPORT_H

#include <stdio.h>

#include "check/gate.h"
#include "device/device.h"
#include "device/roofline.h"
#include "perf/context.h"
#include "perf/harness.h"
#include "runners/group.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_entry {
    const runner_ops *runner;
    runner_group group;
    gate_report gate;
    int timed;               /* harness ran and res is valid */
    harness_result res;
    char error[512];         /* the harness's error when not timed after a pass */
    /* memory and trace figures filled by the profiling layer (0 when absent) */
    double gpu_utilization, gemm_share;
    int have_trace_stats;
    size_t peak_rss_bytes;
    size_t dev_used_before, dev_used_after;
    /* the roofline, from the medians (bench_roofline): the GEMM FLOPs at
     * its group's shape (lstm_gemm_flops), the rates and the multiples of
     * its device's limit (0 where no limit was measured) */
    double gemm_flops[2], gflops[2], x_limit[2]; /* [0] forward, [1] backward */
    /* its model's sizes at its group's shape (lstm_model_sizes; have_sizes
     * 0 where it gave none) */
    int have_sizes;
    lstm_sizes sizes;
} bench_entry;

/* What a device's runners' roofline was measured against: the device's
 * limit, or why there is none. One per device in a run (a run may hold CPU
 * and GPU runners: each is held to its own device's limit). */
typedef struct report_limit {
    int asked;          /* the run has runners on this device */
    lc_status status;   /* LC_OK with a positive limit.gflops: measured */
    roofline_limit limit;
    char why[256];      /* else: why not */
} report_limit;

/* The lines below a bench table: each asked device's limit (or why none),
 * and the GEMM FLOPs the GFLOP/s columns count. */
void report_limit_lines(FILE *f, const report_limit limits[LC_DEVICE_COUNT], const double gemm_flops[2]);

/* The original's columns plus median, min, n, peak device memory and the
 * roofline (GFLOP/s and the multiple of the limit per phase); trace_cols
 * adds gpu_util and gemm_share at the end (bench --trace). */
void report_table_header(FILE *f, const char *sep, int trace_cols);
void report_table_row(FILE *f, const char *sep, const bench_entry *e, int trace_cols);

/* bench --print-json: one list, X(ID, token): the original's formats oss
 * (one object of means) and pep (a Caffe2Observer line per sample), and
 * full (every sample, spread, memory, the gate: ours). A timing no
 * reference checked (harness_result.unchecked) is labelled in each: oss
 * gains a member "unchecked" {runner: why}, a pep line and a full runner
 * a member "unchecked": why. */
#define REPORT_JSON_LIST(X) \
    X(OSS, oss)             \
    X(PEP, pep)             \
    X(FULL, full)

typedef enum report_json_format {
    REPORT_JSON_NONE = -1, /* no JSON asked for */
#define REPORT_JSON_ENUM(id, token) REPORT_JSON_##id,
    REPORT_JSON_LIST(REPORT_JSON_ENUM)
#undef REPORT_JSON_ENUM
} report_json_format;

/* The names in the list's order, a space before each: " oss pep full". */
#define REPORT_JSON_WORD(id, token) " " #token
#define REPORT_JSON_WORDS REPORT_JSON_LIST(REPORT_JSON_WORD)

/* What the full format says of the run besides its runners. */
typedef struct report_run {
    const run_context *context; /* where, when and with what it ran; NULL: not said */
    lstm_shape shape;
    const int *lengths;        /* the main group's --lengths (shape.batch of them), or NULL */
    const lstm_shape *vl_shape; /* --variable-lstms: its group's shape and drawn lengths, or NULL */
    const int *vl_lengths;
    uint64_t seed;
    lc_device device;
    report_limit limit[LC_DEVICE_COUNT]; /* per device: each runner's x_limit is against its device's */
} report_run;

/* The entries in format (numbers as Python's repr, base/json.h), then a
 * newline. 0, or 1 when out of host memory (nothing printed). */
int report_json(FILE *f, report_json_format format, const bench_entry *e, int n, const report_run *run);

#ifdef __cplusplus
}
#endif
#endif
