/* lstmcheck's runner interface: what an LSTM implementation ("runner")
 * gives lstmcheck so that it can be checked against the reference LSTM and
 * timed. The built-in runners of lstmcheck are tables of this type too: one
 * definition, used alike inside and outside lstmcheck.
 *
 * A plugin is a shared library that defines one or more runners and ends
 * with LSTMCHECK_PLUGIN(...) (bottom of this file); lstmcheck loads it with
 *
 *     lstmcheck check --plugin ./libmylstm.so
 *
 * and gates every runner of it (outputs and gradients against the
 * reference, element by element) before it times any. Guide and example:
 * examples/cpu_lstm_plugin/README.md in lstmcheck's source tree.
 *
 * The layout and meaning of everything below is the runner ABI, versioned
 * by LSTMCHECK_RUNNER_ABI_VERSION. lstmcheck loads a plugin built with its
 * own version or an earlier one, when the sizes of the structs are those of
 * that version; any change to this file that moves a field or changes what
 * one means raises the version. Versions only append fields, so a plugin of
 * version 1 reads the start of every struct it is given as it always did
 * (its runners compute the plain LSTM, LSTMCHECK_MODEL_LSTM).
 *
 * Self-contained: C99 or later, or C++; nothing to link against. Linux
 * (dlopen). Tensors are row-major float; results are read back as double. */
#ifndef LSTMCHECK_PUBLIC_RUNNER_H
#define LSTMCHECK_PUBLIC_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LSTMCHECK_RUNNER_ABI_VERSION 2

/* What runner functions return (as int). The values are those of
 * lstmcheck's own status vocabulary, which has more members that runners
 * never return. Anything else counts as LSTMCHECK_ERROR. */
enum {
    LSTMCHECK_OK = 0,
    LSTMCHECK_ERROR = 1,       /* it broke: err says why (the runner is reported as ERROR) */
    LSTMCHECK_UNSUPPORTED = 4, /* not this shape, or not on this machine: err says why (a skip) */
};

/* Where a runner says why. lstmcheck always passes one; write a single line
 * (no newline), e.g. snprintf(err->msg, sizeof err->msg, "...", ...). */
typedef struct lstmcheck_error {
    char msg[512];
} lstmcheck_error;

/* The LSTM a runner computes is PyTorch's nn.LSTM: gates in the order
 * i, f, g, o; per layer l the weights W_ih (4H x I_l), W_hh (4H x H) and two
 * biases b_ih, b_hh (4H), where I_0 = I and I_l = H for l > 0. Tensors are
 * row-major: x (T,B,I), y (T,B,H), h0, c0, hy, cy (L,B,H).
 *
 * Or one of its variants, the runner's model (version 2): */
enum {
    LSTMCHECK_MODEL_LSTM = 0, /* nn.LSTM as above (what every runner of version 1 computes) */
    /* nn.LSTM(dropout=0.4): the output of every layer but the last is
     * multiplied by a mask, model_inputs[LSTMCHECK_DROPOUT_MASK][l] for
     * l in 0..L-2 (T*B*H each, every element 0 or 1/(1-0.4) as a float),
     * before it feeds layer l+1; y, hy and cy are not masked. The backward
     * pass multiplies the gradient flowing down by the same mask. */
    LSTMCHECK_MODEL_DROPOUT = 1,
    /* The LayerNorm LSTM (PyTorch fastrnns' LayerNormLSTMCell), per layer
     * and step, with LN(v) = (v - mean(v)) / sqrt(var(v) + 1e-5) * weight
     * + bias (var biased, over the vector's own length):
     *   gates = LN_i(W_ih x_t) + LN_h(W_hh h_{t-1}), split i, f, g, o (4H each LN)
     *   c_t = LN_c(sigmoid(f) c_{t-1} + sigmoid(i) tanh(g))         (over H)
     *   h_t = sigmoid(o) tanh(c_t)
     * c_t is the state (cy, and the next step's c_{t-1}). There is no b_ih
     * or b_hh: the problem's b_ih, b_hh and the results' db_ih, db_hh are
     * NULL; the LayerNorms' biases replace them. Their weights and biases
     * are model_inputs[LSTMCHECK_LN_*][l], their gradients
     * model_grads[LSTMCHECK_LN_*][l]. Runners of it are given shapes with
     * I >= 3 and H >= 4 only (below, a LayerNorm keeps one degree of
     * freedom or none, and FP32 cannot resolve its gradients: lstmcheck
     * skips them). */
    LSTMCHECK_MODEL_LAYERNORM = 2,
};

/* A model's tensors beyond nn.LSTM's sit in the problem's model_inputs
 * (and their gradients, for parameters, in the results' model_grads), by
 * these indices; each slot holds L pointers (or L-1, as the model says). */
