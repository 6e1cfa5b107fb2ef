/* The numerics gate (see gate.h). */
#include "check/gate.h"

#include "check/dump.h"
#include "check/tolerance.h"
#include "model/inputs.h"
#include "model/reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gate_report_start(gate_report *rep, lc_status status)
{
    memset(rep, 0, sizeof *rep);
    rep->worst.ratio = -1;
    rep->status = status;
}

void gate_report_startf(gate_report *rep, lc_status status, const char *fmt, ...)
{
    gate_report_start(rep, status);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->reason, sizeof rep->reason, fmt, ap);
    va_end(ap);
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void gate_report_received(gate_report *rep)
{
    rep->reason[sizeof rep->reason - 1] = 0;
    rep->worst.tensor[sizeof rep->worst.tensor - 1] = 0;
    rep->worst.ndim = clamp_int(rep->worst.ndim, 0, 3);
    rep->ntensors = clamp_int(rep->ntensors, 0, GATE_MAX_TENSORS);
    for (int i = 0; i < rep->ntensors; i++)
        rep->tensors[i].name[sizeof rep->tensors[i].name - 1] = 0;
}

/* How far a context has made the problem of one (model, seeds). */
enum { CONTEXT_NONE, CONTEXT_PROBLEM, CONTEXT_EXPECTED };

int numerics_context_init(numerics_context *c, const lstm_shape *s, uint64_t seed,
                          const int *lengths, lc_error *err)
{
    memset(c, 0, sizeof *c);
    c->shape = *s;
    c->seed = seed;
    if (lstm_shape_validate(s, err))
        return 1;
    if (lengths) {
        c->lengths = malloc((size_t)s->batch * sizeof *c->lengths);
        if (!c->lengths) {
            lc_error_set(err, "out of host memory for lengths");
            return 1;
        }
        memcpy(c->lengths, lengths, (size_t)s->batch * sizeof *c->lengths);
    }
    return 0;
}

void numerics_context_free(numerics_context *c)
{
    for (int m = 0; m < MODEL_COUNT; m++) {
        for (int i = 0; i < 2; i++) {
            if (c->ready[m][i] >= CONTEXT_PROBLEM)
                lstm_problem_free(&c->problem[m][i]);
            if (c->ready[m][i] == CONTEXT_EXPECTED) {
                lstm_results_free(&c->reference[m][i]);
                for (int k = 0; k < GATE_MOVED_DRAWS; k++)
                    if (c->expected[m][i].moved[k])
                        lstm_results_free(&c->moved[m][i][k]);
            }
        }
    }
    free(c->lengths);
    memset(c, 0, sizeof *c);
}

numerics_context *numerics_cache_get(numerics_cache *c, const lstm_shape *s, uint64_t seed, lc_error *err)
{
    for (int i = 0; i < c->n; i++)
        if (lstm_shape_equal(&c->contexts[i]->shape, s) && c->contexts[i]->seed == seed)
            return c->contexts[i];
    if (c->n == c->cap) {
        const int cap = c->cap ? 2 * c->cap : 4;
        numerics_context **grown = realloc(c->contexts, (size_t)cap * sizeof *grown);
        if (!grown) {
            lc_error_set(err, "out of host memory");
            return NULL;
        }
        c->contexts = grown;
        c->cap = cap;
    }
    numerics_context *ctx = malloc(sizeof *ctx);
    if (!ctx) {
        lc_error_set(err, "out of host memory");
        return NULL;
    }
    if (numerics_context_init(ctx, s, seed, NULL, err)) {
        free(ctx);
        return NULL;
    }
    return c->contexts[c->n++] = ctx;
}

void numerics_cache_free(numerics_cache *c)
{
    for (int i = 0; i < c->n; i++) {
        numerics_context_free(c->contexts[i]);
        free(c->contexts[i]);
    }
    free(c->contexts);
    memset(c, 0, sizeof *c);
}

unsigned gate_seeds(const runner_ops *r)
{
    /* every output the runner returns gets a gradient: the state paths
     * (dhy through W_hh, dcy through the cell, both per layer and per
     * sequence end) are checked like the output path */
    return (r->caps & RUNNER_STATE_ONLY) ? SEED_DHY | SEED_DCY : SEED_DY | SEED_DHY | SEED_DCY;
}

