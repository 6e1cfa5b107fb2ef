/* One process per GPU runner (src/check/isolate.h), without a GPU: runners that
 * call themselves "cuda" but compute with the cpu runner's functions go
 * through the same fork, pipe and report as the real GPU runners do. A
 * crash stands in for a sticky CUDA fault (numerics.isolation plants a
 * real one on a device). */
#include "unit.h"
#include "base/files.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "device/device.h"
#include "check/gate.h"
#include "check/isolate.h"
#include "runners/runner.h"

static int child_writes(void *arg, int fd)
{
    const int v = *(int *)arg * 2;
    return fd_write_all(fd, &v, sizeof v);
}

static int parent_reads(void *arg, int fd, lc_error *err)
{
    if (fd_read_all(fd, arg, sizeof(int))) {
        lc_error_set(err, "no value");
        return 1;
    }
    return 0;
}

static int child_writes_nothing(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    return 1;
}

int test_isolate_child_result(void)
{
    int v = 21;
    lc_error err = {{0}};
    CHECK(isolate_run(child_writes, parent_reads, &v, &err) == 0, "%s", err.msg);
    CHECK(v == 42, "the child's result came back: %d", v);
    CHECK(isolate_run(child_writes_nothing, parent_reads, &v, &err) != 0, "a failed child passed");
    CHECK(strstr(err.msg, "status 1"), "names the exit status: %s", err.msg);
    return 0;
}

static int crash_forward(void *state, lc_error *err)
{
    (void)state;
    (void)err;
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* this crash is on purpose: no core file */
    raise(SIGSEGV);
    return LC_ERROR;
}

int test_isolate_crash_fails_one_runner(void)
{
    const runner_ops *cpu = registry_find("cpu");
    CHECK(cpu, "the cpu runner");
    runner_ops gpu_like = *cpu, crashing = *cpu;
    gpu_like.name = "gpu_like";
    gpu_like.device = LC_DEVICE_CUDA;
    crashing.name = "crashing";
    crashing.device = LC_DEVICE_CUDA;
    crashing.forward = crash_forward;
    CHECK(isolate_runner(&gpu_like) && !isolate_runner(cpu), "only GPU runners are isolated");
    const lstm_shape shape = {.seq_length = 4, .batch = 2, .input_size = 5, .hidden_size = 6,
                              .num_layers = 1};
    numerics_context ctx;
    lc_error err;
    CHECK(numerics_context_init(&ctx, &shape, 17, NULL, &err) == 0, "%s", err.msg);
    gate_report rep;
    isolate_gate_run(&crashing, &ctx, NULL, &rep);
    CHECK(rep.status == LC_ERROR && strstr(rep.reason, "crashing") && strstr(rep.reason, "signal 11"),
          "the crash is that runner's error: status %d, %s", (int)rep.status, rep.reason);
    isolate_gate_run(&gpu_like, &ctx, NULL, &rep);
    CHECK(rep.status == LC_OK, "the runner after it passes: %s", rep.reason);
    CHECK(!device_cuda_used_here(), "the parent made no CUDA call");
    setenv("LSTMCHECK_ISOLATE", "0", 1);
    CHECK(!isolate_runner(&gpu_like), "LSTMCHECK_ISOLATE=0 runs it here");
    unsetenv("LSTMCHECK_ISOLATE");
    numerics_context_free(&ctx);
    return 0;
}
