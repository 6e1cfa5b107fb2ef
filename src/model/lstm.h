/* Shapes, inputs and results of the LSTM that every runner computes.
 * Semantics (PyTorch's nn.LSTM): gate order i, f, g, o; per layer l
 * W_ih (4H x I_l), W_hh (4H x H), b_ih (4H), b_hh (4H); I_0 = I, I_l = H.
 * All tensors are row-major: x (T,B,I), y (T,B,H), h0/c0/hy/cy (L,B,H).
 * The bundles themselves are part of the runner ABI. */
#ifndef LSTMCHECK_LSTM_H
#define LSTMCHECK_LSTM_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/json.h"
#include "lstmcheck/runner.h"
#include "model/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runner ABI's types (include/lstmcheck/runner.h, where they are
 * defined and documented) under the short names of this code base. */
typedef lstmcheck_shape lstm_shape;     /* T, B, I, H, L */
typedef lstmcheck_problem lstm_problem; /* inputs in float; lengths; backward seeds */
typedef lstmcheck_results lstm_results; /* outputs and gradients in double */

static inline int lstm_layer_input_size(const lstm_shape *s, int layer)
{
    return layer == 0 ? s->input_size : s->hidden_size;
}

/* Length of sequence b (T when no lengths are given). */
static inline int lstm_length(const lstm_problem *p, int b)
{
    return p->lengths ? p->lengths[b] : p->shape.seq_length;
}

/* The FLOPs of the GEMMs, per phase: flops[0] the forward's, per layer and
 * step x_t W_ih^T and h_{t-1} W_hh^T over the rows still running (lengths:
 * NULL, all T steps of B rows); flops[1] the backward's, twice as many
 * (dgates times both weights, and both weight gradients). The cell and a
 * model's extras are not counted: this is what the GEMM limit is measured
 * against (device/roofline.h). */
void lstm_gemm_flops(const lstm_shape *s, const int *lengths, double flops[2]);

/* How a shape is written for people and files. */
typedef enum lstm_shape_style {
    LSTM_SHAPE_TAG,   /* "s20-l1-i128-h128-b16": the original profile.py's size tag */
    LSTM_SHAPE_DIMS,  /* "T=20 B=16 I=128 H=128 L=1" */
    LSTM_SHAPE_FLAGS, /* "seqLength 20 numLayers 1 inputSize 128 hiddenSize 128 miniBatch 16" */
} lstm_shape_style;

/* The shape as style says, into buf; returns buf. */
const char *lstm_shape_format(const lstm_shape *s, lstm_shape_style style, char *buf, size_t n);
/* The shape as a JSON object with the original's flag names, in its order:
 * {"seqLength": T, "numLayers": L, "inputSize": I, "hiddenSize": H, "miniBatch": B}. */
void lstm_shape_json(json_writer *w, const lstm_shape *s);

/* Largest accepted size of any one dimension; products are checked too. */
#define LSTM_MAX_DIM 1000000
/* Largest accepted input seed (the CLI's and the baseline file's range). */
#define LSTM_MAX_SEED 2147483647LL

/* 0 when the shape is usable; otherwise a one-line reason in err. */
int lstm_shape_validate(const lstm_shape *s, lc_error *err);
/* 1 when a and b have the same sizes. */
int lstm_shape_equal(const lstm_shape *a, const lstm_shape *b);
/* Host bytes for a run of model `model` at this shape, 0 where they
 * exceed size_t (or the model is none): lstmcheck's own (the inputs, the
 * references, the results of both), and that with a runner's share as
 * large as the ref runner's (what a session checks before the runners
 * are known). */
size_t lstm_host_bytes_own(const lstm_shape *s, int model);
size_t lstm_host_bytes_estimate(const lstm_shape *s, int model);
/* What a layer's tensors cost beyond their bytes in lstmcheck's own share. */
#define LSTM_HOST_BYTES_PER_LAYER 4096
/* A run may take this share of the machine's memory. */
#define LSTM_HOST_MEMORY_SHARE 0.8
/* LC_OK when lstmcheck's own bytes (model `model`) and a runner's
 * runner_bytes fit in the share of `have` bytes (have 0: unknown, they
 * fit); else LC_UNSUPPORTED and why in one line, which says what the
 * runner's bytes are (`what`). A runner checks at create, before it
 * allocates. */
