/* What every command does first: resolve the device and the runners,
 * check the shape and the memory it needs, and draw the lengths. */
#ifndef LSTMCHECK_SESSION_H
#define LSTMCHECK_SESSION_H

#include "cmd/cli.h"
#include "runners/group.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct session_runner {
    const runner_ops *runner;
    runner_group group;
} session_runner;

typedef struct session {
    lc_device device;               /* resolved from auto */
    session_runner runners[CLI_MAX_RNNS * 2];
    int nrunners;
    int *vl_lengths;                /* lengths of the vl group (NULL: none) */
    lstm_shape vl_shape;            /* the vl group's shape (T = longest allowed) */
} session;

/* CLI_DEVICE_AUTO becomes cuda when a CUDA device exists (usable or
 * broken), else cpu; a device asked for is kept. */
lc_device session_resolve_device(int requested);

/* LC_BAD_INPUT when the device asked for cannot be in this binary (cuda
 * in a build without CUDA); a CUDA build without a GPU is fine: its GPU
 * runners report themselves skipped. */
lc_status session_check_device(int requested, lc_error *err);

/* The paths a command will write (the flag table's outputs: cli_outputs),
 * checked before any work: each can be written (a folder made where
 * missing), and no two name one place. LC_OK, or LC_BAD_INPUT with a
 * one-line reason that names the flag and the path. Leaves nothing
 * behind. */
lc_status session_check_outputs(const cli_options *o, lc_error *err);

/* What a session is asked for: the part of the command line it reads. */
typedef struct session_request {
    int device;                    /* an lc_device, or CLI_DEVICE_AUTO */
    lstm_shape shape;
    const char *const *rnns;       /* nrnns names; none: the device's default group */
    int nrnns;
    int variable_lstms;            /* add the variable-length group */
    const int *lengths;            /* nlengths explicit lengths, or none */
    int nlengths;
    uint64_t seed;                 /* draws the variable-length group's lengths */
} session_request;

session_request session_request_from(const cli_options *o);

/* LC_OK when the shape is valid and no explicit length exceeds its
 * seqLength; else LC_BAD_INPUT with a one-line reason. */
lc_status session_check_shape(const lstm_shape *shape, const int *lengths, int nlengths, lc_error *err);

/* LC_OK; LC_BAD_INPUT with err for bad input (an unknown runner, a shape
 * too large for this machine, ...); LC_ERROR when out of memory. */
lc_status session_setup(const session_request *rq, session *s, lc_error *err);
void session_free(session *s);

/* The child timeout of this command (base/proc.h: how long a child may
 * stay in one call of a plugin or of the CUDA probe), in seconds, 0 for
 * none: --child-timeout; else CLI_CHILD_TIMEOUT_S, or the command's
 * --time-budget or --max-seconds where larger: a budget bounds a runner's
 * sampling, never one call (the harness looks at the clock between calls),
 * so a call as long as the whole budget is no reason to kill it. */
double session_child_timeout(const cli_options *o);

/* The commit this program was built from (main.c has it from
 * cmake/build_commit.cmake): set once at start, read by what collects a
 * run's context (perf/context.h). "unknown" until set. */
void session_set_built_from(const char *commit);
const char *session_built_from(void);

/* 0 when a run of model `model` (-1: of any model) at the shape fits in
 * this machine's memory (LSTM_HOST_MEMORY_SHARE of it: the rest is the
 * system's and the other processes'), with a runner's share
 * (lstm_host_bytes_estimate); else a one-line reason. */
int session_check_memory(const lstm_shape *s, int model, lc_error *err);

/* Variable-length group of the original: lengths uniform in 30..99. */
#define VL_MIN_LENGTH 30
#define VL_MAX_LENGTH 99

#ifdef __cplusplus
}
#endif
#endif
