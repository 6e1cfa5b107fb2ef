/* The CPU reference LSTM (see reference.h). Every value is a double;
 * parameters are widened once. Loops follow the equations:
 *   gates = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh, split i, f, g, o
 *   c_t = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g),  h_t = sigmoid(o) tanh(c_t)
 * A sequence of length len stops at step len-1: later outputs are zero and
 * its state (hy, cy) is the one after its own last step. The dropout
 * model multiplies each layer's output but the last by its mask before
 * the next layer reads it (and the gradient flowing down by the same).
 * The LayerNorm model normalizes W_ih x_t and W_hh h_{t-1} apart (no
 * biases) before their sum is split, and the cell before its tanh:
 *   gates = LN_i(W_ih x_t) + LN_h(W_hh h_{t-1}),  c_t = LN_c(f c_{t-1} + i g) */
#include "model/reference.h"

#include "base/parallel.h"
#include "model/inputs.h"

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
    /* LayerNorm model only (else NULL), per layer: the normalized vectors
     * before weight and bias, LN_i's and LN_h's (T,B,4H) and LN_c's
     * (T,B,H), and their 1/sqrt(var + eps) (T,B,3: i, h, c) */
    double **i_hat, **h_hat, **c_hat, **rstd;
    /* lstm_reference_run_rounded: the seed of its rounding sample + 1 (0:
     * exact), read by the forward and the backward pass alike, and its
     * factors 1 +- 2^-24, drawn from that seed (NULL: exact) */
    uint64_t rounding;
    double *factor;
};

enum { FACTORS = 4096 }; /* a power of two: a sum's i-th term takes factor[(at + i) % FACTORS] */

enum { RSTD_I, RSTD_H, RSTD_C, RSTD_COUNT };

/* Where the recurrence carries a value a runner would hold in FP32: part
 * of the address of each rounding in a sample. */
typedef enum rounding_place {
    ROUND_PRE, ROUND_PRE_H, ROUND_CELL, ROUND_C, ROUND_H,           /* forward */
    ROUND_DH, ROUND_DC, ROUND_D_CELL, ROUND_DGATES, ROUND_DGATES_IH, ROUND_DGATES_HH, /* backward */
    ROUND_SUM_PRE, ROUND_SUM_PRE_H, ROUND_SUM_D_IN, ROUND_SUM_DH,   /* the GEMMs' sums */
    ROUND_SUM_DW_IH, ROUND_SUM_DW_HH, ROUND_SUM_OWN,
    ROUND_GATES, ROUND_CELL_TERMS, ROUND_TANH_C, ROUND_PRE_SUM,     /* the cell's own values */
    ROUND_LN_I, ROUND_LN_H, ROUND_LN_C,                             /* each LayerNorm's (ln_slot) */
} rounding_place;

/* A LayerNorm's own values, each a slot of its place: its two sums (in
 * partial sums, term by term), the mean, the deviations, the variance,
 * 1/sqrt(var + eps), the normalized vector and the output; backward, d w,
 * its two sums and their means. */
typedef enum ln_slot {
    LN_SUM_MEAN, LN_MEAN, LN_DEV, LN_SUM_VAR, LN_VAR, LN_RSTD, LN_HAT, LN_OUT,
    LN_BACK_DW, LN_BACK_SUM_M1, LN_BACK_SUM_M2, LN_BACK_M1, LN_BACK_M2,
} ln_slot;

/* Where in the factors the roundings of (place, layer l, tape row, index
 * j) start: a hash, the same on any thread. */
static size_t rounding_at(const lstm_reference_tape *t, rounding_place place, int l, size_t row, size_t j)
{
    return (size_t)lc_hash64(lc_hash64(lc_hash64(lc_hash64(t->rounding ^ ((uint64_t)place << 56)) ^ (uint64_t)l) ^ row) ^ j);
}

/* One vector's roundings, element by element where the loop computes
 * it: the values of (place, layer l, tape row), slot `slot`. */
typedef struct rounding_site {
    const double *factor; /* NULL: exact, every value left as it is */
    size_t at;
} rounding_site;

static rounding_site site_at(const lstm_reference_tape *t, rounding_place place, int l, size_t row, size_t slot)
{
    rounding_site site = {t->factor, 0};
    if (t->factor)
        site.at = rounding_at(t, place, l, row, slot);
    return site;
}

