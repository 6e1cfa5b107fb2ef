/* isolation_test: a GPU runner's kernel fault fails that runner only.
 *
 * The test build plants an out-of-bounds write in the jit runner's forward
 * (FAULT_GPU_OOB_WRITE, kernels/fault_gpu.cu): an illegal address, a
 * sticky CUDA error that no call can clear. Through what check and bench
 * run (isolate.h: one process per GPU runner), jit must be an ERROR and the
 * runners after it must pass. Then, in this one process, the same fault
 * must poison the runner after it: proof that the fault is sticky, so the
 * first part tested something. Exit 77 without a CUDA device (it cannot
 * pass without one), 1 with a broken one or with LSTMCHECK_REQUIRE_GPU=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/commands.h"
#include "device/device.h"
#include "runners/faults.h"
#include "check/gate.h"
#include "check/isolate.h"
#include "runners/runner.h"

#define SKIP 77

static const lstm_shape kShape = {.seq_length = 5, .batch = 3, .input_size = 7, .hidden_size = 9,
                                  .num_layers = 1};

/* Gate one runner, isolated or in this process, and compare the status. */
static int expect(const char *name, lc_status want, const char *how, numerics_context *ctx,
                  int isolated)
{
    const runner_ops *r = registry_find(name);
    gate_report rep;
    char line[1024];
    if (isolated)
        isolate_gate_run(r, ctx, NULL, &rep);
    else
        gate_run(r, ctx, NULL, &rep);
    gate_format_summary(r, &rep, line, sizeof line);
    const int ok = rep.status == want;
    printf("%s %s: %s\n  -> %s (%s)\n", isolated ? "isolated" : "in-process", name, line,
           ok ? "as expected" : "WRONG", how);
    return ok ? 0 : 1;
}

/* check and bench as a user runs them, jit first: exit 4 (jit's error),
 * and the bench JSON on stdout must still hold the runner after it. */
static int commands_survive(void)
{
    char json[] = "/tmp/lstmcheck_isolation_XXXXXX";
    const int fd = mkstemp(json);
    if (fd < 0)
        return 1;
    char *argv[] = {"lstmcheck", "bench", "--rnns", "jit", "jit_premul", "--seqLength", "5",
                    "--miniBatch", "3", "--inputSize", "7", "--hiddenSize", "9", "--nloops", "3",
                    "--warmup", "1", "--print-json", NULL};
    cli_options o;
    lc_error err;
    cli_defaults(&o);
    int bad = cli_parse((int)(sizeof argv / sizeof argv[0]) - 1, argv, &o, &err) != 0;
    fflush(stdout);
    const int saved = dup(1);
    dup2(fd, 1);
    const lc_status rc = bad ? LC_BAD_INPUT : cmd_bench(&o);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    char buf[4096] = "";
    const ssize_t k = pread(fd, buf, sizeof buf - 1, 0);
    buf[k > 0 ? k : 0] = '\0';
    close(fd);
    unlink(json);
    cli_free(&o);
    const int ok = rc == LC_ERROR && strstr(buf, "\"jit_premul\"") && !strstr(buf, "\"jit\"");
    printf("bench --rnns jit jit_premul: exit %d, JSON %s\n  -> %s\n", lc_status_exit_code(rc), buf,
           ok ? "as expected (jit's error, jit_premul timed)" : "WRONG");
    return ok ? 0 : 1;
}

int main(void)
{
    lc_error why;
    const device_cuda_state dev = device_cuda_probe(&why);
    const char *req = getenv("LSTMCHECK_REQUIRE_GPU");
    if (dev != DEVICE_CUDA_READY) {
        const int fail = dev == DEVICE_CUDA_BROKEN || (req && !strcmp(req, "1"));
        printf("%s: %s\n", fail ? "ERROR" : "SKIP", why.msg);
        return fail ? 1 : SKIP;
    }
    lstm_active_fault = FAULT_GPU_OOB_WRITE;
    numerics_context ctx;
    if (numerics_context_init(&ctx, &kShape, 17, NULL, &why)) {
        printf("ERROR: %s\n", why.msg);
        return 1;
    }
    int wrong = 0;
    wrong += expect("jit", LC_ERROR, "the planted fault", &ctx, 1);
    wrong += expect("jit_premul", LC_OK, "its own process", &ctx, 1);
    wrong += expect("cudnn", LC_OK, "its own process", &ctx, 1);
    wrong += commands_survive();
    /* the same in this process: the fault must be sticky, or the above proved nothing */
    wrong += expect("jit", LC_ERROR, "the planted fault", &ctx, 0);
    wrong += expect("jit_premul", LC_ERROR, "poisoned by jit's sticky error", &ctx, 0);
    numerics_context_free(&ctx);
    printf("%s\n", wrong ? "FAIL" : "PASS: a sticky fault fails only the runner that caused it");
    return wrong ? 1 : 0;
}
