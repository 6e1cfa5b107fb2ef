/* Test-only fault switches. The product build compiles every FAULT_ON(...)
 * to 0; the tests link a second build of the library made with
 * LSTMCHECK_FAULTS defined, where the switches below are live (in CUDA code
 * only kernels/fault_gpu.cu, which is compiled once per library build). They prove
 * that the numerics gate and the perf verdict catch what they claim to. */
#ifndef LSTMCHECK_FAULTS_H
#define LSTMCHECK_FAULTS_H

#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lstm_fault {
#define LSTM_FAULT(ENUM, name, kind, model, shapes) FAULT_##ENUM,
#include "runners/faults.def"
#undef LSTM_FAULT
    FAULT_COUNT
} lstm_fault;

const char *lstm_fault_name(lstm_fault f);
/* The model whose cpu runner the fault is planted in. */
lstm_model_id lstm_fault_model(lstm_fault f);

#ifdef LSTMCHECK_FAULTS
extern lstm_fault lstm_active_fault;
/* Extra work, in percent of the time forward and backward take: a known
 * slowdown for the perf verdict's power tests. */
extern double lstm_extra_work_percent;
/* The extra work of this process: lstm_extra_work_percent, plus, under
 * FAULT_NOISY_ROUNDS, NOISY_ROUNDS_PERCENT in one process of every
 * NOISY_ROUNDS_EVERY that this one and its forked children (each measuring
 * round is one) run the runner in. Five rounds then spread their medians
 * by ~140% (relative sd), beyond the 100% a baseline file holds, as a busy,
 * varying host can make them: a deterministic host noise for the tests. */
double lstm_extra_work_now(void);
#define NOISY_ROUNDS_EVERY 5
#define NOISY_ROUNDS_PERCENT 900.0
#define FAULT_ON(f) (lstm_active_fault == (f))
#define EXTRA_WORK_PERCENT() (lstm_extra_work_now())
#else
#define FAULT_ON(f) 0
#define EXTRA_WORK_PERCENT() 0.0
#endif

#ifdef LSTMCHECK_FAULTS
/* The cpu runner of a model in the arithmetic a test names
 * (runners/runner_cpu.c): "fp32" is the product's cpu runner (cpu_dropout
 * for the dropout model, which has no other); "tf32" (cpu_tf32) rounds every GEMM
 * operand to TF32, to nearest even, and sums in FP32, as tensor cores do;
 * "tf32_trunc" (cpu_tf32_trunc) truncates instead, as some tensor-core
 * paths do. Both declare PRECISION_TF32 and are in the test build only,
 * in no roster: they calibrate the TF32 tolerance without a GPU
 * (docs/tolerance.md). NULL for another name. */
const runner_ops *lstm_cpu_runner_at(lstm_model_id model, const char *arithmetic);

/* Set the switches from the environment of a test binary: LSTMCHECK_TEST_FAULT
 * (a fault name) and LSTMCHECK_TEST_EXTRA_WORK (percent), so that tests can
 * plant a fault or a slowdown in a whole lstmcheck process (the A/B power
 * test runs two of them), and LSTMCHECK_TEST_HOST_MEMORY_MIB (the memory
 * the machine is taken to have: machine_host_memory_bytes). 0 when all are
 * absent or valid. */
int lstm_faults_from_env(char *why, unsigned long n);
#endif

#ifdef __cplusplus
}
#endif
#endif
