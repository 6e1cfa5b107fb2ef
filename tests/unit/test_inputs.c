/* The input generator: bit-identical values for a seed, documented ranges. */
#include "unit.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/inputs.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Golden bits for seed 17 at T=2 B=2 I=3 H=4 L=1: a change to the algorithm
 * changes these, and every stored baseline or dump with them. */
int test_inputs_golden_values(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 2, .batch = 2, .input_size = 3, .hidden_size = 4, .num_layers = 1};
    lstm_problem p;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&p, 17, SEED_DY, &err), "%s", err.msg);
    const uint32_t x_bits[3] = {0xbf0a341eu, 0x3f6a0a5fu, 0x3ec01fb8u};
    const uint32_t w_bits[2] = {0x3bd83e80u, 0xbdaf26b8u};
    for (int i = 0; i < 3; i++)
        CHECK(bits_of(p.x[i]) == x_bits[i], "x[%d] = %.9g has bits 0x%08x, expected 0x%08x", i,
              p.x[i], bits_of(p.x[i]), x_bits[i]);
    for (int i = 0; i < 2; i++)
        CHECK(bits_of(p.w_ih[0][i]) == w_bits[i], "w_ih[%d] = %.9g has bits 0x%08x, expected 0x%08x",
              i, p.w_ih[0][i], bits_of(p.w_ih[0][i]), w_bits[i]);
    lstm_problem_free(&p);
    return 0;
}

/* Each element of one tensor moved by one ulp from its drawn value; up
 * and down counted. */
static int moved_one_ulp(const char *name, const float *drawn, const float *moved, size_t n, int counts[2])
{
    for (size_t i = 0; i < n; i++) {
        const int up = moved[i] == nextafterf(drawn[i], INFINITY);
        CHECK(up || moved[i] == nextafterf(drawn[i], -INFINITY), "%s[%zu] moved from %.9g to %.9g", name, i,
              drawn[i], moved[i]);
        counts[up]++;
    }
    return 0;
}

/* lstm_inputs_move: every input a runner computes from one ulp up or down,
 * half each way, the directions fixed by the seed; masks stay. */
int test_inputs_move_one_ulp(void)
{
    lc_error err;
    const lstm_shape s = {.seq_length = 5, .batch = 3, .input_size = 4, .hidden_size = 6, .num_layers = 2};
    for (int model = 0; model < MODEL_COUNT; model++) {
        lstm_problem drawn, moved;
        CHECK(!lstm_problem_alloc(&drawn, &s, model, &err) &&
                  !lstm_inputs_generate(&drawn, 17, SEED_DY | SEED_DHY | SEED_DCY, &err) &&
                  !lstm_problem_copy(&moved, &drawn, &err), "%s", err.msg);
        lstm_inputs_move(&moved, 17);
        int counts[2] = {0, 0};
        const size_t seq = lstm_seq_elems(&s, s.input_size), state = lstm_state_elems(&s);
        CHECK(!moved_one_ulp("x", drawn.x, moved.x, seq, counts) &&
                  !moved_one_ulp("h0", drawn.h0, moved.h0, state, counts) &&
                  !moved_one_ulp("dy", drawn.dy, moved.dy, lstm_seq_elems(&s, s.hidden_size), counts) &&
                  !moved_one_ulp("dcy", drawn.dcy, moved.dcy, state, counts), "model %d", model);
        const lstm_model *m = lstm_model_get(model);
        for (int i = 0; i < m->ntensors; i++) {
            const model_tensor *t = &m->tensors[i];
            for (int l = 0; l < model_tensor_layers(t, &s); l++) {
                const float *a = model_tensor_inputs(t, &drawn)[l], *b = model_tensor_inputs(t, &moved)[l];
                const size_t n = model_tensor_elems(t, &s, l);
                if (t->has_grad)
                    CHECK(!moved_one_ulp(t->name, a, b, n, counts), "model %s", m->name);
                else
                    CHECK(!memcmp(a, b, n * sizeof *a), "%s.%d (no gradient) moved", t->name, l);
            }
        }
        const int total = counts[0] + counts[1];
        CHECK(counts[0] > total * 2 / 5 && counts[1] > total * 2 / 5, "%d up, %d down", counts[1], counts[0]);
        /* the directions are the seed's, as docs/inputs.md says: pinned for x[0..7] */
        unsigned ups = 0;
        for (int i = 0; i < 8; i++)
            ups |= (unsigned)(moved.x[i] > drawn.x[i]) << i;
        CHECK(ups == 0x5Cu, "x[0..7] moved up where bit i of 0x%02x is set, not 0x5c", ups);
        lstm_problem_free(&drawn);
        lstm_problem_free(&moved);
    }
    return 0;
}

