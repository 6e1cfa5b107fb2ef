/* Allocation, validation and views of the LSTM tensor bundles. */
#include "model/lstm.h"
#include "base/text.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a*b with overflow detection: returns 0 on overflow */
static size_t mul_checked(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    return a * b;
}

int lstm_shape_validate(const lstm_shape *s, lc_error *err)
{
    const struct { const char *name; int v; } dims[] = {
        {"seqLength", s->seq_length}, {"miniBatch", s->batch},
        {"inputSize", s->input_size}, {"hiddenSize", s->hidden_size},
        {"numLayers", s->num_layers},
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        if (dims[i].v <= 0) {
            lc_error_set(err, "%s must be positive, got %d", dims[i].name, dims[i].v);
            return 1;
        }
        if (dims[i].v > LSTM_MAX_DIM) {
            lc_error_set(err, "%s = %d is larger than the limit %d", dims[i].name,
                         dims[i].v, LSTM_MAX_DIM);
            return 1;
        }
    }
    int counted = 1;
    for (int m = 0; m < MODEL_COUNT; m++)
        counted = counted && lstm_host_bytes_estimate(s, m) != 0;
    if (!counted) {
        char dims[96];
        lc_error_set(err, "shape %s overflows the size arithmetic",
                     lstm_shape_format(s, LSTM_SHAPE_DIMS, dims, sizeof dims));
        return 1;
    }
    /* every element count must also fit the int indices of BLAS calls */
    size_t widest = (size_t)(s->input_size > s->hidden_size ? s->input_size : s->hidden_size);
    size_t seq = mul_checked(mul_checked((size_t)s->seq_length, (size_t)s->batch), 4 * widest);
    size_t w = mul_checked(4 * (size_t)s->hidden_size, widest);
    if (seq == 0 || w == 0 || seq > (size_t)INT32_MAX || w > (size_t)INT32_MAX) {
        lc_error_set(err, "shape T=%d B=%d I=%d H=%d has a tensor of more than 2^31 elements",
                     s->seq_length, s->batch, s->input_size, s->hidden_size);
        return 1;
    }
    return 0;
}

int lstm_shape_equal(const lstm_shape *a, const lstm_shape *b)
{
    return a->seq_length == b->seq_length && a->batch == b->batch && a->input_size == b->input_size &&
           a->hidden_size == b->hidden_size && a->num_layers == b->num_layers;
}

void lstm_gemm_flops(const lstm_shape *s, const int *lengths, double flops[2])
{
    double rows = 0; /* (step, sequence) pairs that run */
    for (int b = 0; b < s->batch; b++)
        rows += lengths ? lengths[b] : s->seq_length;
    double per_row = 0;
    for (int l = 0; l < s->num_layers; l++)
        per_row += 2.0 * 4.0 * s->hidden_size * (lstm_layer_input_size(s, l) + s->hidden_size);
    flops[0] = rows * per_row;
    flops[1] = 2 * flops[0];
}

const char *lstm_shape_format(const lstm_shape *s, lstm_shape_style style, char *buf, size_t n)
{
    const int T = s->seq_length, B = s->batch, I = s->input_size, H = s->hidden_size, L = s->num_layers;
    if (style == LSTM_SHAPE_TAG)
        snprintf(buf, n, "s%d-l%d-i%d-h%d-b%d", T, L, I, H, B);
    else if (style == LSTM_SHAPE_DIMS)
        snprintf(buf, n, "T=%d B=%d I=%d H=%d L=%d", T, B, I, H, L);
    else
        snprintf(buf, n, "seqLength %d numLayers %d inputSize %d hiddenSize %d miniBatch %d", T, L, I, H, B);
    return buf;
}

void lstm_shape_json(json_writer *w, const lstm_shape *s)
{
    json_object_begin(w);
    json_member_int(w, "seqLength", s->seq_length);
    json_member_int(w, "numLayers", s->num_layers);
    json_member_int(w, "inputSize", s->input_size);
    json_member_int(w, "hiddenSize", s->hidden_size);
    json_member_int(w, "miniBatch", s->batch);
    json_object_end(w);
}

