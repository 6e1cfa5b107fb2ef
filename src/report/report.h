/* Output of `bench`: the original's table on stderr and its JSON formats
 * (oss, pep) on stdout, plus a fuller JSON of our own. */
#ifndef LSTMCHECK_REPORT_H
#define LSTMCHECK_REPORT_H

#include <stdio.h>

#include "check/gate.h"
#include "perf/harness.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_entry {
    const runner_ops *runner;
    const char *group;       /* "lstm" or "vl_lstm", as the original names them */
    gate_report gate;
    int timed;               /* harness ran and res is valid */
    harness_result res;
    char error[512];         /* the harness's error when not timed after a pass */
    /* memory and trace figures filled by the profiling layer (0 when absent) */
    double gpu_utilization, gemm_share;
    int have_trace_stats;
    size_t peak_rss_bytes;
    size_t dev_used_before, dev_used_after;
} bench_entry;

/* The original's columns plus median, min, n and peak device memory;
 * trace_cols adds gpu_util and gemm_share at the end (bench --trace). */
void report_table_header(FILE *f, const char *sep, int trace_cols);
void report_table_row(FILE *f, const char *sep, const bench_entry *e, int trace_cols);

/* The JSON formats, numbers as Python's repr (base/json.h). 0, or 1 when
 * out of host memory (nothing printed). */
int report_json_oss(FILE *f, const bench_entry *e, int n);
int report_json_pep(FILE *f, const bench_entry *e, int n);
int report_json_full(FILE *f, const bench_entry *e, int n, const lstm_shape *s, uint64_t seed,
                     const char *device);

#ifdef __cplusplus
}
#endif
#endif
