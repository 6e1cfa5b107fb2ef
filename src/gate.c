/* The numerics gate (see gate.h). */
#include "gate.h"

#include "inputs.h"
#include "npy.h"
#include "reference.h"
#include "tolerance.h"

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

void gate_compare(const runner_ops *r, const lstm_results *ref, const lstm_results *got,
                  unsigned views, gate_report *rep)
{
    const lstm_shape *s = &ref->shape;
    const int cap = lstm_results_view_capacity(s);
    lstm_tensor_view *rv = calloc((size_t)cap, sizeof *rv), *gv = calloc((size_t)cap, sizeof *gv);
    memset(rep, 0, sizeof *rep);
    rep->worst.ratio = -1;
    if (!rv || !gv) {
        rep->status = GATE_ERROR;
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
        /* the layer index is not part of the kind: strip ".l" */
        char base[32];
        snprintf(base, sizeof base, "%s", a->name);
        char *dot = strchr(base, '.');
        if (dot)
            *dot = '\0';
        const double scale = tolerance_scale(s, tolerance_kind_of(base), r->precision);
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
    rep->status = rep->tensors_failed ? GATE_FAIL : GATE_PASS;
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

/* Appends one entry to the index text. */
static void index_add(char **text, size_t *len, size_t *cap, const char *file, const char *role,
                      const char *tensor, const char *dtype, int ndim, const size_t *dims)
{
    char line[512];
    int n = snprintf(line, sizeof line,
                     "%s    {\"file\": \"%s\", \"role\": \"%s\", \"tensor\": \"%s\", "
                     "\"dtype\": \"%s\", \"shape\": [",
                     *len > 2 ? ",\n" : "", file, role, tensor, dtype);
    for (int d = 0; d < ndim; d++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%zu", d ? ", " : "", dims[d]);
    n += snprintf(line + n, sizeof line - (size_t)n, "]}");
    if (*len + (size_t)n + 1 > *cap) {
        size_t nc = (*cap + (size_t)n + 1) * 2;
        char *t = realloc(*text, nc);
        if (!t)
            return;
        *text = t;
        *cap = nc;
    }
    memcpy(*text + *len, line, (size_t)n + 1);
    *len += (size_t)n;
}

static int dump_results(const char *dir, const char *role, const lstm_results *res,
                        unsigned views, char **text, size_t *len, size_t *cap, lc_error *err)
{
    const int capv = lstm_results_view_capacity(&res->shape);
    lstm_tensor_view *v = calloc((size_t)capv, sizeof *v);
    if (!v) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    int n = lstm_results_views(res, views, v, capv);
    for (int i = 0; i < n; i++) {
        char file[128], path[4096];
        size_t dims[3] = {(size_t)v[i].dims[0], (size_t)v[i].dims[1], (size_t)v[i].dims[2]};
        snprintf(file, sizeof file, "%s_%s.npy", role, v[i].name);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (npy_write(path, NPY_F64, v[i].data, v[i].ndim, dims, err)) {
            free(v);
            return 1;
        }
        index_add(text, len, cap, file, role, v[i].name, "float64", v[i].ndim, dims);
    }
    free(v);
    return 0;
}

static int dump_input(const char *dir, const char *name, const float *data, int ndim,
                      size_t d0, size_t d1, size_t d2, char **text, size_t *len, size_t *cap,
                      lc_error *err)
{
    if (!data)
        return 0;
    char file[128], path[4096];
    size_t dims[3] = {d0, d1, d2};
    snprintf(file, sizeof file, "input_%s.npy", name);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (npy_write(path, NPY_F32, data, ndim, dims, err))
        return 1;
    index_add(text, len, cap, file, "input", name, "float32", ndim, dims);
    return 0;
}

static int gate_dump(const char *root, const runner_ops *r, const lstm_problem *p,
                     const lstm_results *ref, const lstm_results *got, unsigned views,
                     const gate_report *rep, lc_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", root, r->name);
    if (mkdir_p(dir, err))
        return 1;
    const lstm_shape *s = &p->shape;
    size_t T = (size_t)s->seq_length, B = (size_t)s->batch, I = (size_t)s->input_size,
           H = (size_t)s->hidden_size, L = (size_t)s->num_layers;
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    if (!text) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    len = (size_t)snprintf(text, cap, "[\n");
    int rc = dump_input(dir, "x", p->x, 3, T, B, I, &text, &len, &cap, err) ||
             dump_input(dir, "h0", p->h0, 3, L, B, H, &text, &len, &cap, err) ||
             dump_input(dir, "c0", p->c0, 3, L, B, H, &text, &len, &cap, err) ||
             dump_input(dir, "dy", p->dy, 3, T, B, H, &text, &len, &cap, err) ||
             dump_input(dir, "dhy", p->dhy, 3, L, B, H, &text, &len, &cap, err) ||
             dump_input(dir, "dcy", p->dcy, 3, L, B, H, &text, &len, &cap, err);
    for (size_t l = 0; !rc && l < L; l++) {
        char n1[32], n2[32], n3[32], n4[32];
        snprintf(n1, sizeof n1, "w_ih.%zu", l);
        snprintf(n2, sizeof n2, "w_hh.%zu", l);
        snprintf(n3, sizeof n3, "b_ih.%zu", l);
        snprintf(n4, sizeof n4, "b_hh.%zu", l);
        rc = dump_input(dir, n1, p->w_ih[l], 2, 4 * H, l ? H : I, 0, &text, &len, &cap, err) ||
             dump_input(dir, n2, p->w_hh[l], 2, 4 * H, H, 0, &text, &len, &cap, err) ||
             dump_input(dir, n3, p->b_ih[l], 1, 4 * H, 0, 0, &text, &len, &cap, err) ||
             dump_input(dir, n4, p->b_hh[l], 1, 4 * H, 0, 0, &text, &len, &cap, err);
    }
    if (!rc && p->lengths) {
        char path[4096];
        size_t dims[1] = {B};
        snprintf(path, sizeof path, "%s/input_lengths.npy", dir);
        rc = npy_write(path, NPY_I32, p->lengths, 1, dims, err);
        if (!rc)
            index_add(&text, &len, &cap, "input_lengths.npy", "input", "lengths", "int32", 1, dims);
    }
    if (!rc)
        rc = dump_results(dir, "reference", ref, views, &text, &len, &cap, err) ||
             dump_results(dir, "runner", got, views, &text, &len, &cap, err);
    if (!rc) {
        /* wrap the entries with what they belong to */
        size_t need = len + 2048;
        char *doc = malloc(need);
        if (!doc) {
            lc_error_set(err, "out of host memory");
            rc = 1;
        } else {
            int m = snprintf(doc, need,
                             "{\n  \"runner\": \"%s\",\n  \"shape\": {\"seqLength\": %d, \"miniBatch\": %d, "
                             "\"inputSize\": %d, \"hiddenSize\": %d, \"numLayers\": %d},\n"
                             "  \"gate\": \"%s\",\n  \"files\": %s\n]\n}\n",
                             r->name, s->seq_length, s->batch, s->input_size, s->hidden_size,
                             s->num_layers, rep->status == GATE_PASS ? "pass" : "fail", text);
            char path[4096];
            snprintf(path, sizeof path, "%s/index.json", dir);
            rc = file_write_atomic(path, doc, (size_t)m, err);
            free(doc);
        }
    }
    free(text);
    return rc;
}

gate_status gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                     gate_report *rep)
{
    memset(rep, 0, sizeof *rep);
    lc_error err = {{0}};
    const lstm_problem *p;
    const lstm_results *ref;
    if (r->available(&err) != RUNNER_OK) {
        rep->status = GATE_SKIP;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    if (numerics_context_get(c, r, &p, &ref, &err)) {
        rep->status = GATE_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "reference: %s", err.msg);
        return rep->status;
    }
    if (runner_supports_shape(r, p, &err) != RUNNER_OK) {
        rep->status = GATE_SKIP;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    lstm_results got;
    if (lstm_results_alloc(&got, &p->shape, &err)) {
        rep->status = GATE_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "%s", err.msg);
        return rep->status;
    }
    void *state = NULL;
    int rc = r->create(p, &state, &err);
    const char *stage = "create";
    if (rc == RUNNER_OK) {
        stage = "forward";
        rc = r->forward(state, &err);
        if (rc == RUNNER_OK && (r->caps & RUNNER_BACKWARD)) {
            stage = "zero_grads";
            rc = r->zero_grads(state, &err);
            if (rc == RUNNER_OK) {
                stage = "backward";
                rc = r->backward(state, &err);
            }
        }
        if (rc == RUNNER_OK) {
            stage = "read_results";
            rc = r->read_results(state, &got, &err);
        }
    }
    if (state)
        r->destroy(state);
    if (rc != RUNNER_OK) {
        rep->status = rc == RUNNER_UNSUPPORTED ? GATE_SKIP : GATE_ERROR;
        snprintf(rep->reason, sizeof rep->reason, "%s %s: %s", r->name, stage, err.msg);
        lstm_results_free(&got);
        return rep->status;
    }
    const unsigned views = gate_views(r);
    gate_compare(r, ref, &got, views, rep);
    if (dump_dir && gate_dump(dump_dir, r, p, ref, &got, views, rep, &err)) {
        rep->status = GATE_ERROR;
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
    case GATE_PASS:
        snprintf(buf, n, "PASS %s: %d tensors within tolerance; worst %s[%s] error %.3g of allowed %.3g (ratio %.3f)",
                 r->name, rep->tensors_checked, w->tensor, idx, w->err, w->allowed, w->ratio);
        break;
    case GATE_FAIL:
        if (w->not_finite)
            snprintf(buf, n, "FAIL %s: %d of %d tensors out of tolerance; %s[%s] is %g (not finite), reference %.6g",
                     r->name, rep->tensors_failed, rep->tensors_checked, w->tensor, idx, w->value, w->ref);
        else
            snprintf(buf, n, "FAIL %s: %d of %d tensors out of tolerance; worst %s[%s] = %.6g, reference %.6g, error %.3g > allowed %.3g (ratio %.3g)",
                     r->name, rep->tensors_failed, rep->tensors_checked, w->tensor, idx, w->value, w->ref,
                     w->err, w->allowed, w->ratio);
        break;
    case GATE_SKIP:
        snprintf(buf, n, "SKIP %s: %s", r->name, rep->reason);
        break;
    default:
        snprintf(buf, n, "ERROR %s: %s", r->name, rep->reason);
        break;
    }
}
