/* The numerics gate (see gate.h). */
#include "check/gate.h"
#include "base/files.h"

#include "model/inputs.h"
#include "check/npy.h"
#include "model/reference.h"
#include "check/tolerance.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    for (int i = 0; i < 2; i++) {
        if (c->ready[i]) {
            lstm_problem_free(&c->problem[i]);
            lstm_results_free(&c->reference[i]);
        }
    }
    free(c->lengths);
    memset(c, 0, sizeof *c);
}

unsigned gate_seeds(const runner_ops *r)
{
    /* every output the runner returns gets a gradient: the state paths
     * (dhy through W_hh, dcy through the cell, both per layer and per
     * sequence end) are checked like the output path */
    return (r->caps & RUNNER_STATE_ONLY) ? SEED_DHY | SEED_DCY : SEED_DY | SEED_DHY | SEED_DCY;
}

int numerics_context_get(numerics_context *c, const runner_ops *r, const lstm_problem **p,
                         const lstm_results **ref, lc_error *err)
{
    const int which = (r->caps & RUNNER_STATE_ONLY) ? 1 : 0;
    if (!c->ready[which]) {
        lstm_problem *pb = &c->problem[which];
        lstm_results *rs = &c->reference[which];
        if (lstm_problem_alloc(pb, &c->shape, err))
            return 1;
        if (lstm_inputs_generate(pb, c->seed, gate_seeds(r), err) ||
            (c->lengths && lstm_inputs_set_lengths(pb, c->lengths, c->shape.batch, err)) ||
            lstm_results_alloc(rs, &c->shape, err)) {
            lstm_problem_free(pb);
            return 1;
        }
        if (lstm_reference_run(pb, rs, err)) {
            lstm_problem_free(pb);
            lstm_results_free(rs);
            return 1;
        }
        c->ready[which] = 1;
    }
    *p = &c->problem[which];
    *ref = &c->reference[which];
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

/* The tolerance kind of a view: the layer index is not part of it. */
static tensor_kind view_kind(const lstm_tensor_view *v)
{
    char base[32];
    snprintf(base, sizeof base, "%s", v->name);
    char *dot = strchr(base, '.');
    if (dot)
        *dot = '\0';
    return tolerance_kind_of(base);
}

void gate_compare(const runner_ops *r, const lstm_results *ref, const lstm_results *got,
                  unsigned views, gate_report *rep)
{
    const lstm_shape *s = &ref->shape;
    const int cap = lstm_results_view_capacity(s);
    lstm_tensor_view *rv = calloc((size_t)cap, sizeof *rv), *gv = calloc((size_t)cap, sizeof *gv);
    memset(rep, 0, sizeof *rep);
    rep->worst.ratio = -1;
    if (!rv || !gv) {
        rep->status = LC_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "out of host memory comparing results");
        free(rv); free(gv);
        return;
    }
    int n = lstm_results_views(ref, views, rv, cap);
    lstm_results_views(got, views, gv, cap);
    for (int t = 0; t < n; t++) {
        const lstm_tensor_view *a = &rv[t], *b = &gv[t];
        double sumsq = 0;
        for (size_t i = 0; i < a->count; i++)
            sumsq += a->data[i] * a->data[i];
        const double rms = a->count ? sqrt(sumsq / (double)a->count) : 0;
        const double scale = tolerance_scale(s, view_kind(a), r->precision);
        gate_tensor_summary sum = {0};
        snprintf(sum.name, sizeof sum.name, "%s", a->name);
        sum.worst_ratio = -1;
        size_t worst_i = 0;
        int worst_nf = 0;
        for (size_t i = 0; i < a->count; i++) {
            const double err = fabs(b->data[i] - a->data[i]);
            const int nf = !isfinite(b->data[i]);
            const double allowed = tolerance_allowed(scale, a->data[i], rms);
            const double ratio = nf ? INFINITY : (allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0));
            if (!nf && err > sum.max_abs_err)
                sum.max_abs_err = err;
            if (ratio > sum.worst_ratio || (nf && !worst_nf)) {
                sum.worst_ratio = ratio;
                worst_i = i;
                worst_nf = nf;
            }
        }
        sum.failed = sum.worst_ratio > 1.0 || worst_nf;
        rep->tensors_checked++;
        rep->tensors_failed += sum.failed;
        if (rep->ntensors < GATE_MAX_TENSORS)
            rep->tensors[rep->ntensors++] = sum;
        if (a->count && (sum.worst_ratio > rep->worst.ratio || (worst_nf && !rep->worst.not_finite))) {
            gate_worst *w = &rep->worst;
            snprintf(w->tensor, sizeof w->tensor, "%s", a->name);
            w->ndim = a->ndim;
            index_of(a, worst_i, w->index);
            w->value = b->data[worst_i];
            w->ref = a->data[worst_i];
            w->err = fabs(w->value - w->ref);
            w->allowed = tolerance_allowed(scale, w->ref, rms);
            w->ratio = sum.worst_ratio;
            w->not_finite = worst_nf;
        }
    }
    rep->status = rep->tensors_failed ? LC_FAILED : LC_OK;
    free(rv);
    free(gv);
}

