/* The reference against central finite differences and a hand-computed step. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "model/inputs.h"
#include "model/reference.h"

/* loss = sum(y*dy) + sum(hy*dhy) + sum(cy*dcy), from a forward pass */
static double loss_of(const lstm_problem *p, lstm_results *r)
{
    lc_error err;
    if (lstm_reference_forward(p, r, NULL, &err))
        return NAN;
    const lstm_shape *s = &p->shape;
    double L = 0;
    for (size_t i = 0; i < lstm_seq_elems(s, s->hidden_size); i++)
        L += r->y[i] * (p->dy ? p->dy[i] : 0);
    for (size_t i = 0; i < lstm_state_elems(s); i++) {
        L += r->hy[i] * (p->dhy ? p->dhy[i] : 0);
        L += r->cy[i] * (p->dcy ? p->dcy[i] : 0);
    }
    return L;
}

/* Compare the analytic gradient of every element of a float tensor with
 * a central difference. The perturbed values are floats, so the step is
 * measured after rounding: (f(x+) - f(x-)) / (x+ - x-) is exact in that.
 * The step, 1e-4 relative, keeps the difference's truncation error far
 * below the allowed: a LayerNorm over few elements curves sharply, and
 * at 1e-3 its error reached 1.16 of allowed (reference_fd_layernorm, dx)
 * where at 1e-4 the worst of any model is 0.07. A float near 1 still
 * moves by ~1700 units in the last place. */
static int check_tensor(const char *name, lstm_problem *p, float *data, size_t n,
                        const double *analytic, lstm_results *scratch, double *worst)
{
    for (size_t i = 0; i < n; i++) {
        float keep = data[i];
        float step = 1e-4f * (fabsf(keep) > 1 ? fabsf(keep) : 1.0f);
        float up = keep + step, down = keep - step;
        data[i] = up;
        double lu = loss_of(p, scratch);
        data[i] = down;
        double ld = loss_of(p, scratch);
        data[i] = keep;
        double fd = (lu - ld) / ((double)up - (double)down);
        double err = fabs(fd - analytic[i]);
        double scale = 1e-5 + 1e-4 * fabs(analytic[i]);
        if (err / scale > *worst)
            *worst = err / scale;
        CHECK(err <= scale, "%s[%zu]: analytic %.10g, finite difference %.10g", name, i,
              analytic[i], fd);
    }
    return 0;
}

/* Every gradient of a problem of the model, element by element: x, h0, c0
 * and each per-layer parameter the model's descriptor lists. */
static int fd_case_of(int model, lstm_shape s, const int *lengths, unsigned seeds)
{
    lc_error err;
    lstm_problem p;
    lstm_results grad, scratch;
    CHECK(!lstm_problem_alloc(&p, &s, model, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&p, 5, seeds, &err), "%s", err.msg);
    if (lengths)
        CHECK(!lstm_inputs_set_lengths(&p, lengths, s.batch, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&grad, &s, model, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&scratch, &s, model, &err), "%s", err.msg);
    CHECK(!lstm_reference_run(&p, &grad, &err), "%s", err.msg);
    double worst = 0;
    int rc = check_tensor("dx", &p, p.x, lstm_seq_elems(&s, s.input_size), grad.dx, &scratch, &worst) ||
             check_tensor("dh0", &p, p.h0, lstm_state_elems(&s), grad.dh0, &scratch, &worst) ||
             check_tensor("dc0", &p, p.c0, lstm_state_elems(&s), grad.dc0, &scratch, &worst);
    const lstm_model *m = lstm_model_get(model);
    int checked = 0;
    for (int i = 0; !rc && i < m->ntensors; i++) {
        const model_tensor *t = &m->tensors[i];
        for (int l = 0; !rc && t->has_grad && l < model_tensor_layers(t, &s); l++, checked++) {
            char name[40];
            snprintf(name, sizeof name, "d%s.%d", t->name, l);
            rc = check_tensor(name, &p, model_tensor_inputs(t, &p)[l], model_tensor_elems(t, &s, l),
                              model_tensor_grads(t, &grad)[l], &scratch, &worst);
        }
    }
    printf("%s: worst |fd - analytic| / allowed = %.3g over every gradient element (%d parameter tensors)\n",
           m->name, worst, checked);
    lstm_problem_free(&p);
    lstm_results_free(&grad);
    lstm_results_free(&scratch);
    return rc;
}