size_t lstm_seq_elems(const lstm_shape *s, int width)
{
    return (size_t)s->seq_length * (size_t)s->batch * (size_t)width;
}

size_t lstm_state_elems(const lstm_shape *s)
{
    return (size_t)s->num_layers * (size_t)s->batch * (size_t)s->hidden_size;
}

size_t lstm_w_ih_elems(const lstm_shape *s, int layer)
{
    return 4 * (size_t)s->hidden_size * (size_t)lstm_layer_input_size(s, layer);
}

size_t lstm_w_hh_elems(const lstm_shape *s)
{
    return 4 * (size_t)s->hidden_size * (size_t)s->hidden_size;
}

/* The host-memory figures saturate: SIZE_MAX stands for "more than any
 * machine has". */
static size_t sat_mul(size_t a, size_t b)
{
    return a != 0 && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static int model_dim_size(model_dim d, const lstm_shape *s, int layer);

/* The sizes the host figures are made of, at shape s (saturating). */
typedef struct host_parts {
    size_t problem;   /* a problem's floats: weights, x, dy, states and their seeds */
    size_t results;   /* a result set's doubles: y, dx, every gradient, the states */
    size_t reference; /* an FP64 reference beside its results: its weights, its tape (the
                       * model's saved values of every row and layer: 6H for nn.LSTM,
                       * 15H + 3 with the LayerNorms), and one layer's gate gradients of
                       * every step, kept between its two backward passes */
} host_parts;

static host_parts host_parts_of(const lstm_shape *s, const lstm_model *m)
{
    size_t T = (size_t)s->seq_length, B = (size_t)s->batch, I = (size_t)s->input_size,
           H = (size_t)s->hidden_size, L = (size_t)s->num_layers;
    size_t wide = I > H ? I : H;
    /* per layer: weights (4H x (I_l + H)) and biases */
    size_t w = sat_mul(sat_mul(4 * H, wide + H + 2), L);
    size_t rows = sat_mul(T, B), seq = sat_mul(rows, wide), state = sat_mul(sat_mul(L, B), H);
    size_t saved = 0;
    for (int i = 0; i < m->nsaved; i++)
        saved += (size_t)model_dim_size(m->saved[i].width, s, 0);
    host_parts p;
    p.problem = sat_add(sat_add(sat_mul(w, 4), sat_mul(seq, 4 * 2)), sat_mul(state, 4 * 4));
    p.results = sat_add(sat_add(sat_mul(w, 8), sat_mul(seq, 8 * 2)), sat_mul(state, 8 * 4));
    p.reference = sat_add(sat_mul(w, 8), sat_mul(sat_mul(sat_mul(rows, saved), L), 8));
    p.reference = sat_add(p.reference, sat_mul(sat_mul(rows, saved > 2 * H ? saved - 2 * H : saved), 8));
    return p;
}

/* lstmcheck's own share for a run of model m: the problem and the
 * runner's copy of its inputs, the reference, and for a model that
 * measures its sensitivity the moved ones (each a moved problem and its
 * results, computed one at a time), every result set, and what every
 * layer's tensors cost beyond their bytes (tables, allocations: a million
 * one-unit layers took 2 GB). */
size_t lstm_host_bytes_own(const lstm_shape *s, int model)
{
    const lstm_model *m = lstm_model_get(model);
    if (!m)
        return 0;
    const host_parts p = host_parts_of(s, m);
    const size_t moved = m->moved_reference ? MODEL_MOVED_DRAWS : 0;
    size_t total = sat_mul(p.problem, 2 + moved);
    total = sat_add(total, p.reference);
    total = sat_add(total, sat_mul(p.results, 2 + moved));
    total = sat_add(total, sat_mul((size_t)s->num_layers, LSTM_HOST_BYTES_PER_LAYER));
    return total == SIZE_MAX ? 0 : total;
}

/* Before the runners are known: lstmcheck's own, and what a runner may
 * keep beside it, as much as the `ref` runner does (an FP64 reference of
 * its own: more than a float runner's weights, tape and work buffers). A
 * runner that needs more says so at create (lstm_host_room): the cpu
 * runner counts its buffers there, so that its gate tape, padded to a
 * block of 8 or 16 units (AVX2, AVX-512: up to 16 times the tape at
 * H = 1), does not refuse a shape to every other runner. */
size_t lstm_host_bytes_estimate(const lstm_shape *s, int model)
{
    const size_t own = lstm_host_bytes_own(s, model);
    if (own == 0)
        return 0;
    const host_parts p = host_parts_of(s, lstm_model_get(model));
    const size_t total = sat_add(own, sat_add(p.reference, p.results));
    return total == SIZE_MAX ? 0 : total;
}

int lstm_host_room(const lstm_shape *s, int model, size_t runner_bytes, double have, const char *what, lc_error *why)
{
    const size_t own = lstm_host_bytes_own(s, model), total = sat_add(own, runner_bytes);
    if (!(have > 0) || (own != 0 && total != SIZE_MAX && (double)total <= LSTM_HOST_MEMORY_SHARE * have))
        return LC_OK;
    char needed[32], runner[32], had[32];
    lc_error_set(why, "this shape needs about %s of host memory, %s of it the runner's own (%s); this machine has "
                      "%s, and a run may take %.0f%% of it",
                 text_bytes(own == 0 ? (double)SIZE_MAX : (double)total, needed, sizeof needed),
                 text_bytes((double)runner_bytes, runner, sizeof runner), what, text_bytes(have, had, sizeof had),
                 100.0 * LSTM_HOST_MEMORY_SHARE);
    return LC_UNSUPPORTED;
}

void lstm_host_count(lstm_host_buffers *hb, size_t bytes)
{
    hb->bytes = sat_add(hb->bytes, bytes);
}

float *lstm_host_floats(lstm_host_buffers *hb, size_t n)
{
    /* and an allocation's header and alignment slack */
    const size_t line = 64, slack = 2 * line,
                 bytes = n > (SIZE_MAX - slack) / sizeof(float) ? SIZE_MAX : ((n ? n : 1) * sizeof(float) + slack);
    lstm_host_count(hb, bytes);
    return hb->counting ? NULL : lstm_float_buffer(n, &hb->ok);
}

static void *zalloc(size_t count, size_t elem, lc_error *err, const char *what)
{
    void *p = calloc(count ? count : 1, elem);
    if (!p)
        lc_error_set(err, "out of host memory allocating %s (%zu bytes)", what, count * elem);
    return p;
}

#define ALLOC_OR_FAIL(dst, count, type, what)                                 \
    do {                                                                      \
        (dst) = (type *)zalloc((count), sizeof(type), err, (what));           \
        if (!(dst))                                                           \
            goto fail;                                                        \
    } while (0)

/* What dimension d is at layer l of shape s (DIM_NONE: 1) */
static int model_dim_size(model_dim d, const lstm_shape *s, int layer)
{
    switch (d) {
    case DIM_NONE: return 1;
    case DIM_T: return s->seq_length;
    case DIM_B: return s->batch;
    case DIM_IN: return lstm_layer_input_size(s, layer);
    case DIM_H: return s->hidden_size;
    default: return 4 * s->hidden_size;
    }
}

int model_tensor_dims(const model_tensor *t, const lstm_shape *s, int layer, int dims[3])
{
    int n = 0;
    for (; n < 3 && t->dims[n] != DIM_NONE; n++)
        dims[n] = model_dim_size(t->dims[n], s, layer);
    return n;
}

size_t model_tensor_elems(const model_tensor *t, const lstm_shape *s, int layer)
{
    int dims[3];
    size_t count = 1;
    for (int k = model_tensor_dims(t, s, layer, dims) - 1; k >= 0; k--)
        count *= (size_t)dims[k];
    return count;
}

/* The model of a bundle being made, or NULL with err set. */
static const lstm_model *model_of(int model, lc_error *err)
{
    const lstm_model *m = lstm_model_get(model);
    if (!m)
        lc_error_set(err, "model %d is not one of the %d models of this lstmcheck", model, (int)MODEL_COUNT);
    return m;
}

/* *acc += a * b; 1 when that overflows */
static int add_product(size_t *acc, size_t a, size_t b)
{
    size_t ab;
    return __builtin_mul_overflow(a, b, &ab) || __builtin_add_overflow(*acc, ab, acc);
}

int lstm_model_sizes(const lstm_shape *s, const int *lengths, int model, lstm_sizes *out, lc_error *err)
{
    const lstm_model *m = model_of(model, err);
    memset(out, 0, sizeof *out);
    if (!m)
        return 1;
    size_t rows = 0, inputs = 0, per_row = 0; /* rows: (step, sequence) pairs that run */
    int overflow = 0;
    for (int b = 0; b < s->batch; b++)
        overflow |= add_product(&rows, (size_t)(lengths ? lengths[b] : s->seq_length), 1);
    overflow |= add_product(&inputs, lstm_seq_elems(s, s->input_size), 1); /* x */
    overflow |= add_product(&inputs, lstm_state_elems(s), 2);               /* h0, c0 */
    for (int l = 0; l < s->num_layers; l++) {
        for (int i = 0; i < m->ntensors; i++) {
            const model_tensor *t = &m->tensors[i];
            if (l < model_tensor_layers(t, s))
                overflow |= add_product(t->has_grad ? &out->parameters : &inputs, model_tensor_elems(t, s, l), 1);
        }
        for (int i = 0; i < m->nsaved; i++)
            overflow |= add_product(&per_row, (size_t)model_dim_size(m->saved[i].width, s, l), 1);
    }
    size_t row_bytes = 0;
    overflow |= add_product(&row_bytes, per_row, sizeof(float));
    overflow |= add_product(&out->activation_bytes, row_bytes, rows);
    overflow |= add_product(&out->parameter_bytes, out->parameters, sizeof(float));
    overflow |= add_product(&out->input_bytes, inputs, sizeof(float));
    overflow |= add_product(&out->input_bytes, lengths ? (size_t)s->batch : 0, sizeof *lengths);
    if (overflow) {
        char dims[96];
        lc_error_set(err, "the sizes of %s at %s overflow", m->name,
                     lstm_shape_format(s, LSTM_SHAPE_DIMS, dims, sizeof dims));
        memset(out, 0, sizeof *out);
        return 1;
    }
    return 0;
}

/* The per-layer tables of the model's tensors in a bundle: in a problem
 * the float ones at input_at, in results the double gradients of the
 * parameters at grad_at. Each table is reached through its own type. */
#define LAYER_TENSOR_FUNCTIONS(BUNDLE, TYPE, AT, WANTED)                                                  \
    static int alloc_##BUNDLE##_tensors(BUNDLE *b, const lstm_model *m, lc_error *err)                    \
    {                                                                                                     \
        for (int i = 0; i < m->ntensors; i++) {                                                           \
            const model_tensor *t = &m->tensors[i];                                                       \
            const int layers = model_tensor_layers(t, &b->shape);                                         \
            TYPE ***table = (TYPE ***)((char *)b + t->AT);                                                \
            if (!(WANTED) || layers <= 0)                                                                 \
                continue; /* a tensor between layers of one layer: none, its table NULL */                \
            if (!(*table = zalloc((size_t)layers, sizeof **table, err, "tensor table")))                  \
                return 1;                                                                                 \
            for (int l = 0; l < layers; l++)                                                              \
                if (!((*table)[l] = zalloc(model_tensor_elems(t, &b->shape, l), sizeof ***table, err, t->name))) \
                    return 1;                                                                             \
        }                                                                                                 \
        return 0;                                                                                         \
    }                                                                                                     \
    static void free_##BUNDLE##_tensors(BUNDLE *b, const lstm_model *m)                                   \
    {                                                                                                     \
        for (int i = 0; m && i < m->ntensors; i++) {                                                      \
            const model_tensor *t = &m->tensors[i];                                                       \
            TYPE ***table = (TYPE ***)((char *)b + t->AT);                                                \
            if (!(WANTED))                                                                                \
                continue;                                                                                 \
            for (int l = 0; *table && l < model_tensor_layers(t, &b->shape); l++)                         \
                free((*table)[l]);                                                                        \
            free(*table);                                                                                 \
            *table = NULL;                                                                                \
        }                                                                                                 \
    }
LAYER_TENSOR_FUNCTIONS(lstm_problem, float, input_at, 1)
LAYER_TENSOR_FUNCTIONS(lstm_results, double, grad_at, t->has_grad)

int lstm_problem_alloc(lstm_problem *p, const lstm_shape *s, int model, lc_error *err)
{
    memset(p, 0, sizeof *p);
    p->shape = *s;
    p->model = model;
    const lstm_model *m = model_of(model, err);
    if (!m || alloc_lstm_problem_tensors(p, m, err))
        goto fail;
    ALLOC_OR_FAIL(p->x, lstm_seq_elems(s, s->input_size), float, "x");
    ALLOC_OR_FAIL(p->h0, lstm_state_elems(s), float, "h0");
    ALLOC_OR_FAIL(p->c0, lstm_state_elems(s), float, "c0");
    return 0;
fail:
    lstm_problem_free(p);
    return 1;
}

void lstm_problem_free(lstm_problem *p)
{
    free_lstm_problem_tensors(p, lstm_model_get(p->model));
    free(p->x); free(p->h0); free(p->c0);
    free(p->dy); free(p->dhy); free(p->dcy);
    free(p->lengths);
    memset(p, 0, sizeof *p);
}

/* The float tensors of a problem, one at a time: x, h0, c0, the seeds dy,
 * dhy, dcy (data NULL when not drawn), then per layer the model's tensors
 * in its order (W_ih, W_hh, b_ih, b_hh, ...). */
typedef struct input_tensor {
    const char *name;
    int layer; /* -1: not per layer */
    float *data;
    size_t count;
} input_tensor;

enum { INPUTS_NOT_PER_LAYER = 6 };

static int input_tensor_count(const lstm_problem *p)
{
    const lstm_model *m = lstm_model_get(p->model);
    int n = INPUTS_NOT_PER_LAYER;
    for (int i = 0; m && i < m->ntensors; i++)
        n += model_tensor_layers(&m->tensors[i], &p->shape);
    return n;
}

static input_tensor input_tensor_at(const lstm_problem *p, int k)
{
    const lstm_shape *s = &p->shape;
    const size_t seq_h = lstm_seq_elems(s, s->hidden_size), state = lstm_state_elems(s);
    const input_tensor fixed[INPUTS_NOT_PER_LAYER] = {
        {"x", -1, p->x, lstm_seq_elems(s, s->input_size)}, {"h0", -1, p->h0, state}, {"c0", -1, p->c0, state},
        {"dy", -1, p->dy, seq_h}, {"dhy", -1, p->dhy, state}, {"dcy", -1, p->dcy, state},
    };
    if (k < INPUTS_NOT_PER_LAYER)
        return fixed[k];
    /* every layer below the top has all of the model's tensors; the top
     * those that are not between layers */
    const lstm_model *m = lstm_model_get(p->model);
    k -= INPUTS_NOT_PER_LAYER;
    const int l = k / m->ntensors < s->num_layers - 1 ? k / m->ntensors : s->num_layers - 1;
    k -= l * m->ntensors;
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        if (l < model_tensor_layers(t, s) && k-- == 0)
            return (input_tensor){t->name, l, model_tensor_inputs(t, p)[l], model_tensor_elems(t, s, l)};
    }
    return (input_tensor){"?", -1, NULL, 0}; /* k past the last: not reached */
}