/* x, its i-th value at site, rounded with the sample */
static inline double rounded(rounding_site site, size_t i, double x)
{
    return site.factor ? x * site.factor[(site.at + i) % FACTORS] : x;
}

/* v[0..n) of (layer l, tape row) at place, each moved by one unit
 * roundoff up or down: a sample of what FP32's rounding of that value
 * does to the rest of the computation. Nothing without a sample. */
static void round_sample(const lstm_reference_tape *t, rounding_place place, int l, size_t row, double *v, int n)
{
    const rounding_site site = site_at(t, place, l, row, 0);
    for (int i = 0; site.factor && i < n; i++)
        v[i] = rounded(site, (size_t)i, v[i]);
}

/* A sum as FP32 keeps it in a sample: four partial sums (as a vectorized
 * FP32 loop keeps), term k in sum k % 4, each rounded after every term,
 * then rounded as they are added. Without a sample, one sum in order (a
 * LayerNorm's; dot_at keeps dot's four). */
typedef struct partial_sums {
    double s[4];
    rounding_site site;
} partial_sums;

static void partial_sums_add(partial_sums *a, int k, double term)
{
    if (a->site.factor)
        a->s[k & 3] = rounded(a->site, (size_t)k, a->s[k & 3] + term);
    else
        a->s[0] += term;
}

static double partial_sums_total(const partial_sums *a, int n)
{
    if (!a->site.factor)
        return a->s[0];
    const size_t end = (size_t)n;
    return rounded(a->site, end + 2,
                   rounded(a->site, end, a->s[0] + a->s[1]) + rounded(a->site, end + 1, a->s[2] + a->s[3]));
}

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

/* With a rounding sample, a sum as FP32 accumulates it (partial_sums),
 * the terms past the last multiple of four in the first sum. */
static double dot_at(const lstm_reference_tape *t, rounding_place place, int l, size_t row, size_t j,
                     const double *a, const double *b, int n)
{
    if (!t->factor)
        return dot(a, b, n);
    partial_sums sum = {{0, 0, 0, 0}, site_at(t, place, l, row, j)};
    const int whole = n & ~3;
    int i = 0;
    for (; i < whole; i++)
        partial_sums_add(&sum, i, a[i] * b[i]);
    for (; i < n; i++)
        sum.s[0] = rounded(sum.site, (size_t)i, sum.s[0] + a[i] * b[i]);
    return partial_sums_total(&sum, n);
}

/* y += alpha * x */
static void axpy(double *y, double alpha, const double *x, int n)
{
    for (int k = 0; k < n; k++)
        y[k] += alpha * x[k];
}

/* y += alpha x, each y[k] rounded after its term with a rounding sample */
static void axpy_at(const lstm_reference_tape *t, rounding_place place, int l, size_t row, size_t j, double *y,
                    double alpha, const double *x, int n)
{
    if (!t->factor) {
        axpy(y, alpha, x, n);
        return;
    }
    /* in runs that do not wrap around the factors, so that the loop vectorizes */
    for (int k0 = 0, at = (int)(rounding_at(t, place, l, row, j) % FACTORS); k0 < n; at = 0) {
        const double *f = t->factor + at;
        double *yk = y + k0;
        const double *xk = x + k0;
        const int len = n - k0 < FACTORS - at ? n - k0 : FACTORS - at;
        for (int k = 0; k < len; k++)
            yk[k] = (yk[k] + alpha * xk[k]) * f[k];
        k0 += len;
    }
}

/* *acc += term, rounded after it with a rounding sample */
static void add_at(const lstm_reference_tape *t, int l, size_t row, size_t j, double *acc, double term)
{
    *acc += term;
    if (t->factor)
        *acc *= t->factor[rounding_at(t, ROUND_SUM_OWN, l, row, j) % FACTORS];
}

/* Where one LayerNorm (place, layer l, tape row) rounds its own values */
typedef struct ln_site {
    const lstm_reference_tape *t;
    rounding_place place;
    int l;
    size_t row;
} ln_site;

static rounding_site ln_slot_at(const ln_site *ls, ln_slot slot)
{
    return site_at(ls->t, ls->place, ls->l, ls->row, slot);
}

/* v = LN(v) = (v - mean) / sqrt(var + eps) * w + b over n elements, the
 * variance biased (nn.LayerNorm's); keeps the normalized vector in hat
 * and returns 1/sqrt(var + eps). Two passes: the mean, then the squares
 * of the deviations from it. With a sample, each value it makes is
 * rounded as FP32 would. */
