/* The tolerance rule (see tolerance.h and docs/tolerance.md). */
#include "check/tolerance.h"

#include <float.h>
#include <math.h>

double tolerance_unit_roundoff(runner_precision p)
{
    /* FP32: 24-bit significand; TF32: 11-bit significand (10 stored) */
    return p == PRECISION_TF32 ? ldexp(1.0, -11) : ldexp(1.0, -24);
}

double tolerance_smallest_normal(runner_precision p)
{
    /* TF32 keeps FP32's 8-bit exponent: the same range, fewer digits */
    (void)p;
    return FLT_MIN; /* 2^-126 */
}

const char *tolerance_precision_name(runner_precision p)
{
    return p == PRECISION_TF32 ? "tf32" : "fp32";
}

const char *tolerance_kind_name(tensor_kind kind)
{
    return kind == TENSOR_FORWARD ? "forward" : kind == TENSOR_INPUT_GRAD ? "input_grad" : "param_grad";
}

double tolerance_depth(const lstm_shape *s, tensor_kind kind)
{
    const double T = s->seq_length, H = s->hidden_size, L = s->num_layers;
    /* T * sum_l (I_l + H), with I_0 = I and I_l = H above: in closed form,
     * since the rule is asked once per tensor and a stack has 4 per layer
     * (a loop here made the gate quadratic in L) */
    const double fwd = T * ((s->input_size + H) + (L - 1) * 2 * H);
    if (kind == TENSOR_FORWARD)
        return fwd;
    /* backward through time: per step and layer a reduction over the 4H gates */
    double bwd = fwd + T * s->num_layers * 4.0 * H;
    if (kind == TENSOR_INPUT_GRAD)
        return bwd;
    return bwd + T * (double)s->batch; /* parameter gradients sum over steps and batch */
}

double tolerance_scale(const lstm_shape *s, tensor_kind kind, runner_precision p)
{
    return tolerance_for(s, kind, p).scale;
}

tolerance tolerance_for(const lstm_shape *s, tensor_kind kind, runner_precision p)
{
    /* each of the N operations may also lose up to m where its result
     * underflows: summed like the rounding errors, with the same safety */
    const double depth = TOLERANCE_SAFETY * sqrt(tolerance_depth(s, kind));
    return (tolerance){.scale = depth * tolerance_unit_roundoff(p), .floor = depth * tolerance_smallest_normal(p)};
}

double tolerance_allowed(const tolerance *t, double ref, double ref_rms)
{
    return t->scale * (fabs(ref) + ref_rms) + t->floor;
}