/* The reference on p's inputs moved by one FP32 ulp, with a sample of
 * FP32's roundings inside the recurrence (draw of seed), into moved
 * (allocated here): the problem's sensitivity. 0, or 1 with err. */
static int moved_reference(const lstm_problem *p, uint64_t seed, int draw, lstm_results *moved, lc_error *err)
{
    lstm_problem q;
    if (lstm_problem_copy(&q, p, err))
        return 1;
    lstm_inputs_move(&q, lstm_moved_seed(seed, draw));
    int rc = lstm_results_alloc(moved, &p->shape, p->model, err);
    if (!rc && (rc = lstm_reference_run_rounded(&q, lstm_moved_seed(seed, draw), moved, err)))
        lstm_results_free(moved);
    lstm_problem_free(&q);
    return rc;
}

/* The inputs of one (model, seeds). */
static int make_problem(numerics_context *c, int model, unsigned seeds, int which, lc_error *err)
{
    lstm_problem *pb = &c->problem[model][which];
    if (lstm_problem_alloc(pb, &c->shape, model, err))
        return 1;
    if (lstm_inputs_generate(pb, c->seed, seeds, err) ||
        (c->lengths && lstm_inputs_set_lengths(pb, c->lengths, c->shape.batch, err))) {
        lstm_problem_free(pb);
        return 1;
    }
    c->ready[model][which] = CONTEXT_PROBLEM;
    return 0;
}

/* What is expected of the problem of one (model, seeds), made before. */
static int make_expected(numerics_context *c, int model, int which, lc_error *err)
{
    const lstm_problem *pb = &c->problem[model][which];
    lstm_results *rs = &c->reference[model][which];
    gate_expected *e = &c->expected[model][which];
    if (lstm_results_alloc(rs, &c->shape, model, err))
        return 1;
    int rc = lstm_reference_run(pb, rs, err);
    *e = (gate_expected){.reference = rs};
    for (int k = 0; !rc && lstm_model_get(model)->moved_reference && k < GATE_MOVED_DRAWS; k++) {
        lstm_results *mk = &c->moved[model][which][k];
        if (!(rc = moved_reference(pb, c->seed, k, mk, err)))
            e->moved[k] = mk;
    }
    if (rc) {
        for (int k = 0; k < GATE_MOVED_DRAWS; k++)
            if (e->moved[k])
                lstm_results_free(&c->moved[model][which][k]);
        *e = (gate_expected){NULL, {NULL}};
        lstm_results_free(rs);
        return 1;
    }
    c->ready[model][which] = CONTEXT_EXPECTED;
    return 0;
}

/* The problem of (model, r's seeds) made up to how far (CONTEXT_*); which
 * says where it is. */
static int context_make(numerics_context *c, const runner_ops *r, int model, int how_far, int *which, lc_error *err)
{
    *which = (r->caps & RUNNER_STATE_ONLY) ? 1 : 0;
    if (!lstm_model_get(model)) {
        lc_error_set(err, "%s: model %d is not one of this lstmcheck's", r->name, model);
        return 1;
    }
    if (c->ready[model][*which] < CONTEXT_PROBLEM && make_problem(c, model, gate_seeds(r), *which, err))
        return 1;
    return how_far == CONTEXT_EXPECTED && c->ready[model][*which] < CONTEXT_EXPECTED &&
           make_expected(c, model, *which, err);
}

int numerics_context_get(numerics_context *c, const runner_ops *r, const lstm_problem **p,
                         const gate_expected **expected, lc_error *err)
{
    const int model = runner_checked_model(r);
    int which;
    if (context_make(c, r, model, CONTEXT_EXPECTED, &which, err))
        return 1;
    *p = &c->problem[model][which];
    *expected = &c->expected[model][which];
    return 0;
}