static int fd_case(lstm_shape s, const int *lengths, unsigned seeds)
{
    return fd_case_of(MODEL_LSTM, s, lengths, seeds);
}

int test_reference_fd_one_layer(void)
{
    return fd_case((lstm_shape){.seq_length = 4, .batch = 2, .input_size = 3, .hidden_size = 5, .num_layers = 1},
                   NULL, SEED_DY);
}

int test_reference_fd_two_layers(void)
{
    return fd_case((lstm_shape){.seq_length = 3, .batch = 2, .input_size = 4, .hidden_size = 3, .num_layers = 2},
                   NULL, SEED_DY | SEED_DHY | SEED_DCY);
}

int test_reference_fd_three_layers(void)
{
    return fd_case((lstm_shape){.seq_length = 3, .batch = 1, .input_size = 2, .hidden_size = 3, .num_layers = 3},
                   NULL, SEED_DY | SEED_DCY);
}

int test_reference_fd_variable_length(void)
{
    const int lengths[3] = {4, 1, 2};
    return fd_case((lstm_shape){.seq_length = 4, .batch = 3, .input_size = 3, .hidden_size = 4, .num_layers = 2},
                   lengths, SEED_DY | SEED_DHY | SEED_DCY);
}

int test_reference_fd_state_only(void)
{
    /* the jit_simple case: gradient flows from hy alone */
    return fd_case((lstm_shape){.seq_length = 5, .batch = 2, .input_size = 3, .hidden_size = 4, .num_layers = 1},
                   NULL, SEED_DHY);
}

/* Dropout between layers: three layers (two masks), ragged lengths, every
 * output seeded; the gradient through each mask is checked at every input
 * and parameter of the layers below it. */
int test_reference_fd_dropout(void)
{
    const int lengths[3] = {4, 1, 3};
    return fd_case_of(MODEL_DROPOUT,
                      (lstm_shape){.seq_length = 4, .batch = 3, .input_size = 3, .hidden_size = 4, .num_layers = 3},
                      lengths, SEED_DY | SEED_DHY | SEED_DCY);
}

/* The LayerNorm LSTM: two layers, ragged lengths, every output seeded;
 * every LayerNorm weight and bias of both layers is checked with W_ih and
 * W_hh, and so are x, h0 and c0 (through LN_h and LN_c). */
int test_reference_fd_layernorm(void)
{
    const int lengths[3] = {4, 1, 3};
    return fd_case_of(MODEL_LAYERNORM,
                      (lstm_shape){.seq_length = 4, .batch = 3, .input_size = 3, .hidden_size = 4, .num_layers = 2},
                      lengths, SEED_DY | SEED_DHY | SEED_DCY);
}

/* Three layers seeded on the final state alone (the gradient reaches the
 * lower layers only through the LayerNorms of the ones above), and a
 * one-unit cell, whose LN_c is its bias whatever comes in (zero gradient
 * below it: the reference must give exactly what finite differences do). */
int test_reference_fd_layernorm_state_only(void)
{
    return fd_case_of(MODEL_LAYERNORM,
                      (lstm_shape){.seq_length = 3, .batch = 2, .input_size = 5, .hidden_size = 3, .num_layers = 3},
                      NULL, SEED_DHY | SEED_DCY) ||
           fd_case_of(MODEL_LAYERNORM,
                      (lstm_shape){.seq_length = 3, .batch = 2, .input_size = 2, .hidden_size = 1, .num_layers = 2},
                      NULL, SEED_DY | SEED_DHY | SEED_DCY);
}

/* A one-layer problem of the plain LSTM with layer l's parameters of p and
 * the given input sequence (T,B,width) and initial state, into q. */
