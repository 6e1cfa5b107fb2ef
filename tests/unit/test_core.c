/* Tolerance rule, runner table, .npy files, statistics, the gate's report. */
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check/gate.h"
#include "check/npy.h"
#include "runners/runner.h"
#include "perf/stats.h"
#include "check/tolerance.h"
#include "model/inputs.h"
#include "model/reference.h"

int test_tolerance_rule(void)
{
    lstm_shape a = {.seq_length = 10, .batch = 4, .input_size = 32, .hidden_size = 32, .num_layers = 1};
    lstm_shape longer = a, wider = a;
    longer.seq_length = 40;
    wider.input_size = 224; /* I + H: 64 -> 256 */
    double base = tolerance_scale(&a, MODEL_LSTM, TENSOR_FORWARD, PRECISION_FP32);
    /* sqrt(N) with N = T (I + H), times (I + H) / 2H where above 1 (the
     * pre-activations' growth): four times T doubles the scale, four
     * times I + H with H fixed quadruples it (N: x4 terms, x4 growth) */
    CHECK_NEAR(tolerance_scale(&longer, MODEL_LSTM, TENSOR_FORWARD, PRECISION_FP32) / base, 2.0, 1e-12);
    CHECK_NEAR(tolerance_scale(&wider, MODEL_LSTM, TENSOR_FORWARD, PRECISION_FP32) / base, 4.0, 1e-12);
    CHECK_NEAR(tolerance_depth(&wider, MODEL_DROPOUT, TENSOR_FORWARD, PRECISION_FP32), 10.0 * 256 * 4, 0);
    /* a model that normalizes its pre-activations (LayerNorm) does not grow:
     * T (I + H + 18 H) */
    CHECK_NEAR(tolerance_depth(&wider, MODEL_LAYERNORM, TENSOR_FORWARD, PRECISION_FP32), 10.0 * (256 + 18 * 32), 0);
    CHECK_NEAR(base, TOLERANCE_SAFETY * ldexp(1.0, -24) * sqrt(10.0 * 64.0), 1e-18);
    CHECK(tolerance_scale(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_FP32) >
              tolerance_scale(&a, MODEL_LSTM, TENSOR_INPUT_GRAD, PRECISION_FP32) &&
              tolerance_scale(&a, MODEL_LSTM, TENSOR_INPUT_GRAD, PRECISION_FP32) > base,
          "gradient tolerances must include the forward depth");
    /* TF32: N counts GEMM stages (2 forward, 4 input gradients, 5 parameter
     * gradients), times (I + H) / 2H when above 1; not T, not L */
    const double tf32 = TOLERANCE_SAFETY * ldexp(1.0, -11);
    lstm_shape deeper = longer, narrow = a;
    deeper.num_layers = 4;
    narrow.input_size = 1;
    CHECK_NEAR(tolerance_scale(&a, MODEL_LSTM, TENSOR_FORWARD, PRECISION_TF32), tf32 * sqrt(2.0), 1e-15);
    CHECK_NEAR(tolerance_scale(&deeper, MODEL_LSTM, TENSOR_FORWARD, PRECISION_TF32), tf32 * sqrt(2.0), 1e-15);
    CHECK_NEAR(tolerance_scale(&narrow, MODEL_LSTM, TENSOR_INPUT_GRAD, PRECISION_TF32), tf32 * 2.0, 1e-15);
    CHECK_NEAR(tolerance_scale(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_TF32), tf32 * sqrt(5.0), 1e-15);
    CHECK_NEAR(tolerance_scale(&wider, MODEL_LSTM, TENSOR_INPUT_GRAD, PRECISION_TF32), tf32 * 4.0, 1e-15); /* (224 + 32) / 64 */
    /* the cap, for any precision: never 1/16 of the tensor's scale or more */
    const lstm_shape wide = {.seq_length = 1, .batch = 1, .input_size = 1000, .hidden_size = 4, .num_layers = 1};
    const lstm_shape huge = {.seq_length = 1000000, .batch = 1, .input_size = 1000000, .hidden_size = 1000000,
                             .num_layers = 1};
    CHECK(tolerance_scale(&wide, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_TF32) == TOLERANCE_MAX_SCALE &&
              tolerance_scale(&huge, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_FP32) == TOLERANCE_MAX_SCALE &&
              TOLERANCE_MAX_SCALE <= 1.0 / 16,
          "the relative part must stop at the cap");
    /* every view carries its kind: y hy cy | dx dh0 dc0 | dw_ih.0 dw_hh.0 db_ih.0 db_hh.0 */
    lstm_results res;
    lc_error err;
    CHECK(!lstm_results_alloc(&res, &a, MODEL_LSTM, &err), "%s", err.msg);
    lstm_tensor_view v[16];
    const int n = lstm_results_views(&res, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS, v, 16);
    lstm_results_free(&res);
    CHECK(n == 10 && v[2].kind == TENSOR_FORWARD && v[4].kind == TENSOR_INPUT_GRAD &&
              v[7].kind == TENSOR_PARAM_GRAD && !strcmp(v[7].name, "dw_hh.0"), "tensor kinds");
    const tolerance t = {.scale = 0.5, .moved_scale = 2.0, .cap = 1.0, .floor = 0.25};
    CHECK_NEAR(tolerance_allowed(&t, -2.0, 1.0, 0, 0), 1.75, 0);
    /* the sensitivity's part: moved_scale * (|moved - ref| + rms of it), under the cap */
    CHECK_NEAR(tolerance_allowed(&t, -2.0, 1.0, 0.5, 0.25), 1.5 + 1.5 + 0.25, 0);
    CHECK_NEAR(tolerance_allowed_moved(&t, -2.0, 1.0, 0.5, 0.25), 1.5, 0);
    CHECK_NEAR(tolerance_allowed(&t, -2.0, 1.0, 5.0, 0), 3.0 + 0.25, 0);
    /* the underflow floor: safety * sqrt(N) * FLT_MIN, for FP32 and TF32 (one exponent range) */
    const tolerance f32 = tolerance_for(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_FP32);
    const tolerance t32 = tolerance_for(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_TF32);
    CHECK_NEAR(f32.floor, TOLERANCE_SAFETY * sqrt(tolerance_depth(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_FP32)) * FLT_MIN,
               1e-50);
    CHECK_NEAR(t32.floor, TOLERANCE_SAFETY * sqrt(tolerance_depth(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_TF32)) * FLT_MIN,
               1e-50);
    CHECK(tolerance_smallest_normal(PRECISION_FP32) == tolerance_smallest_normal(PRECISION_TF32) &&
              f32.floor > 1e-37 && f32.floor < 1e-34 && t32.floor > 1e-38 && t32.floor < 1e-34,
          "floor %g, %g", f32.floor, t32.floor);
    CHECK_NEAR(f32.scale, tolerance_scale(&a, MODEL_LSTM, TENSOR_PARAM_GRAD, PRECISION_FP32), 0);
    /* a reference FP32 cannot hold, returned as 0: within the floor */
    CHECK(tolerance_allowed(&f32, 7e-63, 7e-63, 0, 0) > 7e-63, "a flushed 7e-63 must pass");
    return 0;
}