static int mkdir_p(const char *path, lc_error *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        lc_error_set(err, "path too long: %s", path);
        return 1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                lc_error_set(err, "cannot create directory %s: %s", buf, strerror(errno));
                return 1;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        lc_error_set(err, "cannot create directory %s: %s", buf, strerror(errno));
        return 1;
    }
    return 0;
}

/* --dump: the case as files. Every tensor is a .npy file; index.json
 * (written with cJSON) says what each file is and holds everything else
 * needed to recompute the case without this program: the shape, seed and
 * lengths, which outputs were seeded and the loss, and the tolerance rule
 * with its parameters. */

/* The loss the backward pass differentiates, from the seeds present. */
static void loss_definition(const lstm_problem *p, char *buf, size_t n)
{
    const struct { const float *seed; const char *term; } terms[] = {
        {p->dy, "sum(y*dy)"}, {p->dhy, "sum(hy*dhy)"}, {p->dcy, "sum(cy*dcy)"},
    };
    int k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        if (terms[i].seed && k >= 0 && (size_t)k < n)
            k += snprintf(buf + k, n - (size_t)k, "%s%s", k ? " + " : "", terms[i].term);
}

static cJSON *add_size_array(cJSON *obj, const char *key, int n, const size_t *v)
{
    cJSON *a = cJSON_AddArrayToObject(obj, key);
    for (int i = 0; a && i < n; i++) {
        cJSON *num = cJSON_CreateNumber((double)v[i]);
        if (!num || !cJSON_AddItemToArray(a, num)) {
            cJSON_Delete(num);
            return NULL;
        }
    }
    return a;
}

/* Write one tensor as <dir>/<role>_<tensor>.npy and list it in files;
 * returns its entry, NULL on error. */
static cJSON *dump_tensor(const char *dir, cJSON *files, const char *role, const char *tensor,
                          npy_dtype dtype, const void *data, int ndim, const size_t *dims, lc_error *err)
{
    char file[160], path[4096];
    snprintf(file, sizeof file, "%s_%s.npy", role, tensor);
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
        lc_error_set(err, "path too long: %s/%s", dir, file);
        return NULL;
    }
    if (npy_write(path, dtype, data, ndim, dims, err))
        return NULL;
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(files, e)) {
        cJSON_Delete(e);
        e = NULL;
    }
    const char *dtype_name = dtype == NPY_F32 ? "float32" : dtype == NPY_F64 ? "float64" : "int32";
    if (!e || !cJSON_AddStringToObject(e, "file", file) || !cJSON_AddStringToObject(e, "role", role) ||
        !cJSON_AddStringToObject(e, "tensor", tensor) || !cJSON_AddStringToObject(e, "dtype", dtype_name) ||
        !add_size_array(e, "shape", ndim, dims)) {
        lc_error_set(err, "out of host memory for index.json");
        return NULL;
    }
    return e;
}