static double layernorm_forward(double *v, int n, const float *w, const float *b, double eps, double *hat,
                                const ln_site *ls)
{
    const rounding_site dev = ln_slot_at(ls, LN_DEV), hat_r = ln_slot_at(ls, LN_HAT), out = ln_slot_at(ls, LN_OUT);
    partial_sums sum = {{0}, ln_slot_at(ls, LN_SUM_MEAN)}, sum_sq = {{0}, ln_slot_at(ls, LN_SUM_VAR)};
    for (int k = 0; k < n; k++)
        partial_sums_add(&sum, k, v[k]);
    const double mean = rounded(ln_slot_at(ls, LN_MEAN), 0, partial_sums_total(&sum, n) / n);
    for (int k = 0; k < n; k++) {
        const double dk = rounded(dev, k, v[k] - mean);
        partial_sums_add(&sum_sq, k, dk * dk);
    }
    const double var_n = rounded(ln_slot_at(ls, LN_VAR), 0, partial_sums_total(&sum_sq, n) / n);
    const double rstd = rounded(ln_slot_at(ls, LN_RSTD), 0, 1.0 / sqrt(var_n + eps));
    for (int k = 0; k < n; k++) {
        hat[k] = rounded(hat_r, k, rounded(dev, k, v[k] - mean) * rstd);
        v[k] = rounded(out, k, hat[k] * (double)w[k] + (double)b[k]);
    }
    return rstd;
}

/* Its backward: d (the gradient of LN's output) becomes the gradient of
 * its input, rstd (dh - mean(dh) - hat mean(dh hat)) with dh = d w. The
 * result is rounded where the caller keeps it (LN_i's and LN_h's as the
 * gates' gradients; LN_c's within the gates' gradients and dc). */
static void layernorm_backward(double *d, int n, const float *w, const double *hat, double rstd, const ln_site *ls)
{
    const rounding_site dw = ln_slot_at(ls, LN_BACK_DW);
    partial_sums sum1 = {{0}, ln_slot_at(ls, LN_BACK_SUM_M1)}, sum2 = {{0}, ln_slot_at(ls, LN_BACK_SUM_M2)};
    for (int k = 0; k < n; k++) {
        d[k] = rounded(dw, k, d[k] * (double)w[k]);
        partial_sums_add(&sum1, k, d[k]);
        partial_sums_add(&sum2, k, d[k] * hat[k]);
    }
    const double m1 = rounded(ln_slot_at(ls, LN_BACK_M1), 0, partial_sums_total(&sum1, n) / n);
    const double m2 = rounded(ln_slot_at(ls, LN_BACK_M2), 0, partial_sums_total(&sum2, n) / n);
    for (int k = 0; k < n; k++)
        d[k] = rstd * (d[k] - m1 - hat[k] * m2);
}

void lstm_reference_tape_free(lstm_reference_tape *t)
{
    if (!t)
        return;
    double **lists[] = {t->input, t->h_prev, t->c_prev, t->gates, t->c, t->w_ih, t->w_hh,
                        t->i_hat, t->h_hat, t->c_hat, t->rstd};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        if (!lists[i])
            continue;
        for (int l = 0; l < t->num_layers; l++)
            free(lists[i][l]);
        free(lists[i]);
    }
    free(t->factor);
    free(t);
}

static double *alloc_doubles(size_t n, lc_error *err)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p)
        lc_error_set(err, "reference: out of host memory (%zu doubles)", n);
    return p;
}

/* The LayerNorm model's tape of layer l (tape_alloc): 0, or 1 with err. */
static int tape_alloc_layernorm(lstm_reference_tape *t, const lstm_shape *s, int l, lc_error *err)
{
    const int H = s->hidden_size;
    return !(t->i_hat[l] = alloc_doubles(lstm_seq_elems(s, 4 * H), err)) ||
           !(t->h_hat[l] = alloc_doubles(lstm_seq_elems(s, 4 * H), err)) ||
           !(t->c_hat[l] = alloc_doubles(lstm_seq_elems(s, H), err)) ||
           !(t->rstd[l] = alloc_doubles(lstm_seq_elems(s, RSTD_COUNT), err));
}

