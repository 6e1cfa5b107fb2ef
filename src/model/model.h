/* A model: what a runner computes, as a value. nn.LSTM and its variants
 * each have one descriptor: their per-layer tensors (names, shapes, how
 * they are drawn from the seed, which have gradients) and their constants.
 * The bundles (model/lstm.h), the generator (model/inputs.h), the
 * reference (model/reference.h), the gate and --dump read the descriptor
 * and nothing else about a model. The list: model/models.def. */
#ifndef LSTMCHECK_MODEL_H
#define LSTMCHECK_MODEL_H

#include <stddef.h>

#include "lstmcheck/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lstm_model_id {
#define LSTM_MODEL(ID, name) MODEL_##ID = LSTMCHECK_MODEL_##ID,
#include "model/models.def"
#undef LSTM_MODEL
} lstm_model_id;

/* How many models there are: the ABI's numbers run 0..MODEL_COUNT-1. */
enum {
#define LSTM_MODEL(ID, name) MODEL_INDEX_##ID,
#include "model/models.def"
#undef LSTM_MODEL
    MODEL_COUNT
};

/* MODEL_NAMED_<name>: the id of the model the roster names in lowercase. */
enum {
#define LSTM_MODEL(ID, name) MODEL_NAMED_##name = MODEL_##ID,
#include "model/models.def"
#undef LSTM_MODEL
};

/* What a tensor's dimensions are made of (per layer l). */
typedef enum model_dim {
    DIM_NONE = 0, /* no such dimension */
    DIM_T,        /* seq_length */
    DIM_B,        /* batch */
    DIM_IN,       /* the layer's input size: I for layer 0, H above */
    DIM_H,
    DIM_4H,
} model_dim;

/* How a tensor is drawn from the seed (docs/inputs.md). */
typedef enum model_draw {
    DRAW_WEIGHT,       /* uniform(-1/sqrt(H), 1/sqrt(H)): nn.LSTM's initialization */
    DRAW_DROPOUT_MASK, /* 0 with the model's dropout probability p, else (float)(1/(1-p)) */
    /* a LayerNorm's weight and bias: uniform(1/2, 3/2) and uniform(-1/2, 1/2),
     * not PyTorch's ones and zeros, so that a runner which leaves either
     * out (or swaps them) is wrong by a margin the gate sees */
    DRAW_LN_WEIGHT,
    DRAW_LN_BIAS,
} model_draw;

/* One per-layer tensor of a model: a parameter (with a gradient) or an
 * extra input (a mask, without one). */
typedef struct model_tensor {
    const char *name;     /* "w_ih": per layer "w_ih.0", its gradient "dw_ih.0" */
    int below_top;        /* 0: one per layer; 1: one per layer but the last (between layers) */
    model_dim dims[3];    /* DIM_NONE after the last */
    int stream;           /* its stream in the generator (INPUT_* of model/inputs.h) */
    model_draw draw;
    int has_grad;
    size_t input_at;      /* where its float ** sits in lstm_problem */
    size_t grad_at;       /* where its double ** sits in lstm_results (has_grad) */
} model_tensor;

#define MODEL_MAX_TENSORS 12

/* A value the model's backward reads from its forward, per step, sequence
 * and layer, each counted once (its tape): what a runner must keep between
 * the phases at the least. Values a step recomputes cheaply from kept ones
 * (tanh(c), a masked output) are not listed. The sizes `list` and bench
 * give count it (lstm_model_sizes, docs/profiling.md). */
typedef struct model_saved {
    const char *name;  /* "gates" */
    model_dim width;   /* values per row: DIM_4H, DIM_H, or DIM_NONE for one */
} model_saved;

#define MODEL_MAX_SAVED 12

typedef struct lstm_model {
    lstm_model_id id;
    const char *name;        /* "lstm", "dropout", "layernorm" */
    const char *summary;     /* one line, for `list` and dumps */
    int ntensors;
    model_tensor tensors[MODEL_MAX_TENSORS];
    int nsaved;
    model_saved saved[MODEL_MAX_SAVED];
    double dropout;          /* the probability of its masks' zeros; 0 without masks */
    double layernorm_eps;    /* LayerNorm's epsilon in the variance; 0: no LayerNorm */
    /* What it adds to the tolerance's N (docs/tolerance.md): its rounded
     * operations per step and layer beyond the LSTM's, in units of H, in
     * the forward pass and in the backward pass */
    int depth_forward_h, depth_backward_h;
    /* 1: its gates read the pre-activations normalized (a LayerNorm), so
     * their size, and their rounding error's, does not grow with I; 0:
     * the rule's N grows with (I + H) / 2H (docs/tolerance.md) */
    int preactivations_normalized;
    /* Its domain: the smallest input and hidden sizes at which its
     * gradients are checkable in FP32 (0: any), and why, for the skip */
    int min_input_size, min_hidden_size;
    const char *outside_domain_why;
    /* 1: its rule also allows for the problem's own sensitivity, measured
     * as how far the reference moves when every input moves by one FP32
     * ulp (lstm_inputs_move) and FP32's roundings inside it are sampled
     * (lstm_reference_run_rounded; docs/tolerance.md): for a model whose
     * recurrence can amplify a rounding more than the count of its
     * operations says */
    int moved_reference;
} lstm_model;
/* How many moved references such a model gets: a move is the sum of many
 * roundings' effects, and one draw can leave it near zero where most
 * draws move it 30 times more (docs/tolerance.md); the rule takes the
 * largest of three, element by element. */
#define MODEL_MOVED_DRAWS 3

/* The descriptor of model id; NULL when id is not a model. */
const lstm_model *lstm_model_get(int id);
/* By name ("lstm"); NULL when none has it. */
const lstm_model *lstm_model_named(const char *name);
/* "0 lstm, 1 dropout": the models by number, for messages; returns buf. */
const char *lstm_model_list(char *buf, size_t n);
/* "lstm", or "?" when id is not a model. */
const char *lstm_model_name(int id);

#ifdef __cplusplus
}
#endif
#endif