int numerics_context_timed(numerics_context *c, const runner_ops *r, const lstm_problem **p,
                           const gate_expected **expected, lc_error *err)
{
    if (runner_checked_model(r) == r->model)
        return numerics_context_get(c, r, p, expected, err);
    /* a runner with its own mask, on its own model's problem: at one layer
     * it drops nothing and must compute the reference at p = 0; on more, no
     * reference has its mask */
    char unchecked[160];
    const lstm_problem *checked;
    int which;
    if (numerics_context_get(c, r, &checked, expected, err) ||
        context_make(c, r, r->model, CONTEXT_PROBLEM, &which, err))
        return 1;
    *p = &c->problem[r->model][which];
    if (runner_timing_unchecked(r, &c->shape, unchecked, sizeof unchecked))
        *expected = NULL;
    return 0;
}

unsigned gate_views(const runner_ops *r)
{
    unsigned v = LSTM_VIEWS_STATE;
    if (!(r->caps & RUNNER_STATE_ONLY))
        v |= LSTM_VIEWS_OUTPUTS;
    if (r->caps & RUNNER_BACKWARD)
        v |= LSTM_VIEWS_GRADS;
    return v;
}

static void index_of(const lstm_tensor_view *v, size_t i, int idx[3])
{
    for (int d = v->ndim - 1; d >= 0; d--) {
        idx[d] = (int)(i % (size_t)v->dims[d]);
        i /= (size_t)v->dims[d];
    }
}

/* One tensor compared: its summary, and where its worst element is. */
typedef struct tensor_outcome {
    gate_tensor_summary sum;
    size_t worst_i;
    int worst_not_finite;
    int unjudged;      /* too sensitive to judge: only a value that is not finite fails it */
    tolerance tol;     /* the rule for this tensor */
    double rms;
    double moved_rms;  /* the largest rms(moved - ref) of the draws: 0 without moved references */
} tensor_outcome;

/* One tensor's views: the reference, its moved twins (NULL: none), the runner's. */
typedef struct tensor_views {
    const lstm_tensor_view *ref, *moved[GATE_MOVED_DRAWS], *got;
} tensor_views;

/* |moved(e) - ref(e)|, the largest of the draws: 0 where nothing was moved */
static double moved_by(const tensor_views *v, size_t i)
{
    double most = 0;
    for (int k = 0; k < GATE_MOVED_DRAWS && v->moved[k]; k++) {
        const double d = fabs(v->moved[k]->data[i] - v->ref->data[i]);
        most = d > most ? d : most;
    }
    return most;
}

/* rms of the reference (draw -1) or of one draw's moves */
static double tensor_rms(const tensor_views *v, int draw)
{
    const lstm_tensor_view *ref = v->ref, *m = draw >= 0 ? v->moved[draw] : NULL;
    double sumsq = 0;
    for (size_t i = 0; i < ref->count; i++) {
        const double x = draw < 0 ? ref->data[i] : m->data[i] - ref->data[i];
        sumsq += x * x;
    }
    return ref->count ? sqrt(sumsq / (double)ref->count) : 0;
}

static tensor_outcome compare_tensor(const runner_ops *r, const lstm_shape *s, const tensor_views *v)
{
    const lstm_tensor_view *a = v->ref, *b = v->got;
    tensor_outcome t = {.sum = {.worst_ratio = -1}};
    t.rms = tensor_rms(v, -1);
    for (int k = 0; k < GATE_MOVED_DRAWS && v->moved[k]; k++) {
        const double mk = tensor_rms(v, k);
        t.moved_rms = mk > t.moved_rms ? mk : t.moved_rms;
    }
    t.tol = tolerance_for(s, runner_checked_model(r), a->kind, r->precision);
    /* one ulp moves it past the cap over the whole tensor: any answer
     * within the cap is as good as the reference */
    t.unjudged = t.tol.moved_scale * t.moved_rms >= t.tol.cap * t.rms && t.rms > 0;
    snprintf(t.sum.name, sizeof t.sum.name, "%s", a->name);
    for (size_t i = 0; i < a->count; i++) {
        const double err = fabs(b->data[i] - a->data[i]);
        const int nf = !isfinite(b->data[i]);
        const double allowed = tolerance_allowed(&t.tol, a->data[i], t.rms, moved_by(v, i), t.moved_rms);
        const double ratio = tolerance_ratio(err, allowed, nf);
        if (!nf && err > t.sum.max_abs_err)
            t.sum.max_abs_err = err;
        if (ratio > t.sum.worst_ratio || (nf && !t.worst_not_finite)) {
            t.sum.worst_ratio = ratio;
            t.worst_i = i;
            t.worst_not_finite = nf;
        }
    }
    t.sum.failed = t.worst_not_finite || (t.sum.worst_ratio > 1.0 && !t.unjudged);
    return t;
}

