/* A plain CPU LSTM as an lstmcheck runner: PyTorch's nn.LSTM (gates i, f,
 * g, o; two biases), forward and backpropagation through time, any number
 * of layers, in float with plain loops. Written to be read, not to be
 * fast: keep the functions lstmcheck calls (bottom of the file) and put
 * your own kernels where the loops are. */
#include "cpu_lstm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one layer keeps from forward for backward, and its gradients. */
typedef struct layer {
    int in;       /* its input width: I for layer 0, H above */
    float *gates; /* T*B*4H: i, f, g, o after their activations */
    float *c, *h; /* (T+1)*B*H: c0 and h0, then the state after each step */
    float *dw_ih, *dw_hh;
    float *db;    /* b_ih and b_hh get the same gradient */
} layer;

typedef struct lstm {
    const lstmcheck_problem *p; /* lstmcheck keeps it alive as long as the instance */
    int T, B, H, L;
    layer *layers;
    float *dx, *dh0, *dc0;  /* gradients of the inputs */
    float *flow[2];         /* T*B*max(I,H): the gradient between layers */
    float *dh, *dc, *dh_prev, *dz; /* one step's gradients: B*H, B*H, B*H, 4H */
} lstm;

static float sigmoid(float z)
{
    return 1.0f / (1.0f + expf(-z));
}

