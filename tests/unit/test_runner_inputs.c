/* A runner's inputs are read-only (include/lstmcheck/runner.h), and every
 * runner gets a copy of its own (check/gate.h, perf/harness.h): one that
 * writes them spoils nothing of the runners after it in the same process,
 * and is an error that names what it changed. */
#include "unit.h"

#include <string.h>

#include "check/gate.h"
#include "model/inputs.h"
#include "perf/harness.h"
#include "runners/runner.h"

static const lstm_shape small = {.seq_length = 4, .batch = 2, .input_size = 5, .hidden_size = 6, .num_layers = 2};

/* The cpu runner, adding 1 to x[0] and to the last bias element after
 * every forward: the problem it was given, kept at create. */
static const lstm_problem *scribbled;

static int scribbler_create(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    scribbled = p;
    return registry_find("cpu")->create(self, p, state, err);
}

static int scribbler_forward(void *state, lc_error *err)
{
    const int rc = registry_find("cpu")->forward(state, err);
    scribbled->x[0] += 1.0f;
    scribbled->b_hh[small.num_layers - 1][4 * small.hidden_size - 1] += 1.0f;
    return rc;
}

static runner_ops scribbler(void)
{
    runner_ops r = *registry_find("cpu");
    r.name = "scribbler";
    r.create = scribbler_create;
    r.forward = scribbler_forward;
    return r;
}

/* The inputs of ctx are still those its seed gives. */
static int inputs_as_drawn(numerics_context *ctx, const runner_ops *r, char *where, size_t n)
{
    const lstm_problem *p;
    const gate_expected *expected;
    lstm_problem drawn;
    lc_error err = {{0}};
    if (numerics_context_get(ctx, r, &p, &expected, &err) || lstm_problem_alloc(&drawn, &small, MODEL_LSTM, &err)) {
        snprintf(where, n, "%s", err.msg);
        return 0;
    }
    const int same = !lstm_inputs_generate(&drawn, ctx->seed, gate_seeds(r), &err) &&
                     !lstm_problem_differs(&drawn, p, where, n);
    lstm_problem_free(&drawn);
    return same;
}

int test_gate_keeps_inputs(void)
{
    numerics_context ctx;
    lc_error err = {{0}};
    CHECK(numerics_context_init(&ctx, &small, 17, NULL, &err) == 0, "%s", err.msg);
    const runner_ops bad = scribbler();
    gate_report rep;
    gate_run(&bad, &ctx, NULL, &rep);
    CHECK(rep.status == LC_ERROR && strstr(rep.reason, "scribbler " GATE_CHANGED_INPUTS ": x[0] was ") &&
              strstr(rep.reason, "; 2 of its input tensors changed (they are read-only)"),
          "the runner that wrote its inputs is an error that names them: %s", rep.reason);
    char where[256];
    CHECK(inputs_as_drawn(&ctx, &bad, where, sizeof where), "the context's inputs changed: %s", where);
    const runner_ops *cpu = registry_find("cpu");
    gate_run(cpu, &ctx, NULL, &rep);
    CHECK(rep.status == LC_OK, "cpu after it: %s (worst %s)", rep.reason, rep.worst.tensor);
    numerics_context_free(&ctx);
    return 0;
}

int test_harness_keeps_inputs(void)
{
    numerics_context ctx;
    lc_error err = {{0}};
    const lstm_problem *p;
    const gate_expected *expected;
    CHECK(numerics_context_init(&ctx, &small, 17, NULL, &err) == 0, "%s", err.msg);
    const runner_ops bad = scribbler();
    CHECK(numerics_context_get(&ctx, &bad, &p, &expected, &err) == 0, "%s", err.msg);
    harness_config cfg = {.warmup = 1, .min_samples = 3, .max_samples = 3, .expected = expected};
    harness_result res;
    CHECK(harness_run(&bad, p, &cfg, &res, &err) == LC_ERROR &&
              strstr(err.msg, "scribbler " GATE_CHANGED_INPUTS ": x[0] was "),
          "the timed runner that wrote its inputs is an error that names them: %s", err.msg);
    CHECK(res.n == 0 && !res.fwd_ms, "its times are discarded (%d kept)", res.n);
    char where[256];
    CHECK(inputs_as_drawn(&ctx, &bad, where, sizeof where), "the inputs it was given changed: %s", where);
    CHECK(harness_run(registry_find("cpu"), p, &cfg, &res, &err) == LC_OK && res.timed_check.status == LC_OK,
          "cpu after it: %s", err.msg);
    harness_result_free(&res);
    numerics_context_free(&ctx);
    return 0;
}

/* A copy equals its original, lengths included, until one element changes. */
int test_problem_copy(void)
{
    lstm_problem p, copy;
    lc_error err = {{0}};
    const int lengths[] = {4, 2};
    CHECK(lstm_problem_alloc(&p, &small, MODEL_LSTM, &err) == 0 && lstm_inputs_generate(&p, 5, SEED_DY | SEED_DCY, &err) == 0 &&
              lstm_inputs_set_lengths(&p, lengths, small.batch, &err) == 0,
          "%s", err.msg);
    CHECK(lstm_problem_copy(&copy, &p, &err) == 0, "%s", err.msg);
    char where[256] = "";
    CHECK(copy.x != p.x && copy.w_hh[1] != p.w_hh[1] && copy.lengths != p.lengths && copy.dy && copy.dcy && !copy.dhy,
          "memory of its own, the seeds drawn and no others");
    CHECK(!lstm_problem_differs(&p, &copy, where, sizeof where), "a fresh copy differs: %s", where);
    copy.w_hh[1][7] = -copy.w_hh[1][7];
    CHECK(lstm_problem_differs(&p, &copy, where, sizeof where) && !strncmp(where, "w_hh.1[7] was ", 14) &&
              !strstr(where, "tensors changed"),
          "%s", where);
    copy.w_hh[1][7] = p.w_hh[1][7];
    copy.lengths[1] = 3;
    CHECK(lstm_problem_differs(&p, &copy, where, sizeof where) && !strcmp(where, "lengths[1] was 2, is 3"), "%s",
          where);
    lstm_problem_free(&copy);
    lstm_problem_free(&p);
    return 0;
}