/* The tensor's outcome in the report: counted, listed, and the report's
 * worst element when it is worse (a tensor not judged only when it is not
 * finite there). */
static void record_tensor(gate_report *rep, const tensor_outcome *t, const tensor_views *v)
{
    const lstm_tensor_view *a = v->ref;
    rep->tensors_checked++;
    rep->tensors_failed += t->sum.failed;
    if (rep->ntensors < GATE_MAX_TENSORS)
        rep->tensors[rep->ntensors++] = t->sum;
    if (!a->count || (t->unjudged && !t->worst_not_finite) ||
        !(t->sum.worst_ratio > rep->worst.ratio || (t->worst_not_finite && !rep->worst.not_finite)))
        return;
    gate_worst *w = &rep->worst;
    const size_t i = t->worst_i;
    snprintf(w->tensor, sizeof w->tensor, "%s", a->name);
    w->ndim = a->ndim;
    index_of(a, i, w->index);
    w->value = v->got->data[i];
    w->ref = a->data[i];
    w->err = fabs(w->value - w->ref);
    w->allowed = tolerance_allowed(&t->tol, w->ref, t->rms, moved_by(v, i), t->moved_rms);
    w->allowed_moved = tolerance_allowed_moved(&t->tol, w->ref, t->rms, moved_by(v, i), t->moved_rms);
    w->ratio = t->sum.worst_ratio;
    w->not_finite = t->worst_not_finite;
}

/* A case that passed but for tensors too sensitive to judge: a skip that
 * names the most sensitive of them. */
static void skip_unjudged(const runner_ops *r, gate_report *rep, const char *tensor, double moved, int unjudged)
{
    const int checked = rep->tensors_checked;
    rep->status = LC_UNSUPPORTED; /* the tensors' outcomes stay, for --dump */
    snprintf(rep->reason, sizeof rep->reason,
                       GATE_ILL_CONDITIONED " %s: one ulp on every input and a sample of FP32's roundings move %s "
                       "by %.2g%% of its rms, past what the rule can tell from a wrong answer (its cap, 1/%g); %d of "
                       "%d tensors not judged%s; an ill-conditioned seed (docs/tolerance.md): try another --seed",
                       tolerance_precision_name(r->precision), tensor, 100 * moved, 1 / TOLERANCE_MAX_SCALE,
                       unjudged, checked, unjudged < checked ? ", the others within tolerance" : "");
}

void gate_compare(const runner_ops *r, const gate_expected *expected, const lstm_results *got,
                  unsigned views, gate_report *rep)
{
    const lstm_results *ref = expected->reference;
    const lstm_shape *s = &ref->shape;
    const int cap = lstm_results_view_capacity(ref);
    lstm_tensor_view *all = calloc((size_t)cap * (2 + GATE_MOVED_DRAWS), sizeof *all);
    gate_report_start(rep, LC_OK);
    if (!all) {
        gate_report_startf(rep, LC_ERROR, "out of host memory comparing results");
        return;
    }
    const int n = lstm_results_views(ref, views, all, cap);
    lstm_results_views(got, views, all + cap, cap);
    for (int k = 0; k < GATE_MOVED_DRAWS && expected->moved[k]; k++)
        lstm_results_views(expected->moved[k], views, all + (2 + k) * cap, cap);
    int unjudged = 0;
    char most_moved[32] = "";
    double most = 0;
    for (int t = 0; t < n; t++) {
        tensor_views v = {&all[t], {NULL}, &all[cap + t]};
        for (int k = 0; k < GATE_MOVED_DRAWS && expected->moved[k]; k++)
            v.moved[k] = &all[(2 + k) * cap + t];
        const tensor_outcome outcome = compare_tensor(r, s, &v);
        record_tensor(rep, &outcome, &v);
        if (outcome.unjudged && !outcome.sum.failed) {
            unjudged++;
            if (outcome.moved_rms / outcome.rms > most) {
                most = outcome.moved_rms / outcome.rms;
                snprintf(most_moved, sizeof most_moved, "%s", all[t].name);
            }
        }
    }
    rep->status = rep->tensors_failed ? LC_FAILED : LC_OK;
    if (rep->status == LC_OK && unjudged)
        skip_unjudged(r, rep, most_moved, most, unjudged);
    free(all);
}