int lstm_host_room(const lstm_shape *s, int model, size_t runner_bytes, double have, const char *what, lc_error *why);
/* Element counts; the shape must have passed validation. */
size_t lstm_seq_elems(const lstm_shape *s, int width); /* T*B*width */
size_t lstm_state_elems(const lstm_shape *s);          /* L*B*H */
size_t lstm_w_ih_elems(const lstm_shape *s, int layer);
size_t lstm_w_hh_elems(const lstm_shape *s);

/* A model's per-layer tensor t (model/model.h) in a bundle: its table of
 * pointers, one per layer it has (NULL where it has none: a tensor
 * between layers of a one-layer stack), and its sizes. */
static inline float **model_tensor_inputs(const model_tensor *t, const lstm_problem *p)
{
    return *(float **const *)((const char *)p + t->input_at);
}
static inline double **model_tensor_grads(const model_tensor *t, const lstm_results *r)
{
    return *(double **const *)((const char *)r + t->grad_at);
}
static inline int model_tensor_layers(const model_tensor *t, const lstm_shape *s)
{
    return s->num_layers - t->below_top;
}
/* The dropout mask after layer l (T*B*H): NULL for a model without
 * dropout and for the top layer, whose output is not masked. */
static inline const float *lstm_dropout_mask(const lstm_problem *p, int l)
{
    const lstm_model *m = lstm_model_get(p->model);
    float **masks = m && m->dropout > 0 ? p->model_inputs[LSTMCHECK_DROPOUT_MASK] : NULL;
    return masks && l < p->shape.num_layers - 1 ? masks[l] : NULL;
}

/* The LayerNorm LSTM's parameters of layer l (LSTMCHECK_MODEL_LAYERNORM
 * in lstmcheck/runner.h): eps 0 and NULL pointers for a model without
 * LayerNorm. */
typedef struct lstm_layernorm {
    double eps;
    const float *i_weight, *i_bias; /* LN_i over 4H, on W_ih x_t */
    const float *h_weight, *h_bias; /* LN_h over 4H, on W_hh h_{t-1} */
    const float *c_weight, *c_bias; /* LN_c over H, on the cell */
} lstm_layernorm;
static inline lstm_layernorm lstm_layernorm_of(const lstm_problem *p, int l)
{
    const lstm_model *m = lstm_model_get(p->model);
    lstm_layernorm ln = {0.0, NULL, NULL, NULL, NULL, NULL, NULL};
    if (!m || !(m->layernorm_eps > 0))
        return ln;
    float **const *slot = p->model_inputs;
    ln.eps = m->layernorm_eps;
    ln.i_weight = slot[LSTMCHECK_LN_I_WEIGHT][l], ln.i_bias = slot[LSTMCHECK_LN_I_BIAS][l];
    ln.h_weight = slot[LSTMCHECK_LN_H_WEIGHT][l], ln.h_bias = slot[LSTMCHECK_LN_H_BIAS][l];
    ln.c_weight = slot[LSTMCHECK_LN_C_WEIGHT][l], ln.c_bias = slot[LSTMCHECK_LN_C_BIAS][l];
    return ln;
}

/* Its dimensions at layer l into dims; returns how many (1 to 3). */
int model_tensor_dims(const model_tensor *t, const lstm_shape *s, int layer, int dims[3]);
size_t model_tensor_elems(const model_tensor *t, const lstm_shape *s, int layer);

/* A model's sizes at a shape (torch_geometric.profile's count_parameters,
 * get_model_size and get_data_size; docs/profiling.md, "Sizes"), in FP32,
 * the precision every runner's inputs have. */
typedef struct lstm_sizes {
    size_t parameters;       /* the elements of the tensors with a gradient, every layer */
    size_t parameter_bytes;  /* theirs: the state_dict's data, without a file's overhead */
    size_t input_bytes;      /* x, h0, c0, the model's other inputs (masks) and the lengths */
    size_t activation_bytes; /* the tape (model_saved) over the steps that run: sum(lengths) or T per sequence */
} lstm_sizes;