#define LSTMCHECK_MODEL_SLOTS 8
enum {
    LSTMCHECK_DROPOUT_MASK = 0, /* LSTMCHECK_MODEL_DROPOUT: inputs only, no gradient */
    /* LSTMCHECK_MODEL_LAYERNORM: parameters (4H, 4H, 4H, 4H, H, H) */
    LSTMCHECK_LN_I_WEIGHT = 1, LSTMCHECK_LN_I_BIAS = 2, /* LN_i, on W_ih x_t */
    LSTMCHECK_LN_H_WEIGHT = 3, LSTMCHECK_LN_H_BIAS = 4, /* LN_h, on W_hh h_{t-1} */
    LSTMCHECK_LN_C_WEIGHT = 5, LSTMCHECK_LN_C_BIAS = 6, /* LN_c, on the cell */
};
typedef struct lstmcheck_shape {
    int seq_length;  /* T: the longest sequence when lengths are given */
    int batch;       /* B */
    int input_size;  /* I */
    int hidden_size; /* H */
    int num_layers;  /* L */
} lstmcheck_shape;

/* The inputs of one problem: read them, never write them. They outlive the
 * runner instance made from them. */
typedef struct lstmcheck_problem {
    lstmcheck_shape shape;
    /* B lengths in 1..T (PyTorch's packed sequences: sequence b has steps
     * 0..lengths[b]-1; y is zero after its end and hy, cy are taken at its
     * last step), or NULL: every sequence is T long. Only for runners with
     * LSTMCHECK_VARLEN. */
    int *lengths;
    float **w_ih, **w_hh, **b_ih, **b_hh; /* L pointers each */
    float *x;                             /* T*B*I */
    float *h0, *c0;                       /* L*B*H */
    /* The backward pass's seeds, for the loss
     *   sum(y*dy) + sum(hy*dhy) + sum(cy*dcy);
     * NULL means zero. A LSTMCHECK_STATE_ONLY runner gets dy == NULL. */
    float *dy;        /* T*B*H */
    float *dhy, *dcy; /* L*B*H */
    /* version 2: the runner's model, and its own tensors (NULL where the
     * model has none; the plain LSTM has none) */
    int model;
    float **model_inputs[LSTMCHECK_MODEL_SLOTS];
} lstmcheck_problem;

/* Where read_results() puts outputs and gradients, allocated by lstmcheck
 * (double, so that the reference keeps its precision: convert on read-back).
 * Gradients are of the loss above, accumulated since the last zero_grads().
 * Every element starts as NaN: write each one of every tensor the runner
 * produces, the zeros of y past a sequence's end included. */
typedef struct lstmcheck_results {
    lstmcheck_shape shape;
    double *y;        /* T*B*H */
    double *hy, *cy;  /* L*B*H */
    double *dx;       /* T*B*I */
    double *dh0, *dc0; /* L*B*H */
    double **dw_ih, **dw_hh, **db_ih, **db_hh; /* L pointers each */
    /* version 2: the model, and the gradients of its own parameters (in
     * the slots of their model_inputs; NULL for inputs without one) */
    int model;
    double **model_grads[LSTMCHECK_MODEL_SLOTS];
} lstmcheck_results;

/* What a runner can do (its caps): lstmcheck gives it only problems it says
 * it takes, and checks every tensor it says it produces. */
enum {
    LSTMCHECK_MULTILAYER = 1u << 0, /* num_layers > 1 */
    LSTMCHECK_VARLEN = 1u << 1,     /* per-sequence lengths */
    LSTMCHECK_BACKWARD = 1u << 2,   /* gradients of inputs and parameters */
    /* Produces only (hy, cy), not y; the backward pass is seeded by dhy and
     * dcy alone (dy is NULL). */
    LSTMCHECK_STATE_ONLY = 1u << 3,
    /* Consumes dhy and dcy in backward besides dy. Informative: lstmcheck
     * seeds them for every runner, and checks the gradients they cause. */
    LSTMCHECK_STATE_GRADS = 1u << 4,
    /* A library it calls decides at create() which shapes it takes within
     * these caps (cuDNN's persistent algorithm, taken for some shapes only):
     * its refusal, LSTMCHECK_UNSUPPORTED naming the library's status in err
     * (its enumerator, such as CUDNN_STATUS_NOT_SUPPORTED_SHAPE),
     * stays a skip where a GPU proof (LSTMCHECK_REQUIRE_GPU=1) fails every
     * other skip inside the caps. */
    LSTMCHECK_LIBRARY_DECIDES = 1u << 5,
    /* Of a LSTMCHECK_MODEL_DROPOUT runner only: it applies a dropout mask
     * of its own (a library's, such as cuDNN's), not the problem's, which
     * lstmcheck cannot see. lstmcheck checks it at p = 0, where dropout is
     * the identity: on problems of LSTMCHECK_MODEL_LSTM, which it must
     * compute as nn.LSTM. It times it on problems of its model, at p = 0.4
     * (the problem's masks are then to be ignored): on one layer, where
     * nothing is dropped, those results are compared with nn.LSTM; on more,
     * with nothing, and every output labels that timing unchecked at p > 0.
     * Such a runner returns y (not LSTMCHECK_STATE_ONLY). */
    LSTMCHECK_OWN_MASK = 1u << 6,
};

/* Where a runner runs (its device field). */
enum {
    LSTMCHECK_CPU = 0,
    LSTMCHECK_CUDA = 1,
};

