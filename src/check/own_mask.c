/* A runner's own dropout mask at p > 0 (see own_mask.h). */
#include "check/own_mask.h"

#include "check/tolerance.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void effect_set(own_mask_effect *e, lc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void effect_set(own_mask_effect *e, lc_status status, const char *fmt, ...)
{
    e->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
}

static double rms_of(const double *v, size_t n)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += v[i] * v[i];
    return n ? sqrt(ss / (double)n) : 0;
}

/* error / allowed at one element, by the gate's rule (no moved term) */
static double ratio_at(const tolerance *tol, double got, double ref, double rms)
{
    return tolerance_ratio(fabs(got - ref), tolerance_allowed(tol, ref, rms, 0, 0), !isfinite(got));
}

/* The worst ratio over layer 0's part (the first B*H) of a state tensor. */
static double layer0_ratio(const tolerance *tol, const double *got, const double *ref, size_t bh)
{
    const double rms = rms_of(ref, bh);
    double worst = 0;
    for (size_t i = 0; i < bh; i++) {
        const double q = ratio_at(tol, got[i], ref[i], rms);
        worst = q > worst ? q : worst;
    }
    return worst;
}

/* The share of y's elements within their sequences beyond the allowance
 * (*valid: how many there are; a value not finite counts as moved). */
static double y_moved_share(const tolerance *tol, const lstm_problem *p, const double *got, const double *ref,
                            size_t *valid)
{
    const lstm_shape *s = &p->shape;
    const size_t B = (size_t)s->batch, H = (size_t)s->hidden_size;
    const double rms = rms_of(ref, lstm_seq_elems(s, s->hidden_size));
    size_t moved = 0;
    *valid = 0;
    for (size_t t = 0; t < (size_t)s->seq_length; t++)
        for (size_t b = 0; b < B; b++)
            for (size_t h = 0; (int)t < lstm_length(p, (int)b) && h < H; h++) {
                const size_t i = (t * B + b) * H + h;
                moved += ratio_at(tol, got[i], ref[i], rms) > 1;
                ++*valid;
            }
    return *valid ? (double)moved / (double)*valid : 0;
}

/* The first element of got that is not finite, as "y[5]"; 0 when none. */
static int first_not_finite(const lstm_results *got, char *where, size_t n)
{
    lstm_tensor_view views[GATE_MAX_TENSORS];
    const int nv = lstm_results_views(got, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS, views,
                                      GATE_MAX_TENSORS);
    for (int v = 0; v < nv; v++)
        for (size_t i = 0; i < views[v].count; i++)
            if (!isfinite(views[v].data[i])) {
                snprintf(where, n, "%s[%zu]", views[v].name, i);
                return 1;
            }
    return 0;
}

/* What holds of the results of one run at p > 0 on two layers or more. */
static void judge_layers(const runner_ops *r, const lstm_problem *timed, const lstm_results *ref,
                         const lstm_results *got, own_mask_effect *e)
{
    const lstm_shape *s = &timed->shape;
    const tolerance tol = tolerance_for(s, MODEL_LSTM, TENSOR_FORWARD, r->precision);
    const size_t bh = (size_t)s->batch * (size_t)s->hidden_size;
    const double hy = layer0_ratio(&tol, got->hy, ref->hy, bh), cy = layer0_ratio(&tol, got->cy, ref->cy, bh);
    size_t valid;
    char where[48];
    e->ratio = hy > cy ? hy : cy;
    e->y_moved = y_moved_share(&tol, timed, got->y, ref->y, &valid);
    if (first_not_finite(got, where, sizeof where))
        effect_set(e, LC_FAILED, "%s is not finite", where);
    else if (!(e->ratio <= 1))
        effect_set(e, LC_FAILED, "layer 0's %s moved from the reference at p = 0 (worst ratio %.3g): it meets no mask",
                   hy > cy ? "hy" : "cy", e->ratio);
    else if (valid < OWN_MASK_MIN_ELEMS)
        effect_set(e, LC_UNSUPPORTED, "y not judged: %zu elements of layer 0's output meet a mask, fewer than %d, "
                   "and a correct mask may keep them all", valid, OWN_MASK_MIN_ELEMS);
    else if (e->y_moved < OWN_MASK_MIN_MOVED)
        effect_set(e, LC_FAILED, "y moved from the reference at p = 0 at %.1f%% of its elements, fewer than %.0f%%: "
                   "dropout at p=%g took next to no effect, and its timing would be of p = 0",
                   100 * e->y_moved, 100 * OWN_MASK_MIN_MOVED, e->dropout);
}

