/* The CPU reference LSTM (see reference.h). Every value is a double;
 * parameters are widened once. Loops follow the equations:
 *   gates = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh, split i, f, g, o
 *   c_t = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g),  h_t = sigmoid(o) tanh(c_t)
 * A sequence of length len stops at step len-1: later outputs are zero and
 * its state (hy, cy) is the one after its own last step. The dropout
 * model multiplies each layer's output but the last by its mask before
 * the next layer reads it (and the gradient flowing down by the same). */
#include "model/reference.h"

#include "base/parallel.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct lstm_reference_tape {
    int num_layers;
    /* per layer: the layer's input sequence (T,B,I_l), the state before each
     * step h_prev/c_prev (T,B,H), the activated gates (T,B,4H), c_t (T,B,H) */
    double **input, **h_prev, **c_prev, **gates, **c;
    /* per layer: widened parameters */
    double **w_ih, **w_hh;
};

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* Dot product with four partial sums (keeps the loop fast without
 * reordering flags; the result is still a double-precision sum). */
static double dot(const double *a, const double *b, int n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++)
        s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
}

/* y += alpha * x */
static void axpy(double *y, double alpha, const double *x, int n)
{
    for (int k = 0; k < n; k++)
        y[k] += alpha * x[k];
}

void lstm_reference_tape_free(lstm_reference_tape *t)
{
    if (!t)
        return;
    double **lists[] = {t->input, t->h_prev, t->c_prev, t->gates, t->c, t->w_ih, t->w_hh};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        if (!lists[i])
            continue;
        for (int l = 0; l < t->num_layers; l++)
            free(lists[i][l]);
        free(lists[i]);
    }
    free(t);
}

static double *alloc_doubles(size_t n, lc_error *err)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p)
        lc_error_set(err, "reference: out of host memory (%zu doubles)", n);
    return p;
}

static lstm_reference_tape *tape_alloc(const lstm_shape *s, lc_error *err)
{
    lstm_reference_tape *t = calloc(1, sizeof *t);
    if (!t) {
        lc_error_set(err, "reference: out of host memory");
        return NULL;
    }
    int L = s->num_layers;
    t->num_layers = L;
    double ***lists[] = {&t->input, &t->h_prev, &t->c_prev, &t->gates, &t->c, &t->w_ih, &t->w_hh};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        *lists[i] = calloc((size_t)L, sizeof(double *));
        if (!*lists[i]) {
            lc_error_set(err, "reference: out of host memory");
            lstm_reference_tape_free(t);
            return NULL;
        }
    }
    size_t H = (size_t)s->hidden_size;
    for (int l = 0; l < L; l++) {
        int in = lstm_layer_input_size(s, l);
        if (!(t->input[l] = alloc_doubles(lstm_seq_elems(s, in), err)) ||
            !(t->h_prev[l] = alloc_doubles(lstm_seq_elems(s, (int)H), err)) ||
            !(t->c_prev[l] = alloc_doubles(lstm_seq_elems(s, (int)H), err)) ||
            !(t->gates[l] = alloc_doubles(lstm_seq_elems(s, 4 * (int)H), err)) ||
            !(t->c[l] = alloc_doubles(lstm_seq_elems(s, (int)H), err)) ||
            !(t->w_ih[l] = alloc_doubles(lstm_w_ih_elems(s, l), err)) ||
            !(t->w_hh[l] = alloc_doubles(lstm_w_hh_elems(s), err))) {
            lstm_reference_tape_free(t);
            return NULL;
        }
    }
    return t;
}

/* The reference's thread count (0: as many as pay off, up to every
 * processor it may use). Results do not depend on it: the work is split
 * only where elements are independent (sequences in the forward and in
 * the backward recurrence, weight rows in the parameter gradients), and
 * each element is summed in the same order. */
static int reference_threads;

void lstm_reference_set_threads(int n)
{
    reference_threads = n > 0 ? n : 0;
}

int lstm_reference_threads(void)
{
    return reference_threads ? reference_threads : lc_online_cpus();
}

/* Starting a thread costs tens of microseconds: each thread takes at
 * least this much work (a stack of 1e6 one-unit layers ran 12x slower on
 * two threads than on one when every loop was split). */
#define REFERENCE_MIN_FLOPS_PER_THREAD 4e6

