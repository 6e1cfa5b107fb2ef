/* The machine key: what sets a runner's performance, and nothing jittery.
 * CPU runners: CPU model, core count, BLAS (name, version, kernel set,
 * threads). CUDA runners: GPU name, SM count, compute capability, memory,
 * driver, CUDA runtime and cuDNN versions. A baseline belongs to one key. */
#ifndef LSTMCHECK_MACHINE_H
#define LSTMCHECK_MACHINE_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MACHINE_FIELDS 10

typedef struct machine_key {
    lc_device device;
    int nfields;
    char names[MACHINE_FIELDS][24];   /* e.g. cpu_model, cores, blas */
    char values[MACHINE_FIELDS][128];
    char slug[160];                   /* readable file name stem */
} machine_key;

/* Fill the key for a device; 1 with err when it cannot be read (no CUDA
 * device, say). */
int machine_key_current(lc_device device, machine_key *k, lc_error *err);
/* Build the slug from the fields (used after reading a key from a file). */
void machine_key_make_slug(machine_key *k);
int machine_key_equal(const machine_key *a, const machine_key *b);
/* "cpu_model=..., cores=2, ..." */
void machine_key_describe(const machine_key *k, char *buf, size_t n);

/* The CUDA half (kernels/machine_cuda.cu): fields of device 0. */
int machine_cuda_fields(machine_key *k, lc_error *err);
/* This machine's memory in bytes (physical), 0 when unknown. */
double machine_host_memory_bytes(void);
#ifdef LSTMCHECK_FAULTS
/* Test-only: when above 0, machine_host_memory_bytes() says this. */
extern double machine_host_memory_for_tests;
#endif

/* What lstmcheck --version says of the libraries that time and compute:
 * OpenBLAS (its configuration and the kernels it picked here), and the
 * CUDA runtime, driver and cuDNN (each as built against and as found,
 * without creating a CUDA context); one line each, no newline. */
void machine_blas_version(char *buf, size_t n);
void machine_cuda_versions(char *cuda, size_t ncuda, char *cudnn, size_t ncudnn);

#ifdef __cplusplus
}
#endif
#endif