/* One run of r on p into got: create, forward, backward, read back. */
static int run_runner(const runner_ops *r, const lstm_problem *p, lstm_results *got, lc_error *err)
{
    void *st = NULL;
    int rc = r->create(r, p, &st, err);
    if (!rc) rc = r->forward(st, err);
    if (!rc) rc = r->zero_grads(st, err);
    if (!rc) rc = r->backward(st, err);
    if (!rc) rc = r->read_results(st, got, err);
    if (st)
        r->destroy(st);
    return rc;
}

/* A deep narrow stack seeded on dy alone (the original's loss): the
 * gradient that reaches the lower layers has passed up to 49 layers and
 * is far below FP32's range (about 1e-63). The FP32 runner gets 0 or a
 * denormal there, and is right: the rule's floor (docs/tolerance.md) must
 * pass it. */
int test_gate_underflow_deep_stack(void)
{
    const lstm_shape s = {.seq_length = 1, .batch = 1, .input_size = 1, .hidden_size = 1, .num_layers = 50};
    lstm_problem p;
    lstm_results ref, got;
    lc_error err = {{0}};
    CHECK(!lstm_problem_alloc(&p, &s, MODEL_LSTM, &err) && !lstm_inputs_generate(&p, 17, SEED_DY, &err) &&
              !lstm_results_alloc(&ref, &s, MODEL_LSTM, &err) && !lstm_results_alloc(&got, &s, MODEL_LSTM, &err) &&
              !lstm_reference_run(&p, &ref, &err), "%s", err.msg);
    CHECK(fabs(ref.dx[0]) < FLT_MIN && ref.dx[0] != 0, "dx = %g: the case must underflow FP32", ref.dx[0]);
    const runner_ops *cpu = registry_find("cpu");
    CHECK(run_runner(cpu, &p, &got, &err) == LC_OK, "%s", err.msg);
    gate_report rep;
    char line[1024];
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, gate_views(cpu), &rep);
    gate_format_summary(cpu, &rep, line, sizeof line);
    CHECK(rep.status == LC_OK, "%s", line);
    /* the floor hides nothing FP32 can hold: an error of 1e-30 still fails */
    got.dx[0] = ref.dx[0] + 1e-30;
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, gate_views(cpu), &rep);
    CHECK(rep.status == LC_FAILED && !strcmp(rep.worst.tensor, "dx"), "1e-30 in dx passed");
    lstm_problem_free(&p);
    lstm_results_free(&ref);
    lstm_results_free(&got);
    return 0;
}

