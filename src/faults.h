/* Test-only fault switches. The product build compiles every FAULT_ON(...)
 * to 0; the tests link a second build of the library made with
 * LSTMCHECK_FAULTS defined, where the switches below are live (in CUDA code
 * only kernels/fault_gpu.cu, which is compiled once per library build). They prove
 * that the numerics gate and the perf verdict catch what they claim to. */
#ifndef LSTMCHECK_FAULTS_H
#define LSTMCHECK_FAULTS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lstm_fault {
    FAULT_NONE = 0,
    FAULT_GATE_ORDER,        /* forward reads the i and f gates swapped */
    FAULT_MISSING_BIAS,      /* forward leaves out b_hh */
    FAULT_BWD_TIME_OFFSET,   /* backward pairs dW_hh with h_t instead of h_{t-1} */
    FAULT_WRONG_ACTIVATION,  /* the g gate goes through sigmoid instead of tanh */
    FAULT_WGRAD_LAST_STEP,   /* weight gradients from the last step only */
    FAULT_TRANSPOSED_WEIGHT, /* W_hh read as if stored transposed */
    /* The state-gradient paths (dhy, dcy), visible only when they are seeded: */
    FAULT_STATE_GRAD_ONE_LAYER,  /* layer 0's dhy and dcy seed every layer */
    FAULT_DCY_IGNORED,           /* backward starts from dc = 0 instead of dcy */
    FAULT_STATE_GRAD_NOT_CARRIED, /* dh is not passed through steps past a sequence's end */
    FAULT_SEQ_END_OFF_BY_ONE,    /* backward takes step len (one past the end) as a real step */
    /* Tightness: the o gate's gradient 1e-4 too large (relative) */
    FAULT_SMALL_GATE_GRAD,
    /* GPU (kernels/fault_gpu.cu): the jit runner's forward writes far past
     * the end of a device buffer, a sticky CUDA error (isolation_test) */
    FAULT_GPU_OOB_WRITE,
    FAULT_COUNT
} lstm_fault;

const char *lstm_fault_name(lstm_fault f);

#ifdef LSTMCHECK_FAULTS
extern lstm_fault lstm_active_fault;
/* Extra work, in percent of the time forward and backward take: a known
 * slowdown for the perf verdict's power tests. */
extern double lstm_extra_work_percent;
#define FAULT_ON(f) (lstm_active_fault == (f))
#define EXTRA_WORK_PERCENT() (lstm_extra_work_percent)
#else
#define FAULT_ON(f) 0
#define EXTRA_WORK_PERCENT() 0.0
#endif

#ifdef LSTMCHECK_FAULTS
/* Set the switches from the environment of a test binary: LSTMCHECK_TEST_FAULT
 * (a fault name) and LSTMCHECK_TEST_EXTRA_WORK (percent), so that tests can
 * plant a fault or a slowdown in a whole lstmcheck process (the A/B power
 * test runs two of them). 0 when both are absent or valid. */
int lstm_faults_from_env(char *why, unsigned long n);
#endif

#ifdef __cplusplus
}
#endif
#endif