/* A seed of src (NULL: not drawn) in dst's memory of its own. */
static int copy_seed(float **dst, const float *src, size_t count, lc_error *err, const char *what)
{
    if (!src)
        return 0;
    *dst = zalloc(count, sizeof **dst, err, what);
    return !*dst;
}

int lstm_problem_copy(lstm_problem *dst, const lstm_problem *src, lc_error *err)
{
    const lstm_shape *s = &src->shape;
    if (lstm_problem_alloc(dst, s, src->model, err))
        return 1;
    if (copy_seed(&dst->dy, src->dy, lstm_seq_elems(s, s->hidden_size), err, "dy") ||
        copy_seed(&dst->dhy, src->dhy, lstm_state_elems(s), err, "dhy") ||
        copy_seed(&dst->dcy, src->dcy, lstm_state_elems(s), err, "dcy"))
        goto fail;
    if (src->lengths) {
        ALLOC_OR_FAIL(dst->lengths, (size_t)s->batch, int, "lengths");
        memcpy(dst->lengths, src->lengths, (size_t)s->batch * sizeof *dst->lengths);
    }
    for (int k = 0; k < input_tensor_count(src); k++) {
        const input_tensor from = input_tensor_at(src, k);
        if (from.data)
            memcpy(input_tensor_at(dst, k).data, from.data, from.count * sizeof *from.data);
    }
    return 0;
fail:
    lstm_problem_free(dst);
    return 1;
}