static lstm_reference_tape *tape_alloc(const lstm_problem *p, lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const int layernorm = lstm_layernorm_of(p, 0).eps > 0;
    lstm_reference_tape *t = calloc(1, sizeof *t);
    if (!t) {
        lc_error_set(err, "reference: out of host memory");
        return NULL;
    }
    int L = s->num_layers;
    t->num_layers = L;
    double ***lists[] = {&t->input, &t->h_prev, &t->c_prev, &t->gates, &t->c, &t->w_ih, &t->w_hh,
                         &t->i_hat, &t->h_hat, &t->c_hat, &t->rstd};
    const size_t nlists = sizeof lists / sizeof lists[0] - (layernorm ? 0 : 4);
    for (size_t i = 0; i < nlists; i++) {
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
            !(t->w_hh[l] = alloc_doubles(lstm_w_hh_elems(s), err)) ||
            (layernorm && tape_alloc_layernorm(t, s, l, err))) {
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
    lstm_layernorm ln; /* eps 0 but for the LayerNorm model */
    double *out;       /* this layer's output sequence: the next layer's input, or y */
    double *scratch;   /* per sequence b: h (H), c (H), pre (4H), pre_h (4H) at b * SCRATCH_H */
} forward_layer;

enum { SCRATCH_H = 10 }; /* a sequence's forward scratch, in units of H */

/* The gates' pre-activations into pre: LSTM, b_ih + b_hh + W_ih x_t +
 * W_hh h (pre_h unused); LayerNorm, W_ih x_t into pre and W_hh h into pre_h. */
static void step_projections(const forward_layer *fl, int ts, int b0, int b1)
{
    const lstm_problem *p = fl->p;
    const lstm_shape *s = &p->shape;
    const lstm_reference_tape *t = fl->t;
    const int B = s->batch, H = s->hidden_size, l = fl->l, In = lstm_layer_input_size(s, l);
    for (int j = 0; j < 4 * H; j++) {
        const double *wi = t->w_ih[l] + (size_t)j * In, *wh = t->w_hh[l] + (size_t)j * H;
        for (int b = b0; b < b1; b++) {
            if (ts >= lstm_length(p, b))
                continue;
            const double *xt = t->input[l] + ((size_t)ts * B + b) * In;
            double *h = fl->scratch + b * SCRATCH_H * (size_t)H, *pre = h + 2 * H, *pre_h = pre + 4 * H;
            const size_t row = (size_t)ts * B + b;
            if (fl->ln.eps > 0) {
                pre[j] = dot_at(t, ROUND_SUM_PRE, l, row, j, wi, xt, In);
                pre_h[j] = dot_at(t, ROUND_SUM_PRE_H, l, row, j, wh, h, H);
            } else
                pre[j] = (double)p->b_ih[l][j] + (double)p->b_hh[l][j] + dot_at(t, ROUND_SUM_PRE, l, row, j, wi, xt, In) +
                         dot_at(t, ROUND_SUM_PRE_H, l, row, j, wh, h, H);
        }
    }
}

/* The cell of sequence b at tape row `row`: pre-activations -> gates, the
 * state c and h (in scratch), the tape and the output. */
static void step_cell(const forward_layer *fl, int b, size_t row)
{
    const int H = fl->p->shape.hidden_size, l = fl->l;
    const lstm_layernorm *ln = &fl->ln;
    lstm_reference_tape *t = fl->t;
    double *h = fl->scratch + b * SCRATCH_H * (size_t)H, *c = h + H, *pre = c + H, *pre_h = pre + 4 * H;
    double *g = t->gates[l] + row * 4 * H;
    round_sample(t, ROUND_PRE, l, row, pre, 4 * H);
    if (ln->eps > 0) {
        round_sample(t, ROUND_PRE_H, l, row, pre_h, 4 * H);
        double *rstd = t->rstd[l] + row * RSTD_COUNT;
        const ln_site ln_i = {t, ROUND_LN_I, l, row}, ln_h = {t, ROUND_LN_H, l, row};
        const rounding_site sum = site_at(t, ROUND_PRE_SUM, l, row, 0);
        double *i_hat = t->i_hat[l] + row * 4 * H, *h_hat = t->h_hat[l] + row * 4 * H;
        rstd[RSTD_I] = layernorm_forward(pre, 4 * H, ln->i_weight, ln->i_bias, ln->eps, i_hat, &ln_i);
        rstd[RSTD_H] = layernorm_forward(pre_h, 4 * H, ln->h_weight, ln->h_bias, ln->eps, h_hat, &ln_h);
        for (int j = 0; j < 4 * H; j++)
            pre[j] = rounded(sum, j, pre[j] + pre_h[j]);
    }
    /* the activations and the cell's two products, each rounded in a sample */
    const rounding_site act = site_at(t, ROUND_GATES, l, row, 0), terms = site_at(t, ROUND_CELL_TERMS, l, row, 0);
    for (int k = 0; k < H; k++) {
        double gi = rounded(act, k, sigmoid(pre[k])), gf = rounded(act, H + k, sigmoid(pre[H + k]));
        double gg = rounded(act, 2 * H + k, tanh(pre[2 * H + k]));
        double go = rounded(act, 3 * H + k, sigmoid(pre[3 * H + k]));
        g[k] = gi; g[H + k] = gf; g[2 * H + k] = gg; g[3 * H + k] = go;
        c[k] = rounded(terms, k, gf * c[k]) + rounded(terms, H + k, gi * gg);
    }
    if (ln->eps > 0) {
        const ln_site ln_c = {t, ROUND_LN_C, l, row};
        round_sample(t, ROUND_CELL, l, row, c, H);
        t->rstd[l][row * RSTD_COUNT + RSTD_C] =
            layernorm_forward(c, H, ln->c_weight, ln->c_bias, ln->eps, t->c_hat[l] + row * H, &ln_c);
    }
    round_sample(t, ROUND_C, l, row, c, H);
    const rounding_site tanh_c = site_at(t, ROUND_TANH_C, l, row, 0);
    for (int k = 0; k < H; k++)
        h[k] = g[3 * H + k] * rounded(tanh_c, k, tanh(c[k]));
    round_sample(t, ROUND_H, l, row, h, H);
    memcpy(t->c[l] + row * H, c, (size_t)H * sizeof(double));
    memcpy(fl->out + row * H, h, (size_t)H * sizeof(double));
}

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
    const int B = s->batch, H = s->hidden_size, l = fl->l;
    const size_t HS = SCRATCH_H * (size_t)H;
    for (int b = b0; b < b1; b++) {
        double *h = fl->scratch + b * HS, *c = h + H;
        lstm_copy_to_double(h, p->h0 + ((size_t)l * B + b) * H, (size_t)H);
        lstm_copy_to_double(c, p->c0 + ((size_t)l * B + b) * H, (size_t)H);
    }
    for (int ts = 0; ts < s->seq_length; ts++) {
        for (int b = b0; b < b1; b++) {
            if (ts >= lstm_length(p, b))
                continue;
            const size_t row = (size_t)ts * B + b;
            memcpy(t->h_prev[l] + row * H, fl->scratch + b * HS, (size_t)H * sizeof(double));
            memcpy(t->c_prev[l] + row * H, fl->scratch + b * HS + H, (size_t)H * sizeof(double));
        }
        step_projections(fl, ts, b0, b1);
        for (int b = b0; b < b1; b++)
            if (ts < lstm_length(p, b))
                step_cell(fl, b, (size_t)ts * B + b);
    }
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        memcpy(fl->r->hy + state, fl->scratch + b * HS, (size_t)H * sizeof(double));
        memcpy(fl->r->cy + state, fl->scratch + b * HS + H, (size_t)H * sizeof(double));
    }
}

