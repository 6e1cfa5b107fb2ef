/* --dump (see dump.h). */
#include "check/dump.h"

#include "base/files.h"
#include "base/json.h"
#include "base/paths.h"
#include "check/npy.h"
#include "check/tolerance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dump in progress: its directory and index.json, being written. */
typedef struct dump_files {
    char dir[4096];
    json_writer index;
    lc_error *err;
} dump_files;

/* Write one tensor as <dir>/<role>_<tensor>.npy and begin its entry in
 * index.json's "files" (the caller adds to it and ends it). 0, or 1. Each
 * file first removes the temporary files a killed dump left beside it
 * (the folder is the dump's own, and is written again and again). */
static int dump_file(dump_files *d, const char *role, const char *tensor, npy_dtype dtype, const void *data,
                     int ndim, const size_t *dims)
{
    char file[160], path[4400];
    snprintf(file, sizeof file, "%s_%s.npy", role, tensor);
    if (snprintf(path, sizeof path, "%s/%s", d->dir, file) >= (int)sizeof path) {
        lc_error_set(d->err, "path too long: %s/%s", d->dir, file);
        return 1;
    }
    file_remove_stale_temps(path);
    if (npy_write(path, dtype, data, ndim, dims, d->err))
        return 1;
    json_writer *w = &d->index;
    json_object_begin(w);
    json_member_string(w, "file", file);
    json_member_string(w, "role", role);
    json_member_string(w, "tensor", tensor);
    json_member_string(w, "dtype", dtype == NPY_F32 ? "float32" : dtype == NPY_F64 ? "float64" : "int32");
    json_key(w, "shape");
    json_array_begin_inline(w);
    for (int i = 0; i < ndim; i++)
        json_uint(w, dims[i]);
    json_array_end(w);
    return 0;
}

static int dump_input(dump_files *d, const char *tensor, npy_dtype dtype, const void *data, int ndim,
                      const size_t *dims)
{
    if (dump_file(d, "input", tensor, dtype, data, ndim, dims))
        return 1;
    json_object_end(&d->index);
    return 0;
}

/* The model's per-layer tensors (parameters, dropout masks), layer by
 * layer in its descriptor's order: "w_ih.0", ..., "dropout_mask.0". */
static int dump_parameters(dump_files *d, const lstm_problem *p)
{
    const lstm_shape *s = &p->shape;
    const lstm_model *m = lstm_model_get(p->model);
    for (int l = 0; l < s->num_layers; l++) {
        for (int i = 0; i < m->ntensors; i++) {
            const model_tensor *t = &m->tensors[i];
            if (l >= model_tensor_layers(t, s))
                continue;
            int dims[3];
            size_t sizes[3];
            const int ndim = model_tensor_dims(t, s, l, dims);
            for (int k = 0; k < ndim; k++)
                sizes[k] = (size_t)dims[k];
            char name[40];
            snprintf(name, sizeof name, "%s.%d", t->name, l);
            if (dump_input(d, name, NPY_F32, model_tensor_inputs(t, p)[l], ndim, sizes))
                return 1;
        }
    }
    return 0;
}

static int dump_inputs(dump_files *d, const lstm_problem *p)
{
    const lstm_shape *s = &p->shape;
    const size_t T = (size_t)s->seq_length, B = (size_t)s->batch, I = (size_t)s->input_size,
                 H = (size_t)s->hidden_size, L = (size_t)s->num_layers;
    const struct { const char *name; const float *data; size_t dims[3]; } seq[] = {
        {"x", p->x, {T, B, I}},     {"h0", p->h0, {L, B, H}},   {"c0", p->c0, {L, B, H}},
        {"dy", p->dy, {T, B, H}},   {"dhy", p->dhy, {L, B, H}}, {"dcy", p->dcy, {L, B, H}},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        if (seq[i].data && dump_input(d, seq[i].name, NPY_F32, seq[i].data, 3, seq[i].dims))
            return 1;
    if (dump_parameters(d, p))
        return 1;
    return p->lengths && dump_input(d, "lengths", NPY_I32, p->lengths, 1, &B);
}

/* The reference's or the runner's tensors; with rep (the runner's), each
 * entry also carries the gate's worst ratio for that tensor. */
static int dump_results(dump_files *d, const char *role, const lstm_results *res, unsigned views,
                        const gate_report *rep)
{
    const int capv = lstm_results_view_capacity(res);
    lstm_tensor_view *v = calloc((size_t)capv, sizeof *v);
    if (!v) {
        lc_error_set(d->err, "out of host memory");
        return 1;
    }
    int n = lstm_results_views(res, views, v, capv), rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        const size_t dims[3] = {(size_t)v[i].dims[0], (size_t)v[i].dims[1], (size_t)v[i].dims[2]};
        rc = dump_file(d, role, v[i].name, NPY_F64, v[i].data, v[i].ndim, dims);
        if (rc)
            break;
        json_member_string(&d->index, "tolerance_kind", tolerance_kind_name(v[i].kind));
        for (int t = 0; rep && t < rep->ntensors; t++) {
            const gate_tensor_summary *ts = &rep->tensors[t];
            if (strcmp(ts->name, v[i].name))
                continue;
            /* a runner value that is not finite has no ratio: null */
            json_member_double(&d->index, "worst_ratio", ts->worst_ratio);
            json_member_bool(&d->index, "failed", ts->failed);
        }
        json_object_end(&d->index);
    }
    free(v);
    return rc;
}

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

