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

/* How much larger layer 0's pre-activations are than a balanced layer's
 * (I = H, as every layer above), squared: with the inputs' scale (weights
 * within 1/sqrt(H), x of unit variance) a sum over I + H terms has
 * (I + H) / 2H times the variance, and its rounding error grows with it;
 * the gates turn that absolute error into errors of every output and
 * gradient (a saturated gate's derivative most of all). 1 when I <= H. */
static double preactivation_growth(const lstm_shape *s)
{
    const double H = s->hidden_size, growth = (s->input_size + H) / (2 * H);
    return growth > 1 ? growth : 1;
}

/* FP32: the rounded operations behind an element, T * sum_l (I_l + H) for
 * the forward sum, in closed form since the rule is asked once per tensor
 * and a stack has 4 per layer (a loop here made the gate quadratic in L);
 * a model adds its own per step and layer (a LayerNorm's means); all of
 * it times the pre-activations' growth, unless the model normalizes them
 * before its gates (docs/tolerance.md) */
static double fp32_depth(const lstm_shape *s, const lstm_model *m, tensor_kind kind)
{
    const double T = s->seq_length, H = s->hidden_size, L = s->num_layers;
    const double growth = m->preactivations_normalized ? 1 : preactivation_growth(s);
    const double fwd = T * ((s->input_size + H) + (L - 1) * 2 * H + L * m->depth_forward_h * H);
    if (kind == TENSOR_FORWARD)
        return growth * fwd;
    /* backward through time: per step and layer a reduction over the 4H gates */
    double bwd = fwd + T * s->num_layers * (4.0 + m->depth_backward_h) * H;
    if (kind == TENSOR_INPUT_GRAD)
        return growth * bwd;
    return growth * (bwd + T * (double)s->batch); /* parameter gradients sum over steps and batch */
}

/* TF32: see docs/tolerance.md. The stages whose operands are rounded: 2
 * forward (the step's own GEMM, and the error the state carries in from
 * earlier steps, which the gates damp: it does not grow with T), 2 more
 * backward (the same for dh), 1 for the weight-gradient GEMM; layers
 * below add errors that each layer damps (flat in L, measured). Each
 * counts the reduction of layer 0's pre-activation in units of a balanced
 * one's: its rounding error is relative to it (preactivation_growth). */
static double tf32_depth(const lstm_shape *s, tensor_kind kind)
{
    const double stages = kind == TENSOR_FORWARD ? 2 : kind == TENSOR_INPUT_GRAD ? 4 : 5;
    return stages * preactivation_growth(s);
}

/* TF32 counts GEMM stages, which a model's own reductions do not add to:
 * its rule is calibrated on the LSTM (cudnn_tf32, cpu_tf32); a TF32 runner
 * of another model (a plugin may declare one) gets the LSTM's TF32 N */
double tolerance_depth(const lstm_shape *s, int model, tensor_kind kind, runner_precision p)
{
    const lstm_model *m = lstm_model_get(model);
    return p == PRECISION_TF32 ? tf32_depth(s, kind) : fp32_depth(s, m ? m : lstm_model_get(MODEL_LSTM), kind);
}

double tolerance_scale(const lstm_shape *s, int model, tensor_kind kind, runner_precision p)
{
    return tolerance_for(s, model, kind, p).scale;
}

tolerance tolerance_for(const lstm_shape *s, int model, tensor_kind kind, runner_precision p)
{
    /* each of the N operations may also lose up to m where its result
     * underflows: summed like the rounding errors, with the same safety;
     * the relative part never reaches the tensor's own scale. The moved
     * inputs were moved by FP32's rounding; a coarser arithmetic's moves
     * its answer in proportion (a small move is linear) */
    const double depth = TOLERANCE_SAFETY * sqrt(tolerance_depth(s, model, kind, p));
    const double scale = depth * tolerance_unit_roundoff(p);
    return (tolerance){.scale = scale < TOLERANCE_MAX_SCALE ? scale : TOLERANCE_MAX_SCALE,
                       .moved_scale = TOLERANCE_MOVED_SAFETY * tolerance_unit_roundoff(p) / ldexp(1.0, -24),
                       .cap = TOLERANCE_MAX_SCALE,
                       .floor = depth * tolerance_smallest_normal(p)};
}

/* the relative part: the count's, plus the sensitivity's, together under the cap */
static double relative_part(const tolerance *t, double ref, double ref_rms, double moved_by, double moved_rms)
{
    const double size = fabs(ref) + ref_rms;
    const double both = t->scale * size + t->moved_scale * (moved_by + moved_rms);
    return both < t->cap * size ? both : t->cap * size;
}

double tolerance_allowed(const tolerance *t, double ref, double ref_rms, double moved_by, double moved_rms)
{
    return relative_part(t, ref, ref_rms, moved_by, moved_rms) + t->floor;
}

double tolerance_ratio(double err, double allowed, int not_finite)
{
    return not_finite ? INFINITY : allowed > 0 ? err / allowed : err > 0 ? INFINITY : 0;
}

double tolerance_allowed_moved(const tolerance *t, double ref, double ref_rms, double moved_by, double moved_rms)
{
    return relative_part(t, ref, ref_rms, moved_by, moved_rms) - relative_part(t, ref, ref_rms, 0, 0);
}