/* The forward pass, exact (rounding 0) or with the rounding sample of
 * seed rounding - 1. */
static int reference_forward(const lstm_problem *p, lstm_results *r, lstm_reference_tape **tape_out,
                             uint64_t rounding, lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const int B = s->batch, H = s->hidden_size, L = s->num_layers;
    lstm_reference_tape *t = tape_alloc(p, err);
    if (!t)
        return 1;
    t->rounding = rounding;
    if (rounding && !(t->factor = alloc_doubles(FACTORS, err))) {
        lstm_reference_tape_free(t);
        return 1;
    }
    for (int i = 0; rounding && i < FACTORS; i++) /* one unit roundoff up or down, half each */
        t->factor[i] = (lc_hash64(rounding ^ (uint64_t)i) & 1) ? 1.0 + 0x1p-24 : 1.0 - 0x1p-24;
    double *scratch = alloc_doubles((size_t)B * SCRATCH_H * H, err);
    if (!scratch) {
        lstm_reference_tape_free(t);
        return 1;
    }
    lstm_copy_to_double(t->input[0], p->x, lstm_seq_elems(s, s->input_size));
    for (int l = 0; l < L; l++) {
        lstm_copy_to_double(t->w_ih[l], p->w_ih[l], lstm_w_ih_elems(s, l));
        lstm_copy_to_double(t->w_hh[l], p->w_hh[l], lstm_w_hh_elems(s));
        forward_layer fl = {p, t, r, l, lstm_layernorm_of(p, l), (l + 1 < L) ? t->input[l + 1] : r->y, scratch};
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
    lstm_layernorm ln;   /* eps 0 but for the LayerNorm model */
    const double *d_out; /* gradient of this layer's output sequence */
    double *d_in;        /* gradient of its input sequence */
    double *dgates;      /* (T,B,4H): the gradients of the gates' pre-activations */
    /* (T,B,4H) what reaches W_ih x_t and W_hh h_{t-1}: dgates itself, or
     * under LayerNorm dgates back through LN_i and LN_h */
    double *dgates_ih, *dgates_hh;
    double *d_cell;      /* LayerNorm: (T,B,H) the gradient of LN_c's output, c_t */
    double *scratch;     /* per sequence b: dh, dc, dht, dct (H each) at b * 4H */
} backward_layer;

/* Sequence b's cell at tape row `row`, backwards: from dh (state) + d_out
 * and dc to the row's dgates (and those of W_ih x_t and W_hh h_{t-1});
 * dc becomes the gradient of c_{t-1}, dh zero for the GEMM's sums. */
static void step_cell_backward(const backward_layer *bl, int b, size_t row)
{
    const lstm_reference_tape *t = bl->t;
    const lstm_layernorm *ln = &bl->ln;
    const int H = bl->p->shape.hidden_size, l = bl->l;
    const size_t H4 = 4 * (size_t)H;
    const double *g = t->gates[l] + row * H4, *ct = t->c[l] + row * H, *cp = t->c_prev[l] + row * H;
    double *dh = bl->scratch + b * H4, *dc = dh + H, *dht = dc + H, *dct = dht + H;
    double *dgate = bl->dgates + row * H4;
    round_sample(t, ROUND_DH, l, row, dh, H);
    round_sample(t, ROUND_DC, l, row, dc, H);
    for (int k = 0; k < H; k++) {
        const double tc = tanh(ct[k]);
        dht[k] = dh[k] + bl->d_out[row * H + k];
        dct[k] = dc[k] + dht[k] * g[3 * H + k] * (1.0 - tc * tc);
    }
    if (ln->eps > 0) {
        round_sample(t, ROUND_D_CELL, l, row, dct, H);
        memcpy(bl->d_cell + row * H, dct, (size_t)H * sizeof(double));
        const ln_site ln_c = {t, ROUND_LN_C, l, row};
        layernorm_backward(dct, H, ln->c_weight, t->c_hat[l] + row * H, t->rstd[l][row * RSTD_COUNT + RSTD_C], &ln_c);
    }
    for (int k = 0; k < H; k++) {
        double gi = g[k], gf = g[H + k], gg = g[2 * H + k], go = g[3 * H + k];
        double tc = tanh(ct[k]);
        dgate[k] = dct[k] * gg * gi * (1.0 - gi);         /* i */
        dgate[H + k] = dct[k] * cp[k] * gf * (1.0 - gf);  /* f */
        dgate[2 * H + k] = dct[k] * gi * (1.0 - gg * gg); /* g */
        dgate[3 * H + k] = dht[k] * tc * go * (1.0 - go); /* o */
        dc[k] = dct[k] * gf;
    }
    memset(dh, 0, (size_t)H * sizeof(double));
    round_sample(t, ROUND_DGATES, l, row, dgate, 4 * H);
    if (ln->eps > 0) {
        const double *rstd = t->rstd[l] + row * RSTD_COUNT;
        const ln_site ln_i = {t, ROUND_LN_I, l, row}, ln_h = {t, ROUND_LN_H, l, row};
        memcpy(bl->dgates_ih + row * H4, dgate, H4 * sizeof(double));
        layernorm_backward(bl->dgates_ih + row * H4, 4 * H, ln->i_weight, t->i_hat[l] + row * H4, rstd[RSTD_I], &ln_i);
        round_sample(t, ROUND_DGATES_IH, l, row, bl->dgates_ih + row * H4, 4 * H);
        memcpy(bl->dgates_hh + row * H4, dgate, H4 * sizeof(double));
        layernorm_backward(bl->dgates_hh + row * H4, 4 * H, ln->h_weight, t->h_hat[l] + row * H4, rstd[RSTD_H], &ln_h);
        round_sample(t, ROUND_DGATES_HH, l, row, bl->dgates_hh + row * H4, 4 * H);
    }
}

/* Sequences [b0, b1) back through their steps, a step at a time for all
 * of them (as in the forward): dgates, d_in, dh0, dc0. */
static void backward_sequences(void *arg, int b0, int b1)
{
    const backward_layer *bl = arg;
    const lstm_problem *p = bl->p;
    const lstm_shape *s = &p->shape;
    const lstm_reference_tape *t = bl->t;
    const int B = s->batch, H = s->hidden_size, l = bl->l, In = lstm_layer_input_size(s, l);
    const size_t H4 = 4 * (size_t)H;
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        double *dh = bl->scratch + b * H4, *dc = dh + H;
        for (int k = 0; k < H; k++) {
            dh[k] = p->dhy ? (double)p->dhy[state + k] : 0.0;
            dc[k] = p->dcy ? (double)p->dcy[state + k] : 0.0;
        }
    }
    for (int ts = s->seq_length - 1; ts >= 0; ts--) {
        for (int b = b0; b < b1; b++)
            if (ts < lstm_length(p, b))
                step_cell_backward(bl, b, (size_t)ts * B + b);
        for (size_t j = 0; j < H4; j++) {
            const double *wi = t->w_ih[l] + j * In, *wh = t->w_hh[l] + j * H;
            for (int b = b0; b < b1; b++) {
                if (ts >= lstm_length(p, b))
                    continue;
                const size_t row = (size_t)ts * B + b;
                axpy_at(t, ROUND_SUM_D_IN, l, row, j, bl->d_in + row * In, bl->dgates_ih[row * H4 + j], wi, In);
                axpy_at(t, ROUND_SUM_DH, l, row, j, bl->scratch + b * H4, bl->dgates_hh[row * H4 + j], wh, H);
            }
        }
    }
    for (int b = b0; b < b1; b++) {
        const size_t state = ((size_t)l * B + b) * H;
        memcpy(bl->r->dh0 + state, bl->scratch + b * H4, (size_t)H * sizeof(double));
        memcpy(bl->r->dc0 + state, bl->scratch + b * H4 + H, (size_t)H * sizeof(double));
    }
}