/* The sizes of model at shape s with lengths (NULL: every sequence runs T
 * steps); 0, or 1 with err when model is none or a figure overflows. */
int lstm_model_sizes(const lstm_shape *s, const int *lengths, int model, lstm_sizes *out, lc_error *err);

/* Allocation of zeroed bundles of a model (an lstm_model_id, which the
 * bundle records); 0 on success. */
int lstm_problem_alloc(lstm_problem *p, const lstm_shape *s, int model, lc_error *err);
void lstm_problem_free(lstm_problem *p);
/* dst: a copy of src's inputs in memory of its own (seeds src has not
 * drawn stay NULL); allocates as lstm_problem_alloc. Every runner gets one
 * (check/gate.h, perf/harness.h): one that writes its inputs, which the
 * ABI forbids, spoils only its copy. 0, or 1 with err. */
int lstm_problem_copy(lstm_problem *dst, const lstm_problem *src, lc_error *err);
/* 0 when the inputs of used equal those of given bit for bit (same shape);
 * else 1, and where says what changed: the first element that differs
 * ("w_hh.0[5] was 0.1, is 1.1"), and how many tensors changed. */
int lstm_problem_differs(const lstm_problem *given, const lstm_problem *used, char *where, size_t n);
int lstm_results_alloc(lstm_results *r, const lstm_shape *s, int model, lc_error *err);
void lstm_results_free(lstm_results *r);
/* Every element of r set to v (the gate fills a runner's results with NaN
 * before the run: an element the runner never writes cannot pass). */
void lstm_results_fill(lstm_results *r, double v);

/* Convert a float buffer into a double one (runners' read-back). */
void lstm_copy_to_double(double *dst, const float *src, size_t n);
/* A runner's host buffer of n zeroed floats (at least one), aligned to 64
 * bytes, freed with free(); on failure NULL,
 * and *ok becomes 0, so that a runner makes all its buffers, then checks once. */
float *lstm_float_buffer(size_t n, int *ok);
/* A runner's buffers, counted before they are made: its allocation code
 * runs once counting (each lstm_host_floats adds its bytes and returns
 * NULL), the runner checks the count (lstm_host_room), then the same code
 * runs again and allocates (ok becomes 0 when one fails). */
typedef struct lstm_host_buffers {
    int counting, ok;
    size_t bytes;
} lstm_host_buffers;
float *lstm_host_floats(lstm_host_buffers *hb, size_t n);
/* bytes more that a runner's library will allocate (saturating) */
void lstm_host_count(lstm_host_buffers *hb, size_t bytes);

/* How deep the computation behind a tensor goes: its kind in the tolerance
 * rule (check/tolerance.h). */
typedef enum tensor_kind {
    TENSOR_FORWARD,     /* y, hy, cy */
    TENSOR_INPUT_GRAD,  /* dx, dh0, dc0 */
    TENSOR_PARAM_GRAD,  /* dW_ih, dW_hh, db_ih, db_hh: also summed over T*B */
} tensor_kind;

/* A named view of one tensor: the unit of comparison and of dumps. */
typedef struct lstm_tensor_view {
    char name[32];    /* "y", "dw_hh.0": with the layer for per-layer tensors */
    tensor_kind kind;
    int ndim;
    int dims[3];
    int layer;        /* -1 for tensors that are not per-layer */
    const double *data;
    size_t count;
} lstm_tensor_view;

enum { LSTM_VIEWS_OUTPUTS = 1, LSTM_VIEWS_STATE = 2, LSTM_VIEWS_GRADS = 4 };

/* How many views r has at most. */
int lstm_results_view_capacity(const lstm_results *r);

/* Fill views with the tensors of r selected by which (a LSTM_VIEWS_ mask);
 * returns how many, at most max. */
int lstm_results_views(const lstm_results *r, unsigned which,
                       lstm_tensor_view *views, int max);

#ifdef __cplusplus
}
#endif
#endif
