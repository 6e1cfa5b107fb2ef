/* What every command does first: resolve the device and the runners,
 * check the shape and the memory it needs, and draw the lengths. */
#ifndef LSTMCHECK_SESSION_H
#define LSTMCHECK_SESSION_H

#include "cli.h"
#include "runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct session_runner {
    const runner_ops *runner;
    const char *group; /* "lstm" or "vl_lstm" */
} session_runner;

typedef struct session {
    char device[8];                 /* cpu or cuda, resolved from auto */
    session_runner runners[CLI_MAX_RNNS * 2];
    int nrunners;
    int *vl_lengths;                /* lengths of the vl group (NULL: none) */
    lstm_shape vl_shape;            /* the vl group's shape (T = longest allowed) */
} session;

/* "auto" becomes cuda when a CUDA device exists (usable or broken), else
 * cpu; others are kept. */
void session_resolve_device(const char *requested, char *device, size_t n);

/* Exit codes: 0 ok, CLI_EXIT_USAGE with err for bad input. */
int session_setup(const cli_options *o, session *s, lc_error *err);
void session_free(session *s);

/* The default runner names of a device (the original's default group). */
const char *const *session_default_runners(const char *device);
const char *const *session_default_vl_runners(const char *device);

/* 0 when the shape fits in this machine's memory; else a one-line reason. */
int session_check_memory(const lstm_shape *s, lc_error *err);

/* Variable-length group of the original: lengths uniform in 30..99. */
#define VL_MIN_LENGTH 30
#define VL_MAX_LENGTH 99

#ifdef __cplusplus
}
#endif
#endif
