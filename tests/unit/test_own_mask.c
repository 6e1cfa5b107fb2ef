/* A runner with a dropout mask of its own (RUNNER_OWN_MASK, cuDNN's in
 * cudnn_dropout), here cpu_dropout told it is one: on the plain LSTM's
 * problems it computes nn.LSTM, on the dropout model's it applies that
 * problem's drawn mask, which stands in for a library's. The gate checks
 * it at p = 0; its timing runs at p = 0.4 and, on two layers, is compared
 * with nothing and labelled (on one, where nothing is dropped, it is
 * compared with nn.LSTM); at p = 0.4 layer 0's state must be unmoved, y
 * moved and everything finite (check/own_mask.h), which a runner that
 * drops nothing, drops inside layer 0, or writes NaN fails. */
#include "unit.h"

#include <string.h>

#include "check/gate.h"
#include "check/own_mask.h"
#include "perf/harness.h"
#include "runners/runner.h"

static const lstm_shape two_layers = {.seq_length = 5, .batch = 3, .input_size = 7, .hidden_size = 9, .num_layers = 2};

static runner_ops own_mask_runner(const char *like)
{
    runner_ops r = *registry_find(like);
    r.name = "own_mask";
    r.model = MODEL_DROPOUT;
    r.caps |= RUNNER_OWN_MASK;
    return r;
}

int test_own_mask_gate_and_timing(void)
{
    numerics_context ctx;
    lc_error err = {{0}};
    const lstm_problem *checked, *timed;
    const gate_expected *expected, *none;
    CHECK(numerics_context_init(&ctx, &two_layers, 17, NULL, &err) == 0, "%s", err.msg);
    const runner_ops own = own_mask_runner("cpu_dropout");
    CHECK(runner_checked_model(&own) == MODEL_LSTM, "checked as nn.LSTM, not %d", runner_checked_model(&own));
    gate_report rep;
    gate_run(&own, &ctx, NULL, &rep);
    CHECK(rep.status == LC_OK, "the gate at p = 0 passes it: %s", rep.reason);
    CHECK(numerics_context_get(&ctx, &own, &checked, &expected, &err) == 0 && checked->model == MODEL_LSTM,
          "the gate's problem is the plain LSTM's");
    CHECK(numerics_context_timed(&ctx, &own, &timed, &none, &err) == 0, "%s", err.msg);
    CHECK(timed->model == MODEL_DROPOUT && !none, "its timing runs the dropout model's problem, compared with nothing");
    CHECK(!ctx.expected[MODEL_DROPOUT][0].reference, "no reference is made for it (none has its mask)");
    harness_config cfg = {.warmup = 1, .min_samples = 3, .max_samples = 3, .expected = none};
    harness_result res;
    CHECK(harness_run(&own, timed, &cfg, &res, &err) == LC_OK, "%s", err.msg);
    CHECK(strstr(res.unchecked, "p=0.4") && strstr(res.unchecked, "unchecked at p > 0") && res.checked == 0,
          "the result labels the timing: '%s', %d compared", res.unchecked, res.checked);
    harness_result_free(&res);
    cfg.expected = expected; /* its p = 0.4 results against the p = 0 reference: a bug of the caller */
    CHECK(harness_run(&own, timed, &cfg, &res, &err) == LC_ERROR && strstr(err.msg, "cannot be compared"),
          "comparing its timed results is refused: %s", err.msg);
    const runner_ops *cpu = registry_find("cpu");
    CHECK(numerics_context_timed(&ctx, cpu, &timed, &none, &err) == 0 && none && timed->model == MODEL_LSTM,
          "a runner without a mask of its own is timed on what was checked");
    char label[160];
    CHECK(!runner_timing_unchecked(cpu, &two_layers, label, sizeof label) && !label[0], "and carries no label");
    numerics_context_free(&ctx);
    /* one layer: p = 0.4 drops nothing, so the timing is compared with nn.LSTM and not labelled */
    lstm_shape one = two_layers;
    one.num_layers = 1;
    CHECK(numerics_context_init(&ctx, &one, 17, NULL, &err) == 0, "%s", err.msg);
    CHECK(numerics_context_timed(&ctx, &own, &timed, &none, &err) == 0 && timed->model == MODEL_DROPOUT && none,
          "on one layer its timing runs its model's problem, compared with the reference at p = 0");
    cfg.expected = none;
    CHECK(harness_run(&own, timed, &cfg, &res, &err) == LC_OK && res.checked > 0 && !res.unchecked[0],
          "and is checked (%d compared, label '%s'): %s", res.checked, res.unchecked, err.msg);
    harness_result_free(&res);
    numerics_context_free(&ctx);
    return 0;
}

