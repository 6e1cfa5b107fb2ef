/* The control workload: a fixed-shape SGEMM on the runner's device,
 * timed right after each runner sample. The perf verdict compares
 * runner/control ratios, which cancel drift in a shared machine's speed
 * (clocks, neighbours) that moves both alike. */
#ifndef LSTMCHECK_CONTROL_H
#define LSTMCHECK_CONTROL_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shapes: fixed forever, since baselines store control times. */
#define CONTROL_CPU_N 384   /* OpenBLAS sgemm 384^3: about 2 ms on 2 cores */
#define CONTROL_CUDA_N 2048 /* cuBLAS sgemm 2048^3: about 0.3 ms on an H100 */

typedef struct control_workload control_workload;

int control_create(lc_device device, control_workload **c, lc_error *err);
/* One timed run of the workload, in milliseconds. */
int control_run(control_workload *c, double *ms, lc_error *err);
const char *control_describe(const control_workload *c);
void control_destroy(control_workload *c);

/* The CUDA side (kernels/control_cuda.cu). */
int cuda_control_create(void **impl, int n, lc_error *err);
int cuda_control_launch(void *impl, lc_error *err);
void cuda_control_destroy(void *impl);

#ifdef __cplusplus
}
#endif
#endif