/* The rule and its parameters for this runner's precision and shape. */
static void index_tolerance(json_writer *w, const runner_ops *r, const lstm_shape *s, int moved)
{
    json_key(w, "tolerance");
    json_object_begin(w);
    json_member_string(w, "rule", TOLERANCE_RULE_TEXT);
    json_member_string(w, "reasoning", "docs/tolerance.md");
    json_member_double(w, "safety", TOLERANCE_SAFETY);
    json_member_string(w, "precision", tolerance_precision_name(r->precision));
    json_member_double(w, "unit_roundoff", tolerance_unit_roundoff(r->precision));
    json_member_double(w, "smallest_normal", tolerance_smallest_normal(r->precision));
    json_member_double(w, "max_scale", TOLERANCE_MAX_SCALE);
    json_member_double(w, "moved_safety", TOLERANCE_MOVED_SAFETY);
    json_member_uint(w, "moved_draws", moved ? GATE_MOVED_DRAWS : 0);
    json_member_string(w, "moved", moved ? "moved_reference_<k>_*.npy, one per draw k: the reference with x, h0, c0, "
                                           "the seeds and the parameters moved by one FP32 ulp (docs/inputs.md) and a "
                                           "sample of FP32 roundings inside the recurrence (docs/tolerance.md), both "
                                           "from the draw's seed; moved(e) - ref(e) is the largest over the draws, "
                                           "rms(moved - ref) the largest draw's"
                                         : "none: this model's rule has no moved term (moved(e) - ref(e) = 0)");
    json_key(w, "N");
    json_object_begin(w);
    const tensor_kind kinds[] = {TENSOR_FORWARD, TENSOR_INPUT_GRAD, TENSOR_PARAM_GRAD};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        json_member_double(w, tolerance_kind_name(kinds[i]), tolerance_depth(s, runner_checked_model(r), kinds[i], r->precision));
    json_object_end(w);
    json_object_end(w);
}

/* lengths (null: every sequence is seqLength long), the seeded outputs
 * and the loss they define */
static void index_lengths_and_loss(json_writer *w, const lstm_problem *p)
{
    json_key(w, "lengths");
    if (p->lengths) {
        json_array_begin_inline(w);
        for (int b = 0; b < p->shape.batch; b++)
            json_int(w, p->lengths[b]);
        json_array_end(w);
    } else {
        json_null(w);
    }
    const struct { const float *data; const char *name; } seeds[] = {{p->dy, "dy"}, {p->dhy, "dhy"}, {p->dcy, "dcy"}};
    json_key(w, "seeded");
    json_array_begin_inline(w);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        if (seeds[i].data)
            json_string(w, seeds[i].name);
    json_array_end(w);
    char loss[128];
    loss_definition(p, loss, sizeof loss);
    json_member_string(w, "loss", loss);
    json_member_string(w, "loss_note", "y past a sequence's length is zero padding and takes no gradient; "
                                       "hy and cy are each sequence's state after its own last step");
}

/* Everything but the files: what the case is and how it was judged. */
static void index_header(json_writer *w, const dump_case *dc)
{
    const lstm_problem *p = dc->problem;
    json_member_string(w, "runner", dc->runner->name);
    json_member_string(w, "device", lc_device_name(dc->runner->device));
    json_member_string(w, "model", lstm_model_name(p->model));
    char unchecked[160];
    if (runner_timing_unchecked(dc->runner, &p->shape, unchecked, sizeof unchecked)) /* another model when timed */
        json_member_string(w, "timing_unchecked", unchecked);
    const lc_status st = dc->report->status;
    json_member_string(w, "gate", st == LC_OK ? "pass" : st == LC_UNSUPPORTED ? "skip" : "fail");
    json_key(w, "shape");
    lstm_shape_json(w, &p->shape);
    json_member_uint(w, "seed", dc->context->seed);
    json_member_string(w, "inputs", "drawn from seed as docs/inputs.md says; the input_*.npy files hold those values");
    index_lengths_and_loss(w, p);
    index_tolerance(w, dc->runner, &p->shape, dc->expected->moved[0] != NULL);
}

static int dump_everything(dump_files *d, const dump_case *dc)
{
    json_writer *w = &d->index;
    json_object_begin(w);
    index_header(w, dc);
    json_key(w, "files");
    json_array_begin(w);
    const gate_expected *e = dc->expected;
    if (dump_inputs(d, dc->problem) || dump_results(d, "reference", e->reference, dc->views, NULL))
        return 1;
    for (int k = 0; k < GATE_MOVED_DRAWS && e->moved[k]; k++) {
        char role[32];
        snprintf(role, sizeof role, "moved_reference_%d", k);
        if (dump_results(d, role, e->moved[k], dc->views, NULL))
            return 1;
    }
    if (dump_results(d, "runner", dc->result, dc->views, dc->report))
        return 1;
    json_array_end(w);
    json_object_end(w);
    char path[4400];
    snprintf(path, sizeof path, "%s/index.json", d->dir);
    file_remove_stale_temps(path);
    return json_write_file(w, path, d->err);
}

int dump_write(const char *root, const dump_case *dc, lc_error *err)
{
    /* readers take JSON numbers as doubles: the seed must be exact in one */
    if (dc->context->seed > (1ull << 53)) {
        lc_error_set(err, "seed %llu is too large to record exactly in index.json",
                     (unsigned long long)dc->context->seed);
        return 1;
    }
    dump_files d = {.err = err};
    if (snprintf(d.dir, sizeof d.dir, "%s/%s", root, dc->runner->name) >= (int)sizeof d.dir) {
        lc_error_set(err, "path too long: %s/%s", root, dc->runner->name);
        return 1;
    }
    if (path_mkdir_p(d.dir, err))
        return 1;
    json_init(&d.index, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
    const int rc = dump_everything(&d, dc);
    json_free(&d.index);
    return rc;
}