/* Sequence b of all, alone: row (allocated here) has all's parameters
 * and b's inputs and seeds. */
static int problem_row(lstm_problem *row, const lstm_problem *all, int b, lc_error *err)
{
    const lstm_shape *s = &all->shape;
    lstm_shape one = *s;
    one.batch = 1;
    if (lstm_problem_copy(row, all, err))
        return 1;
    row->shape = one;
    const int T = s->seq_length, L = s->num_layers, B = s->batch, I = s->input_size, H = s->hidden_size;
    for (int t = 0; t < T; t++) {
        memmove(row->x + (size_t)t * I, all->x + ((size_t)t * B + b) * I, (size_t)I * sizeof(float));
        memmove(row->dy + (size_t)t * H, all->dy + ((size_t)t * B + b) * H, (size_t)H * sizeof(float));
    }
    float *state[] = {row->h0, row->c0, row->dhy, row->dcy};
    const float *from[] = {all->h0, all->c0, all->dhy, all->dcy};
    for (size_t k = 0; k < sizeof state / sizeof state[0]; k++)
        for (int l = 0; l < L; l++)
            memmove(state[k] + (size_t)l * H, from[k] + ((size_t)l * B + b) * H, (size_t)H * sizeof(float));
    return 0;
}

/* The case a probe found failing the correct cpu_layernorm (T=100 B=1000
 * I=H=64 L=4 seed 17, ratio 1.36 at y[94,128,54]) with two draws: sequence
 * 128's FP32 error grows a hundredfold from step 20 on, and what reaches a
 * late step is one number per draw, a sum of many roundings' effects that
 * a draw can leave near zero. That sequence alone (B = 1, its own inputs)
 * and 60 draws; each draw in turn stands for an FP32 answer (the same on
 * every machine, where the runner's roundings are not) and is judged
 * against the others: by one draw it fails now and then, by every group
 * of GATE_MOVED_DRAWS not its own it passes. */