/* The first element of a and b that differs bitwise (a NaN is not equal to
 * itself, its bits are), or n when none does. */
static size_t first_difference(const void *a, const void *b, size_t n, size_t elem)
{
    if (!memcmp(a, b, n * elem))
        return n;
    size_t i = 0;
    while (memcmp((const char *)a + i * elem, (const char *)b + i * elem, elem) == 0)
        i++;
    return i;
}

int lstm_problem_differs(const lstm_problem *given, const lstm_problem *used, char *where, size_t n)
{
    const lstm_shape *s = &given->shape;
    int changed = 0;
    for (int k = 0; k < input_tensor_count(given); k++) {
        const input_tensor a = input_tensor_at(given, k), b = input_tensor_at(used, k);
        const size_t i = a.data && b.data ? first_difference(a.data, b.data, a.count, sizeof *a.data) : a.count;
        if (i == a.count)
            continue;
        if (!changed++) {
            char name[32];
            snprintf(name, sizeof name, a.layer < 0 ? "%s" : "%s.%d", a.name, a.layer);
            snprintf(where, n, "%s[%zu] was %.9g, is %.9g", name, i, (double)a.data[i], (double)b.data[i]);
        }
    }
    if (given->lengths && used->lengths) {
        const size_t b = first_difference(given->lengths, used->lengths, (size_t)s->batch, sizeof *given->lengths);
        if (b < (size_t)s->batch && !changed++)
            snprintf(where, n, "lengths[%zu] was %d, is %d", b, given->lengths[b], used->lengths[b]);
    }
    if (changed > 1) {
        const size_t k = strlen(where);
        snprintf(where + k, n - k, "; %d of its input tensors changed", changed);
    }
    return changed > 0;
}

