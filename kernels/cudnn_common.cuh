// The cuDNN 9 LSTM, shared by the cudnn, cudnn_tf32, cudnn_persist,
// cudnn_dropout and vl_cudnn runners: descriptors, the mapping of our parameters into cuDNN's
// weight space, workspace and reserve space, and the forward / backward
// calls. kernels/runner_cudnn.cu is a table of lc_cudnn_config rows.
// See docs/cudnn-runners.md.
#ifndef LSTMCHECK_CUDNN_COMMON_CUH
#define LSTMCHECK_CUDNN_COMMON_CUH

#include <cudnn.h>

#include "cuda_util.h"

// Which failures may mean "cuDNN refuses this shape / configuration" (the
// gate reports SKIP, naming cuDNN's status) rather than an error.
enum lc_cudnn_refusals {
    LC_REFUSE_NOTHING, // after set-up: every failure is an error
    // descriptor set-up and size queries: the configuration codes of the
    // NOT_SUPPORTED category only. That category also holds environment
    // failures (driver, runtime, architecture, missing sub-library), which
    // stay errors: a broken setup must never look like a skip.
    LC_REFUSE_CONFIG,
    // the probe run of an algorithm that may only refuse when it runs
    // (persistent kernels): also BAD_PARAM, and EXECUTION_FAILED when the
    // CUDA context is still healthy (a launch cuDNN could not configure,
    // not a fault; a sticky CUDA error stays an error).
    LC_REFUSE_PROBE,
};

// Writes "file:line: status (code) [detail] in call" into err and returns
// LC_UNSUPPORTED when `refusals` lets this status be a refusal, else
// LC_ERROR.
int lc_cudnn_fail(cudnnStatus_t status, lc_cudnn_refusals refusals, const char *file, int line,
                  const char *call, lc_error *err);

// Checked cuDNN call in a function that takes `lc_error *err`: any failure
// is LC_ERROR (use after setup, where a refusal is a bug, not a shape).
#define CUDNN_CHECK(call) CUDNN_CHECK_AS(LC_REFUSE_NOTHING, call)

// The same for descriptor set-up and size queries: a configuration refusal
// becomes LC_UNSUPPORTED (see LC_REFUSE_CONFIG).
#define CUDNN_CHECK_SHAPE(call) CUDNN_CHECK_AS(LC_REFUSE_CONFIG, call)

#define CUDNN_CHECK_AS(refusals, call)                                                      \
    do {                                                                                    \
        cudnnStatus_t cudnn_check_rc_ = (call);                                             \
        if (cudnn_check_rc_ != CUDNN_STATUS_SUCCESS)                                        \
            return lc_cudnn_fail(cudnn_check_rc_, (refusals), __FILE__, __LINE__, #call,    \
                                 err);                                                      \
    } while (0)

// What distinguishes the cuDNN runners.
struct lc_cudnn_config {
    const char *name;          // runner name, for messages
    cudnnRNNAlgo_t algo;       // STANDARD, PERSIST_STATIC or PERSIST_DYNAMIC
    cudnnMathType_t math;      // CUDNN_FMA_MATH: strict FP32; DEFAULT_MATH: TF32 allowed
    int varlen;                // padded variable-length I/O (SEQ_MAJOR_UNPACKED)
    // Run forward + backward once in create, so that cuDNN refusing the
    // algorithm for this shape shows up as LC_UNSUPPORTED at create
    // (LC_REFUSE_PROBE).
    int probe;
    // cuDNN's own dropout between layers (RUNNER_OWN_MASK): at the dropout
    // model's p on its problems, none (p = 0) on the plain LSTM's, which
    // are the ones the gate gives it. 0: the plain LSTM's problems only.
    int own_dropout;
};

// The runner_ops functions; create takes the runner's config.
int lc_cudnn_create(const lc_cudnn_config *cfg, const lstm_problem *p, void **state,
                    lc_error *err);
int lc_cudnn_forward(void *state, lc_error *err);
int lc_cudnn_backward(void *state, lc_error *err);
int lc_cudnn_zero_grads(void *state, lc_error *err);
int lc_cudnn_read_results(void *state, lstm_results *r, lc_error *err);
size_t lc_cudnn_peak_device_bytes(void *state);
void lc_cudnn_destroy(void *state);

#endif