/* Threads for one layer's loops (each about 2 T B 4H (I_l + H) operations). */
static int layer_threads(const lstm_shape *s, int l)
{
    if (reference_threads)
        return reference_threads; /* set: exactly that many (the tests) */
    const double flops = 2.0 * s->seq_length * s->batch * 4.0 * s->hidden_size *
                         (lstm_layer_input_size(s, l) + (double)s->hidden_size);
    const double n = flops / REFERENCE_MIN_FLOPS_PER_THREAD;
    const int most = lc_online_cpus();
    return n < 1 ? 1 : n < most ? (int)n : most;
}

/* v[i] *= mask[i]: a layer's output into the next layer's input, or the
 * next layer's input gradient into this layer's output gradient */
static void apply_mask(double *v, const float *mask, size_t n)
{
    for (size_t i = 0; mask && i < n; i++)
        v[i] *= (double)mask[i];
}

/* One layer's forward, shared by the chunks of sequences. */
typedef struct forward_layer {
    const lstm_problem *p;
    lstm_reference_tape *t;
    lstm_results *r;
    int l;
    double *out;     /* this layer's output sequence: the next layer's input, or y */
    double *scratch; /* per sequence b: h (H), c (H), pre (4H) at b * 6H */
} forward_layer;

/* Sequences [b0, b1) of one layer, a step at a time for all of them: each
 * weight row is read once per step for the whole chunk (from cache), and
 * every sum is still one row's dot with one sequence's vector, as when the
 * sequences ran one after another. */
static void forward_sequences(void *arg, int b0, int b1)
{
    const forward_layer *fl = arg;
    const lstm_problem *p = fl->p;
    const lstm_shape *s = &p->shape;
    lstm_reference_tape *t = fl->t;
    const int B = s->batch, H = s->hidden_size, l = fl->l, In = lstm_layer_input_size(s, l);
    const size_t H6 = 6 * (size_t)H;
    for (int b = b0; b < b1; b++) {
        double *h = fl->scratch + b * H6, *c = h + H;
        lstm_copy_to_double(h, p->h0 + ((size_t)l * B + b) * H, (size_t)H);
        lstm_copy_to_double(c, p->c0 + ((size_t)l * B + b) * H, (size_t)H);
    }
    for (int ts = 0; ts < s->seq_length; ts++) {
        for (int b = b0; b < b1; b++) {
            if (ts >= lstm_length(p, b))
                continue;
            const size_t row = (size_t)ts * B + b;
            memcpy(t->h_prev[l] + row * H, fl->scratch + b * H6, (size_t)H * sizeof(double));
            memcpy(t->c_prev[l] + row * H, fl->scratch + b * H6 + H, (size_t)H * sizeof(double));
        }
        for (int j = 0; j < 4 * H; j++) {
            const double *wi = t->w_ih[l] + (size_t)j * In, *wh = t->w_hh[l] + (size_t)j * H;
            for (int b = b0; b < b1; b++) {
                if (ts >= lstm_length(p, b))
                    continue;
                const double *xt = t->input[l] + ((size_t)ts * B + b) * In;
                double *h = fl->scratch + b * H6, *pre = h + 2 * H;
                pre[j] = (double)p->b_ih[l][j] + (double)p->b_hh[l][j] + dot(wi, xt, In) + dot(wh, h, H);
            }
        }
        for (int b = b0; b < b1; b++) {
            if (ts >= lstm_length(p, b))
                continue;
            const size_t row = (size_t)ts * B + b;
            double *h = fl->scratch + b * H6, *c = h + H, *pre = c + H, *g = t->gates[l] + row * 4 * H;
            for (int k = 0; k < H; k++) {
                double gi = sigmoid(pre[k]), gf = sigmoid(pre[H + k]);
                double gg = tanh(pre[2 * H + k]), go = sigmoid(pre[3 * H + k]);
                g[k] = gi; g[H + k] = gf; g[2 * H + k] = gg; g[3 * H + k] = go;
                c[k] = gf * c[k] + gi * gg;
                h[k] = go * tanh(c[k]);
            }
            memcpy(t->c[l] + row * H, c, (size_t)H * sizeof(double));
            memcpy(fl->out + row * H, h, (size_t)H * sizeof(double));
        }
    }
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        memcpy(fl->r->hy + state, fl->scratch + b * H6, (size_t)H * sizeof(double));
        memcpy(fl->r->cy + state, fl->scratch + b * H6 + H, (size_t)H * sizeof(double));
    }
}

