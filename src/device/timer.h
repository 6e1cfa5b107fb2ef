/* A timer for one device: wall clock on the CPU, CUDA events on the shared
 * stream for CUDA runners. stop() waits for the device, so the time covers
 * all work issued between start and stop. */
#ifndef LSTMCHECK_TIMER_H
#define LSTMCHECK_TIMER_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct device_timer device_timer;

int device_timer_create(lc_device device, device_timer **t, lc_error *err);
int device_timer_start(device_timer *t, lc_error *err);
int device_timer_stop(device_timer *t, double *ms, lc_error *err);
void device_timer_destroy(device_timer *t);

/* Monotonic wall clock in seconds (for budgets). */
double wall_seconds(void);

/* The CUDA side (kernels/cuda_timer.cu); absent in builds without CUDA. */
int cuda_timer_create(void **impl, lc_error *err);
int cuda_timer_start(void *impl, lc_error *err);
int cuda_timer_stop(void *impl, double *ms, lc_error *err);
void cuda_timer_destroy(void *impl);

#ifdef __cplusplus
}
#endif
#endif