int test_gate_moved_draws_chaotic(void)
{
    const lstm_shape s = {.seq_length = 100, .batch = 1000, .input_size = 64, .hidden_size = 64, .num_layers = 4};
    const runner_ops *r = registry_find("cpu_layernorm");
    lc_error err = {{0}};
    lstm_problem all, row;
    CHECK(!lstm_problem_alloc(&all, &s, MODEL_LAYERNORM, &err) && !lstm_inputs_generate(&all, 17, gate_seeds(r), &err)
              && !problem_row(&row, &all, 128, &err),
          "%s", err.msg);
    lstm_problem_free(&all);
    enum { DRAWS = 60 };
    static lstm_results ref, moved[DRAWS];
    CHECK(!lstm_results_alloc(&ref, &row.shape, MODEL_LAYERNORM, &err) && !lstm_reference_run(&row, &ref, &err), "%s",
          err.msg);
    for (int k = 0; k < DRAWS; k++) {
        lstm_problem q;
        CHECK(!lstm_problem_copy(&q, &row, &err) && !lstm_results_alloc(&moved[k], &row.shape, MODEL_LAYERNORM, &err),
              "%s", err.msg);
        lstm_inputs_move(&q, lstm_moved_seed(17, k));
        CHECK(!lstm_reference_run_rounded(&q, lstm_moved_seed(17, k), &moved[k], &err), "%s", err.msg);
        lstm_problem_free(&q);
    }
    int by_one = 0, by_group = 0, groups = 0; /* failures, and how many groups judged */
    for (int a = 0; a < DRAWS; a++) {
        gate_report w;
        const int one = (a + 1) % DRAWS;
        gate_compare(r, &(gate_expected){.reference = &ref, .moved = {&moved[one]}}, &moved[a], gate_views(r), &w);
        by_one += w.status == LC_FAILED;
        for (int g0 = 0; g0 + GATE_MOVED_DRAWS <= DRAWS; g0 += GATE_MOVED_DRAWS) {
            if (a >= g0 && a < g0 + GATE_MOVED_DRAWS)
                continue;
            gate_expected e = {.reference = &ref};
            for (int k = 0; k < GATE_MOVED_DRAWS; k++)
                e.moved[k] = &moved[g0 + k];
            gate_compare(r, &e, &moved[a], gate_views(r), &w);
            by_group += w.status == LC_FAILED;
            groups++;
        }
    }
    CHECK(by_one > 0, "no draw failed by one other: this sequence no longer tells one draw from several");
    CHECK(by_group == 0, "%d of %d groups of %d draws fail a draw (by one draw: %d of %d)", by_group, groups,
          GATE_MOVED_DRAWS, by_one, DRAWS);
    fprintf(stderr, "by one draw: %d of %d fail; by a group of %d: %d of %d\n", by_one, DRAWS, GATE_MOVED_DRAWS,
            by_group, groups);
    for (int k = 0; k < DRAWS; k++)
        lstm_results_free(&moved[k]);
    lstm_results_free(&ref);
    lstm_problem_free(&row);
    return 0;
}

/* The moved reference (docs/tolerance.md). The LayerNorm LSTM at T=6
 * B=4 I=10 H=12 L=2, seed 6: FP32-faithful answers miss dh0 by more than
 * the count N allows; with the moved term the correct cpu_layernorm
 * passes, and a 10% error still fails. At T=40 B=8 I=4 H=4 L=3, seed 210,
 * one ulp moves y by 7% of its rms: a skip that says why, unless an
 * answer is not finite. */