int lstm_reference_forward(const lstm_problem *p, lstm_results *r, lstm_reference_tape **tape_out,
                           lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const int B = s->batch, H = s->hidden_size, L = s->num_layers;
    lstm_reference_tape *t = tape_alloc(s, err);
    if (!t)
        return 1;
    double *scratch = alloc_doubles((size_t)B * 6 * H, err);
    if (!scratch) {
        lstm_reference_tape_free(t);
        return 1;
    }
    lstm_copy_to_double(t->input[0], p->x, lstm_seq_elems(s, s->input_size));
    for (int l = 0; l < L; l++) {
        lstm_copy_to_double(t->w_ih[l], p->w_ih[l], lstm_w_ih_elems(s, l));
        lstm_copy_to_double(t->w_hh[l], p->w_hh[l], lstm_w_hh_elems(s));
        forward_layer fl = {p, t, r, l, (l + 1 < L) ? t->input[l + 1] : r->y, scratch};
        memset(fl.out, 0, lstm_seq_elems(s, H) * sizeof(double));
        lc_parallel_for(B, layer_threads(s, l), forward_sequences, &fl);
        apply_mask(fl.out, lstm_dropout_mask(p, l), lstm_seq_elems(s, H));
    }
    free(scratch);
    if (tape_out)
        *tape_out = t;
    else
        lstm_reference_tape_free(t);
    return 0;
}

/* One layer's backward, in two passes split differently: the recurrence
 * by sequence (dgates, the input and state gradients), then the parameter
 * gradients by weight row, each summed over sequences and steps in the
 * order one thread would take. */
typedef struct backward_layer {
    const lstm_problem *p;
    const lstm_reference_tape *t;
    lstm_results *r;
    int l;
    const double *d_out; /* gradient of this layer's output sequence */
    double *d_in;        /* gradient of its input sequence */
    double *dgates;      /* (T,B,4H): the gate gradients of every step */
    double *scratch;     /* per sequence b: dh (H), dc (H) at b * 2H */
} backward_layer;

/* Sequences [b0, b1) back through their steps, a step at a time for all
 * of them (as in the forward): dgates, d_in, dh0, dc0. */
static void backward_sequences(void *arg, int b0, int b1)
{
    const backward_layer *bl = arg;
    const lstm_problem *p = bl->p;
    const lstm_shape *s = &p->shape;
    const lstm_reference_tape *t = bl->t;
    const int B = s->batch, H = s->hidden_size, l = bl->l, In = lstm_layer_input_size(s, l);
    const size_t H4 = 4 * (size_t)H, H2 = 2 * (size_t)H;
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        double *dh = bl->scratch + b * H2, *dc = dh + H;
        for (int k = 0; k < H; k++) {
            dh[k] = p->dhy ? (double)p->dhy[state + k] : 0.0;
            dc[k] = p->dcy ? (double)p->dcy[state + k] : 0.0;
        }
    }
    for (int ts = s->seq_length - 1; ts >= 0; ts--) {
        for (int b = b0; b < b1; b++) {
            if (ts >= lstm_length(p, b))
                continue;
            const size_t row = (size_t)ts * B + b;
            const double *g = t->gates[l] + row * H4;
            const double *ct = t->c[l] + row * H, *cp = t->c_prev[l] + row * H;
            double *dh = bl->scratch + b * H2, *dc = dh + H, *dgate = bl->dgates + row * H4;
            for (int k = 0; k < H; k++) {
                double gi = g[k], gf = g[H + k], gg = g[2 * H + k], go = g[3 * H + k];
                double dht = dh[k] + bl->d_out[row * H + k];
                double tc = tanh(ct[k]);
                double dct = dc[k] + dht * go * (1.0 - tc * tc);
                dgate[k] = dct * gg * gi * (1.0 - gi);            /* i */
                dgate[H + k] = dct * cp[k] * gf * (1.0 - gf);     /* f */
                dgate[2 * H + k] = dct * gi * (1.0 - gg * gg);    /* g */
                dgate[3 * H + k] = dht * tc * go * (1.0 - go);    /* o */
                dc[k] = dct * gf;
            }
            memset(dh, 0, (size_t)H * sizeof(double));
        }
        for (size_t j = 0; j < H4; j++) {
            const double *wi = t->w_ih[l] + j * In, *wh = t->w_hh[l] + j * H;
            for (int b = b0; b < b1; b++) {
                if (ts >= lstm_length(p, b))
                    continue;
                const size_t row = (size_t)ts * B + b;
                const double dg = bl->dgates[row * H4 + j];
                axpy(bl->d_in + row * In, dg, wi, In);
                axpy(bl->scratch + b * H2, dg, wh, H);
            }
        }
    }
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        memcpy(bl->r->dh0 + state, bl->scratch + b * H2, (size_t)H * sizeof(double));
        memcpy(bl->r->dc0 + state, bl->scratch + b * H2 + H, (size_t)H * sizeof(double));
    }
}

