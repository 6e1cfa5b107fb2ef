// The CUDA probe (src/device/device.h): is there a device, can this build run on
// it, and if not, is that "no GPU here" (skip) or "a GPU whose setup is
// broken" (error)? It runs once, in a forked child, so that this process
// stays free of CUDA until it runs something itself: a process that has
// initialized CUDA cannot give the GPU to the children it forks, and the
// GPU runners of check/bench run in children (src/check/isolate.h).
#include "cuda_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/files.h"
#include "base/proc.h"
#include "device/device.h"

namespace {

struct probe_result {
    device_cuda_state state;
    int count;
    char why[sizeof(lc_error{}.msg)];
    char describe[256];
};

probe_result g_probe;
bool g_probed = false;
bool g_used_here = false;

// A kernel of this build: asking for its attributes fails when the build
// has no code the device can run (CMAKE_CUDA_ARCHITECTURES), and makes the
// context, which fails on a device that is busy in exclusive mode.
__global__ void probe_kernel() {}

void set_why(probe_result *r, device_cuda_state st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void set_why(probe_result *r, device_cuda_state st, const char *fmt, ...)
{
    r->state = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

void version_text(int v, char *buf, size_t n)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

// No usable device: tell "no GPU, no driver" (skip) from a broken setup.
void classify_failure(probe_result *r, cudaError_t rc)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver); // 0 when no driver is installed
    cudaRuntimeGetVersion(&runtime);
    const bool device_node = access("/dev/nvidiactl", F_OK) == 0;
    char dv[16], rv[16];
    version_text(driver, dv, sizeof dv);
    version_text(runtime, rv, sizeof rv);
    const char *name = cudaGetErrorName(rc), *text = cudaGetErrorString(rc);
    if (rc == cudaErrorNoDevice || rc == cudaSuccess)
        set_why(r, DEVICE_CUDA_NONE, "no CUDA device (%s: %s)", name, text);
    else if ((driver == 0 || rc == cudaErrorStubLibrary) && !device_node)
        set_why(r, DEVICE_CUDA_NONE, "no CUDA device: no NVIDIA driver is installed (%s: %s)",
                name, text);
    else if (rc == cudaErrorInsufficientDriver && driver > 0)
        set_why(r, DEVICE_CUDA_BROKEN,
                "broken CUDA setup: the NVIDIA driver supports CUDA %s, older than this build's "
                "runtime %s: update the driver (%s)", dv, rv, name);
    else
        set_why(r, DEVICE_CUDA_BROKEN,
                "broken CUDA setup: cudaGetDeviceCount failed with %s (%s); driver CUDA %s, "
                "runtime %s, /dev/nvidiactl %s", name, text, dv, rv,
                device_node ? "present" : "absent");
}

void probe_here(probe_result *r)
{
    memset(r, 0, sizeof *r);
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
        classify_failure(r, rc);
        return;
    }
    cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    rc = cudaGetDeviceProperties(&prop, 0);
    if (rc == cudaSuccess)
        snprintf(r->describe, sizeof r->describe, "%.120s, %d SMs, sm_%d%d, %.1f GiB", prop.name,
                 prop.multiProcessorCount, prop.major, prop.minor,
                 (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    cudaFuncAttributes fa;
    if (rc == cudaSuccess)
        rc = cudaFuncGetAttributes(&fa, probe_kernel);
    if (rc != cudaSuccess) {
        set_why(r, DEVICE_CUDA_BROKEN,
                "broken CUDA setup: device 0 (%s) cannot run this build: %s (%s); for another "
                "architecture configure with -DCMAKE_CUDA_ARCHITECTURES=%d%d",
                r->describe[0] ? r->describe : "unknown", cudaGetErrorName(rc),
                cudaGetErrorString(rc), prop.major, prop.minor);
        return;
    }
    set_why(r, DEVICE_CUDA_READY, "%d CUDA device(s); device 0: %s", n, r->describe);
    r->count = n;
}

// LSTMCHECK_ISOLATE=0: no forks around CUDA at all (for tools that do not
// follow a fork without exec); the probe then runs in this process.
bool forks_allowed()
{
    const char *v = getenv("LSTMCHECK_ISOLATE");
    return !(v && !strcmp(v, "0"));
}

int probe_child(void *arg, int fd)
{
    (void)arg;
    probe_result mine;
    proc_foreign_begin("the CUDA device query"); // the driver's code: a hung one is timed out
    probe_here(&mine);
    proc_foreign_end();
    return fd_write_all(fd, &mine, sizeof mine);
}

int probe_parent(void *arg, int fd, lc_error *err)
{
    (void)err;
    return fd_read_all(fd, arg, sizeof(probe_result));
}

// The probe in a child process; in this process if forks are off or fail.
void probe_in_child(probe_result *r)
{
    proc_outcome out{};
    lc_error err{};
    if (!forks_allowed() ||
        (proc_fork(PROC_CHILD_WORK, probe_child, probe_parent, r, &out, &err) && !out.started)) {
        probe_here(r);
        g_used_here = true;
        return;
    }
    if (out.exit_status != 0) {
        char how[256];
        memset(r, 0, sizeof *r);
        set_why(r, DEVICE_CUDA_BROKEN, "broken CUDA setup: the CUDA probe process %s",
                proc_outcome_text(&out, how, sizeof how));
    }
}

} // namespace

extern "C" int device_cuda_built(void) { return 1; }

extern "C" device_cuda_state device_cuda_probe(lc_error *why)
{
    if (!g_probed) {
        probe_in_child(&g_probe);
        g_probed = true;
    }
    if (why)
        snprintf(why->msg, sizeof why->msg, "%s", g_probe.why);
    return g_probe.state;
}

extern "C" int device_cuda_count(lc_error *why)
{
    return device_cuda_probe(why) == DEVICE_CUDA_READY ? g_probe.count : 0;
}

extern "C" void device_cuda_describe(char *buf, size_t n)
{
    if (!n)
        return;
    device_cuda_probe(nullptr);
    snprintf(buf, n, "%s", g_probe.describe);
}

extern "C" int device_cuda_used_here(void) { return g_used_here; }

extern "C" int lc_cuda_available(lc_error *why)
{
    switch (device_cuda_probe(why)) {
    case DEVICE_CUDA_READY: return LC_OK;
    case DEVICE_CUDA_BROKEN: return LC_ERROR;
    default: return LC_UNSUPPORTED;
    }
}

extern "C" int lc_cuda_enter(lc_error *err)
{
    lc_error why;
    const int rc = lc_cuda_available(&why);
    if (rc != LC_OK) {
        if (err)
            *err = why;
        return rc;
    }
    g_used_here = true;
    return LC_OK;
}