static float dot(const float *a, const float *b, int n)
{
    float s = 0;
    for (int k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}

static size_t state_size(const lstm *s)
{
    return (size_t)s->B * (size_t)s->H;
}

/* ---- forward ---- */

/* One step of one sequence: the gates from x and h_prev, then c and h. */
static void cell_forward(const lstm *s, int l, const float *x, const float *h_prev, const float *c_prev,
                         float *g, float *c, float *h)
{
    const lstmcheck_problem *p = s->p;
    const int H = s->H, in = s->layers[l].in;
    for (int j = 0; j < 4 * H; j++) {
        const float z = p->b_ih[l][j] + p->b_hh[l][j] + dot(p->w_ih[l] + (size_t)j * in, x, in) +
                        dot(p->w_hh[l] + (size_t)j * H, h_prev, H);
        g[j] = j >= 2 * H && j < 3 * H ? tanhf(z) : sigmoid(z);
    }
    for (int k = 0; k < H; k++) {
        c[k] = g[H + k] * c_prev[k] + g[k] * g[2 * H + k];
        h[k] = g[3 * H + k] * tanhf(c[k]);
    }
}

/* Layer l over all steps; x is its input (T,B,in). Its output is h[1..T]. */
static void layer_forward(lstm *s, int l, const float *x)
{
    layer *ly = &s->layers[l];
    const size_t bh = state_size(s), G = 4 * (size_t)s->H;
    memcpy(ly->h, s->p->h0 + l * bh, bh * sizeof(float));
    memcpy(ly->c, s->p->c0 + l * bh, bh * sizeof(float));
    for (int t = 0; t < s->T; t++)
        for (int b = 0; b < s->B; b++) {
            const size_t tb = (size_t)t * s->B + b, row = (size_t)b * s->H;
            cell_forward(s, l, x + tb * ly->in, ly->h + t * bh + row, ly->c + t * bh + row, ly->gates + tb * G,
                         ly->c + (t + 1) * bh + row, ly->h + (t + 1) * bh + row);
        }
}

static int cpu_lstm_forward(void *state, lstmcheck_error *err)
{
    (void)err;
    lstm *s = state;
    for (int l = 0; l < s->L; l++)
        layer_forward(s, l, l == 0 ? s->p->x : s->layers[l - 1].h + state_size(s));
    return LSTMCHECK_OK;
}

/* ---- backward ---- */

/* One step of one sequence: from dh (this step's output gradient) and dc
 * (the cell gradient from the step after) to the gates' pre-activation
 * gradients dz; dc becomes the gradient of c_prev. */
static void cell_backward(const float *g, const float *c_prev, const float *c, const float *dh, float *dc,
                          float *dz, int H)
{
    for (int k = 0; k < H; k++) {
        const float i = g[k], f = g[H + k], gg = g[2 * H + k], o = g[3 * H + k], tc = tanhf(c[k]);
        const float dct = dc[k] + dh[k] * o * (1 - tc * tc);
        dz[k] = dct * gg * i * (1 - i);
        dz[H + k] = dct * c_prev[k] * f * (1 - f);
        dz[2 * H + k] = dct * i * (1 - gg * gg);
        dz[3 * H + k] = dh[k] * tc * o * (1 - o);
        dc[k] = dct * f;
    }
}

/* From dz of one step: the parameter gradients, the input gradient (added
 * to dx_t) and the gradient of h_prev (dh_prev). */
static void step_grads(lstm *s, int l, const float *dz, const float *x, const float *h_prev, float *dx,
                       float *dh_prev)
{
    layer *ly = &s->layers[l];
    const int H = s->H, in = ly->in;
    for (int j = 0; j < 4 * H; j++) {
        const float *w_ih = s->p->w_ih[l] + (size_t)j * in, *w_hh = s->p->w_hh[l] + (size_t)j * H;
        float *dw_ih = ly->dw_ih + (size_t)j * in, *dw_hh = ly->dw_hh + (size_t)j * H;
        ly->db[j] += dz[j];
        for (int k = 0; k < in; k++) {
            dw_ih[k] += dz[j] * x[k];
            dx[k] += dz[j] * w_ih[k];
        }
        for (int k = 0; k < H; k++) {
            dw_hh[k] += dz[j] * h_prev[k];
            dh_prev[k] += dz[j] * w_hh[k];
        }
    }
}

/* Layer l backwards through time. dout: the gradient of its outputs
 * (T,B,H), or NULL for none; din receives the gradient of its input x. */
static void layer_backward(lstm *s, int l, const float *x, const float *dout, float *din)
{
    layer *ly = &s->layers[l];
    const size_t bh = state_size(s), G = 4 * (size_t)s->H, H = (size_t)s->H;
    const lstmcheck_problem *p = s->p;
    for (size_t k = 0; k < bh; k++) {
        s->dh[k] = p->dhy ? p->dhy[l * bh + k] : 0;
        s->dc[k] = p->dcy ? p->dcy[l * bh + k] : 0;
    }
    memset(din, 0, (size_t)s->T * s->B * ly->in * sizeof(float));
    for (int t = s->T - 1; t >= 0; t--) {
        memset(s->dh_prev, 0, bh * sizeof(float));
        for (int b = 0; b < s->B; b++) {
            const size_t tb = (size_t)t * s->B + b, row = b * H;
            for (size_t k = 0; dout && k < H; k++)
                s->dh[row + k] += dout[tb * H + k];
            cell_backward(ly->gates + tb * G, ly->c + t * bh + row, ly->c + (t + 1) * bh + row, s->dh + row,
                          s->dc + row, s->dz, s->H);
            step_grads(s, l, s->dz, x + tb * ly->in, ly->h + t * bh + row, din + tb * ly->in, s->dh_prev + row);
        }
        memcpy(s->dh, s->dh_prev, bh * sizeof(float));
    }
    for (size_t k = 0; k < bh; k++) {
        s->dh0[l * bh + k] += s->dh[k];
        s->dc0[l * bh + k] += s->dc[k];
    }
}

static int cpu_lstm_backward(void *state, lstmcheck_error *err)
{
    (void)err;
    lstm *s = state;
    const float *dout = s->p->dy; /* NULL: y is not part of the loss */
    for (int l = s->L - 1; l >= 0; l--) {
        float *din = s->flow[l % 2];
        layer_backward(s, l, l == 0 ? s->p->x : s->layers[l - 1].h + state_size(s), dout, din);
        dout = din;
    }
    const size_t n = (size_t)s->T * s->B * s->layers[0].in;
    for (size_t k = 0; k < n; k++) /* gradients accumulate, as PyTorch's .grad */
        s->dx[k] += dout[k];
    return LSTMCHECK_OK;
}

static int cpu_lstm_zero_grads(void *state, lstmcheck_error *err)
{
    (void)err;
    lstm *s = state;
    const size_t G = 4 * (size_t)s->H;
    for (int l = 0; l < s->L; l++) {
        layer *ly = &s->layers[l];
        memset(ly->dw_ih, 0, G * ly->in * sizeof(float));
        memset(ly->dw_hh, 0, G * s->H * sizeof(float));
        memset(ly->db, 0, G * sizeof(float));
    }
    memset(s->dx, 0, (size_t)s->T * s->B * s->layers[0].in * sizeof(float));
    memset(s->dh0, 0, s->L * state_size(s) * sizeof(float));
    memset(s->dc0, 0, s->L * state_size(s) * sizeof(float));
    return LSTMCHECK_OK;
}

/* ---- results ---- */

static void to_double(double *dst, const float *src, size_t n)
{
    for (size_t k = 0; k < n; k++)
        dst[k] = src[k];
}

static int cpu_lstm_read_results(void *state, lstmcheck_results *r, lstmcheck_error *err)
{
    (void)err;
    const lstm *s = state;
    const size_t bh = state_size(s), G = 4 * (size_t)s->H, T = (size_t)s->T;
    to_double(r->y, s->layers[s->L - 1].h + bh, T * bh);
    for (int l = 0; l < s->L; l++) {
        const layer *ly = &s->layers[l];
        to_double(r->hy + l * bh, ly->h + T * bh, bh);
        to_double(r->cy + l * bh, ly->c + T * bh, bh);
        to_double(r->dw_ih[l], ly->dw_ih, G * ly->in);
        to_double(r->dw_hh[l], ly->dw_hh, G * s->H);
        to_double(r->db_ih[l], ly->db, G);
        to_double(r->db_hh[l], ly->db, G);
    }
    to_double(r->dx, s->dx, T * s->B * s->layers[0].in);
    to_double(r->dh0, s->dh0, s->L * bh);
    to_double(r->dc0, s->dc0, s->L * bh);
    return LSTMCHECK_OK;
}

/* ---- making and freeing an instance ---- */

static void cpu_lstm_destroy(void *state)
{
    lstm *s = state;
    for (int l = 0; s->layers && l < s->L; l++) {
        layer *ly = &s->layers[l];
        free(ly->gates); free(ly->c); free(ly->h); free(ly->dw_ih); free(ly->dw_hh); free(ly->db);
    }
    free(s->layers); free(s->dx); free(s->dh0); free(s->dc0); free(s->flow[0]); free(s->flow[1]);
    free(s->dh); free(s->dc); free(s->dh_prev); free(s->dz);
    free(s);
}

static float *zeros(size_t n, int *ok)
{
    float *v = calloc(n ? n : 1, sizeof(float));
    *ok = *ok && v;
    return v;
}

static int allocate(lstm *s, int I)
{
    const size_t bh = state_size(s), G = 4 * (size_t)s->H, T = (size_t)s->T;
    const size_t widest = (size_t)(I > s->H ? I : s->H);
    int ok = (s->layers = calloc((size_t)s->L, sizeof *s->layers)) != NULL;
    for (int l = 0; ok && l < s->L; l++) {
        layer *ly = &s->layers[l];
        ly->in = l == 0 ? I : s->H;
        ly->gates = zeros(T * s->B * G, &ok);
        ly->c = zeros((T + 1) * bh, &ok);
        ly->h = zeros((T + 1) * bh, &ok);
        ly->dw_ih = zeros(G * ly->in, &ok);
        ly->dw_hh = zeros(G * s->H, &ok);
        ly->db = zeros(G, &ok);
    }
    s->dx = zeros(T * s->B * I, &ok);
    s->dh0 = zeros(s->L * bh, &ok);
    s->dc0 = zeros(s->L * bh, &ok);
    s->flow[0] = zeros(T * s->B * widest, &ok);
    s->flow[1] = zeros(T * s->B * widest, &ok);
    s->dh = zeros(bh, &ok);
    s->dc = zeros(bh, &ok);
    s->dh_prev = zeros(bh, &ok);
    s->dz = zeros(G, &ok);
    return ok;
}

static int cpu_lstm_create(const lstmcheck_runner *self, const lstmcheck_problem *p, void **state,
                           lstmcheck_error *err)
{
    (void)self;
    lstm *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err->msg, sizeof err->msg, "out of host memory");
        return LSTMCHECK_ERROR;
    }
    s->p = p;
    s->T = p->shape.seq_length;
    s->B = p->shape.batch;
    s->H = p->shape.hidden_size;
    s->L = p->shape.num_layers;
    if (!allocate(s, p->shape.input_size)) {
        cpu_lstm_destroy(s);
        snprintf(err->msg, sizeof err->msg, "out of host memory for T=%d B=%d H=%d L=%d", s->T, s->B, s->H, s->L);
        return LSTMCHECK_ERROR;
    }
    *state = s;
    return LSTMCHECK_OK;
}

static size_t cpu_lstm_peak_device_bytes(void *state)
{
    (void)state;
    return 0; /* host memory only */
}

const lstmcheck_runner cpu_lstm_runner = {
    .name = "cpu_lstm",
    .device = LSTMCHECK_CPU,
    .description = "a plain CPU LSTM in float, plain loops (lstmcheck's example plugin)",
    .caps = LSTMCHECK_MULTILAYER | LSTMCHECK_BACKWARD | LSTMCHECK_STATE_GRADS,
    .precision = LSTMCHECK_FP32,
    .max_layers = 0,
    .available = NULL, /* a CPU runner runs anywhere */
    .create = cpu_lstm_create,
    .forward = cpu_lstm_forward,
    .backward = cpu_lstm_backward,
    .zero_grads = cpu_lstm_zero_grads,
    .read_results = cpu_lstm_read_results,
    .peak_device_bytes = cpu_lstm_peak_device_bytes,
    .destroy = cpu_lstm_destroy,
};