static int dump_inputs(const char *dir, const lstm_problem *p, cJSON *files, lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const size_t T = (size_t)s->seq_length, B = (size_t)s->batch, I = (size_t)s->input_size,
                 H = (size_t)s->hidden_size, L = (size_t)s->num_layers;
    const struct { const char *name; const float *data; size_t dims[3]; } seq[] = {
        {"x", p->x, {T, B, I}},     {"h0", p->h0, {L, B, H}},   {"c0", p->c0, {L, B, H}},
        {"dy", p->dy, {T, B, H}},   {"dhy", p->dhy, {L, B, H}}, {"dcy", p->dcy, {L, B, H}},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        if (seq[i].data && !dump_tensor(dir, files, "input", seq[i].name, NPY_F32, seq[i].data, 3, seq[i].dims, err))
            return 1;
    for (int l = 0; l < s->num_layers; l++) {
        const size_t w_ih[2] = {4 * H, (size_t)lstm_layer_input_size(s, l)}, w_hh[2] = {4 * H, H},
                     bias[1] = {4 * H};
        const struct { const char *kind; const float *data; int ndim; const size_t *dims; } par[] = {
            {"w_ih", p->w_ih[l], 2, w_ih}, {"w_hh", p->w_hh[l], 2, w_hh},
            {"b_ih", p->b_ih[l], 1, bias}, {"b_hh", p->b_hh[l], 1, bias},
        };
        for (size_t i = 0; i < sizeof par / sizeof par[0]; i++) {
            char name[32];
            snprintf(name, sizeof name, "%s.%d", par[i].kind, l);
            if (!dump_tensor(dir, files, "input", name, NPY_F32, par[i].data, par[i].ndim, par[i].dims, err))
                return 1;
        }
    }
    if (p->lengths && !dump_tensor(dir, files, "input", "lengths", NPY_I32, p->lengths, 1, &B, err))
        return 1;
    return 0;
}

/* The reference's or the runner's tensors; with rep (the runner's), each
 * entry also carries the gate's worst ratio for that tensor. */
static int dump_results(const char *dir, const char *role, const lstm_results *res, unsigned views,
                        const gate_report *rep, cJSON *files, lc_error *err)
{
    const int capv = lstm_results_view_capacity(&res->shape);
    lstm_tensor_view *v = calloc((size_t)capv, sizeof *v);
    if (!v) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    int n = lstm_results_views(res, views, v, capv), rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const size_t dims[3] = {(size_t)v[i].dims[0], (size_t)v[i].dims[1], (size_t)v[i].dims[2]};
        cJSON *e = dump_tensor(dir, files, role, v[i].name, NPY_F64, v[i].data, v[i].ndim, dims, err);
        rc = !e || !cJSON_AddStringToObject(e, "tolerance_kind", tolerance_kind_name(view_kind(&v[i])));
        for (int t = 0; !rc && rep && t < rep->ntensors; t++) {
            const gate_tensor_summary *ts = &rep->tensors[t];
            if (strcmp(ts->name, v[i].name))
                continue;
            /* a runner value that is not finite has no ratio: JSON null */
            rc = !(isfinite(ts->worst_ratio) ? cJSON_AddNumberToObject(e, "worst_ratio", ts->worst_ratio)
                                             : cJSON_AddNullToObject(e, "worst_ratio")) ||
                 !cJSON_AddBoolToObject(e, "failed", ts->failed);
        }
        if (rc && e)
            lc_error_set(err, "out of host memory for index.json");
    }
    free(v);
    return rc;
}

/* The rule and its parameters for this runner's precision and shape. */
static int index_tolerance(cJSON *doc, const runner_ops *r, const lstm_shape *s)
{
    cJSON *tol = cJSON_AddObjectToObject(doc, "tolerance"), *depth = NULL;
    if (!tol || !cJSON_AddStringToObject(tol, "rule", TOLERANCE_RULE_TEXT) ||
        !cJSON_AddStringToObject(tol, "reasoning", "docs/tolerance.md") ||
        !cJSON_AddNumberToObject(tol, "safety", TOLERANCE_SAFETY) ||
        !cJSON_AddStringToObject(tol, "precision", tolerance_precision_name(r->precision)) ||
        !cJSON_AddNumberToObject(tol, "unit_roundoff", tolerance_unit_roundoff(r->precision)) ||
        !(depth = cJSON_AddObjectToObject(tol, "N")))
        return 0;
    const tensor_kind kinds[] = {TENSOR_FORWARD, TENSOR_INPUT_GRAD, TENSOR_PARAM_GRAD};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!cJSON_AddNumberToObject(depth, tolerance_kind_name(kinds[i]), tolerance_depth(s, kinds[i])))
            return 0;
    return 1;
}