/* Create, forward, zero_grads, backward, read back: one run of r into got.
 * LC_OK, or the runner's status with *stage naming the step that failed. */
static int run_steps(const runner_ops *r, const lstm_problem *p, lstm_results *got, const char **stage,
                     lc_error *err)
{
    void *state = NULL;
    *stage = "create";
    int rc = r->create(r, p, &state, err);
    if (rc == LC_OK) {
        *stage = "forward";
        rc = r->forward(state, err);
    }
    if (rc == LC_OK && (r->caps & RUNNER_BACKWARD)) {
        *stage = "zero_grads";
        rc = r->zero_grads(state, err);
        if (rc == LC_OK) {
            *stage = "backward";
            rc = r->backward(state, err);
        }
    }
    if (rc == LC_OK) {
        *stage = "read_results";
        rc = r->read_results(state, got, err);
    }
    if (state)
        r->destroy(state);
    return rc;
}

int gate_inputs_changed(const lstm_problem *given, const lstm_problem *used, lc_error *err)
{
    char where[sizeof err->msg - sizeof " (they are read-only)"];
    if (!lstm_problem_differs(given, used, where, sizeof where))
        return 0;
    lc_error_set(err, "%s (they are read-only)", where);
    return 1;
}

/* run_steps on a copy of p's inputs of the runner's own: a runner that
 * writes them (the ABI forbids it) spoils nothing of the runners after it,
 * in this process, and is an error that names what it changed. LC_OK, or
 * the status with *stage and err saying why. */
static int run_once(const runner_ops *r, const lstm_problem *p, lstm_results *got, const char **stage,
                    lc_error *err)
{
    lstm_problem own;
    *stage = "copying its inputs";
    if (lstm_problem_copy(&own, p, err))
        return LC_ERROR;
    int rc = run_steps(r, &own, got, stage, err);
    if (rc == LC_OK && gate_inputs_changed(p, &own, err)) {
        *stage = GATE_CHANGED_INPUTS;
        rc = LC_ERROR;
    }
    lstm_problem_free(&own);
    return rc;
}

int gate_run_once(const runner_ops *r, const lstm_problem *p, lstm_results *got, lc_error *err)
{
    const char *stage;
    lc_error why = {{0}};
    lstm_results_fill(got, NAN);
    const int rc = run_once(r, p, got, &stage, &why);
    if (rc != LC_OK)
        lc_error_set(err, "%s %s: %s", r->name, stage, why.msg);
    return rc;
}

/* A skip or an error before any comparison: status and reason. */
static lc_status not_compared(gate_report *rep, lc_status status, const char *prefix, const char *why)
{
    gate_report_startf(rep, status, "%s%s", prefix, why);
    return status;
}