int lstm_results_alloc(lstm_results *r, const lstm_shape *s, int model, lc_error *err)
{
    memset(r, 0, sizeof *r);
    r->shape = *s;
    r->model = model;
    const lstm_model *m = model_of(model, err);
    if (!m || alloc_lstm_results_tensors(r, m, err))
        goto fail;
    ALLOC_OR_FAIL(r->y, lstm_seq_elems(s, s->hidden_size), double, "y");
    ALLOC_OR_FAIL(r->hy, lstm_state_elems(s), double, "hy");
    ALLOC_OR_FAIL(r->cy, lstm_state_elems(s), double, "cy");
    ALLOC_OR_FAIL(r->dx, lstm_seq_elems(s, s->input_size), double, "dx");
    ALLOC_OR_FAIL(r->dh0, lstm_state_elems(s), double, "dh0");
    ALLOC_OR_FAIL(r->dc0, lstm_state_elems(s), double, "dc0");
    return 0;
fail:
    lstm_results_free(r);
    return 1;
}

void lstm_results_free(lstm_results *r)
{
    free_lstm_results_tensors(r, lstm_model_get(r->model));
    free(r->y); free(r->hy); free(r->cy); free(r->dx); free(r->dh0); free(r->dc0);
    memset(r, 0, sizeof *r);
}

