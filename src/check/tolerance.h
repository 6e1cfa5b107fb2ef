/* The tolerance rule, in one place. Reasoning: docs/tolerance.md.
 *
 *   allowed(e) = TOLERANCE_SAFETY * u * sqrt(N) * (|ref(e)| + rms(ref tensor))
 *
 * u is the unit roundoff of the runner's arithmetic (2^-24 for FP32, 2^-11
 * for TF32). N counts the rounded operations an element of that tensor
 * depends on, which grows with the reduction length (I_l + H per layer) and
 * with T (errors carried through the recurrence); rounding errors of
 * independent operations add like a random walk, hence sqrt(N). The rms
 * term keeps elements near zero from demanding absolute accuracy that the
 * cancellation leading to them cannot give. NaN and Inf always fail. */
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
#define TOLERANCE_RULE_TEXT                                                                \
    "allowed(e) = safety * unit_roundoff * sqrt(N[kind]) * (|ref(e)| + rms(ref tensor)); " \
    "a tensor fails when |runner(e) - ref(e)| > allowed(e) or runner(e) is not finite"

double tolerance_unit_roundoff(runner_precision p);
const char *tolerance_precision_name(runner_precision p); /* "fp32", "tf32" */
const char *tolerance_kind_name(tensor_kind kind); /* "forward", "input_grad", "param_grad" */
/* N of the rule for a tensor of this kind and shape. */
double tolerance_depth(const lstm_shape *s, tensor_kind kind);
/* The per-tensor scale u * safety * sqrt(N); allowed(e) = scale * (|ref| + rms). */
double tolerance_scale(const lstm_shape *s, tensor_kind kind, runner_precision p);
double tolerance_allowed(double scale, double ref, double ref_rms);

#ifdef __cplusplus
}
#endif
#endif