/* Row j's own parameters at one tape row: the biases (LSTM), or the
 * LayerNorms' weights and biases (j < H also LN_c's). */
static void row_own_param_grads(const backward_layer *bl, size_t row, size_t j)
{
    const lstm_reference_tape *t = bl->t;
    const int H = bl->p->shape.hidden_size, l = bl->l;
    const size_t H4 = 4 * (size_t)H;
    const double dg = bl->dgates[row * H4 + j];
    double **const *grad = bl->r->model_grads;
    if (!(bl->ln.eps > 0)) {
        add_at(t, l, row, j, &bl->r->db_ih[l][j], dg);
        add_at(t, l, row, j + H4, &bl->r->db_hh[l][j], dg);
        return;
    }
    add_at(t, l, row, j, &grad[LSTMCHECK_LN_I_WEIGHT][l][j], dg * t->i_hat[l][row * H4 + j]);
    add_at(t, l, row, j + H4, &grad[LSTMCHECK_LN_I_BIAS][l][j], dg);
    add_at(t, l, row, j + 2 * H4, &grad[LSTMCHECK_LN_H_WEIGHT][l][j], dg * t->h_hat[l][row * H4 + j]);
    add_at(t, l, row, j + 3 * H4, &grad[LSTMCHECK_LN_H_BIAS][l][j], dg);
    if (j < (size_t)H) {
        const double dcell = bl->d_cell[row * H + j];
        add_at(t, l, row, j + 4 * H4, &grad[LSTMCHECK_LN_C_WEIGHT][l][j], dcell * t->c_hat[l][row * H + j]);
        add_at(t, l, row, j + 5 * H4, &grad[LSTMCHECK_LN_C_BIAS][l][j], dcell);
    }
}

