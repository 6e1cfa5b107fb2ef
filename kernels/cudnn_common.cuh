// The cuDNN 9 LSTM, shared by the cudnn, cudnn_tf32, cudnn_persist and
// vl_cudnn runners: descriptors, the mapping of our parameters into cuDNN's
// weight space, workspace and reserve space, and the forward / backward
// calls. Each runner file is a thin table over lc_cudnn_config.
// See docs/cudnn-runners.md.
#ifndef LSTMCHECK_CUDNN_COMMON_CUH
#define LSTMCHECK_CUDNN_COMMON_CUH

#include <cudnn.h>

#include "cuda_util.h"

// Writes "file:line: status [detail] in call" into err and returns the
// runner code: RUNNER_UNSUPPORTED when map_unsupported is set and the status
// is in cuDNN's NOT_SUPPORTED category, else RUNNER_ERROR.
int lc_cudnn_fail(cudnnStatus_t status, int map_unsupported, const char *file, int line,
                  const char *call, lc_error *err);

// Checked cuDNN call in a function that takes `lc_error *err`: any failure
// is RUNNER_ERROR (use after setup, where a refusal is a bug, not a shape).
#define CUDNN_CHECK(call)                                                                   \
    do {                                                                                    \
        cudnnStatus_t cudnn_check_rc_ = (call);                                             \
        if (cudnn_check_rc_ != CUDNN_STATUS_SUCCESS)                                        \
            return lc_cudnn_fail(cudnn_check_rc_, 0, __FILE__, __LINE__, #call, err);       \
    } while (0)

// The same for descriptor set-up and size queries (and the probe run of
// create): a NOT_SUPPORTED status concerns this shape / configuration and
// becomes RUNNER_UNSUPPORTED, so the gate reports SKIP with cuDNN's reason.
#define CUDNN_CHECK_SHAPE(call)                                                             \
    do {                                                                                    \
        cudnnStatus_t cudnn_check_rc_ = (call);                                             \
        if (cudnn_check_rc_ != CUDNN_STATUS_SUCCESS)                                        \
            return lc_cudnn_fail(cudnn_check_rc_, 1, __FILE__, __LINE__, #call, err);       \
    } while (0)

// What distinguishes the cuDNN runners.
struct lc_cudnn_config {
    const char *name;          // runner name, for messages
    cudnnRNNAlgo_t algo;       // STANDARD, PERSIST_STATIC or PERSIST_DYNAMIC
    cudnnMathType_t math;      // CUDNN_FMA_MATH: strict FP32; TENSOR_OP: TF32 allowed
    // Used instead when cudnnSetRNNDescriptor_v8 refuses `math` with
    // BAD_PARAM or NOT_SUPPORTED (same value: no fallback).
    cudnnMathType_t math_fallback;
    int varlen;                // padded variable-length I/O (SEQ_MAJOR_UNPACKED)
    // Run forward + backward once in create, so that cuDNN refusing the
    // algorithm for this shape shows up as RUNNER_UNSUPPORTED at create.
    int probe;
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