static int index_shape(cJSON *doc, const lstm_shape *s)
{
    const struct { const char *key; int value; } dims[] = {
        {"seqLength", s->seq_length}, {"miniBatch", s->batch}, {"inputSize", s->input_size},
        {"hiddenSize", s->hidden_size}, {"numLayers", s->num_layers},
    };
    cJSON *shape = cJSON_AddObjectToObject(doc, "shape");
    for (size_t i = 0; shape && i < sizeof dims / sizeof dims[0]; i++)
        if (!cJSON_AddNumberToObject(shape, dims[i].key, dims[i].value))
            return 0;
    return shape != NULL;
}

/* lengths (null: every sequence is seqLength long), the seeded outputs
 * and the loss they define */
static int index_lengths_and_loss(cJSON *doc, const lstm_problem *p)
{
    if (p->lengths) {
        cJSON *lengths = cJSON_CreateIntArray(p->lengths, p->shape.batch);
        if (!lengths || !cJSON_AddItemToObject(doc, "lengths", lengths)) {
            cJSON_Delete(lengths);
            return 0;
        }
    } else if (!cJSON_AddNullToObject(doc, "lengths")) {
        return 0;
    }
    const struct { const float *data; const char *name; } seeds[] = {{p->dy, "dy"}, {p->dhy, "dhy"}, {p->dcy, "dcy"}};
    cJSON *seeded = cJSON_AddArrayToObject(doc, "seeded");
    for (size_t i = 0; seeded && i < sizeof seeds / sizeof seeds[0]; i++) {
        cJSON *name = seeds[i].data ? cJSON_CreateString(seeds[i].name) : NULL;
        if (seeds[i].data && (!name || !cJSON_AddItemToArray(seeded, name))) {
            cJSON_Delete(name);
            return 0;
        }
    }
    char loss[128];
    loss_definition(p, loss, sizeof loss);
    return seeded && cJSON_AddStringToObject(doc, "loss", loss) &&
           cJSON_AddStringToObject(doc, "loss_note", "y past a sequence's length is zero padding and "
                                                     "takes no gradient; hy and cy are each sequence's "
                                                     "state after its own last step");
}

/* Everything but the files: what the case is and how it was judged. */
static int index_header(cJSON *doc, const runner_ops *r, const numerics_context *c,
                        const lstm_problem *p, const gate_report *rep)
{
    return cJSON_AddStringToObject(doc, "runner", r->name) &&
           cJSON_AddStringToObject(doc, "device", r->device) &&
           cJSON_AddStringToObject(doc, "gate", rep->status == LC_OK ? "pass" : "fail") &&
           index_shape(doc, &p->shape) && cJSON_AddNumberToObject(doc, "seed", (double)c->seed) &&
           cJSON_AddStringToObject(doc, "inputs", "drawn from seed as docs/inputs.md says; "
                                                  "the input_*.npy files hold those values") &&
           index_lengths_and_loss(doc, p) && index_tolerance(doc, r, &p->shape);
}

static int write_index(const char *dir, const cJSON *doc, lc_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/index.json", dir) >= (int)sizeof path) {
        lc_error_set(err, "path too long: %s/index.json", dir);
        return 1;
    }
    char *text = cJSON_Print(doc);
    const size_t len = text ? strlen(text) : 0;
    char *line = text ? malloc(len + 2) : NULL;
    if (!line) {
        cJSON_free(text);
        lc_error_set(err, "out of host memory for index.json");
        return 1;
    }
    memcpy(line, text, len);
    line[len] = '\n';
    line[len + 1] = '\0';
    cJSON_free(text);
    const int rc = file_write_atomic(path, line, len + 1, err);
    free(line);
    return rc;
}

