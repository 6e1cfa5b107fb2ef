/* The models' descriptors (see model.h). */
#include "model/model.h"

#include "model/inputs.h"
#include "model/lstm.h"

#include <stdio.h>
#include <string.h>

/* The ABI numbers the models in models.def's order, from 0 */
#define LSTM_MODEL(ID, name) \
    _Static_assert((int)MODEL_##ID == (int)MODEL_INDEX_##ID, "models.def lists the models in the ABI's order");
#include "model/models.def"
#undef LSTM_MODEL

#define PARAM(NAME, STREAM, D0, D1, FIELD)                                                                 \
    {.name = NAME, .dims = {D0, D1, DIM_NONE}, .stream = STREAM, .draw = DRAW_WEIGHT, .has_grad = 1,    \
     .input_at = offsetof(lstm_problem, FIELD), .grad_at = offsetof(lstm_results, d##FIELD)}

/* nn.LSTM's per-layer parameters, in the order its state_dict has them */
#define LSTM_WEIGHTS PARAM("w_ih", INPUT_W_IH, DIM_4H, DIM_IN, w_ih), PARAM("w_hh", INPUT_W_HH, DIM_4H, DIM_H, w_hh)
#define LSTM_PARAMETERS                                                                                    \
    LSTM_WEIGHTS, PARAM("b_ih", INPUT_B_IH, DIM_4H, DIM_NONE, b_ih), PARAM("b_hh", INPUT_B_HH, DIM_4H, DIM_NONE, b_hh)

/* A parameter of a model's own, a vector in a slot of the ABI */
#define SLOT_PARAM(NAME, STREAM, DRAW, D0, SLOT)                                                           \
    {.name = NAME, .dims = {D0, DIM_NONE, DIM_NONE}, .stream = STREAM, .draw = DRAW, .has_grad = 1,       \
     .input_at = offsetof(lstm_problem, model_inputs[SLOT]), .grad_at = offsetof(lstm_results, model_grads[SLOT])}

/* The LayerNorm LSTM's three LayerNorms, in the original's order
 * (layernorm_i, layernorm_h, layernorm_c), weight before bias */
#define LAYERNORM_PARAMETERS                                                                               \
    SLOT_PARAM("ln_i_weight", INPUT_LN_I_WEIGHT, DRAW_LN_WEIGHT, DIM_4H, LSTMCHECK_LN_I_WEIGHT),          \
    SLOT_PARAM("ln_i_bias", INPUT_LN_I_BIAS, DRAW_LN_BIAS, DIM_4H, LSTMCHECK_LN_I_BIAS),                  \
    SLOT_PARAM("ln_h_weight", INPUT_LN_H_WEIGHT, DRAW_LN_WEIGHT, DIM_4H, LSTMCHECK_LN_H_WEIGHT),          \
    SLOT_PARAM("ln_h_bias", INPUT_LN_H_BIAS, DRAW_LN_BIAS, DIM_4H, LSTMCHECK_LN_H_BIAS),                  \
    SLOT_PARAM("ln_c_weight", INPUT_LN_C_WEIGHT, DRAW_LN_WEIGHT, DIM_H, LSTMCHECK_LN_C_WEIGHT),           \
    SLOT_PARAM("ln_c_bias", INPUT_LN_C_BIAS, DRAW_LN_BIAS, DIM_H, LSTMCHECK_LN_C_BIAS)

/* The LSTM's tape: the activated gates i, f, g, o, the cell c_t (the next
 * step's c_{t-1}, and tanh(c_t) again) and the output h_t (the next step's
 * h_{t-1} and the next layer's input; the top layer's is y) */
#define LSTM_SAVED {"gates", DIM_4H}, {"c", DIM_H}, {"h", DIM_H}
/* and the LayerNorm LSTM's: each LayerNorm's normalized vector before its
 * weight and bias, and its 1/sqrt(var + eps) */
#define LAYERNORM_SAVED                                                                                    \
    {"ln_i_hat", DIM_4H}, {"ln_h_hat", DIM_4H}, {"ln_c_hat", DIM_H},                                      \
    {"ln_i_rstd", DIM_NONE}, {"ln_h_rstd", DIM_NONE}, {"ln_c_rstd", DIM_NONE}

static const lstm_model models[MODEL_COUNT] = {
    [MODEL_LSTM] = {
        .id = MODEL_LSTM, .name = "lstm", .summary = "PyTorch's nn.LSTM",
        .ntensors = 4, .tensors = {LSTM_PARAMETERS},
        .nsaved = 3, .saved = {LSTM_SAVED},
    },
    [MODEL_DROPOUT] = {
        .id = MODEL_DROPOUT, .name = "dropout",
        .summary = "nn.LSTM(dropout=0.4): a drawn mask on every layer's output but the last",
        .ntensors = 5,
        .tensors = {LSTM_PARAMETERS,
                    {.name = "dropout_mask", .below_top = 1, .dims = {DIM_T, DIM_B, DIM_H},
                     .stream = INPUT_DROPOUT_MASK, .draw = DRAW_DROPOUT_MASK,
                     .input_at = offsetof(lstm_problem, model_inputs[LSTMCHECK_DROPOUT_MASK])}},
        .nsaved = 3, .saved = {LSTM_SAVED}, /* the mask is an input; the masked output is h times it */
        .dropout = 0.4, /* the original's (fastrnns' factory) */
    },
    [MODEL_LAYERNORM] = {
        .id = MODEL_LAYERNORM, .name = "layernorm",
        .summary = "the original's LayerNormLSTMCell: LayerNorm on both gate GEMMs and on the cell, no b_ih, b_hh",
        .ntensors = 8, .tensors = {LSTM_WEIGHTS, LAYERNORM_PARAMETERS},
        .nsaved = 9, .saved = {LSTM_SAVED, LAYERNORM_SAVED},
        .layernorm_eps = 1e-5, /* nn.LayerNorm's default, which the original uses */
        /* a mean and a variance over 4H for LN_i and LN_h each, and over H
         * for LN_c, forward; two means of the same lengths backward */
        .depth_forward_h = 18, .depth_backward_h = 18,
        .preactivations_normalized = 1, /* LN_i and LN_h, over 4H */
        .min_input_size = 3, .min_hidden_size = 4,
        .outside_domain_why = "LayerNorm ignores its input's scale (and LN_c its mean), so below these sizes "
                              "LN_i, LN_h or LN_c keeps one degree of freedom or none, and a correct FP32 "
                              "runner's gradients can miss by more than any rule that still catches faults "
                              "(docs/tolerance.md)",
        .moved_reference = 1, /* its LayerNorms can amplify a rounding from step to step */
    },
};

/* a model of models.def whose descriptor is missing has no name: it is
 * not a model (unit.models_described says which) */
const lstm_model *lstm_model_get(int id)
{
    return id >= 0 && id < MODEL_COUNT && models[id].name ? &models[id] : NULL;
}

const lstm_model *lstm_model_named(const char *name)
{
    for (int i = 0; i < MODEL_COUNT; i++)
        if (models[i].name && !strcmp(models[i].name, name))
            return &models[i];
    return NULL;
}

const char *lstm_model_name(int id)
{
    const lstm_model *m = lstm_model_get(id);
    return m ? m->name : "?";
}

const char *lstm_model_list(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < MODEL_COUNT && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%d %s", i ? ", " : "", i, lstm_model_name(i));
    return buf;
}
