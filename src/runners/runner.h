/* The runner interface: one LSTM implementation under test.
 * A runner is a table of functions; the registry (registry.c) lists them
 * all, NULL-terminated, and registry_validate() checks every entry. */
#ifndef LSTMCHECK_RUNNER_H
#define LSTMCHECK_RUNNER_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a runner supports. */
enum {
    RUNNER_MULTILAYER = 1u << 0, /* num_layers > 1 */
    RUNNER_VARLEN = 1u << 1,     /* per-sequence lengths */
    RUNNER_BACKWARD = 1u << 2,   /* gradients of inputs and parameters */
    /* Returns only (hy, cy), like the original's jit_simple: y is not
     * produced, and the backward pass is seeded by dhy and dcy (no dy). */
    RUNNER_STATE_ONLY = 1u << 3,
    /* Consumes dhy and dcy in backward besides dy. Informative: the gate
     * seeds dhy and dcy for every runner (gate_seeds in gate.h). */
    RUNNER_STATE_GRADS = 1u << 4,
};

/* Which arithmetic the runner promises; picks the tolerance. */
typedef enum runner_precision {
    PRECISION_FP32 = 0,
    PRECISION_TF32 = 1,
} runner_precision;

/* Runner functions return an lc_status (base/status.h) as int: LC_OK,
 * LC_ERROR (err says why), or LC_UNSUPPORTED (this shape or machine is
 * not supported; err says why). */

typedef struct runner_ops runner_ops;
struct runner_ops {
    const char *name;
    lc_device device;
    const char *description; /* one line */
    unsigned caps;           /* RUNNER_* flags */
    runner_precision precision;
    int max_layers;          /* 0: no limit */

    /* LC_OK when the runner can run on this machine at all. */
    int (*available)(lc_error *why);
    /* Allocate, upload the problem (parameters, x, h0, c0 and the backward
     * seeds) and return an instance; LC_UNSUPPORTED for shapes it
     * cannot take. The problem outlives the instance. */
    int (*create)(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err);
    /* The timed parts. Work may still be in flight on the device when they
     * return: the harness synchronizes through the timer. */
    int (*forward)(void *state, lc_error *err);
    int (*backward)(void *state, lc_error *err); /* after forward */
    /* Gradients accumulate like PyTorch's .grad; this resets them. */
    int (*zero_grads)(void *state, lc_error *err);
    /* Copy outputs (and gradients after backward) into r; waits for the
     * device. Tensors a runner does not produce are left untouched. */
    int (*read_results)(void *state, lstm_results *r, lc_error *err);
    /* Device bytes the instance holds at its peak (0 for CPU runners). */
    size_t (*peak_device_bytes)(void *state);
    void (*destroy)(void *state);

    /* What create() needs to know which runner it is, where several runners
     * share one implementation (a row of kernels/runner_cublas.cu, say);
     * NULL otherwise. */
    const void *impl;
};

/* NULL-terminated table of every runner built in, in roster order
 * (runners/runners.def). */
extern const runner_ops *const lstm_runners[];

/* What the roster says a runner is for (runners/runners.def). */
enum {
    ROLE_LSTM_GROUP = 1u << 0, /* in its device's default group */
    ROLE_VL_GROUP = 1u << 1,   /* in its device's variable-length group */
    ROLE_PERF = 1u << 2,       /* in the perf matrix */
};
unsigned runner_roles(const runner_ops *r);

const runner_ops *registry_find(const char *name);
/* 0 when every entry is complete and names are unique; else err says which. */
int registry_validate(const runner_ops *const *table, lc_error *err);
/* LC_OK when r can take this problem's shape (caps, layers); else why. */
int runner_supports_shape(const runner_ops *r, const lstm_problem *p, lc_error *why);

#ifdef __cplusplus
}
#endif
#endif