int test_inputs_same_seed_same_values(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 3, .batch = 2, .input_size = 5, .hidden_size = 6, .num_layers = 2};
    lstm_problem a, b, c;
    CHECK(!lstm_problem_alloc(&a, &s, MODEL_LSTM, &err) && !lstm_problem_alloc(&b, &s, MODEL_LSTM, &err) &&
              !lstm_problem_alloc(&c, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&a, 9, SEED_DY | SEED_DHY, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&b, 9, SEED_DY | SEED_DHY, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&c, 10, SEED_DY | SEED_DHY, &err), "%s", err.msg);
    size_t nx = lstm_seq_elems(&s, 5);
    CHECK(!memcmp(a.x, b.x, nx * sizeof(float)), "x differs for the same seed");
    CHECK(!memcmp(a.w_hh[1], b.w_hh[1], lstm_w_hh_elems(&s) * sizeof(float)), "w_hh differs");
    CHECK(!memcmp(a.dhy, b.dhy, lstm_state_elems(&s) * sizeof(float)), "dhy differs");
    CHECK(memcmp(a.x, c.x, nx * sizeof(float)) != 0, "seeds 9 and 10 give the same x");
    /* streams of different tensors are unrelated */
    CHECK(memcmp(a.h0, a.c0, lstm_state_elems(&s) * sizeof(float)) != 0, "h0 equals c0");
    CHECK(a.dcy == NULL, "dcy drawn without being asked for");
    lstm_problem_free(&a);
    lstm_problem_free(&b);
    lstm_problem_free(&c);
    return 0;
}

int test_inputs_distributions(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 50, .batch = 20, .input_size = 100, .hidden_size = 64, .num_layers = 1};
    lstm_problem p;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_generate(&p, 1, SEED_DY, &err), "%s", err.msg);
    size_t n = lstm_seq_elems(&s, 100);
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += p.x[i];
        sq += (double)p.x[i] * p.x[i];
        CHECK(p.x[i] >= -6 && p.x[i] <= 6, "x[%zu] = %g outside [-6, 6]", i, p.x[i]);
    }
    double mean = sum / n, var = sq / n - mean * mean;
    CHECK(fabs(mean) < 0.01, "x mean %g", mean);
    CHECK(fabs(var - 1) < 0.02, "x variance %g", var);
    const double bound = 1.0 / sqrt(64.0);
    double wmin = 1, wmax = -1;
    for (size_t i = 0; i < lstm_w_ih_elems(&s, 0); i++) {
        wmin = fmin(wmin, p.w_ih[0][i]);
        wmax = fmax(wmax, p.w_ih[0][i]);
    }
    CHECK(wmin >= -bound && wmax < bound, "w_ih range [%g, %g] outside +-%g", wmin, wmax, bound);
    CHECK(wmin < -0.95 * bound && wmax > 0.95 * bound, "w_ih range [%g, %g] does not fill +-%g",
          wmin, wmax, bound);
    lstm_problem_free(&p);
    return 0;
}

int test_inputs_lengths(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 99, .batch = 200, .input_size = 1, .hidden_size = 1, .num_layers = 1};
    lstm_problem p;
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(!lstm_inputs_lengths(&p, 17, 30, 99, &err), "%s", err.msg);
    int lo = 1000, hi = 0;
    for (int b = 0; b < 200; b++) {
        lo = p.lengths[b] < lo ? p.lengths[b] : lo;
        hi = p.lengths[b] > hi ? p.lengths[b] : hi;
    }
    CHECK(lo >= 30 && hi <= 99 && lo < 35 && hi > 94, "lengths span %d..%d", lo, hi);
    const int bad[2] = {0, 5};
    lstm_shape s2 = s;
    s2.batch = 2;
    lstm_problem q;
    CHECK(!lstm_problem_alloc(&q, &s2, MODEL_LSTM, &err), "%s", err.msg);
    CHECK(lstm_inputs_set_lengths(&q, bad, 2, &err) != 0, "length 0 accepted");
    CHECK(strstr(err.msg, "outside 1..99") != NULL, "message: %s", err.msg);
    lstm_problem_free(&p);
    lstm_problem_free(&q);
    return 0;
}