int test_gate_moved_reference(void)
{
    const lstm_shape s = {.seq_length = 6, .batch = 4, .input_size = 10, .hidden_size = 12, .num_layers = 2};
    const runner_ops *r = registry_find("cpu_layernorm");
    numerics_context ctx;
    lc_error err = {{0}};
    const lstm_problem *p;
    const gate_expected *expected;
    CHECK(!numerics_context_init(&ctx, &s, 6, NULL, &err) && !numerics_context_get(&ctx, r, &p, &expected, &err),
          "%s", err.msg);
    CHECK(expected->moved[0] && expected->moved[GATE_MOVED_DRAWS - 1], "the layernorm model measures no sensitivity");
    lstm_results got;
    CHECK(!lstm_results_alloc(&got, &s, MODEL_LAYERNORM, &err) && run_runner(r, p, &got, &err) == LC_OK, "%s",
          err.msg);
    gate_report with;
    char line[1024];
    gate_compare(r, expected, &got, gate_views(r), &with);
    gate_format_summary(r, &with, line, sizeof line);
    CHECK(with.status == LC_OK && with.worst.ratio < 0.5, "%s", line);
    /* The runner's own miss without the term depends on its BLAS's kernels
     * and the compiler (1.54 on the EPYC when this test was written; on the
     * Xeon with OpenBLAS's Prescott kernels 2.85 in Release, 0.82 under
     * AddressSanitizer), so it is asserted of the FP32-faithful answers the
     * moved draws are: their largest miss of the count alone is several
     * times it (2.5, 6.5 and 0.41 here: one draw can land where the problem
     * is stable), and each passes with the term. */
    double count_alone = 0;
    for (int k = 0; k < GATE_MOVED_DRAWS; k++) {
        gate_report w;
        gate_compare(r, &(gate_expected){.reference = expected->reference}, expected->moved[k], gate_views(r), &w);
        count_alone = w.worst.ratio > count_alone ? w.worst.ratio : count_alone;
        gate_compare(r, expected, expected->moved[k], gate_views(r), &w);
        CHECK(w.status == LC_OK, "draw %d with the moved term: ratio %g", k, w.worst.ratio);
    }
    CHECK(count_alone > 1.2, "the draws without the moved term: largest ratio %g", count_alone);
    size_t top = 0; /* 10% at dh0's largest element */
    for (size_t i = 0; i < lstm_state_elems(&s); i++)
        top = fabs(expected->reference->dh0[i]) > fabs(expected->reference->dh0[top]) ? i : top;
    got.dh0[top] = expected->reference->dh0[top] * 1.1;
    gate_compare(r, expected, &got, gate_views(r), &with);
    gate_format_summary(r, &with, line, sizeof line);
    CHECK(with.status == LC_FAILED && !strcmp(with.worst.tensor, "dh0") && strstr(line, "the problem's sensitivity"),
          "%s", line);
    lstm_results_free(&got);
    numerics_context_free(&ctx);
    const lstm_shape chaotic = {.seq_length = 40, .batch = 8, .input_size = 4, .hidden_size = 4, .num_layers = 3};
    CHECK(!numerics_context_init(&ctx, &chaotic, 210, NULL, &err) && !numerics_context_get(&ctx, r, &p, &expected, &err)
              && !lstm_results_alloc(&got, &chaotic, MODEL_LAYERNORM, &err) && run_runner(r, p, &got, &err) == LC_OK,
          "%s", err.msg);
    gate_compare(r, expected, &got, gate_views(r), &with);
    CHECK(with.status == LC_UNSUPPORTED && strstr(with.reason, GATE_ILL_CONDITIONED " fp32") &&
              gate_classify_skip(r, &chaotic, NULL, with.reason) == GATE_SKIP_ILL_CONDITIONED,
          "status %d: %s", with.status, with.reason);
    got.y[3] = NAN; /* not finite fails, judged or not */
    gate_compare(r, expected, &got, gate_views(r), &with);
    CHECK(with.status == LC_FAILED && with.worst.not_finite && !strcmp(with.worst.tensor, "y"), "NaN: status %d",
          with.status);
    lstm_results_free(&got);
    numerics_context_free(&ctx);
    return 0;
}

/* The rule's cost is linear in the layers: it was asked once per tensor
 * and looped over every layer each time, so --numLayers 1000000 spent
 * about 37 minutes in the gate's comparisons alone. */
int test_tolerance_linear_in_layers(void)
{
    const lstm_shape s = {.seq_length = 1, .batch = 1, .input_size = 3, .hidden_size = 2, .num_layers = 100000};
    lstm_results ref;
    lc_error err = {{0}};
    /* N_fwd = T * sum_l (I_l + H), times (I + H) / 2H: ((3 + 2) + 99999 * (2 + 2)) * 5/4 */
    CHECK_NEAR(tolerance_depth(&s, MODEL_LSTM, TENSOR_FORWARD, PRECISION_FP32), (5.0 + 99999.0 * 4.0) * 1.25, 0);
    CHECK(!lstm_results_alloc(&ref, &s, MODEL_LSTM, &err), "%s", err.msg);
    const clock_t t0 = clock();
    gate_report rep;
    gate_compare(registry_find("cpu"), &(gate_expected){.reference = &ref}, &ref, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS, &rep);
    const double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    lstm_results_free(&ref);
    CHECK(rep.status == LC_OK && rep.tensors_checked == 6 + 4 * 100000, "%d tensors", rep.tensors_checked);
    /* linear: well under a second; quadratic: 4e5 tensors x 1e5 layers, tens of seconds */
    CHECK(cpu_s < 5.0, "comparing 400,006 tensors took %.1f s of CPU", cpu_s);
    return 0;
}

static int ok_available(lc_error *e) { (void)e; return LC_OK; }
static int ok_create(const runner_ops *r, const lstm_problem *p, void **s, lc_error *e)
{
    (void)r; (void)p; (void)e;
    *s = NULL;
    return LC_OK;
}
static int ok_step(void *s, lc_error *e) { (void)s; (void)e; return LC_OK; }
static int ok_read(void *s, lstm_results *r, lc_error *e) { (void)s; (void)r; (void)e; return LC_OK; }
static size_t ok_peak(void *s) { (void)s; return 0; }
static void ok_destroy(void *s) { (void)s; }

