/* Measuring for baselines and comparisons: rounds of the timing harness
 * with the control workload, pooled; and the comparison of a fresh
 * measurement with a baseline entry through the verdict (verdict.h). */
#ifndef LSTMCHECK_PERF_H
#define LSTMCHECK_PERF_H

#include "perf/baseline.h"
#include "perf/harness.h"
#include "runners/runner.h"
#include "perf/verdict.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct perf_settings {
    int warmup;
    int min_samples, max_samples;   /* per round */
    double target_rel_error;        /* per round: stop when both medians are this precise */
    double round_budget_s;          /* per round */
    int baseline_rounds;            /* rounds pooled into a baseline entry (noise from their spread) */
    double compare_budget_s;        /* a comparison measures more rounds while inconclusive, up to this */
    int drift_rounds;               /* ... or until this many rounds in a row are past the drift guard
                                       (against a recorded entry; 0: never; PERF_DRIFT_ROUNDS) */
} perf_settings;

/* The defaults a round starts from (baseline --help quotes these). */
#define PERF_CPU_WARMUP 3
#define PERF_CUDA_WARMUP 10
#define PERF_CPU_MIN_SAMPLES 15
#define PERF_CUDA_MIN_SAMPLES 30
#define PERF_CPU_MAX_SAMPLES 200
#define PERF_CUDA_MAX_SAMPLES 500
#define PERF_CPU_ROUND_BUDGET_S 15
#define PERF_CUDA_ROUND_BUDGET_S 10
void perf_default_settings(lc_device device, perf_settings *s);
/* A comparison with a recorded entry ends after this many rounds in a row
 * whose control is past the drift guard (VERDICT_MAX_CONTROL_DRIFT), the
 * same way: the host is in another state than the entry's, where no
 * verdict can be reached, so its budget goes to the A/B that stands in
 * (where none can, baseline compare sets perf_settings.drift_rounds 0 and
 * waits out its budget for the state to pass). One round could be the
 * host's passing moment; three is a state. */
#define PERF_DRIFT_ROUNDS 3

/* Perf measurements on a CPU use one BLAS thread: on a shared 2-core
 * machine thread wake-ups made the run-to-run noise of the cpu runner
 * 2-8% with two threads and about 0.5% with one (docs/perf.md). Call
 * before taking the machine key, which records the thread count. */
#define PERF_CPU_BLAS_THREADS 1
void perf_prepare_device(lc_device device);

/* The perf matrix: named shape sets per device (perf/shape_sets.def). */
typedef struct perf_shape_set {
    const char *name;
    lc_device device;
    lstm_shape shape;
} perf_shape_set;
extern const perf_shape_set perf_shape_sets[]; /* terminated by name == NULL */
const perf_shape_set *perf_find_shape_set(lc_device device, const char *name);
/* (runner, shape set) pairs of the device's perf matrix: the family of one perf run. */
int perf_matrix_size(lc_device device);

/* Measure rounds of r on p and fill a baseline entry (owns its arrays).
 * expected: what the gate compared p's results with, and the timed
 * iterations' results are compared with (harness.h). LC_OK; LC_FAILED when they differed (err says
 * where; nothing is kept); LC_ERROR. */
lc_status perf_measure_entry(const runner_ops *r, const lstm_problem *p, const gate_expected *expected,
                             unsigned long long seed, const perf_settings *s, baseline_entry *e, lc_error *err);

/* What one phase's verdict was decided on: the runner/control ratios of
 * both sides (of the confirmation, where one replaced the first decision)
 * and the run-to-run noise that set its minimum effect. For reports that
 * show why a verdict fell as it did (report/compare_report.h). */
typedef struct perf_decided_on {
    sample_summary base, cur;
    double noise;
} perf_decided_on;

typedef struct perf_comparison {
    verdict_result fwd, bwd;
    sample_summary base_fwd, base_bwd, cur_fwd, cur_bwd;  /* ms, of the first decision */
    double raw_change_fwd, raw_change_bwd;                  /* of median ms, not drift-cancelled */
    perf_decided_on on_fwd, on_bwd;
    int rounds, samples;  /* measure() steps (confirmation included); current samples */
    double elapsed_s;
    char unchecked[160];  /* "", or why the timed results were not compared (harness.h) */
} perf_comparison;

/* Each phase's verdict on cur against base, two measurements of one
 * (runner, shape): their runner/control ratios, base's run-to-run noise,
 * and how far the control moved between them (the drift). comparisons: the
 * family size m. What every comparison decides on, measured now or
 * recorded (baseline history). */
void perf_decide_recorded(const baseline_entry *base, const baseline_entry *cur, int comparisons,
                          verdict_result *fwd, verdict_result *bwd);

/* Where a comparison's measurements come from. Against a recorded entry
 * (fixed_base), measure() appends to the current side only; in an A/B
 * comparison (fixed_base NULL) it appends to both sides, measured now, and
 * keeps base->noise_* at the noise of unchanged code measured so far.
 * measure() returns LC_OK, LC_UNSUPPORTED when the host cannot be measured
 * now (err says why: the decision ends INCONCLUSIVE with that reason, not
 * an error), or anything else for an error. */
typedef struct perf_source {
    /* 0, or a status that ends the comparison (LC_FAILED: wrong results) */
    int (*measure)(void *ctx, baseline_entry *base, baseline_entry *cur, lc_error *err);
    void *ctx;
    const baseline_entry *fixed_base;
    int min_rounds; /* the budget stops no decision before this many rounds */
} perf_source;

/* Measure and decide with the verdict rule: more measurements while
 * inconclusive, within s->compare_budget_s (and, against a fixed base,
 * s->drift_rounds rounds past the drift guard); a SLOWER is confirmed by fresh
 * measurements decided on their own. comparisons: the family size m.
 * 0, or the status a measure() ended it with. */
int perf_compare_source(const perf_source *src, const perf_settings *s, int comparisons, perf_comparison *out,
                        lc_error *err);

/* perf_compare_source with r measured in rounds here against e, its
 * timed results compared with expected (as perf_measure_entry). */
lc_status perf_compare(const runner_ops *r, const lstm_problem *p, const gate_expected *expected, const baseline_entry *e,
                       const perf_settings *s, int comparisons, perf_comparison *out, lc_error *err);

/* The worse of the two verdicts (verdict_worse). */
verdict_kind perf_overall(const perf_comparison *c);
/* The control drift that keeps c undecided: the larger |drift| of its
 * INCONCLUSIVE phases (each phase's from its own last decision: a
 * confirmation's may differ from the first's), 0 where none is. */
double perf_undecided_drift(const perf_comparison *c);

#ifdef __cplusplus
}
#endif
#endif