static int one_layer_of(const lstm_problem *p, int l, const double *input, int width, lstm_problem *q)
{
    lc_error err;
    lstm_shape s = p->shape;
    s.num_layers = 1;
    s.input_size = width;
    const size_t BH = (size_t)s.batch * s.hidden_size;
    CHECK(!lstm_problem_alloc(q, &s, MODEL_LSTM, &err), "%s", err.msg);
    memcpy(q->w_ih[0], p->w_ih[l], lstm_w_ih_elems(&s, 0) * sizeof(float));
    memcpy(q->w_hh[0], p->w_hh[l], lstm_w_hh_elems(&s) * sizeof(float));
    memcpy(q->b_ih[0], p->b_ih[l], 4 * (size_t)s.hidden_size * sizeof(float));
    memcpy(q->b_hh[0], p->b_hh[l], 4 * (size_t)s.hidden_size * sizeof(float));
    memcpy(q->h0, p->h0 + l * BH, BH * sizeof(float));
    memcpy(q->c0, p->c0 + l * BH, BH * sizeof(float));
    for (size_t i = 0; i < lstm_seq_elems(&s, width); i++)
        q->x[i] = (float)input[i]; /* exact: the inputs below are floats times floats, checked */
    return 0;
}

/* The dropout model's forward, composed by hand from one-layer LSTMs: layer
 * 0 on x, its output times the mask (exact in float here: the mask is 0 or
 * a float, and the output is rounded to float before) fed to layer 1. Its
 * y, hy, cy equal the model's reference: the mask sits between the layers,
 * and neither y nor the states are masked. */
int test_reference_dropout_composed(void)
{
    lc_error err;
    const lstm_shape s = {.seq_length = 5, .batch = 3, .input_size = 4, .hidden_size = 6, .num_layers = 2};
    lstm_problem p, q0, q1;
    lstm_results r, r0, r1;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_DROPOUT, &err) && !lstm_inputs_generate(&p, 11, 0, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&r, &s, MODEL_DROPOUT, &err) && !lstm_reference_forward(&p, &r, NULL, &err), "%s",
          err.msg);
    double *x = calloc(lstm_seq_elems(&s, s.input_size), sizeof *x);
    double *mid = calloc(lstm_seq_elems(&s, s.hidden_size), sizeof *mid);
    CHECK(x && mid, "memory");
    lstm_copy_to_double(x, p.x, lstm_seq_elems(&s, s.input_size));
    CHECK(!one_layer_of(&p, 0, x, s.input_size, &q0), "layer 0");
    CHECK(!lstm_results_alloc(&r0, &q0.shape, MODEL_LSTM, &err) && !lstm_reference_forward(&q0, &r0, NULL, &err),
          "%s", err.msg);
    const float *mask = p.model_inputs[LSTMCHECK_DROPOUT_MASK][0];
    int zeros = 0;
    for (size_t i = 0; i < lstm_seq_elems(&s, s.hidden_size); i++) {
        mid[i] = (double)(float)r0.y[i] * mask[i];
        zeros += mask[i] == 0.0f;
        CHECK(mask[i] == 0.0f || mask[i] == (float)(1.0 / 0.6), "mask[%zu] = %.9g", i, (double)mask[i]);
    }
    CHECK(zeros > 0 && zeros < (int)lstm_seq_elems(&s, s.hidden_size), "%d zeros: the mask does nothing", zeros);
    CHECK(!one_layer_of(&p, 1, mid, s.hidden_size, &q1), "layer 1");
    CHECK(!lstm_results_alloc(&r1, &q1.shape, MODEL_LSTM, &err) && !lstm_reference_forward(&q1, &r1, NULL, &err),
          "%s", err.msg);
    /* the reference keeps layer 0's output in double, the composition
     * rounds it to float first: they agree to float rounding */
    double worst = 0;
    const size_t BH = (size_t)s.batch * s.hidden_size;
    for (size_t i = 0; i < lstm_seq_elems(&s, s.hidden_size); i++)
        worst = fmax(worst, fabs(r.y[i] - r1.y[i]));
    for (size_t i = 0; i < BH; i++) {
        worst = fmax(worst, fabs(r.hy[i] - r0.hy[i]) + fabs(r.cy[i] - r0.cy[i]));
        worst = fmax(worst, fabs(r.hy[BH + i] - r1.hy[i]) + fabs(r.cy[BH + i] - r1.cy[i]));
    }
    printf("dropout reference vs composed one-layer LSTMs: worst difference %.3g (%d of %zu mask elements zero)\n",
           worst, zeros, lstm_seq_elems(&s, s.hidden_size));
    CHECK(worst < 1e-6, "the dropout reference differs from its composition by %.3g", worst);
    lstm_problem_free(&p); lstm_problem_free(&q0); lstm_problem_free(&q1);
    lstm_results_free(&r); lstm_results_free(&r0); lstm_results_free(&r1);
    free(x);
    free(mid);
    return 0;
}