int test_registry_valid(void)
{
    lc_error err;
    CHECK(!registry_validate(lstm_runners, &err), "%s", err.msg);
    CHECK(registry_find("cpu") && registry_find("ref") && !registry_find("nope"), "lookup");
    runner_ops good = {.name = "x", .device = LC_DEVICE_CPU, .description = "d",
                       .caps = RUNNER_BACKWARD, .available = ok_available, .create = ok_create,
                       .forward = ok_step, .backward = ok_step, .zero_grads = ok_step,
                       .read_results = ok_read, .peak_device_bytes = ok_peak, .destroy = ok_destroy};
    const runner_ops *table[3] = {&good, NULL, NULL};
    CHECK(!registry_validate(table, &err), "%s", err.msg);
    runner_ops no_bwd = good;
    no_bwd.backward = NULL;
    table[0] = &no_bwd;
    CHECK(registry_validate(table, &err) && strstr(err.msg, "backward"), "a missing backward passed: %s", err.msg);
    runner_ops bad_dev = good;
    bad_dev.device = LC_DEVICE_COUNT;
    table[0] = &bad_dev;
    CHECK(registry_validate(table, &err), "device tpu accepted");
    table[0] = &good;
    table[1] = &good;
    CHECK(registry_validate(table, &err) && strstr(err.msg, "twice"), "duplicate accepted");
    const runner_ops *empty[1] = {NULL};
    CHECK(registry_validate(empty, &err), "empty table accepted");
    return 0;
}

int test_npy_round_trip(void)
{
    lc_error err;
    char dir[] = "/tmp/lstmcheck_npy_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/a.npy", dir);
    double v[6] = {1.5, -2.25, 3, 0, 1e-300, -7};
    size_t dims[2] = {2, 3};
    CHECK(!npy_write(path, NPY_F64, v, 2, dims, &err), "%s", err.msg);
    npy_dtype dt;
    void *data;
    int nd;
    size_t got[8];
    CHECK(!npy_read(path, &dt, &data, &nd, got, &err), "%s", err.msg);
    CHECK(dt == NPY_F64 && nd == 2 && got[0] == 2 && got[1] == 3, "header read back wrong");
    CHECK(!memcmp(data, v, sizeof v), "data differs");
    free(data);
    /* header: magic, version 1.0, total header a multiple of 64 */
    FILE *f = fopen(path, "rb");
    unsigned char h[10];
    CHECK(f && fread(h, 1, 10, f) == 10, "reopen");
    fclose(f);
    CHECK(!memcmp(h, "\x93NUMPY\x01\x00", 8), "magic");
    CHECK((10 + (h[8] | h[9] << 8)) % 64 == 0, "header length not aligned");
    /* one dimension is written (N,) as NumPy does */
    float w[3] = {1, 2, 3};
    size_t d1[1] = {3};
    snprintf(path, sizeof path, "%s/b.npy", dir);
    CHECK(!npy_write(path, NPY_F32, w, 1, d1, &err), "%s", err.msg);
    f = fopen(path, "rb");
    char hdr[128] = {0};
    CHECK(f && fread(hdr, 1, 127, f) > 0, "reopen");
    fclose(f);
    CHECK(strstr(hdr + 10, "'shape': (3,), }") != NULL, "1-d shape spelled %s", hdr + 10);
    /* no temporary file is left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp >/dev/null", dir);
    CHECK(system(cmd) != 0, "a temporary file was left in %s", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    CHECK(npy_read("/nonexistent/x.npy", &dt, &data, &nd, got, &err) && strstr(err.msg, "/nonexistent/x.npy"),
          "a missing file must name itself");
    return 0;
}

int test_stats_summary(void)
{
    double v[5] = {5, 1, 4, 2, 3};
    sample_summary s;
    stats_summarize(v, 5, &s);
    CHECK(s.n == 5 && s.min == 1 && s.max == 5 && s.median == 3 && s.q1 == 2 && s.q3 == 4, "order statistics");
    CHECK_NEAR(s.mean, 3, 0);
    CHECK_NEAR(s.std, sqrt(2.5), 1e-15);
    CHECK_NEAR(s.mad, 1, 0);
    double one[1] = {7};
    stats_summarize(one, 1, &s);
    CHECK(s.std == 0 && s.median == 7, "single sample");
    return 0;
}

static int cmp_values(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median by selection is the sorted median, bit for bit: the verdict's
 * bootstrap uses it and must give the intervals it gave with a sort. */