/* Weight rows [j0, j1): dW and db summed over sequences, then steps from
 * the last (the order of the recurrence); the step's input row is read
 * once for all rows of the chunk. */
static void backward_weight_rows(void *arg, int j0, int j1)
{
    const backward_layer *bl = arg;
    const lstm_problem *p = bl->p;
    const lstm_shape *s = &p->shape;
    const lstm_reference_tape *t = bl->t;
    const int B = s->batch, H = s->hidden_size, l = bl->l, In = lstm_layer_input_size(s, l);
    const size_t H4 = 4 * (size_t)H;
    double *dw_ih = bl->r->dw_ih[l], *dw_hh = bl->r->dw_hh[l], *db_ih = bl->r->db_ih[l], *db_hh = bl->r->db_hh[l];
    for (int b = 0; b < B; b++) {
        for (int ts = lstm_length(p, b) - 1; ts >= 0; ts--) {
            const size_t row = (size_t)ts * B + b;
            const double *dgate = bl->dgates + row * H4;
            const double *xt = t->input[l] + row * In, *hp = t->h_prev[l] + row * H;
            for (size_t j = (size_t)j0; j < (size_t)j1; j++) {
                const double dg = dgate[j];
                db_ih[j] += dg;
                db_hh[j] += dg;
                axpy(dw_ih + j * In, dg, xt, In);
                axpy(dw_hh + j * H, dg, hp, H);
            }
        }
    }
}

int lstm_reference_backward(const lstm_problem *p, const lstm_reference_tape *t, lstm_results *r,
                            lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const int B = s->batch, H = s->hidden_size, L = s->num_layers;
    const size_t H4 = 4 * (size_t)H;
    /* gradient w.r.t. the current layer's output sequence: starts as dy */
    double *d_out = alloc_doubles(lstm_seq_elems(s, H), err);
    double *d_in = alloc_doubles(lstm_seq_elems(s, s->input_size > H ? s->input_size : H), err);
    double *dgates = alloc_doubles(lstm_seq_elems(s, 4 * H), err);
    double *scratch = alloc_doubles((size_t)B * 2 * H, err);
    if (!d_out || !d_in || !dgates || !scratch) {
        free(d_out); free(d_in); free(dgates); free(scratch);
        return 1;
    }
    if (p->dy)
        lstm_copy_to_double(d_out, p->dy, lstm_seq_elems(s, H));
    for (int l = L - 1; l >= 0; l--) {
        const int In = lstm_layer_input_size(s, l);
        memset(r->dw_ih[l], 0, lstm_w_ih_elems(s, l) * sizeof(double));
        memset(r->dw_hh[l], 0, lstm_w_hh_elems(s) * sizeof(double));
        memset(r->db_ih[l], 0, H4 * sizeof(double));
        memset(r->db_hh[l], 0, H4 * sizeof(double));
        memset(d_in, 0, lstm_seq_elems(s, In) * sizeof(double));
        backward_layer bl = {p, t, r, l, d_out, d_in, dgates, scratch};
        lc_parallel_for(B, layer_threads(s, l), backward_sequences, &bl);
        lc_parallel_for((int)H4, layer_threads(s, l), backward_weight_rows, &bl);
        /* this layer's input gradient is the gradient of the layer below's output */
        if (l > 0) {
            memcpy(d_out, d_in, lstm_seq_elems(s, H) * sizeof(double));
            apply_mask(d_out, lstm_dropout_mask(p, l - 1), lstm_seq_elems(s, H));
        } else
            memcpy(r->dx, d_in, lstm_seq_elems(s, s->input_size) * sizeof(double));
    }
    free(d_out); free(d_in); free(dgates); free(scratch);
    return 0;
}

int lstm_reference_run(const lstm_problem *p, lstm_results *r, lc_error *err)
{
    lstm_reference_tape *tape = NULL;
    if (lstm_reference_forward(p, r, &tape, err))
        return 1;
    int rc = lstm_reference_backward(p, tape, r, err);
    lstm_reference_tape_free(tape);
    return rc;
}
