/* Device timers (see timer.h). */
#include "device/timer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct device_timer {
    int cuda;
    void *impl;     /* CUDA events */
    double started; /* CPU: wall seconds at start */
};

double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int device_timer_create(lc_device device, device_timer **out, lc_error *err)
{
    device_timer *t = calloc(1, sizeof *t);
    if (!t) {
        lc_error_set(err, "out of host memory");
        return 1;
    }
    if (device == LC_DEVICE_CUDA) {
#ifdef LSTMCHECK_WITH_CUDA
        t->cuda = 1;
        if (cuda_timer_create(&t->impl, err)) {
            free(t);
            return 1;
        }
#else
        lc_error_set(err, "this build has no CUDA support");
        free(t);
        return 1;
#endif
    }
    *out = t;
    return 0;
}

int device_timer_start(device_timer *t, lc_error *err)
{
#ifdef LSTMCHECK_WITH_CUDA
    if (t->cuda)
        return cuda_timer_start(t->impl, err);
#endif
    (void)err;
    t->started = wall_seconds();
    return 0;
}

int device_timer_stop(device_timer *t, double *ms, lc_error *err)
{
#ifdef LSTMCHECK_WITH_CUDA
    if (t->cuda)
        return cuda_timer_stop(t->impl, ms, err);
#endif
    (void)err;
    *ms = (wall_seconds() - t->started) * 1e3;
    return 0;
}

void device_timer_destroy(device_timer *t)
{
    if (!t)
        return;
#ifdef LSTMCHECK_WITH_CUDA
    if (t->cuda)
        cuda_timer_destroy(t->impl);
#endif
    free(t);
}