/* Every model of models.def has its descriptor, under its own name and
 * number, with tensors the bundles can hold: slots in range, a gradient
 * where it is a parameter, and a generator stream of its own (no two
 * tensors of a model, and none of the LSTM's fixed inputs, share one). */
int test_models_described(void)
{
    static const char *const names[] = {
#define LSTM_MODEL(ID, name) #name,
#include "model/models.def"
#undef LSTM_MODEL
    };
    for (int id = 0; id < MODEL_COUNT; id++) {
        const lstm_model *m = lstm_model_get(id);
        CHECK(m, "model %d (%s) of models.def has no descriptor in model.c", id, names[id]);
        CHECK(m->id == (lstm_model_id)id && !strcmp(m->name, names[id]) && lstm_model_named(names[id]) == m,
              "model %d is described as %d '%s'", id, m->id, m->name);
        CHECK(m->summary && m->summary[0], "%s has no summary", m->name);
        CHECK(m->ntensors > 0 && m->ntensors <= MODEL_MAX_TENSORS, "%s: %d tensors", m->name, m->ntensors);
        CHECK(m->dropout >= 0 && m->dropout < 1, "%s: dropout %g", m->name, m->dropout);
        int masks = 0; /* lstm_dropout_mask reads the mask's slot of a model with dropout */
        for (int i = 0; i < m->ntensors; i++)
            masks += m->tensors[i].draw == DRAW_DROPOUT_MASK && m->tensors[i].below_top == 1 &&
                     m->tensors[i].input_at == offsetof(lstm_problem, model_inputs[LSTMCHECK_DROPOUT_MASK]);
        CHECK(masks == (m->dropout > 0), "%s: dropout %g with %d masks between layers", m->name, m->dropout, masks);
        for (int i = 0; i < m->ntensors; i++) {
            const model_tensor *t = &m->tensors[i];
            CHECK(t->name && t->dims[0] != DIM_NONE && (t->below_top == 0 || t->below_top == 1), "%s tensor %d",
                  m->name, i);
            CHECK(t->input_at >= offsetof(lstm_problem, w_ih) && t->input_at < sizeof(lstm_problem),
                  "%s.%s: its input is outside the problem", m->name, t->name);
            CHECK(!t->has_grad || (t->grad_at >= offsetof(lstm_results, dw_ih) && t->grad_at < sizeof(lstm_results)),
                  "%s.%s: its gradient is outside the results", m->name, t->name);
            CHECK(t->stream < INPUT_X || t->stream > INPUT_LENGTHS, "%s.%s: stream %d is a fixed input's", m->name,
                  t->name, t->stream);
            for (int j = 0; j < i; j++)
                CHECK(m->tensors[j].stream != t->stream, "%s: %s and %s share stream %d", m->name,
                      m->tensors[j].name, t->name, t->stream);
        }
        CHECK(m->nsaved > 0 && m->nsaved <= MODEL_MAX_SAVED, "%s: %d saved values", m->name, m->nsaved);
        for (int i = 0; i < m->nsaved; i++) {
            const model_dim w = m->saved[i].width;
            CHECK(m->saved[i].name && (w == DIM_4H || w == DIM_H || w == DIM_NONE), "%s saved value %d", m->name, i);
            for (int j = 0; j < i; j++)
                CHECK(strcmp(m->saved[j].name, m->saved[i].name), "%s saves %s twice", m->name, m->saved[i].name);
        }
    }
    CHECK(!lstm_model_get(MODEL_COUNT) && !lstm_model_get(-1) && !lstm_model_named("nope"), "not models");
    return 0;
}