#define SELECT_MAX_N 300
int test_stats_median_select(void)
{
    double v[SELECT_MAX_N], sorted[SELECT_MAX_N];
    lc_rng r;
    lc_rng_init(&r, 5, 0, 0);
    for (int n = 1; n <= SELECT_MAX_N; n++)
        for (int ties = 0; ties <= 1; ties++) {
            for (int i = 0; i < n; i++) /* with ties: few distinct values */
                v[i] = ties ? (double)lc_rng_int(&r, 0, 4) : 1 + 0.1 * lc_rng_normal(&r);
            memcpy(sorted, v, (size_t)n * sizeof *v);
            qsort(sorted, (size_t)n, sizeof *sorted, cmp_values);
            const double want = stats_quantile_sorted(sorted, n, 0.5), got = stats_median_select(v, n);
            CHECK(!memcmp(&want, &got, sizeof got), "n = %d%s: %a, sorted %a", n, ties ? " (ties)" : "", got, want);
        }
    CHECK(stats_median_select(v, 0) == 0, "no values");
    return 0;
}

int test_stats_mann_whitney(void)
{
    /* a clear shift: every a below every b (n = 10 each): exact two-sided
     * p = 2 / C(20, 10) = 1.08e-5; the normal approximation gives 1.8e-4 */
    double a[10], b[10];
    for (int i = 0; i < 10; i++) {
        a[i] = i;
        b[i] = 100 + i;
    }
    double greater;
    double p = stats_mann_whitney(a, 10, b, 10, &greater);
    CHECK(p < 3e-4 && p > 1e-5, "p = %g", p);
    CHECK_NEAR(greater, 0.0, 0);
    /* identical samples: no evidence */
    p = stats_mann_whitney(a, 10, a, 10, &greater);
    CHECK(p > 0.9, "p = %g for identical samples", p);
    CHECK_NEAR(greater, 0.5, 1e-12);
    CHECK_NEAR(stats_normal_upper_quantile(0.025), 1.959964, 1e-5);
    return 0;
}

int test_gate_reports_worst_element(void)
{
    lc_error err;
    lstm_shape s = {.seq_length = 2, .batch = 3, .input_size = 2, .hidden_size = 4, .num_layers = 1};
    lstm_results ref, got;
    CHECK(!lstm_results_alloc(&ref, &s, MODEL_LSTM, &err) && !lstm_results_alloc(&got, &s, MODEL_LSTM, &err), "%s", err.msg);
    for (size_t i = 0; i < 24; i++)
        ref.y[i] = got.y[i] = 0.5;
    got.y[(1 * 3 + 2) * 4 + 1] = 0.6; /* y[1,2,1] */
    const runner_ops *cpu = registry_find("cpu");
    gate_report rep;
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS, &rep);
    CHECK(rep.status == LC_FAILED && rep.tensors_failed == 1, "status %d failed %d", rep.status, rep.tensors_failed);
    CHECK(!strcmp(rep.worst.tensor, "y") && rep.worst.index[0] == 1 && rep.worst.index[1] == 2 &&
              rep.worst.index[2] == 1, "worst at %s[%d,%d,%d]", rep.worst.tensor, rep.worst.index[0],
          rep.worst.index[1], rep.worst.index[2]);
    CHECK_NEAR(rep.worst.err, 0.1, 1e-12);
    char line[1024];
    gate_format_summary(cpu, &rep, line, sizeof line);
    CHECK(strstr(line, "FAIL cpu") && strstr(line, "y[1,2,1]") && strstr(line, "allowed"), "summary: %s", line);
    /* NaN always fails, even where the reference is large */
    got.y[(1 * 3 + 2) * 4 + 1] = 0.5;
    got.dw_hh[0][3] = NAN;
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_GRADS, &rep);
    CHECK(rep.status == LC_FAILED && rep.worst.not_finite && !strcmp(rep.worst.tensor, "dw_hh.0"),
          "NaN not caught: %s", rep.worst.tensor);
    got.dw_hh[0][3] = INFINITY;
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, LSTM_VIEWS_GRADS, &rep);
    CHECK(rep.status == LC_FAILED, "Inf not caught");
    got.dw_hh[0][3] = 0;
    gate_compare(cpu, &(gate_expected){.reference = &ref}, &got, LSTM_VIEWS_OUTPUTS | LSTM_VIEWS_STATE | LSTM_VIEWS_GRADS, &rep);
    CHECK(rep.status == LC_OK, "equal results fail");
    lstm_results_free(&ref);
    lstm_results_free(&got);
    return 0;
}