/* One step, I = H = 1, weights chosen so the gates are known numbers:
 * sigmoid(ln 3) = 3/4, sigmoid(0) = 1/2, tanh(ln 3) = 4/5, sigmoid(-ln 3) = 1/4. */
int test_reference_one_step_by_hand(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 1, .batch = 1, .input_size = 1, .hidden_size = 1, .num_layers = 1};
    lstm_problem p;
    lstm_results r;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&r, &s, MODEL_LSTM, &err), "%s", err.msg);
    const double ln3 = log(3.0);
    /* x = 1, h0 = 0, so each pre-activation is W_ih + b_ih + b_hh; put the
     * exact value in the biases split as float + remainder-free halves */
    p.x[0] = 1.0f;
    p.h0[0] = 0.0f;
    p.c0[0] = 0.4f;
    p.w_hh[0][0] = p.w_hh[0][1] = p.w_hh[0][2] = p.w_hh[0][3] = 0.5f; /* multiplied by h0 = 0 */
    float pre[4] = {(float)ln3, 0.0f, (float)ln3, (float)-ln3};
    for (int j = 0; j < 4; j++) {
        p.w_ih[0][j] = pre[j];
        p.b_ih[0][j] = 0.0f;
        p.b_hh[0][j] = 0.0f;
    }
    p.dy = malloc(sizeof(float));
    p.dy[0] = 1.0f;
    CHECK(!lstm_reference_run(&p, &r, &err), "%s", err.msg);
    /* float(ln 3) differs from ln 3 by < 3e-8, which moves the gates by < 1e-8 */
    const double i = 0.75, f = 0.5, g = 0.8, o = 0.25, c0 = (double)0.4f;
    const double c = f * c0 + i * g; /* 0.2 + 0.6 = 0.8 */
    const double h = o * tanh(c);
    CHECK_NEAR(r.cy[0], c, 1e-7);
    CHECK_NEAR(r.hy[0], h, 1e-7);
    CHECK_NEAR(r.y[0], h, 1e-7);
    /* backward with dy = 1: dc = o (1 - tanh^2 c); dc0 = dc f; do = tanh c */
    const double tc = tanh(c), dc = o * (1 - tc * tc);
    CHECK_NEAR(r.dc0[0], dc * f, 1e-7);
    CHECK_NEAR(r.db_ih[0][3], tc * o * (1 - o), 1e-7);          /* o gate */
    CHECK_NEAR(r.db_ih[0][0], dc * g * i * (1 - i), 1e-7);      /* i gate */
    CHECK_NEAR(r.db_ih[0][1], dc * c0 * f * (1 - f), 1e-7);     /* f gate */
    CHECK_NEAR(r.db_ih[0][2], dc * i * (1 - g * g), 1e-7);      /* g gate */
    CHECK_NEAR(r.dw_hh[0][0], 0.0, 0);                          /* h0 = 0 */
    CHECK_NEAR(r.dx[0], r.db_ih[0][0] * pre[0] + r.db_ih[0][1] * pre[1] + r.db_ih[0][2] * pre[2] +
                            r.db_ih[0][3] * pre[3], 1e-12);
    lstm_problem_free(&p);
    lstm_results_free(&r);
    return 0;
}