/* One layer: nothing to drop, so the gate's comparison with the reference at p = 0. */
static void judge_one_layer(const runner_ops *r, const gate_expected *expected, const lstm_results *got,
                            own_mask_effect *e)
{
    gate_report rep;
    char line[1024];
    gate_compare(r, expected, got, gate_views(r), &rep);
    e->ratio = rep.worst.ratio;
    if (rep.status != LC_OK) {
        gate_format_summary(r, &rep, line, sizeof line);
        effect_set(e, rep.status, "one layer, nothing to drop, yet not nn.LSTM: %s", line);
    }
}

/* The problems at p = 0 and at p > 0 with the reference, once r can run
 * here on them: 0, or 1 with out set. */
static int prepare(const runner_ops *r, numerics_context *c, const lstm_problem **timed,
                   const gate_expected **expected, own_mask_effect *out)
{
    lc_error err = {{0}};
    const lstm_problem *checked;
    const gate_expected *timed_expected;
    if (!(r->caps & RUNNER_OWN_MASK)) {
        effect_set(out, LC_UNSUPPORTED, "%s applies no mask of its own", r->name);
        return 1;
    }
    out->dropout = lstm_model_get(r->model)->dropout;
    out->layers = c->shape.num_layers;
    const int avail = r->available(&err);
    if (avail != LC_OK) {
        effect_set(out, avail == LC_ERROR ? LC_ERROR : LC_UNSUPPORTED, "%s", err.msg);
        return 1;
    }
    if (numerics_context_get(c, r, &checked, expected, &err) ||
        numerics_context_timed(c, r, timed, &timed_expected, &err)) {
        effect_set(out, LC_ERROR, "reference: %s", err.msg);
        return 1;
    }
    if (runner_supports_shape(r, &(*timed)->shape, (*timed)->lengths, &err) != LC_OK) {
        effect_set(out, LC_UNSUPPORTED, "%s", err.msg);
        return 1;
    }
    return 0;
}

void own_mask_effect_run(const runner_ops *r, numerics_context *c, own_mask_effect *out)
{
    memset(out, 0, sizeof *out);
    out->status = LC_OK;
    const lstm_problem *timed;
    const gate_expected *expected;
    lc_error err = {{0}};
    lstm_results got;
    if (prepare(r, c, &timed, &expected, out))
        return;
    if (lstm_results_alloc(&got, &timed->shape, runner_checked_model(r), &err)) {
        effect_set(out, LC_ERROR, "%s", err.msg);
        return;
    }
    const int rc = gate_run_once(r, timed, &got, &err);
    if (rc != LC_OK)
        effect_set(out, rc == LC_UNSUPPORTED ? LC_UNSUPPORTED : LC_ERROR, "%s", err.msg);
    else if (out->layers < 2)
        judge_one_layer(r, expected, &got, out);
    else
        judge_layers(r, timed, expected->reference, &got, out);
    lstm_results_free(&got);
}

void own_mask_effect_format(const runner_ops *r, const own_mask_effect *e, char *buf, size_t n)
{
    static const char *const word[] = {[LC_OK] = "PASS", [LC_FAILED] = "FAIL", [LC_UNSUPPORTED] = "SKIP"};
    const char *w = (unsigned)e->status < sizeof word / sizeof word[0] && word[e->status] ? word[e->status] : "ERROR";
    if (e->status != LC_OK)
        snprintf(buf, n, "%s %s at p=%g with its own mask: %s", w, r->name, e->dropout, e->reason);
    else if (e->layers < 2)
        snprintf(buf, n, "%s %s at p=%g with its own mask: one layer, nothing to drop: every result within "
                 "tolerance of nn.LSTM (ratio %.2g)", w, r->name, e->dropout, e->ratio);
    else
        snprintf(buf, n, "%s %s at p=%g with its own mask: layer 0's state within tolerance (ratio %.2g), y moved at "
                 "%.1f%% of its elements: dropout took effect (its results stay unchecked at p > 0)", w, r->name,
                 e->dropout, e->ratio, 100 * e->y_moved);
}
