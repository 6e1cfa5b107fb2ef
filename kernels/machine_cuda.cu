// The CUDA fields of the machine key (src/device/machine.h): what sets a GPU
// runner's speed, read from the runtime, the driver and cuDNN.
#include "cuda_util.h"

#include <cudnn.h>
#include <stdio.h>
#include <string.h>

#include "device/machine.h"

// Copy at most n-1 bytes and terminate: a GPU name (256 bytes in
// cudaDeviceProp) longer than the key's field is cut, on purpose.
static void copy_cut(char *dst, size_t n, const char *src)
{
    const size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void field(machine_key *k, const char *name, const char *value)
{
    if (k->nfields == MACHINE_FIELDS)
        return;
    copy_cut(k->names[k->nfields], sizeof k->names[0], name);
    copy_cut(k->values[k->nfields], sizeof k->values[0], value);
    k->nfields++;
}

extern "C" int machine_cuda_fields(machine_key *k, lc_error *err)
{
    if (lc_cuda_enter(err) != LC_OK)
        return 1;
    cudaDeviceProp prop;
    cudaError_t rc = cudaGetDeviceProperties(&prop, 0);
    if (rc != cudaSuccess) {
        lc_error_set(err, "no CUDA device: %s", cudaGetErrorString(rc));
        cudaGetLastError();
        return 1;
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    char buf[128];
    field(k, "gpu_name", prop.name);
    snprintf(buf, sizeof buf, "%d", prop.multiProcessorCount);
    field(k, "sm_count", buf);
    snprintf(buf, sizeof buf, "%d.%d", prop.major, prop.minor);
    field(k, "compute_capability", buf);
    snprintf(buf, sizeof buf, "%zu", (size_t)(prop.totalGlobalMem >> 20));
    field(k, "memory_mib", buf);
    // the kernel module's version (NVML is not installed): "... Kernel Module  580.65.06 ..."
    snprintf(buf, sizeof buf, "unknown");
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[256];
        if (fgets(line, sizeof line, f)) {
            const char *m = strstr(line, "Kernel Module");
            if (m && sscanf(m + 13, " %63s", buf) != 1)
                snprintf(buf, sizeof buf, "unknown");
        }
        fclose(f);
    }
    field(k, "driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", driver / 1000, (driver % 1000) / 10);
    field(k, "driver_cuda", buf);
    snprintf(buf, sizeof buf, "%d.%d", runtime / 1000, (runtime % 1000) / 10);
    field(k, "cuda_runtime", buf);
    size_t v = cudnnGetVersion();
    snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    field(k, "cudnn", buf);
    return 0;
}

// cudaRuntimeGetVersion and cudaDriverGetVersion make no context (a
// process that has one cannot hand the GPU to the children it forks).
static void cuda_version_text(int v, char *buf, size_t n)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

extern "C" void machine_cuda_versions(char *cuda, size_t ncuda, char *cudnn, size_t ncudnn)
{
    int runtime = 0, driver = 0;
    char built[16], run[16], drv[16];
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver); // 0 without a driver
    cuda_version_text(CUDART_VERSION, built, sizeof built);
    cuda_version_text(runtime, run, sizeof run);
    cuda_version_text(driver, drv, sizeof drv);
    snprintf(cuda, ncuda, "runtime %s (built with %s), driver %s", run, built,
             driver ? drv : "none (no NVIDIA driver installed)");
    const size_t v = cudnnGetVersion();
    snprintf(cudnn, ncudnn, "%zu.%zu.%zu (built with %d.%d.%d)", v / 10000, (v % 10000) / 100, v % 100, CUDNN_MAJOR,
             CUDNN_MINOR, CUDNN_PATCHLEVEL);
}