lc_status gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                     gate_report *rep)
{
    gate_report_start(rep, LC_OK);
    lc_error err = {{0}};
    const lstm_problem *p;
    const gate_expected *expected;
    const int avail = r->available(&err);
    if (avail != LC_OK) /* no device skips; a broken setup (LC_ERROR) is an error */
        return not_compared(rep, avail == LC_ERROR ? LC_ERROR : LC_UNSUPPORTED, "", err.msg);
    if (numerics_context_get(c, r, &p, &expected, &err))
        return not_compared(rep, LC_ERROR, "reference: ", err.msg);
    if (runner_supports_shape(r, &p->shape, p->lengths, &err) != LC_OK)
        return not_compared(rep, LC_UNSUPPORTED, "", err.msg);
    lstm_results got;
    if (lstm_results_alloc(&got, &p->shape, p->model, &err))
        return not_compared(rep, LC_ERROR, "", err.msg);
    /* NaN until the runner writes it: an element it never writes (a skipped
     * tensor, padding past a sequence's end) fails even where the reference is 0 */
    lstm_results_fill(&got, NAN);
    const char *stage;
    const int rc = run_once(r, p, &got, &stage, &err);
    if (rc != LC_OK) {
        gate_report_startf(rep, rc == LC_UNSUPPORTED ? LC_UNSUPPORTED : LC_ERROR, "%s %s: %s", r->name, stage,
                          err.msg);
        lstm_results_free(&got);
        return rep->status;
    }
    const unsigned views = gate_views(r);
    gate_compare(r, expected, &got, views, rep);
    const dump_case dc = {r, c, p, expected, &got, views, rep};
    if (dump_dir && dump_write(dump_dir, &dc, &err))
        not_compared(rep, LC_ERROR, "dump: ", err.msg);
    lstm_results_free(&got);
    return rep->status;
}

gate_skip_class gate_classify_skip(const runner_ops *r, const lstm_shape *s, const int *lengths,
                                   const char *reason)
{
    lc_error why;
    if (runner_supports_shape(r, s, lengths, &why) != LC_OK)
        return GATE_SKIP_OUTSIDE_CAPS;
    /* a library's refusal names its status (CUDNN_STATUS_NOT_SUPPORTED, ...):
     * a skip of such a runner for any other reason is not the library's */
    if (reason && !strncmp(reason, GATE_ILL_CONDITIONED, strlen(GATE_ILL_CONDITIONED)))
        return GATE_SKIP_ILL_CONDITIONED;
    const int named = reason && strstr(reason, "_STATUS_");
    return (r->caps & RUNNER_LIBRARY_DECIDES) && named ? GATE_SKIP_LIBRARY_REFUSED : GATE_SKIP_INSIDE_CAPS;
}

void gate_format_summary(const runner_ops *r, const gate_report *rep, char *buf, size_t n)
{
    const gate_worst *w = &rep->worst;
    char idx[64] = "";
    size_t k = 0;
    for (int d = 0; d < w->ndim && d < 3 && k < sizeof idx; d++)
        k += (size_t)snprintf(idx + k, sizeof idx - k, "%s%d", d ? "," : "", w->index[d]);
    switch (rep->status) {
    case LC_OK:
        snprintf(buf, n, "PASS %s: %d tensors within tolerance; worst %s[%s] error %.3g of allowed %.3g (ratio %.3f)",
                 r->name, rep->tensors_checked, w->tensor, idx, w->err, w->allowed, w->ratio);
        break;
    case LC_FAILED:
        if (w->not_finite)
            snprintf(buf, n, "FAIL %s: %d of %d tensors out of tolerance; %s[%s] is %g (not finite), reference %.6g",
                     r->name, rep->tensors_failed, rep->tensors_checked, w->tensor, idx, w->value, w->ref);
        else
            snprintf(buf, n, "FAIL %s: %d of %d tensors out of tolerance; worst %s[%s] = %.6g, reference %.6g, error %.3g > allowed %.3g (ratio %.3g)",
                     r->name, rep->tensors_failed, rep->tensors_checked, w->tensor, idx, w->value, w->ref,
                     w->err, w->allowed, w->ratio);
        if (!w->not_finite && w->allowed_moved > 0) { /* how much of it the problem's sensitivity gave */
            const size_t k = strlen(buf);
            snprintf(buf + k, n - k, "; %.3g of allowed is the problem's sensitivity", w->allowed_moved);
        }
        if (rep->reason[0]) { /* where it was seen, when not in the gate's own run */
            const size_t k = strlen(buf);
            snprintf(buf + k, n - k, " (%s)", rep->reason);
        }
        break;
    case LC_UNSUPPORTED:
        snprintf(buf, n, "SKIP %s: %s", r->name, rep->reason);
        break;
    default:
        snprintf(buf, n, "ERROR %s: %s", r->name, rep->reason);
        break;
    }
}