/* Past a sequence's length outputs are zero and the state stops there. */
int test_reference_variable_length_semantics(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 5, .batch = 2, .input_size = 3, .hidden_size = 4, .num_layers = 2};
    lstm_shape s2 = s;
    s2.seq_length = 2;
    lstm_problem p, q;
    lstm_results r, rq;
    const int lengths[2] = {5, 2};
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&p, 3, SEED_DY, &err), "%s", err.msg);
    CHECK(!lstm_inputs_set_lengths(&p, lengths, 2, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&r, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_reference_forward(&p, &r, NULL, &err), "%s", err.msg);
    for (int t = 2; t < 5; t++)
        for (int k = 0; k < 4; k++)
            CHECK(r.y[((size_t)t * 2 + 1) * 4 + k] == 0.0, "y[%d,1,%d] = %g past length 2", t, k,
                  r.y[((size_t)t * 2 + 1) * 4 + k]);
    /* sequence 1 alone with T = 2 must give the same hy and cy */
    CHECK(!lstm_problem_alloc(&q, &s2, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_results_alloc(&rq, &s2, MODEL_LSTM, &err), "%s", err.msg);
    for (int l = 0; l < 2; l++) {
        memcpy(q.w_ih[l], p.w_ih[l], lstm_w_ih_elems(&s, l) * sizeof(float));
        memcpy(q.w_hh[l], p.w_hh[l], lstm_w_hh_elems(&s) * sizeof(float));
        memcpy(q.b_ih[l], p.b_ih[l], 16 * sizeof(float));
        memcpy(q.b_hh[l], p.b_hh[l], 16 * sizeof(float));
    }
    memcpy(q.x, p.x, lstm_seq_elems(&s2, 3) * sizeof(float));
    memcpy(q.h0, p.h0, lstm_state_elems(&s) * sizeof(float));
    memcpy(q.c0, p.c0, lstm_state_elems(&s) * sizeof(float));
    CHECK(!lstm_reference_forward(&q, &rq, NULL, &err), "%s", err.msg);
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 4; k++) {
            size_t idx = ((size_t)l * 2 + 1) * 4 + k;
            CHECK(r.hy[idx] == rq.hy[idx], "hy[%d,1,%d]: %g vs %g alone", l, k, r.hy[idx], rq.hy[idx]);
            CHECK(r.cy[idx] == rq.cy[idx], "cy[%d,1,%d]: %g vs %g alone", l, k, r.cy[idx], rq.cy[idx]);
        }
    lstm_problem_free(&p);
    lstm_problem_free(&q);
    lstm_results_free(&r);
    lstm_results_free(&rq);
    return 0;
}

/* One reference run of p at a thread count, into r. */
static int reference_at(const lstm_problem *p, int threads, lstm_results *r)
{
    lc_error err;
    lstm_reference_set_threads(threads);
    CHECK(!lstm_results_alloc(r, &p->shape, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_reference_run(p, r, &err), "%s", err.msg);
    return 0;
}

/* The reference splits its loops over threads only where elements are
 * independent: every tensor is the same bit for bit at 1, 2, 3 and 7
 * threads, on ragged lengths and three layers (B=7 leaves uneven chunks). */
int test_reference_threads_bit_identical(void)
{
    lc_error err;
    const lstm_shape s = {.seq_length = 9, .batch = 7, .input_size = 20, .hidden_size = 37, .num_layers = 3};
    const int lengths[] = {9, 3, 1, 9, 5, 2, 8}, counts[] = {2, 3, 7};
    lstm_problem p;
    lstm_results one, many;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&p, 17, SEED_DY | SEED_DHY | SEED_DCY, &err) &&
              !lstm_inputs_set_lengths(&p, lengths, s.batch, &err), "%s", err.msg);
    CHECK(!reference_at(&p, 1, &one), "one thread");
    const int cap = lstm_results_view_capacity(&one);
    lstm_tensor_view a[32], b[32];
    CHECK(cap <= 32, "capacity %d", cap);
    const unsigned all = LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS;
    const int n = lstm_results_views(&one, all, a, cap);
    CHECK(n == cap, "%d tensors of %d", n, cap);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        CHECK(!reference_at(&p, counts[c], &many), "%d threads", counts[c]);
        lstm_results_views(&many, all, b, cap);
        for (int t = 0; t < n; t++)
            CHECK(!memcmp(a[t].data, b[t].data, a[t].count * sizeof(double)), "%s differs at %d threads",
                  a[t].name, counts[c]);
        lstm_results_free(&many);
    }
    lstm_reference_set_threads(0);
    lstm_results_free(&one);
    lstm_problem_free(&p);
    return 0;
}