/* One model's sizes at a shape, against figures worked out by hand. */
static int sizes_are(int model, const lstm_shape *s, const int *lengths, size_t parameters, size_t input_bytes,
                     size_t activation_bytes)
{
    lstm_sizes z;
    lc_error err = {{0}};
    CHECK(!lstm_model_sizes(s, lengths, model, &z, &err), "%s: %s", lstm_model_name(model), err.msg);
    CHECK(z.parameters == parameters && z.parameter_bytes == 4 * parameters, "%s: %zu parameters (%zu bytes), not %zu",
          lstm_model_name(model), z.parameters, z.parameter_bytes, parameters);
    CHECK(z.input_bytes == input_bytes, "%s: inputs %zu bytes, not %zu", lstm_model_name(model), z.input_bytes,
          input_bytes);
    CHECK(z.activation_bytes == activation_bytes, "%s: activations %zu bytes, not %zu", lstm_model_name(model),
          z.activation_bytes, activation_bytes);
    return 0;
}

int test_model_sizes(void)
{
    /* nn.LSTM(512, 512) has 2,101,248 parameters: 4H(I + H) + 8H */
    const lstm_shape d = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1};
    const size_t x_h0_c0 = 4 * (100 * 64 * 512 + 2 * 64 * 512);
    const size_t tape = 4 * 100 * 64 * 6 * 512; /* gates, c, h */
    CHECK(!sizes_are(MODEL_LSTM, &d, NULL, 2101248, x_h0_c0, tape), "lstm at the default shape");
    /* one layer: no mask between layers */
    CHECK(!sizes_are(MODEL_DROPOUT, &d, NULL, 2101248, x_h0_c0, tape), "dropout at one layer");
    /* the LayerNorm cell: no biases, LN_i and LN_h over 4H and LN_c over H,
     * weight and bias each; its tape adds their normalized vectors and 1/std */
    CHECK(!sizes_are(MODEL_LAYERNORM, &d, NULL, 4 * 512 * 1024 + 2 * 2 * 2048 + 2 * 512, x_h0_c0,
                     4 * 100 * 64 * (15 * 512 + 3)),
          "layernorm at the default shape");
    /* T=5 B=2 I=4 H=8, two layers; layer 1's input is H wide */
    const lstm_shape s = {.seq_length = 5, .batch = 2, .input_size = 4, .hidden_size = 8, .num_layers = 2};
    const size_t lstm_params = (32 * 12 + 64) + (32 * 16 + 64);
    const size_t inputs = 4 * (5 * 2 * 4 + 2 * 2 * 2 * 8);
    CHECK(!sizes_are(MODEL_LSTM, &s, NULL, lstm_params, inputs, 4 * 10 * 2 * 48), "lstm, two layers");
    CHECK(!sizes_are(MODEL_DROPOUT, &s, NULL, lstm_params, inputs + 4 * 5 * 2 * 8, 4 * 10 * 2 * 48),
          "dropout: one mask, after layer 0");
    /* lengths 3 and 5: 8 steps run, and the lengths are inputs (an int each) */
    const int lengths[2] = {3, 5};
    CHECK(!sizes_are(MODEL_LSTM, &s, lengths, lstm_params, inputs + 2 * sizeof(int), 4 * 8 * 2 * 48), "lengths");
    CHECK(!sizes_are(MODEL_LAYERNORM, &s, lengths, (32 * 12 + 144) + (32 * 16 + 144), inputs + 2 * sizeof(int),
                     4 * 8 * 2 * (15 * 8 + 3)),
          "layernorm with lengths");
    /* not a model; figures past size_t */
    lstm_sizes z;
    lc_error err = {{0}};
    CHECK(lstm_model_sizes(&s, NULL, MODEL_COUNT, &z, &err) && strstr(err.msg, "not one of"), "model %d: %s",
          (int)MODEL_COUNT, err.msg);
    const lstm_shape huge = {.seq_length = 1000000, .batch = 1000000, .input_size = 1000000, .hidden_size = 1000000,
                             .num_layers = 1000000};
    CHECK(lstm_model_sizes(&huge, NULL, MODEL_LSTM, &z, &err) && strstr(err.msg, "overflow") && !z.parameters,
          "overflow: %s", err.msg);
    return 0;
}
