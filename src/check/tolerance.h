/* The tolerance rule, in one place. Reasoning: docs/tolerance.md.
 *
 *   allowed(e) = min(TOLERANCE_SAFETY * sqrt(N) * u * (|ref(e)| + rms(ref tensor))
 *                    + TOLERANCE_MOVED_SAFETY * (u / 2^-24) * (d(e) + rms(d)),
 *                    TOLERANCE_MAX_SCALE * (|ref(e)| + rms(ref tensor)))
 *              + TOLERANCE_SAFETY * sqrt(N) * m
 *
 * u is the unit roundoff of the runner's arithmetic (2^-24 for FP32, 2^-11
 * for TF32). For FP32, N counts the rounded operations an element of that
 * tensor depends on, which grows with the reduction length (I_l + H per
 * layer) and with T (errors carried through the recurrence); rounding
 * errors of independent operations add like a random walk, hence sqrt(N).
 * Both precisions multiply N by (I + H) / 2H where I > H: the gates pass
 * on the pre-activation's absolute error, which grows with its size (a
 * model that normalizes it first, LayerNorm, does not).
 * TF32's error is the rounding of each GEMM operand (the products summed in
 * FP32): relative to its own term, so it grows neither with the reduction
 * length nor with T nor with L (measured); its N counts the GEMM stages
 * behind a tensor, times the size of layer 0's pre-activation against a
 * balanced layer's. The cap keeps an output of zeros, or of the wrong size,
 * from passing at any shape. The rms
 * term keeps elements near zero from demanding absolute accuracy that the
 * cancellation leading to them cannot give. m is the smallest normal
 * number of the runner's arithmetic (2^-126 for FP32 and TF32): below it a
 * result keeps no relative accuracy (a denormal) or none at all (flushed to
 * zero), so each operation may also lose up to m absolutely; that floor
 * lets a correct runner return 0 for a reference of 1e-63, and is some 30
 * orders of magnitude below any error on a value FP32 can hold. d(e) is
 * the problem's own sensitivity, for a model that asks for it
 * (lstm_model.moved_reference; else 0): how far the reference moves when
 * every input moves by one FP32 ulp and FP32's roundings inside it are
 * sampled, the largest of GATE_MOVED_DRAWS draws (gate.h: gate_expected),
 * scaled to the runner's u; rms(d) is the largest draw's rms. A tensor
 * whose rms(d) term reaches the cap is not judged (a case with one is a
 * skip unless it fails elsewhere: too ill-conditioned for the precision). It
 * covers what the count N cannot: a recurrence that amplifies a rounding
 * (the LayerNorm LSTM's at small H). NaN and Inf always fail. */
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

/* Headroom over the measured sensitivity: a runner's roundings are not
 * the sample's, and each draw is one sample of the directions they take
 * (calibrated in docs/tolerance.md). */
#define TOLERANCE_MOVED_SAFETY 16.0

/* The largest relative part of the rule, for any precision and shape: an
 * all-zero output misses each element by |ref| and so fails by 8x or more
 * at the tensor's largest element (docs/tolerance.md). FP32 reaches it only
 * at N > 1.7e10, TF32 at I > 100 H. */
#define TOLERANCE_MAX_SCALE 0.0625

/* tensor_kind (model/lstm.h): every lstm_tensor_view carries its own. */

/* The rule in words, for dumps: what a reader needs to recompute it. */
#define TOLERANCE_RULE_TEXT                                                                            \
    "allowed(e) = min(safety * sqrt(N[kind]) * unit_roundoff * (|ref(e)| + rms(ref tensor)) "           \
    "+ moved_safety * (unit_roundoff / 2^-24) * (d(e) + rms_d), max_scale * (|ref(e)| + rms(ref tensor))) " \
    "+ safety * sqrt(N[kind]) * smallest_normal, where d(e) = max over the draws of |moved_k(e) - ref(e)| " \
    "and rms_d the largest draw's rms(moved_k - ref), moved_k the reference on inputs moved by one FP32 ulp " \
    "with a sample of FP32 roundings (moved_draws of them; none: d = 0); a tensor fails when "            \
    "|runner(e) - ref(e)| > allowed(e) or runner(e) is not finite; a tensor with "                     \
    "moved_safety * (unit_roundoff / 2^-24) * rms_d >= max_scale * rms(ref) is not judged (only non-finite fails it)"

double tolerance_unit_roundoff(runner_precision p);
/* The smallest normal number of the runner's arithmetic: m of the rule. */
double tolerance_smallest_normal(runner_precision p);
const char *tolerance_precision_name(runner_precision p); /* "fp32", "tf32" */
const char *tolerance_kind_name(tensor_kind kind); /* "forward", "input_grad", "param_grad" */
/* N of the rule for a tensor of this kind and shape of the model (an
 * lstm_model_id) at this precision: rounded operations (FP32) or GEMM
 * stages (TF32). */
double tolerance_depth(const lstm_shape *s, int model, tensor_kind kind, runner_precision p);
/* The rule for one tensor: scale = safety * sqrt(N) * u (at most
 * max_scale), moved_scale = moved_safety * u / 2^-24, cap = max_scale,
 * floor = safety * sqrt(N) * m; allowed(e) as tolerance_allowed says. */
typedef struct tolerance {
    double scale, moved_scale, cap, floor;
} tolerance;
tolerance tolerance_for(const lstm_shape *s, int model, tensor_kind kind, runner_precision p);
/* Its relative part alone, min(safety * u * sqrt(N), max scale). */
double tolerance_scale(const lstm_shape *s, int model, tensor_kind kind, runner_precision p);
/* What one element may miss by: ref and ref_rms as the rule says; moved_by
 * = |moved(e) - ref(e)| and moved_rms = rms(moved - ref) over the tensor,
 * both 0 where the model measures no sensitivity. */
double tolerance_allowed(const tolerance *t, double ref, double ref_rms, double moved_by, double moved_rms);
/* err / allowed, the measure of one element the gate and its users judge
 * (> 1 fails): infinite for a value not finite, and for any error where
 * nothing is allowed. */
double tolerance_ratio(double err, double allowed, int not_finite);
/* Its part that the problem's sensitivity adds (0 without one): what a
 * failure reports next to allowed. */
double tolerance_allowed_moved(const tolerance *t, double ref, double ref_rms, double moved_by, double moved_rms);

#ifdef __cplusplus
}
#endif
#endif