static int gate_dump(const char *root, const runner_ops *r, const numerics_context *c,
                     const lstm_problem *p, const lstm_results *ref, const lstm_results *got,
                     unsigned views, const gate_report *rep, lc_error *err)
{
    /* JSON numbers are doubles: the seed must be exact in one */
    if (c->seed > (1ull << 53)) {
        lc_error_set(err, "seed %llu is too large to record exactly in index.json",
                     (unsigned long long)c->seed);
        return 1;
    }
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/%s", root, r->name) >= (int)sizeof dir) {
        lc_error_set(err, "path too long: %s/%s", root, r->name);
        return 1;
    }
    if (mkdir_p(dir, err))
        return 1;
    cJSON *doc = cJSON_CreateObject(), *files = NULL;
    int rc = 1;
    if (!doc || !index_header(doc, r, c, p, rep) || !(files = cJSON_AddArrayToObject(doc, "files")))
        lc_error_set(err, "out of host memory for index.json");
    else
        rc = dump_inputs(dir, p, files, err) || dump_results(dir, "reference", ref, views, NULL, files, err) ||
             dump_results(dir, "runner", got, views, rep, files, err) || write_index(dir, doc, err);
    cJSON_Delete(doc);
    return rc;
}

lc_status gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                     gate_report *rep)
{
    memset(rep, 0, sizeof *rep);
    lc_error err = {{0}};
    const lstm_problem *p;
    const lstm_results *ref;
    const int avail = r->available(&err);
    if (avail != LC_OK) {
        /* no device skips; a broken setup (LC_ERROR) is an error */
        rep->status = avail == LC_ERROR ? LC_ERROR : LC_UNSUPPORTED;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    if (numerics_context_get(c, r, &p, &ref, &err)) {
        rep->status = LC_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "reference: %s", err.msg);
        return rep->status;
    }
    if (runner_supports_shape(r, p, &err) != LC_OK) {
        rep->status = LC_UNSUPPORTED;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    lstm_results got;
    if (lstm_results_alloc(&got, &p->shape, &err)) {
        rep->status = LC_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    void *state = NULL;
    int rc = r->create(r, p, &state, &err);
    const char *stage = "create";
    if (rc == LC_OK) {
        stage = "forward";
        rc = r->forward(state, &err);
        if (rc == LC_OK && (r->caps & RUNNER_BACKWARD)) {
            stage = "zero_grads";
            rc = r->zero_grads(state, &err);
            if (rc == LC_OK) {
                stage = "backward";
                rc = r->backward(state, &err);
            }
        }
        if (rc == LC_OK) {
            stage = "read_results";
            rc = r->read_results(state, &got, &err);
        }
    }
    if (state)
        r->destroy(state);
    if (rc != LC_OK) {
        rep->status = rc == LC_UNSUPPORTED ? LC_UNSUPPORTED : LC_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "%s %s: %s", r->name, stage, err.msg);
        lstm_results_free(&got);
        return rep->status;
    }
    const unsigned views = gate_views(r);
    gate_compare(r, ref, &got, views, rep);
    if (dump_dir && gate_dump(dump_dir, r, c, p, ref, &got, views, rep, &err)) {
        rep->status = LC_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "dump: %s", err.msg);
    }
    lstm_results_free(&got);
    return rep->status;
}

void gate_format_summary(const runner_ops *r, const gate_report *rep, char *buf, size_t n)
{
    const gate_worst *w = &rep->worst;
    char idx[64] = "";
    int k = 0;
    for (int d = 0; d < w->ndim; d++)
        k += snprintf(idx + k, sizeof idx - (size_t)k, "%s%d", d ? "," : "", w->index[d]);
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
        break;
    case LC_UNSUPPORTED:
        snprintf(buf, n, "SKIP %s: %s", r->name, rep->reason);
        break;
    default:
        snprintf(buf, n, "ERROR %s: %s", r->name, rep->reason);
        break;
    }
}
