/* The runner interface: one LSTM implementation under test.
 * A runner is a table of functions; the registry (registry.c) lists the
 * built-in ones, NULL-terminated, and those loaded from plugins, and
 * registry_validate() checks every entry. */
#ifndef LSTMCHECK_RUNNER_H
#define LSTMCHECK_RUNNER_H

#include "device/device.h"
#include "lstmcheck/runner.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A runner is a table of the runner ABI (include/lstmcheck/runner.h: its
 * fields, what each function must do, and what they return): built-in
 * runners and those loaded from plugins (runners/plugin.h) are the same
 * type. This code base calls it and its constants by short names. */
typedef lstmcheck_runner runner_ops;

/* What a runner supports (caps). */
enum {
    RUNNER_MULTILAYER = LSTMCHECK_MULTILAYER,
    RUNNER_VARLEN = LSTMCHECK_VARLEN,
    RUNNER_BACKWARD = LSTMCHECK_BACKWARD,
    RUNNER_STATE_ONLY = LSTMCHECK_STATE_ONLY,
    RUNNER_STATE_GRADS = LSTMCHECK_STATE_GRADS,
    RUNNER_LIBRARY_DECIDES = LSTMCHECK_LIBRARY_DECIDES,
    RUNNER_OWN_MASK = LSTMCHECK_OWN_MASK,
    RUNNER_KNOWN_CAPS = RUNNER_MULTILAYER | RUNNER_VARLEN | RUNNER_BACKWARD | RUNNER_STATE_ONLY | RUNNER_STATE_GRADS |
                        RUNNER_LIBRARY_DECIDES | RUNNER_OWN_MASK,
};

/* The model the gate checks r against: its own, or nn.LSTM (p = 0) for a
 * runner that applies a dropout mask of its own (RUNNER_OWN_MASK), which
 * no reference can have. Its timing runs on its own model's problems. */
int runner_checked_model(const runner_ops *r);
/* 1 when r's timed results on shape s cannot be compared with a reference:
 * a RUNNER_OWN_MASK runner on two layers or more, where its own mask sits
 * between them (at one layer p drops nothing: its timed results are nn.LSTM's
 * and compared as such). buf: the label every output gives that timing,
 * "dropout p=0.4 with its own mask: unchecked at p > 0 (checked at p = 0)";
 * else 0 and buf "". */
int runner_timing_unchecked(const runner_ops *r, const lstm_shape *s, char *buf, size_t n);

/* Which arithmetic the runner promises; picks the tolerance. Macros, not
 * enumerators of another enum: C++ (kernels/) assigns them to the field. */
typedef lstmcheck_precision runner_precision;
#define PRECISION_FP32 LSTMCHECK_FP32
#define PRECISION_TF32 LSTMCHECK_TF32

/* Runner functions return an lc_status (base/status.h) as int: LC_OK,
 * LC_ERROR (err says why), or LC_UNSUPPORTED (this shape or machine is
 * not supported; err says why); the ABI's LSTMCHECK_* values are these. */

/* The model each built-in runner computes, from the roster: its table
 * says .model = RUNNER_MODEL_OF(name). */
enum {
#define LSTM_RUNNER(name, device, model, roles) RUNNER_MODEL_OF_##name = MODEL_NAMED_##model,
#include "runners/runners.def"
#undef LSTM_RUNNER
};
#define RUNNER_MODEL_OF(name) RUNNER_MODEL_OF_##name

/* NULL-terminated table of every runner built in, in roster order
 * (runners/runners.def). */
extern const runner_ops *const lstm_runners[];

/* What the roster says a runner is for (runners/runners.def); a plugin's
 * runner is in every group it can take and in the perf matrix. */
enum {
    ROLE_LSTM_GROUP = 1u << 0, /* in its device's default group */
    ROLE_VL_GROUP = 1u << 1,   /* in its device's variable-length group */
    ROLE_PERF = 1u << 2,       /* in the perf matrix */
    /* runs in a child process of its own, as a plugin's runner does (unless
     * LSTMCHECK_ISOLATE=0): its library starts OpenMP threads, after which
     * any child forked that uses OpenMP would hang (device/openmp.h) */
    ROLE_OWN_PROCESS = 1u << 3,
};
unsigned runner_roles(const runner_ops *r);

/* At most this many runners are loaded from plugins, all plugins together. */
#define REGISTRY_MAX_LOADED 64

/* A built-in runner or one loaded from a plugin, by name; NULL if none. */
const runner_ops *registry_find(const char *name);
/* Register r, loaded from the plugin file origin (both must live as long
 * as the process); LC_BAD_INPUT when the name is taken. */
lc_status registry_add(const runner_ops *r, const char *origin, lc_error *err);
/* The plugin file r was loaded from; NULL for a built-in runner. */
const char *registry_origin(const runner_ops *r);
/* The oneDNN the onednn runner is built against and runs on ("2.7.3,
 * built with 2.7.3"), or why it is not built (lstmcheck --version). */
void onednn_describe_version(char *buf, size_t n);
/* The i-th runner: the built-in ones, then those loaded; NULL past the last. */
const runner_ops *registry_runner(int i);
/* The i-th runner a command takes when none are named (its device and roles
 * still to be matched): with plugins loaded, theirs (the user came to check
 * those); else the built-in ones. NULL past the last. */
const runner_ops *registry_default_runner(int i);
/* 1 when name is a runner's: [a-z0-9_]+, or a plugin runner's qualified
 * <plugin>:<runner> (each part [a-z0-9_]+), at most
 * LSTMCHECK_QUALIFIED_NAME_MAX characters; else 0. */
int runner_name_valid(const char *name);
/* 0 when every entry is complete and names are unique; else err says which. */
int registry_validate(const runner_ops *const *table, lc_error *err);
/* LC_OK when r can take this shape, with these lengths (NULL: fixed
 * length), by its caps and layers; else why. */
int runner_supports_shape(const runner_ops *r, const lstm_shape *s, const int *lengths, lc_error *why);

#ifdef __cplusplus
}
#endif
#endif