/* The cpu runner given the problem as the plain LSTM's: it drops nothing.
 * The runner keeps the problem it is given: one instance at a time here. */
static lstm_problem as_lstm;
static int create_dropping_nothing(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    as_lstm = *p;
    as_lstm.model = MODEL_LSTM;
    return registry_find("cpu")->create(self, &as_lstm, state, err);
}

/* own's results with layer 0's hy moved: a mask inside layer 0 */
static int drops_in_layer0(void *state, lstm_results *r, lc_error *err)
{
    const int rc = registry_find("cpu_dropout")->read_results(state, r, err);
    r->hy[0] *= 1.01;
    return rc;
}

/* own's results with one gradient not finite */
static int writes_nan(void *state, lstm_results *r, lc_error *err)
{
    const int rc = registry_find("cpu_dropout")->read_results(state, r, err);
    r->dx[3] = NAN;
    return rc;
}

static lc_status effect_of(const runner_ops *r, const lstm_shape *s, own_mask_effect *e)
{
    numerics_context ctx;
    lc_error err = {{0}};
    if (numerics_context_init(&ctx, s, 17, NULL, &err))
        return LC_ERROR;
    own_mask_effect_run(r, &ctx, e);
    numerics_context_free(&ctx);
    return e->status;
}

int test_own_mask_effect(void)
{
    own_mask_effect e;
    char line[1024];
    runner_ops own = own_mask_runner("cpu_dropout");
    CHECK(effect_of(&own, &two_layers, &e) == LC_OK, "a mask at p = 0.4 between layers takes effect: %s", e.reason);
    CHECK(e.y_moved > 0.9 && e.ratio <= 1 && e.dropout == 0.4, "y moved at %.3f, layer 0 at ratio %g",
          e.y_moved, e.ratio);
    own_mask_effect_format(&own, &e, line, sizeof line);
    CHECK(strstr(line, "PASS own_mask at p=0.4") && strstr(line, "stay unchecked at p > 0"), "%s", line);
    runner_ops ignores = own_mask_runner("cpu");
    ignores.create = create_dropping_nothing;
    CHECK(effect_of(&ignores, &two_layers, &e) == LC_FAILED && strstr(e.reason, "next to no effect"),
          "one that drops nothing fails: %s", e.reason);
    lstm_shape one = two_layers, few = two_layers;
    one.num_layers = 1;
    few.seq_length = 2; /* 2 x 3 x 9 = 54 elements of layer 0's output */
    own.read_results = drops_in_layer0;
    CHECK(effect_of(&own, &two_layers, &e) == LC_FAILED && strstr(e.reason, "layer 0's hy moved"),
          "one that drops inside layer 0 fails: %s", e.reason);
    CHECK(effect_of(&own, &one, &e) == LC_FAILED && strstr(e.reason, "one layer, nothing to drop, yet not nn.LSTM"),
          "and so on one layer, where every result must be nn.LSTM's: %s", e.reason);
    own.read_results = writes_nan;
    CHECK(effect_of(&own, &two_layers, &e) == LC_FAILED && strstr(e.reason, "dx[3] is not finite"),
          "one that writes NaN fails: %s", e.reason);
    own = own_mask_runner("cpu_dropout");
    CHECK(effect_of(&own, &one, &e) == LC_OK, "one layer: %s", e.reason);
    own_mask_effect_format(&own, &e, line, sizeof line);
    CHECK(strstr(line, "one layer, nothing to drop: every result within tolerance of nn.LSTM"), "%s", line);
    CHECK(effect_of(&own, &few, &e) == LC_UNSUPPORTED && strstr(e.reason, "y not judged"), "%s", e.reason);
    CHECK(effect_of(registry_find("cpu"), &two_layers, &e) == LC_UNSUPPORTED, "%s", e.reason);
    return 0;
}
