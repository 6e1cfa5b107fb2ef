/* The tolerance rule, in one place. Reasoning: docs/tolerance.md.
 *
 *   allowed(e) = TOLERANCE_SAFETY * sqrt(N) * (u * (|ref(e)| + rms(ref tensor)) + m)
 *
 * u is the unit roundoff of the runner's arithmetic (2^-24 for FP32, 2^-11
 * for TF32). N counts the rounded operations an element of that tensor
 * depends on, which grows with the reduction length (I_l + H per layer) and
 * with T (errors carried through the recurrence); rounding errors of
 * independent operations add like a random walk, hence sqrt(N). The rms
 * term keeps elements near zero from demanding absolute accuracy that the
 * cancellation leading to them cannot give. m is the smallest normal
 * number of the runner's arithmetic (2^-126 for FP32 and TF32): below it a
 * result keeps no relative accuracy (a denormal) or none at all (flushed to
 * zero), so each operation may also lose up to m absolutely; that floor
 * lets a correct runner return 0 for a reference of 1e-63, and is some 30
 * orders of magnitude below any error on a value FP32 can hold. NaN and
 * Inf always fail. */
#ifndef LSTMCHECK_TOLERANCE_H
#define LSTMCHECK_TOLERANCE_H

#include "model/lstm.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Headroom over the rounding model, calibrated in docs/tolerance.md:
 * correct runners stay far below it, every planted fault far above. */
#define TOLERANCE_SAFETY 8.0

/* tensor_kind (model/lstm.h): every lstm_tensor_view carries its own. */

/* The rule in words, for dumps: what a reader needs to recompute it. */
#define TOLERANCE_RULE_TEXT                                                                           \
    "allowed(e) = safety * sqrt(N[kind]) * (unit_roundoff * (|ref(e)| + rms(ref tensor)) + smallest_normal); " \
    "a tensor fails when |runner(e) - ref(e)| > allowed(e) or runner(e) is not finite"

double tolerance_unit_roundoff(runner_precision p);
/* The smallest normal number of the runner's arithmetic: m of the rule. */
double tolerance_smallest_normal(runner_precision p);
const char *tolerance_precision_name(runner_precision p); /* "fp32", "tf32" */
const char *tolerance_kind_name(tensor_kind kind); /* "forward", "input_grad", "param_grad" */
/* N of the rule for a tensor of this kind and shape. */
double tolerance_depth(const lstm_shape *s, tensor_kind kind);
/* The rule for one tensor: allowed(e) = scale * (|ref(e)| + rms) + floor,
 * scale = safety * sqrt(N) * u, floor = safety * sqrt(N) * m. */
typedef struct tolerance {
    double scale, floor;
} tolerance;
tolerance tolerance_for(const lstm_shape *s, tensor_kind kind, runner_precision p);
/* Its relative part alone, safety * u * sqrt(N). */
double tolerance_scale(const lstm_shape *s, tensor_kind kind, runner_precision p);
double tolerance_allowed(const tolerance *t, double ref, double ref_rms);

#ifdef __cplusplus
}
#endif
#endif
