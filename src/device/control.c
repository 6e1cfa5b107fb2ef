/* The control workload (see control.h). */
#include "device/control.h"

#include "device/timer.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct control_workload {
    int cuda;
    int n;
    float *a, *b, *c; /* CPU matrices */
    void *impl;       /* CUDA state */
    device_timer *timer;
    char description[96];
};

void control_destroy(control_workload *c)
{
    if (!c)
        return;
#ifdef LSTMCHECK_WITH_CUDA
    if (c->cuda)
        cuda_control_destroy(c->impl);
#endif
    device_timer_destroy(c->timer);
    free(c->a);
    free(c->b);
    free(c->c);
    free(c);
}

int control_create(lc_device device, control_workload **out, lc_error *err)
{
    control_workload *c = calloc(1, sizeof *c);
    if (!c) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    c->cuda = device == LC_DEVICE_CUDA;
    if (device_timer_create(device, &c->timer, err)) {
        control_destroy(c);
        return 1;
    }
    if (c->cuda) {
#ifdef LSTMCHECK_WITH_CUDA
        c->n = CONTROL_CUDA_N;
        if (cuda_control_create(&c->impl, c->n, err)) {
            control_destroy(c);
            return 1;
        }
        snprintf(c->description, sizeof c->description, "cuBLAS sgemm %d^3 FP32", c->n);
#else
        lc_error_set(err, "this build has no CUDA support");
        control_destroy(c);
        return 1;
#endif
    } else {
        c->n = CONTROL_CPU_N;
        size_t nn = (size_t)c->n * (size_t)c->n;
        c->a = malloc(nn * sizeof(float));
        c->b = malloc(nn * sizeof(float));
        c->c = malloc(nn * sizeof(float));
        if (!c->a || !c->b || !c->c) {
            lc_error_set(err, "out of host memory for the control workload");
            control_destroy(c);
            return 1;
        }
        for (size_t i = 0; i < nn; i++) {
            c->a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
            c->b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        }
        snprintf(c->description, sizeof c->description, "OpenBLAS sgemm %d^3", c->n);
    }
    *out = c;
    return 0;
}

int control_run(control_workload *c, double *ms, lc_error *err)
{
    if (device_timer_start(c->timer, err))
        return 1;
    if (c->cuda) {
#ifdef LSTMCHECK_WITH_CUDA
        if (cuda_control_launch(c->impl, err))
            return 1;
#endif
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->n, c->n, c->n, 1.0f, c->a, c->n,
                    c->b, c->n, 0.0f, c->c, c->n);
    }
    return device_timer_stop(c->timer, ms, err);
}

const char *control_describe(const control_workload *c)
{
    return c->description;
}
