/* The numerics gate: a runner's outputs and gradients against the
 * reference on the same inputs, element by element, with the tolerance
 * rule of tolerance.h. A runner that fails the gate is never timed. */
#ifndef LSTMCHECK_GATE_H
#define LSTMCHECK_GATE_H

#include "model/lstm.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A gate report's status: LC_OK (passed), LC_FAILED (a tensor out of
 * tolerance, NaN or Inf), LC_UNSUPPORTED (the runner cannot run here or
 * takes no such shape, or the case is too ill-conditioned to judge at its
 * precision: a skip), LC_ERROR (the runner returned an error). */

typedef struct gate_tensor_summary {
    char name[32];
    double max_abs_err;
    double worst_ratio; /* error / allowed at the worst element */
    int failed;
} gate_tensor_summary;

typedef struct gate_worst {
    char tensor[32];
    int ndim;
    int index[3];
    double value, ref, err, allowed, ratio;
    double allowed_moved; /* the part of allowed the problem's sensitivity adds (tolerance.h) */
    int not_finite;
} gate_worst;

#define GATE_MAX_TENSORS 64

typedef struct gate_report {
    lc_status status;
    char reason[512];       /* why it skipped or errored; for a failure seen in a timed
                               iteration (perf/harness.h), which one */
    gate_worst worst;       /* the element with the largest error/allowed */
    int tensors_checked, tensors_failed;
    int ntensors;
    gate_tensor_summary tensors[GATE_MAX_TENSORS];
} gate_report;

/* The one way a report starts: nothing compared, no worst element, the
 * status set, no reason; gate_report_startf sets a reason too. Every
 * function that fills a report starts it so, whatever path it takes. */
void gate_report_start(gate_report *rep, lc_status status);
void gate_report_startf(gate_report *rep, lc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A report read from a child process: strings terminated and counts and
 * dimensions within their arrays, so that a child that sent garbage cannot
 * make its reader read or write past them. */
void gate_report_received(gate_report *rep);

/* How many moved references a model that measures its sensitivity gets
 * (model/model.h says why two). */
#define GATE_MOVED_DRAWS MODEL_MOVED_DRAWS

/* What a runner's results are compared with: the reference, and for a
 * model that measures its sensitivity (lstm_model.moved_reference) the
 * reference on its inputs moved by one FP32 ulp (lstm_inputs_move) with a
 * sample of FP32's roundings inside it (lstm_reference_run_rounded), one
 * per draw (lstm_moved_seed), else NULLs. tolerance.h says how they make
 * what an element may miss by; a tensor more sensitive than the rule's
 * cap is not judged, and a case with one is a skip unless it fails. */
typedef struct gate_expected {
    const lstm_results *reference;
    const lstm_results *moved[GATE_MOVED_DRAWS];
} gate_expected;

/* The words a skip of a case too ill-conditioned to judge starts its
 * reason with (gate_classify_skip knows it by them). */
#define GATE_ILL_CONDITIONED "this case cannot be fully checked in"


/* The inputs and reference results of one (shape, seed, lengths), made
 * once per model and shared by every runner of that model checked or
 * timed on them. Every output a runner returns is seeded (gate_seeds): dy,
 * dhy and dcy, or dhy and dcy for a runner that returns only (hy, cy). */
typedef struct numerics_context {
    lstm_shape shape;
    uint64_t seed;
    int *lengths; /* NULL: fixed length */
    lstm_problem problem[MODEL_COUNT][2]; /* by model, then state-only or not */
    lstm_results reference[MODEL_COUNT][2];
    lstm_results moved[MODEL_COUNT][2][GATE_MOVED_DRAWS]; /* for a model that measures its sensitivity */
    gate_expected expected[MODEL_COUNT][2];
    int ready[MODEL_COUNT][2]; /* how far each is made: 0 not, 1 the problem, 2 and what is expected of it */
} numerics_context;

int numerics_context_init(numerics_context *c, const lstm_shape *s, uint64_t seed,
                          const int *lengths, lc_error *err);
void numerics_context_free(numerics_context *c);
/* The problem the gate gives this runner and what its results are
 * compared with: of the model it is checked against (runner_checked_model;
 * computed on first use). */
int numerics_context_get(numerics_context *c, const runner_ops *r, const lstm_problem **p,
                         const gate_expected **expected, lc_error *err);
/* The problem its timing runs on and what the timed results are compared
 * with: numerics_context_get's; for a runner with its own mask the problem
 * of its own model, with the reference at p = 0 on one layer (where it
 * drops nothing) and NULL on more (runner_timing_unchecked: none has its
 * mask, and none is computed for that problem). */
int numerics_context_timed(numerics_context *c, const runner_ops *r, const lstm_problem **p,
                           const gate_expected **expected, lc_error *err);

/* The contexts of a command that works through (runner, shape) pairs, one
 * per (shape, seed) of fixed length, each made on first use and kept: the
 * FP64 reference of a shape is computed once for all its runners. */
typedef struct numerics_cache {
    numerics_context **contexts; /* each stays where it is until numerics_cache_free */
    int n, cap;
} numerics_cache;

/* The context of (s, seed), made here on first use: NULL with err set when
 * it cannot be made (the shape is refused, or out of host memory). */
numerics_context *numerics_cache_get(numerics_cache *c, const lstm_shape *s, uint64_t seed, lc_error *err);
void numerics_cache_free(numerics_cache *c);

/* Which backward seeds this runner's problem has (SEED_ mask of inputs.h):
 * the loss is the sum over the seeded outputs of output * seed. */
unsigned gate_seeds(const runner_ops *r);

/* Which tensors the gate compares for this runner (LSTM_VIEWS_ mask). */
unsigned gate_views(const runner_ops *r);

/* Compare got with what is expected over views; fills rep (status PASS or
 * FAIL; a skip where the expected results are too sensitive to judge). */
void gate_compare(const runner_ops *r, const gate_expected *expected, const lstm_results *got,
                  unsigned views, gate_report *rep);

/* Run r once (forward, zero grads, backward, read back) on a copy of the
 * context's inputs of its own, and compare. A runner that writes its
 * inputs (include/lstmcheck/runner.h: read-only) spoils only its copy, and
 * is an ERROR: "<runner> changed its inputs: <the first element changed>".
 * With dump_dir, write inputs, reference and runner tensors as .npy files
 * plus index.json under dump_dir/<runner>/. */
lc_status gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                     gate_report *rep);

