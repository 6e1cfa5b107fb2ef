/* The timing harness shared by `bench`, the perf tests and baseline
 * updates: warm-up, then samples until a stopping rule; each sample is
 * one forward and one backward time, followed by one control-workload
 * time. Only the harness decides how many samples are taken. */
#ifndef LSTMCHECK_HARNESS_H
#define LSTMCHECK_HARNESS_H

#include "check/gate.h"
#include "model/lstm.h"
#include "runners/runner.h"
#include "perf/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Optional observers of the timed loop (tracing, NVTX): called around every
 * iteration, forward and backward, with names such as "cpu/iter 3",
 * "forward", "backward". NULL members are not called. */
typedef struct harness_hooks {
    void (*range_push)(void *ctx, const char *name);
    void (*range_pop)(void *ctx);
    void *ctx;
} harness_hooks;

typedef struct harness_config {
    int warmup;              /* warm-up iterations (fewer if the budget runs out) */
    int min_samples;         /* never stop before this many (>= 2 unless max is 1) */
    int max_samples;         /* never more than this (--nloops) */
    /* Stop early once the relative standard error of both medians is below
     * this (0: off, always take max_samples unless the budget ends it). */
    double target_rel_error;
    double time_budget_s;    /* 0: none; else stop sampling past it (after min) */
    int with_control;        /* time the control workload after each sample */
    /* called after every warm-up iteration and sample (NULL: silent) */
    void (*progress)(void *ctx, const char *phase, int done, int total);
    void *progress_ctx;
    const harness_hooks *hooks; /* NULL: none */
    /* What the gate compared p's results with. What is timed must be what was checked:
     * the results of up to HARNESS_CHECKED timed iterations (one drawn at
     * random among the first min_samples, one among max_samples, and the
     * last) are read back after their timed regions and compared with it
     * by the gate's rule. NULL: not compared: for a runner whose timed
     * results no reference has (runner_timing_unchecked; it must be NULL
     * there, and the result says so), and for tests of the harness itself. */
    const gate_expected *expected;
} harness_config;

#define HARNESS_CHECKED 3

typedef struct harness_result {
    int n, warmup_done;
    double *fwd_ms, *bwd_ms, *ctl_ms; /* n each; ctl_ms NULL without control */
    sample_summary fwd, bwd, ctl;
    sample_summary fwd_ratio, bwd_ratio; /* per-sample runner/control */
    int budget_hit;       /* the time budget ended sampling before max_samples */
    int converged;        /* the noise target ended sampling */
    double elapsed_s;
    size_t peak_device_bytes;
    char control_name[96];
    /* The comparison of the timed iterations with the reference: how many
     * were compared, and the report of the last one compared (its reason
     * names the iteration). Kept when a difference discards the samples. */
    int checked;
    gate_report timed_check;
    /* "" when what was timed is what the gate checked; else why its timed
     * results were not compared, the label every output gives this timing
     * (runner_timing_unchecked) */
    char unchecked[160];
} harness_result;

/* LC_OK; LC_FAILED when a timed iteration's results differ from the
 * reference (res->timed_check says where; the samples are discarded and
 * err has the gate's one-line summary); LC_ERROR when the runner or the
 * timer failed (err says why). The runner gets a copy of p's inputs of its
 * own, made before anything is timed: one that writes them (they are
 * read-only) spoils only its copy, and is LC_ERROR with err
 * "<runner> changed its inputs: ..." once sampling has ended. */
lc_status harness_run(const runner_ops *r, const lstm_problem *p, const harness_config *cfg,
                harness_result *res, lc_error *err);
void harness_result_free(harness_result *res);
/* Recompute the summaries from the sample arrays (after appending). */
void harness_result_summarize(harness_result *res);
/* Relative standard error of a median from its samples: 1.2533 * sigma / sqrt(n) / median
 * with sigma estimated robustly as 1.4826 * MAD. */
double harness_median_rel_error(const sample_summary *s);

#ifdef __cplusplus
}
#endif
#endif
