/* cpu_roofline: the cpu runner against this machine's own limit. Measures
 * OpenBLAS sgemm throughput (a large square GEMM, best of several), then
 * the cpu runner's forward and backward at a shape (default: the original's
 * s100-l1-i512-h512-b64), in the same run, and prints each as a multiple of
 * the time its FLOPs take at that throughput. A benchmark, not a test: the
 * numbers go to the README with this command.
 *   cpu_roofline [--seqLength T --miniBatch B --inputSize I --hiddenSize H --numLayers L] [--nloops N] */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/gate.h"
#include "perf/harness.h"
#include "device/timer.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);

/* best-of-reps throughput of an (m x k)(k x n) sgemm */
static double sgemm_gflops(int m, int n, int k, int reps)
{
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b),
          *c = malloc((size_t)m * n * sizeof *c);
    if (!a || !b || !c) {
        free(a); free(b); free(c);
        return 0;
    }
    for (size_t i = 0; i < (size_t)m * k; i++)
        a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < (size_t)k * n; i++)
        b[i] = (float)(i % 5) * 0.1f;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = wall_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
        double t = wall_seconds() - t0;
        if (t < best)
            best = t;
    }
    free(a); free(b); free(c);
    return 2.0 * m * (double)n * k / best / 1e9;
}

/* The machine's limit: the best rate over square sizes and the runner's own
 * GEMM shapes (input projection, recurrent step, weight gradient). */
static double sgemm_peak(const lstm_shape *s, char *best_shape, size_t n)
{
    const int TB = s->seq_length * s->batch, H4 = 4 * s->hidden_size;
    const int shapes[][3] = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048},
                             {TB, H4, s->input_size}, {s->batch, H4, s->hidden_size},
                             {H4, s->hidden_size, TB}, {TB, s->input_size, H4}};
    double peak = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        double g = sgemm_gflops(shapes[i][0], shapes[i][1], shapes[i][2], 5);
        if (g > peak) {
            peak = g;
            snprintf(best_shape, n, "%dx%dx%d", shapes[i][0], shapes[i][1], shapes[i][2]);
        }
    }
    return peak;
}

/* The shape and loop count from the command line: 0, or 2 with the message
 * printed. */
static int parse_args(int argc, char **argv, lstm_shape *s, int *nloops)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (v <= 0) { fprintf(stderr, "cpu_roofline: %s needs a positive value\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--seqLength")) s->seq_length = v;
        else if (!strcmp(argv[i], "--miniBatch")) s->batch = v;
        else if (!strcmp(argv[i], "--inputSize")) s->input_size = v;
        else if (!strcmp(argv[i], "--hiddenSize")) s->hidden_size = v;
        else if (!strcmp(argv[i], "--numLayers")) s->num_layers = v;
        else if (!strcmp(argv[i], "--nloops")) *nloops = v;
        else { fprintf(stderr, "cpu_roofline: unknown flag %s\n", argv[i]); return 2; }
    }
    return 0;
}

/* The numerics gate first (its line printed): a wrong runner is not timed. */
static int check_runner(const runner_ops *cpu, numerics_context *ctx)
{
    gate_report rep;
    char line[1024];
    gate_run(cpu, ctx, NULL, &rep);
    gate_format_summary(cpu, &rep, line, sizeof line);
    printf("%s\n", line);
    return rep.status != LC_OK;
}

/* The forward's FLOPs: per layer and step the two GEMMs into the gates. */
static double forward_flops(const lstm_shape *s)
{
    double fwd_flops = 0;
    for (int l = 0; l < s->num_layers; l++)
        fwd_flops += 2.0 * s->seq_length * s->batch * 4.0 * s->hidden_size *
                     (lstm_layer_input_size(s, l) + s->hidden_size);
    return fwd_flops;
}

/* The sgemm rate measured before and after the runner's loops. */
typedef struct sgemm_rates {
    double before, after;
    char shape_before[64], shape_after[64];
} sgemm_rates;

static void print_roofline(const lstm_shape *s, const harness_result *res, const sgemm_rates *g)
{
    double peak = g->before > g->after ? g->before : g->after;
    double fwd_flops = forward_flops(s);
    double bwd_flops = 2 * fwd_flops; /* dgates x (W_ih, W_hh) and the two weight gradients */
    double fwd_floor = fwd_flops / (peak * 1e9) * 1e3, bwd_floor = bwd_flops / (peak * 1e9) * 1e3;
    printf("shape s%d-l%d-i%d-h%d-b%d, %d loops\n", s->seq_length, s->num_layers, s->input_size, s->hidden_size,
           s->batch, res->n);
    printf("sgemm peak: %.1f GFLOP/s before (%s), %.1f after (%s); the higher is the limit\n", g->before,
           g->shape_before, g->after, g->shape_after);
    printf("forward : %.2f GFLOP, median %.1f ms, floor %.1f ms at sgemm rate -> %.2fx\n", fwd_flops / 1e9,
           res->fwd.median, fwd_floor, res->fwd.median / fwd_floor);
    printf("backward: %.2f GFLOP, median %.1f ms, floor %.1f ms at sgemm rate -> %.2fx\n", bwd_flops / 1e9,
           res->bwd.median, bwd_floor, res->bwd.median / bwd_floor);
}

int main(int argc, char **argv)
{
    lstm_shape s = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1};
    int nloops = 10;
    int rc = parse_args(argc, argv, &s, &nloops);
    if (rc)
        return rc;
    const runner_ops *cpu = registry_find("cpu");
    lc_error err = {{0}};
    numerics_context ctx;
    const lstm_problem *p;
    const gate_expected *expected;
    harness_config cfg = {.warmup = 2, .min_samples = nloops, .max_samples = nloops};
    harness_result res;
    sgemm_rates g;
    memset(&res, 0, sizeof res);
    rc = 1;
    if (numerics_context_init(&ctx, &s, 17, NULL, &err) || numerics_context_get(&ctx, cpu, &p, &expected, &err)) {
        fprintf(stderr, "cpu_roofline: %s\n", err.msg);
        goto out;
    }
    if (check_runner(cpu, &ctx))
        goto out;
    printf("OpenBLAS: %s, core %s, %d threads\n", openblas_get_config(), openblas_get_corename(),
           openblas_get_num_threads());
    g.before = sgemm_peak(&s, g.shape_before, sizeof g.shape_before);
    cfg.expected = expected;
    if (harness_run(cpu, p, &cfg, &res, &err)) {
        fprintf(stderr, "cpu_roofline: %s\n", err.msg);
        goto out;
    }
    g.after = sgemm_peak(&s, g.shape_after, sizeof g.shape_after);
    print_roofline(&s, &res, &g);
    rc = 0;
out:
    harness_result_free(&res);
    numerics_context_free(&ctx);
    return rc;
}
