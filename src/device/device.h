/* The devices, and which exist on this machine. The probe is built against
 * the CUDA runtime when CMake found nvcc (kernels/cuda_context.cu), else
 * src/device/device_nocuda.c. */
#ifndef LSTMCHECK_DEVICE_H
#define LSTMCHECK_DEVICE_H

#include <string.h>

#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The devices runners run on: one list, X(ID, token), from which the enum
 * (LC_DEVICE_CPU, ...) and the names ("cpu", ...) come. */
#define LC_DEVICE_LIST(X) \
    X(CPU, cpu)           \
    X(CUDA, cuda)

typedef enum lc_device {
#define LC_DEVICE_ENUM(id, token) LC_DEVICE_##id,
    LC_DEVICE_LIST(LC_DEVICE_ENUM)
#undef LC_DEVICE_ENUM
    LC_DEVICE_COUNT
} lc_device;

/* The .def rosters name a device by its token: LC_DEVICE_OF(cuda). */
#define LC_DEVICE_OF(token) LC_DEVICE_OF_##token
#define LC_DEVICE_OF_cpu LC_DEVICE_CPU
#define LC_DEVICE_OF_cuda LC_DEVICE_CUDA

/* The names, space-separated with a space before each: " cpu cuda". */
#define LC_DEVICE_WORD(id, token) " " #token
#define LC_DEVICE_WORDS LC_DEVICE_LIST(LC_DEVICE_WORD)

/* "cpu", "cuda"; "?" for a value outside the list. */
static inline const char *lc_device_name(lc_device d)
{
    static const char *const names[] = {
#define LC_DEVICE_NAME(id, token) #token,
        LC_DEVICE_LIST(LC_DEVICE_NAME)
#undef LC_DEVICE_NAME
    };
    return (unsigned)d < LC_DEVICE_COUNT ? names[d] : "?";
}

/* 0 with *d for a name of the list; 1 otherwise. */
static inline int lc_device_from_name(const char *name, lc_device *d)
{
    for (int i = 0; i < LC_DEVICE_COUNT; i++) {
        if (!strcmp(name, lc_device_name((lc_device)i))) {
            *d = (lc_device)i;
            return 0;
        }
    }
    return 1;
}

/* What the CUDA probe found on this machine. */
typedef enum device_cuda_state {
    DEVICE_CUDA_NONE = 0,   /* no NVIDIA driver or no device: GPU runners skip */
    DEVICE_CUDA_READY = 1,  /* a device this build can run on */
    /* A driver is there but CUDA does not work (driver older than the
     * runtime, no kernel image for the device, a context cannot be made):
     * an error for every GPU runner, never a skip. */
    DEVICE_CUDA_BROKEN = 2,
} device_cuda_state;

/* 1 when the build contains CUDA code. */
int device_cuda_built(void);
/* The probe, run once per process (the result is cached, and inherited by
 * forked children). It runs in a forked child of its own, so that asking
 * does not initialize CUDA in this process: a process that has initialized
 * CUDA cannot hand the GPU to children it forks (see isolate.h); with
 * LSTMCHECK_ISOLATE=0 it runs here. A driver that does not answer within
 * the child timeout (base/proc.h) is a broken setup. why says what was
 * found, for every state. */
device_cuda_state device_cuda_probe(lc_error *why);
/* Number of usable CUDA devices; 0 with the reason in why unless READY. */
int device_cuda_count(lc_error *why);
/* A one-line description of device 0 (name, SMs, compute capability), or
 * an empty string. From the probe: does not initialize CUDA here. */
void device_cuda_describe(char *buf, size_t n);
/* 1 once this process has made CUDA calls of its own (a runner, a timer,
 * the trace), after which forked children cannot use the GPU. */
int device_cuda_used_here(void);

#ifdef __cplusplus
}
#endif
#endif