static void fill_doubles(double *d, size_t n, double v)
{
    for (size_t i = 0; i < n; i++)
        d[i] = v;
}

void lstm_results_fill(lstm_results *r, double v)
{
    const lstm_shape *s = &r->shape;
    fill_doubles(r->y, lstm_seq_elems(s, s->hidden_size), v);
    fill_doubles(r->dx, lstm_seq_elems(s, s->input_size), v);
    double *state[] = {r->hy, r->cy, r->dh0, r->dc0};
    for (int i = 0; i < 4; i++)
        fill_doubles(state[i], lstm_state_elems(s), v);
    const lstm_model *m = lstm_model_get(r->model);
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        for (int l = 0; t->has_grad && l < model_tensor_layers(t, s); l++)
            fill_doubles(model_tensor_grads(t, r)[l], model_tensor_elems(t, s, l), v);
    }
}

void lstm_copy_to_double(double *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (double)src[i];
}

float *lstm_float_buffer(size_t n, int *ok)
{
    /* aligned to a cache line, so that vector code may stream whole lines */
    const size_t line = 64, bytes = ((n ? n : 1) * sizeof(float) + line - 1) / line * line;
    float *p = n > SIZE_MAX / sizeof(float) - line ? NULL : aligned_alloc(line, bytes);
    if (!p) {
        *ok = 0;
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

/* Views being listed: where they go, and the kind of the next ones. */
typedef struct view_list {
    lstm_tensor_view *views;
    int n, max;
    tensor_kind kind;
} view_list;

static void add_view(view_list *l, const char *name, int layer, const double *data, int ndim, int d0, int d1,
                     int d2)
{
    if (l->n >= l->max)
        return;
    lstm_tensor_view *v = &l->views[l->n++];
    memset(v, 0, sizeof *v);
    if (layer >= 0)
        snprintf(v->name, sizeof v->name, "%s.%d", name, layer);
    else
        snprintf(v->name, sizeof v->name, "%s", name);
    v->kind = l->kind;
    v->layer = layer;
    v->data = data;
    v->ndim = ndim;
    v->dims[0] = d0;
    v->dims[1] = d1;
    v->dims[2] = d2;
    v->count = (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1) * (size_t)(ndim > 2 ? d2 : 1);
}

int lstm_results_view_capacity(const lstm_results *r)
{
    const lstm_model *m = lstm_model_get(r->model);
    int per_layer = 0;
    for (int i = 0; m && i < m->ntensors; i++)
        per_layer += m->tensors[i].has_grad;
    return 6 + per_layer * r->shape.num_layers;
}

int lstm_results_views(const lstm_results *r, unsigned which, lstm_tensor_view *views, int max)
{
    const lstm_shape *s = &r->shape;
    int T = s->seq_length, B = s->batch, I = s->input_size, H = s->hidden_size, L = s->num_layers;
    view_list l = {views, 0, max, TENSOR_FORWARD};
    if (which & LSTM_VIEWS_OUTPUTS)
        add_view(&l, "y", -1, r->y, 3, T, B, H);
    if (which & LSTM_VIEWS_STATE) {
        add_view(&l, "hy", -1, r->hy, 3, L, B, H);
        add_view(&l, "cy", -1, r->cy, 3, L, B, H);
    }
    if (which & LSTM_VIEWS_GRADS) {
        l.kind = TENSOR_INPUT_GRAD;
        add_view(&l, "dx", -1, r->dx, 3, T, B, I);
        add_view(&l, "dh0", -1, r->dh0, 3, L, B, H);
        add_view(&l, "dc0", -1, r->dc0, 3, L, B, H);
        l.kind = TENSOR_PARAM_GRAD;
        const lstm_model *m = lstm_model_get(r->model);
        for (int k = 0; k < L; k++) {
            for (int i = 0; i < m->ntensors; i++) {
                const model_tensor *t = &m->tensors[i];
                if (!t->has_grad || k >= model_tensor_layers(t, s))
                    continue;
                char name[32];
                int d[3] = {0, 0, 0};
                const int ndim = model_tensor_dims(t, s, k, d);
                snprintf(name, sizeof name, "d%s", t->name);
                add_view(&l, name, k, model_tensor_grads(t, r)[k], ndim, d[0], d[1], d[2]);
            }
        }
    }
    return l.n;
}
