/* What is timed is what was checked (perf/harness.h), and every gate
 * report starts initialized (check/gate.h): a runner that computes only on
 * its first call passes the gate and must fail once timed; a report that
 * was never filled, or came from a child as garbage, never makes its
 * reader go past its arrays. */
#include "unit.h"

#include <stdint.h>
#include <string.h>

#include "check/gate.h"
#include "check/isolate.h"
#include "perf/harness.h"
#include "perf/perf.h"
#include "runners/runner.h"

static const lstm_shape small = {.seq_length = 4, .batch = 2, .input_size = 5, .hidden_size = 6, .num_layers = 1};

/* The cpu runner, computing only on the first forward and backward calls
 * of this process: the gate's run; every later call returns at once. */
static int lazy_calls;
static int lazy_forward(void *state, lc_error *err)
{
    return lazy_calls++ < 1 ? registry_find("cpu")->forward(state, err) : LC_OK;
}

static int lazy_backward(void *state, lc_error *err)
{
    return lazy_calls++ < 2 ? registry_find("cpu")->backward(state, err) : LC_OK;
}

static runner_ops lazy_runner(void)
{
    runner_ops lazy = *registry_find("cpu");
    lazy.name = "lazy";
    lazy.forward = lazy_forward;
    lazy.backward = lazy_backward;
    lazy_calls = 0;
    return lazy;
}

int test_harness_checks_timed_results(void)
{
    numerics_context ctx;
    lc_error err = {{0}};
    const lstm_problem *p;
    const gate_expected *expected;
    CHECK(numerics_context_init(&ctx, &small, 17, NULL, &err) == 0, "%s", err.msg);
    const runner_ops lazy = lazy_runner();
    gate_report rep;
    gate_run(&lazy, &ctx, NULL, &rep);
    CHECK(rep.status == LC_OK, "the lazy runner passes the gate on its first call: %s", rep.reason);
    CHECK(numerics_context_get(&ctx, &lazy, &p, &expected, &err) == 0, "%s", err.msg);
    harness_config cfg = {.warmup = 1, .min_samples = 5, .max_samples = 5, .expected = expected};
    harness_result res;
    CHECK(harness_run(&lazy, p, &cfg, &res, &err) == LC_FAILED, "its timed results were not compared");
    CHECK(res.n == 0 && !res.fwd_ms, "its times are discarded (%d kept)", res.n);
    CHECK(res.timed_check.status == LC_FAILED && strstr(res.timed_check.reason, "timed iteration"),
          "the report says which iteration: %s", res.timed_check.reason);
    CHECK(strstr(err.msg, "FAIL lazy") && strstr(err.msg, "(timed iteration"), "the FAIL line: %s", err.msg);
    harness_result_free(&res);

    /* the cpu runner itself: every compared iteration passes */
    const runner_ops *cpu = registry_find("cpu");
    CHECK(harness_run(cpu, p, &cfg, &res, &err) == LC_OK, "%s", err.msg);
    CHECK(res.n == 5 && res.checked >= 1 && res.checked <= HARNESS_CHECKED && res.timed_check.status == LC_OK,
          "n %d, %d compared", res.n, res.checked);
    harness_result_free(&res);

    /* baseline update's and compare's rounds (a forked child each on a CPU) */
    perf_settings s;
    perf_default_settings(LC_DEVICE_CPU, &s);
    s.warmup = 1;
    s.min_samples = s.max_samples = 3;
    s.baseline_rounds = 2;
    baseline_entry e;
    lazy_calls = 0;
    CHECK(perf_measure_entry(&lazy, p, expected, 17, &s, &e, &err) == LC_FAILED, "a lazy entry was measured");
    CHECK(strstr(err.msg, "FAIL lazy"), "%s", err.msg);
    numerics_context_free(&ctx);
    return 0;
}

/* A runner that cannot take the shape (jit has one layer: any machine,
 * with a GPU or without), its report filled with garbage first. */
int test_gate_report_starts_initialized(void)
{
    const runner_ops *jit = registry_find("jit");
    if (!jit) {
        fprintf(stderr, "SKIP: no jit runner in this build\n");
        return UNIT_SKIP;
    }
    lstm_shape two = small;
    two.num_layers = 2;
    numerics_context ctx;
    lc_error err = {{0}};
    CHECK(numerics_context_init(&ctx, &two, 17, NULL, &err) == 0, "%s", err.msg);
    gate_report rep;
    memset(&rep, 0x7f, sizeof rep); /* ndim and ntensors huge and positive, no NUL anywhere */
    CHECK(isolate_precheck(jit, &ctx, &rep) == 1, "jit takes two layers");
    CHECK(rep.status == LC_UNSUPPORTED && rep.worst.ndim == 0 && rep.ntensors == 0 && rep.worst.ratio == -1,
          "the skip's report starts initialized: ndim %d, ntensors %d", rep.worst.ndim, rep.ntensors);
    char line[1024];
    gate_format_summary(jit, &rep, line, sizeof line);
    CHECK(!strncmp(line, "SKIP jit: ", 10), "%s", line);
    numerics_context_free(&ctx);

    /* what a child sent, garbage: bounded before anything reads it */
    memset(&rep, 0x7f, sizeof rep);
    rep.status = LC_FAILED;
    gate_report_received(&rep);
    CHECK(rep.worst.ndim <= 3 && rep.ntensors <= GATE_MAX_TENSORS, "ndim %d, ntensors %d", rep.worst.ndim,
          rep.ntensors);
    CHECK(strlen(rep.reason) < sizeof rep.reason && strlen(rep.worst.tensor) < sizeof rep.worst.tensor,
          "the strings are terminated");
    gate_format_summary(jit, &rep, line, sizeof line);
    CHECK(!strncmp(line, "FAIL jit: ", 10), "%s", line);
    return 0;
}