/* The arithmetic a runner promises; it sets the tolerance of the check. */
typedef enum lstmcheck_precision {
    LSTMCHECK_FP32 = 0,
    LSTMCHECK_TF32 = 1, /* FP32 storage, TF32 matrix products */
} lstmcheck_precision;

/* One runner: what it is and its functions. Every function but available()
 * is required (backward and zero_grads only with LSTMCHECK_BACKWARD). */
typedef struct lstmcheck_runner lstmcheck_runner;
struct lstmcheck_runner {
    const char *name;        /* [a-z0-9_]+; lstmcheck shows it as <plugin>:<name> */
    int device;              /* LSTMCHECK_CPU or LSTMCHECK_CUDA */
    const char *description; /* one line */
    unsigned caps;           /* LSTMCHECK_MULTILAYER | ... */
    lstmcheck_precision precision;
    int max_layers;          /* 0: no limit */

    /* LSTMCHECK_OK when the runner can run on this machine at all;
     * LSTMCHECK_UNSUPPORTED (a skip) or LSTMCHECK_ERROR with why. Called in
     * lstmcheck's own process, which later forks a child per runner: it must
     * not initialize a GPU (no CUDA call). A plugin may leave it NULL:
     * lstmcheck then probes the device itself (a "cuda" runner skips where
     * no CUDA device is). */
    int (*available)(lstmcheck_error *why);
    /* Make an instance for problem p: allocate, upload the parameters, x,
     * h0, c0 and the backward seeds, and set *state. self is the table
     * lstmcheck holds for this runner (a copy of yours, its name qualified):
     * runners that share one implementation tell themselves apart by
     * self->impl. LSTMCHECK_UNSUPPORTED for a shape it cannot take. */
    int (*create)(const lstmcheck_runner *self, const lstmcheck_problem *p, void **state,
                  lstmcheck_error *err);
    /* The timed parts. Work may still be in flight on the device when they
     * return: lstmcheck's timer synchronizes. */
    int (*forward)(void *state, lstmcheck_error *err);
    int (*backward)(void *state, lstmcheck_error *err); /* after forward */
    /* Gradients accumulate over backward calls, as PyTorch's .grad does;
     * this resets them to zero. */
    int (*zero_grads)(void *state, lstmcheck_error *err);
    /* Copy outputs (and gradients, after backward) into r, waiting for the
     * device. Tensors the runner does not produce are left untouched. */
    int (*read_results)(void *state, lstmcheck_results *r, lstmcheck_error *err);
    /* Device bytes the instance holds at its peak (0 for a CPU runner). */
    size_t (*peak_device_bytes)(void *state);
    void (*destroy)(void *state);

    /* Yours: lstmcheck never reads it (see create). */
    const void *impl;

    /* version 2: what it computes, LSTMCHECK_MODEL_LSTM (0) or a variant;
     * lstmcheck gives it problems of this model and checks it against
     * that model's reference. */
    int model;
};

/* ---- plugins ---- */

/* The plugin's description, read by lstmcheck after the ABI version
 * matched. LSTMCHECK_PLUGIN fills it; the sizes let lstmcheck refuse a
 * plugin whose copy of this header differs from its own at the same
 * version. */
typedef struct lstmcheck_plugin {
    uint32_t runner_size, problem_size, results_size, error_size;
    const char *name; /* [a-z0-9_]+: runner names become <name>:<runner name> */
    const lstmcheck_runner *const *runners; /* NULL-terminated */
} lstmcheck_plugin;

/* The two symbols a plugin exports, by name. */
#define LSTMCHECK_PLUGIN_ABI_SYMBOL "lstmcheck_plugin_abi_version"
#define LSTMCHECK_PLUGIN_INFO_SYMBOL "lstmcheck_plugin_info"

/* Plugin name and runner name together, with the ':' between them, are at
 * most this long (they key baseline entries). */
#define LSTMCHECK_QUALIFIED_NAME_MAX 31

#ifdef __cplusplus
#define LSTMCHECK_PLUGIN_LINKAGE extern "C" __attribute__((visibility("default")))
#else
#define LSTMCHECK_PLUGIN_LINKAGE __attribute__((visibility("default")))
#endif

/* Once per plugin, at file scope:
 *
 *     static const lstmcheck_runner *const my_runners[] = {&my_lstm, NULL};
 *     LSTMCHECK_PLUGIN("mylstm", my_runners);
 *
 * exports the ABI version this file has and the plugin's description. */
#define LSTMCHECK_PLUGIN(plugin_name, runner_table)                                                  \
    LSTMCHECK_PLUGIN_LINKAGE const uint32_t lstmcheck_plugin_abi_version = LSTMCHECK_RUNNER_ABI_VERSION; \
    LSTMCHECK_PLUGIN_LINKAGE const lstmcheck_plugin lstmcheck_plugin_info = {                        \
        sizeof(lstmcheck_runner), sizeof(lstmcheck_problem), sizeof(lstmcheck_results),             \
        sizeof(lstmcheck_error), plugin_name, runner_table}

#ifdef __cplusplus
}
#endif
#endif