/* A command's contexts: one per (shape, seed), the same one each time it
 * is asked for, so that every runner of a shape shares its reference. */
int test_numerics_cache_one_per_shape(void)
{
    lc_error err = {{0}};
    numerics_cache cache = {0};
    const lstm_shape a = {.seq_length = 3, .batch = 2, .input_size = 4, .hidden_size = 5, .num_layers = 1};
    lstm_shape b = a;
    b.hidden_size = 6;
    numerics_context *first = numerics_cache_get(&cache, &a, 17, &err);
    CHECK(first, "%s", err.msg);
    const lstm_problem *p, *p2;
    const gate_expected *ref, *ref2;
    CHECK(!numerics_context_get(first, registry_find("cpu"), &p, &ref, &err), "%s", err.msg);
    /* more contexts than the first allocation holds: the first stays where it is */
    for (int h = 6; h < 12; h++) {
        b.hidden_size = h;
        CHECK(numerics_cache_get(&cache, &b, 17, &err), "%s", err.msg);
    }
    numerics_context *again = numerics_cache_get(&cache, &a, 17, &err);
    CHECK(again == first && again->ready[0], "the context of a was made again");
    CHECK(!numerics_context_get(again, registry_find("cpu"), &p2, &ref2, &err) && ref2->reference->y == ref->reference->y,
          "the reference of a was computed again");
    CHECK(numerics_cache_get(&cache, &a, 18, &err) != again, "another seed shares a context");
    CHECK(cache.n == 8, "%d contexts for 8 (shape, seed) pairs", cache.n);
    b.hidden_size = 0;
    CHECK(!numerics_cache_get(&cache, &b, 17, &err) && err.msg[0], "a refused shape made a context");
    numerics_cache_free(&cache);
    return 0;
}

/* Why a skip happened decides whether a GPU proof may skip it: outside the
 * runner's caps always, a refusal of a library that decides shapes
 * (cudnn_persist's cuDNN) also, anything else inside the caps never. */
int test_gate_classify_skip(void)
{
    runner_ops r = *registry_find("cpu");
    const lstm_shape s = {.seq_length = 3, .batch = 2, .input_size = 4, .hidden_size = 5, .num_layers = 2};
    const int lengths[] = {3, 1};
    const char *refusal = "cudnn_persist create: cuDNN refuses this configuration: CUDNN_STATUS_NOT_SUPPORTED (3000)";
    r.caps &= ~(unsigned)RUNNER_VARLEN;
    CHECK(gate_classify_skip(&r, &s, lengths, "") == GATE_SKIP_OUTSIDE_CAPS, "lengths without varlen");
    CHECK(gate_classify_skip(&r, &s, NULL, refusal) == GATE_SKIP_INSIDE_CAPS, "a library that does not decide");
    r.caps |= RUNNER_LIBRARY_DECIDES;
    CHECK(gate_classify_skip(&r, &s, NULL, refusal) == GATE_SKIP_LIBRARY_REFUSED, "the library decides");
    CHECK(gate_classify_skip(&r, &s, NULL, "cudnn_persist create: out of device memory") == GATE_SKIP_INSIDE_CAPS,
          "a skip that names no library status");
    CHECK(gate_classify_skip(&r, &s, NULL, NULL) == GATE_SKIP_INSIDE_CAPS, "no reason at all");
    CHECK(gate_classify_skip(&r, &s, lengths, refusal) == GATE_SKIP_OUTSIDE_CAPS, "outside the caps comes first");
    r.caps &= ~(unsigned)RUNNER_MULTILAYER;
    r.max_layers = 1;
    CHECK(gate_classify_skip(&r, &s, NULL, refusal) == GATE_SKIP_OUTSIDE_CAPS, "two layers for a one-layer runner");
    return 0;
}