/* Weight rows [j0, j1): dW and the row's own parameters summed over
 * sequences, then steps from the last (the order of the recurrence); the
 * step's input row is read once for all rows of the chunk. */
static void backward_weight_rows(void *arg, int j0, int j1)
{
    const backward_layer *bl = arg;
    const lstm_problem *p = bl->p;
    const lstm_shape *s = &p->shape;
    const lstm_reference_tape *t = bl->t;
    const int B = s->batch, H = s->hidden_size, l = bl->l, In = lstm_layer_input_size(s, l);
    const size_t H4 = 4 * (size_t)H;
    double *dw_ih = bl->r->dw_ih[l], *dw_hh = bl->r->dw_hh[l];
    for (int b = 0; b < B; b++) {
        for (int ts = lstm_length(p, b) - 1; ts >= 0; ts--) {
            const size_t row = (size_t)ts * B + b;
            const double *xt = t->input[l] + row * In, *hp = t->h_prev[l] + row * H;
            for (size_t j = (size_t)j0; j < (size_t)j1; j++) {
                row_own_param_grads(bl, row, j);
                axpy_at(t, ROUND_SUM_DW_IH, l, row, j, dw_ih + j * In, bl->dgates_ih[row * H4 + j], xt, In);
                axpy_at(t, ROUND_SUM_DW_HH, l, row, j, dw_hh + j * H, bl->dgates_hh[row * H4 + j], hp, H);
            }
        }
    }
}