/* gate_run's run alone: r once (create, forward, zero_grads, backward,
 * read back) on a copy of p's inputs of its own into got (filled with NaN
 * first). LC_OK, or the runner's status (LC_UNSUPPORTED or LC_ERROR) with
 * err "<runner> <step>: why"; a runner that wrote its inputs is LC_ERROR. */
int gate_run_once(const runner_ops *r, const lstm_problem *p, lstm_results *got, lc_error *err);

/* What a runner that wrote its inputs did, after its name (gate_run and
 * perf/harness.h report it so). */
#define GATE_CHANGED_INPUTS "changed its inputs"
/* 0 when used, the copy a runner was given (lstm_problem_copy), still
 * equals given, the inputs it was copied from; else 1, and err says what
 * changed: the first element that differs, and how many tensors did. */
int gate_inputs_changed(const lstm_problem *given, const lstm_problem *used, lc_error *err);

/* Why a runner skipped a case it was given (the gate said LC_UNSUPPORTED). */
typedef enum gate_skip_class {
    GATE_SKIP_OUTSIDE_CAPS,      /* the shape is outside its declared caps (layers, lengths) */
    GATE_SKIP_LIBRARY_REFUSED,   /* inside them, and its library, which decides (RUNNER_LIBRARY_DECIDES),
                                    refused naming its status (a "..._STATUS_..." enumerator in reason) */
    GATE_SKIP_ILL_CONDITIONED,   /* the case, not the runner: too sensitive to judge (GATE_ILL_CONDITIONED) */
    GATE_SKIP_INSIDE_CAPS,       /* inside them, for no declared reason: a failure where a GPU is required */
} gate_skip_class;
gate_skip_class gate_classify_skip(const runner_ops *r, const lstm_shape *s, const int *lengths,
                                   const char *reason);

/* One line: "PASS cpu worst dw_hh.0[12,7] ratio 0.03" or the failure. */
void gate_format_summary(const runner_ops *r, const gate_report *rep, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