/* Every parameter gradient of layer l set to zero (the model's tensors). */
static void zero_param_grads(const lstm_problem *p, lstm_results *r, int l)
{
    const lstm_model *m = lstm_model_get(p->model);
    for (int i = 0; i < m->ntensors; i++) {
        const model_tensor *mt = &m->tensors[i];
        if (mt->has_grad && l < model_tensor_layers(mt, &p->shape))
            memset(model_tensor_grads(mt, r)[l], 0, model_tensor_elems(mt, &p->shape, l) * sizeof(double));
    }
}

int lstm_reference_forward(const lstm_problem *p, lstm_results *r, lstm_reference_tape **tape_out,
                           lc_error *err)
{
    return reference_forward(p, r, tape_out, 0, err);
}

int lstm_reference_backward(const lstm_problem *p, const lstm_reference_tape *t, lstm_results *r,
                            lc_error *err)
{
    const lstm_shape *s = &p->shape;
    const int B = s->batch, H = s->hidden_size, L = s->num_layers;
    const int layernorm = lstm_layernorm_of(p, 0).eps > 0;
    const size_t gates = lstm_seq_elems(s, 4 * H);
    /* gradient w.r.t. the current layer's output sequence: starts as dy */
    double *d_out = alloc_doubles(lstm_seq_elems(s, H), err);
    double *d_in = alloc_doubles(lstm_seq_elems(s, s->input_size > H ? s->input_size : H), err);
    /* dgates, then under LayerNorm dgates_ih, dgates_hh and d_cell */
    double *dgates = alloc_doubles(layernorm ? 3 * gates + lstm_seq_elems(s, H) : gates, err);
    double *scratch = alloc_doubles((size_t)B * 4 * H, err);
    if (!d_out || !d_in || !dgates || !scratch) {
        free(d_out); free(d_in); free(dgates); free(scratch);
        return 1;
    }
    if (p->dy)
        lstm_copy_to_double(d_out, p->dy, lstm_seq_elems(s, H));
    for (int l = L - 1; l >= 0; l--) {
        const int In = lstm_layer_input_size(s, l);
        zero_param_grads(p, r, l);
        memset(d_in, 0, lstm_seq_elems(s, In) * sizeof(double));
        backward_layer bl = {p, t, r, l, lstm_layernorm_of(p, l), d_out, d_in, dgates,
                             layernorm ? dgates + gates : dgates, layernorm ? dgates + 2 * gates : dgates,
                             layernorm ? dgates + 3 * gates : NULL, scratch};
        lc_parallel_for(B, layer_threads(s, l), backward_sequences, &bl);
        lc_parallel_for(4 * H, layer_threads(s, l), backward_weight_rows, &bl);
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

static int reference_run(const lstm_problem *p, lstm_results *r, uint64_t rounding, lc_error *err)
{
    lstm_reference_tape *tape = NULL;
    if (reference_forward(p, r, &tape, rounding, err))
        return 1;
    int rc = lstm_reference_backward(p, tape, r, err);
    lstm_reference_tape_free(tape);
    return rc;
}

int lstm_reference_run(const lstm_problem *p, lstm_results *r, lc_error *err)
{
    return reference_run(p, r, 0, err);
}

int lstm_reference_run_rounded(const lstm_problem *p, uint64_t seed, lstm_results *r, lc_error *err)
{
    return reference_run(p, r, seed + 1 ? seed + 1 : 1, err);
}
