/* cpu_peers: our cpu runner beside its peers on this machine, in one run
 * and one table: oneDNN's LSTM (onednn), PyTorch's own nn.LSTM (torch:lstm,
 * the plugin of tests/torch, C++: no Python in the timed region) and the
 * machine's limit, the time the LSTM's FLOPs take at the best OpenBLAS
 * SGEMM rate measured beside them. Forward and backward, at each thread
 * count asked (default: one, and every core). Every implementation runs on
 * the same thread count (each follows OpenBLAS's, docs/perf.md) and is
 * timed by the same harness (perf/harness.h: warm-up, then zero_grads
 * untimed, forward, backward, each timed, medians), after passing the
 * numerics gate at that thread count: a wrong runner is not timed.
 * OpenMP's wait policy (how long an idle OpenMP thread spins) decides who
 * gets the cores where two thread pools meet: PyTorch's OpenMP pool and
 * OpenBLAS's pthreads take turns in every step, and spinning workers of
 * one slow the other's several times on a machine without spare cores.
 * So by default (--omp-wait-policy each) the whole run is made twice, in
 * a child under OMP_WAIT_POLICY=ACTIVE and one under PASSIVE (libgomp reads
 * it when it loads), and each row is the better of the two, the policy
 * named; --omp-wait-policy inherit measures here, under the environment's.
 * A benchmark, not a test: its output goes to docs/perf.md with this command.
 *   cpu_peers [--rnns cpu,onednn,torch:lstm] [--plugin PATH]... [--threads 1,all]
 *             [--seqLength T --miniBatch B --inputSize I --hiddenSize H --numLayers L]
 *             [--nloops N] [--warmup N] [--omp-wait-policy each|inherit]
 * Exit 0: every row measured or skipped with its reason; 1: a runner failed
 * its gate or broke; 2: bad input. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/proc.h"
#include "check/gate.h"
#include "check/isolate.h"
#include "device/timer.h"
#include "perf/harness.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);

#define MAX_RUNNERS 8
#define MAX_THREAD_COUNTS 8
#define MAX_PLUGINS 4

/* What the command line asked for. */
typedef struct peers_args {
    lstm_shape shape;
    int nloops, warmup;
    const char *runners[MAX_RUNNERS];
    int nrunners;
    int threads[MAX_THREAD_COUNTS];
    int nthreads;
    const char *plugins[MAX_PLUGINS];
    int nplugins;
    int inherit_policy; /* measure here, under this process's OMP_WAIT_POLICY */
    int rows_out;       /* print rows for the parent, not the table */
} peers_args;

/* One row of the table: a runner (or the limit) at a thread count. */
typedef struct peers_row {
    int threads;
    char name[32];
    char policy[8];      /* OMP_WAIT_POLICY it was measured under */
    lc_status status;    /* LC_OK measured; LC_UNSUPPORTED skipped; else failed */
    double fwd_ms, bwd_ms;
    char note[600];      /* the gate's worst ratio, or why it was not measured */
} peers_row;

/* ---- the machine's limit ---- */

/* best-of-reps throughput of an (m x k)(k x n) sgemm; 0 without memory */
static double sgemm_gflops(int m, int n, int k, int reps)
{
    float *a = malloc((size_t)m * k * sizeof *a), *b = malloc((size_t)k * n * sizeof *b),
          *c = malloc((size_t)m * n * sizeof *c);
    double best = 0;
    if (a && b && c) {
        for (size_t i = 0; i < (size_t)m * k; i++)
            a[i] = (float)(i % 7) * 0.1f;
        for (size_t i = 0; i < (size_t)k * n; i++)
            b[i] = (float)(i % 5) * 0.1f;
        for (int r = 0; r < reps; r++) {
            double t0 = wall_seconds();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
            double rate = 2.0 * m * (double)n * k / (wall_seconds() - t0) / 1e9;
            if (rate > best)
                best = rate;
        }
    }
    free(a); free(b); free(c);
    return best;
}

/* The best rate over square sizes and the LSTM's own GEMM shapes (input
 * projection, recurrent step, weight gradient, input gradient). */
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

/* The forward's FLOPs: per layer and step the two GEMMs into the gates;
 * the backward does twice as many (dgates x both weights, both weight
 * gradients). */
static double forward_flops(const lstm_shape *s)
{
    double flops = 0;
    for (int l = 0; l < s->num_layers; l++)
        flops += 2.0 * s->seq_length * s->batch * 4.0 * s->hidden_size * (lstm_layer_input_size(s, l) + s->hidden_size);
    return flops;
}

/* ---- the command line ---- */

/* Split a comma list into out (at most max words, in a copy: the
 * arguments go to the children unchanged). */
static int split_list(const char *arg, const char **out, int max)
{
    int n = 0;
    char *list = strdup(arg);
    if (!list)
        return -1;
    for (char *w = strtok(list, ","); w; w = strtok(NULL, ","))
        if (n < max)
            out[n++] = w;
        else
            return -1;
    return n;
}

/* --threads: counts > 0, "all" for every core; a count once */
static int parse_threads(const char *list, peers_args *a)
{
    const char *words[MAX_THREAD_COUNTS];
    int n = split_list(list, words, MAX_THREAD_COUNTS);
    if (n <= 0)
        return 2;
    for (int i = 0; i < n; i++) {
        int v = !strcmp(words[i], "all") ? lc_online_cpus() : atoi(words[i]);
        if (v <= 0 || v > 1024)
            return 2;
        int seen = 0;
        for (int j = 0; j < a->nthreads; j++)
            seen |= a->threads[j] == v;
        if (!seen)
            a->threads[a->nthreads++] = v;
    }
    return 0;
}

static int parse_value(peers_args *a, const char *flag, const char *value)
{
    int *field = !strcmp(flag, "--seqLength") ? &a->shape.seq_length : !strcmp(flag, "--miniBatch") ? &a->shape.batch
               : !strcmp(flag, "--inputSize") ? &a->shape.input_size : !strcmp(flag, "--hiddenSize") ? &a->shape.hidden_size
               : !strcmp(flag, "--numLayers") ? &a->shape.num_layers : !strcmp(flag, "--nloops") ? &a->nloops
               : !strcmp(flag, "--warmup") ? &a->warmup : NULL;
    if (field) {
        char *end;
        long v = strtol(value, &end, 10);
        if (*end || v < (field == &a->warmup ? 0 : 1) || v > 100000)
            return fprintf(stderr, "cpu_peers: %s needs a whole number in range, not '%s'\n", flag, value), 2;
        *field = (int)v;
    } else if (!strcmp(flag, "--rnns")) {
        a->nrunners = split_list(value, a->runners, MAX_RUNNERS);
        if (a->nrunners <= 0)
            return fprintf(stderr, "cpu_peers: --rnns takes 1 to %d comma-separated runners\n", MAX_RUNNERS), 2;
    } else if (!strcmp(flag, "--threads")) {
        a->nthreads = 0;
        if (parse_threads(value, a))
            return fprintf(stderr, "cpu_peers: --threads takes up to %d counts > 0 or 'all', comma-separated\n",
                           MAX_THREAD_COUNTS), 2;
    } else if (!strcmp(flag, "--omp-wait-policy")) {
        if (strcmp(value, "each") && strcmp(value, "inherit"))
            return fprintf(stderr, "cpu_peers: --omp-wait-policy is each or inherit, not '%s'\n", value), 2;
        a->inherit_policy = !strcmp(value, "inherit");
    } else if (!strcmp(flag, "--rows")) { /* internal: the parent's child */
        a->rows_out = !strcmp(value, "1");
    } else if (!strcmp(flag, "--plugin")) {
        if (a->nplugins == MAX_PLUGINS)
            return fprintf(stderr, "cpu_peers: at most %d --plugin\n", MAX_PLUGINS), 2;
        a->plugins[a->nplugins++] = value;
    } else {
        return fprintf(stderr, "cpu_peers: unknown flag %s (see the top of tests/perf/cpu_peers.c)\n", flag), 2;
    }
    return 0;
}

static int parse_args(int argc, char **argv, peers_args *a)
{
    const char *default_rnns = "cpu,onednn,torch:lstm", *default_threads = "1,all";
    *a = (peers_args){.shape = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1},
                      .nloops = 10, .warmup = 2};
    a->nrunners = split_list(default_rnns, a->runners, MAX_RUNNERS);
    parse_threads(default_threads, a);
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc)
            return fprintf(stderr, "cpu_peers: %s needs a value\n", argv[i]), 2;
        if (parse_value(a, argv[i], argv[i + 1]))
            return 2;
    }
#ifdef LSTMCHECK_TORCH_PLUGIN
    if (!a->nplugins)
        a->plugins[a->nplugins++] = LSTMCHECK_TORCH_PLUGIN;
#endif
    return 0;
}

/* ---- measuring ---- */

/* Why a runner of the list is not here (NULL: a name of nothing, bad
 * input): the torch plugin, when this build has none. */
static const char *absent_reason(const char *name)
{
#ifdef LSTMCHECK_TORCH_ABSENT
    if (!strcmp(name, "torch:lstm"))
        return LSTMCHECK_TORCH_ABSENT;
#endif
    (void)name;
    return NULL;
}

/* Gate r at the current thread count, then time it into row. */
static void measure_runner(const runner_ops *r, numerics_context *ctx, const peers_args *a, peers_row *row)
{
    lc_error err = {{0}};
    gate_report rep;
    const lstm_problem *p;
    const gate_expected *expected;
    if ((row->status = r->available(&err)) != LC_OK) {
        snprintf(row->note, sizeof row->note, "%s", err.msg);
        return;
    }
    gate_run(r, ctx, NULL, &rep);
    if ((row->status = rep.status) != LC_OK) {
        gate_format_summary(r, &rep, row->note, sizeof row->note);
        return;
    }
    harness_config cfg = {.warmup = a->warmup, .min_samples = a->nloops, .max_samples = a->nloops};
    harness_result res;
    memset(&res, 0, sizeof res);
    if ((row->status = numerics_context_timed(ctx, r, &p, &expected, &err)) == LC_OK) {
        cfg.expected = expected;
        row->status = harness_run(r, p, &cfg, &res, &err);
    }
    if (row->status == LC_OK) {
        row->fwd_ms = res.fwd.median;
        row->bwd_ms = res.bwd.median;
        snprintf(row->note, sizeof row->note, "gate passed, worst ratio %.3g", rep.worst.ratio);
    } else {
        snprintf(row->note, sizeof row->note, "%s", err.msg);
    }
    harness_result_free(&res);
}

/* One thread count: the limit (the SGEMM rate before and after the runners,
 * the higher), then each runner. Rows appended at *nrows. */
static void measure_at(int threads, const peers_args *a, numerics_context *ctx, peers_row *rows, int *nrows)
{
    char before_shape[64], after_shape[64];
    openblas_set_num_threads(threads);
    peers_row *limit = &rows[(*nrows)++];
    *limit = (peers_row){.threads = threads, .name = "SGEMM limit", .status = LC_OK};
    if (openblas_get_num_threads() != threads) { /* nothing at this count is what it says */
        limit->status = LC_UNSUPPORTED;
        snprintf(limit->note, sizeof limit->note, "OpenBLAS runs %d threads here, not %d", openblas_get_num_threads(),
                 threads);
        return;
    }
    double before = sgemm_peak(&a->shape, before_shape, sizeof before_shape);
    for (int i = 0; i < a->nrunners; i++) {
        peers_row *row = &rows[(*nrows)++];
        *row = (peers_row){.threads = threads, .status = LC_UNSUPPORTED};
        snprintf(row->name, sizeof row->name, "%s", a->runners[i]);
        const runner_ops *r = registry_find(a->runners[i]);
        if (r)
            measure_runner(r, ctx, a, row);
        else
            snprintf(row->note, sizeof row->note, "%s", absent_reason(a->runners[i]));
    }
    double after = sgemm_peak(&a->shape, after_shape, sizeof after_shape);
    double peak = before > after ? before : after;
    if (peak <= 0) {
        limit->status = LC_ERROR;
        snprintf(limit->note, sizeof limit->note, "no memory for the SGEMM operands");
        return;
    }
    limit->fwd_ms = forward_flops(&a->shape) / (peak * 1e9) * 1e3;
    limit->bwd_ms = 2 * limit->fwd_ms;
    snprintf(limit->note, sizeof limit->note, "%.1f GFLOP/s (%s) before, %.1f (%s) after", before, before_shape, after,
             after_shape);
}

/* ---- the table ---- */

static void print_table(const peers_args *a, const peers_row *rows, int nrows)
{
    const lstm_shape *s = &a->shape;
    printf("\ncpu_peers: s%d-l%d-i%d-h%d-b%d, %.3g GFLOP forward, twice that backward; medians of %d timed "
           "iterations after %d warm-up; x limit = median / limit\n",
           s->seq_length, s->num_layers, s->input_size, s->hidden_size, s->batch, forward_flops(s) / 1e9, a->nloops,
           a->warmup);
    printf("%-7s  %-12s  %10s  %7s  %11s  %7s  %-7s  %s\n", "threads", "runner", "forward ms", "x limit", "backward ms",
           "x limit", "OpenMP", "note");
    const peers_row *limit = NULL;
    for (int i = 0; i < nrows; i++) {
        const peers_row *r = &rows[i];
        if (!strcmp(r->name, "SGEMM limit"))
            limit = r;
        if (r->status != LC_OK) {
            printf("%-7d  %-12s  %10s  %7s  %11s  %7s  %-7s  %s: %s\n", r->threads, r->name, "-", "-", "-", "-",
                   r->status == LC_UNSUPPORTED ? "-" : r->policy, r->status == LC_UNSUPPORTED ? "skipped" : "FAILED",
                   r->note);
            continue;
        }
        /* no limit at this count: the times alone */
        const int has_limit = limit && limit->status == LC_OK;
        const double fwd_floor = has_limit ? limit->fwd_ms : NAN;
        const double bwd_floor = has_limit ? limit->bwd_ms : NAN;
        printf("%-7d  %-12s  %10.4g  %6.2fx  %11.4g  %6.2fx  %-7s  %s\n", r->threads, r->name, r->fwd_ms,
               r->fwd_ms / fwd_floor, r->bwd_ms, r->bwd_ms / bwd_floor, r->policy, r->note);
    }
}

/* What each row is: the runners' own descriptions, and the BLAS. */
static void print_legend(const peers_args *a)
{
    printf("OpenBLAS: %s, core %s; %d cores online\n", openblas_get_config(), openblas_get_corename(), lc_online_cpus());
    for (int i = 0; i < a->nrunners; i++) {
        const runner_ops *r = registry_find(a->runners[i]);
        if (r)
            printf("%-12s  %s\n", r->name, r->description);
    }
}

/* ---- one run per wait policy ---- */

#define ROW_FORMAT "row\t%d\t%s\t%d\t%.17g\t%.17g\t%s\n"

/* The rows of one measurement (in this process), for the parent. */
static void print_rows(const peers_row *rows, int nrows)
{
    for (int i = 0; i < nrows; i++)
        printf(ROW_FORMAT, rows[i].threads, rows[i].name, (int)rows[i].status, rows[i].fwd_ms, rows[i].bwd_ms,
               rows[i].note);
}

/* Read a child's rows; their number, or -1 for a line that is not one. */
static int parse_rows(char *out, const char *policy, peers_row *rows, int max)
{
    int n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        peers_row *r = &rows[n];
        int status, used = 0;
        if (n == max || sscanf(line, "row\t%d\t%31[^\t]\t%d\t%lf\t%lf\t%n", &r->threads, r->name, &status,
                               &r->fwd_ms, &r->bwd_ms, &used) != 5 || !used)
            return -1;
        r->status = (lc_status)status;
        snprintf(r->note, sizeof r->note, "%s", line + used);
        snprintf(r->policy, sizeof r->policy, "%s", policy);
        n++;
    }
    return n;
}

/* Run this program again under OMP_WAIT_POLICY=policy, measuring there;
 * its rows, or -1 with the reason printed. */
static int run_under(const char *policy, int argc, char **argv, peers_row *rows, int max)
{
    char *args[64], env[64], *out = malloc(1 << 20);
    int n = 0;
    args[n++] = "/proc/self/exe";
    for (int i = 1; i < argc && n < 58; i++)
        args[n++] = argv[i];
    args[n++] = "--omp-wait-policy", args[n++] = "inherit", args[n++] = "--rows", args[n++] = "1", args[n] = NULL;
    snprintf(env, sizeof env, "OMP_WAIT_POLICY=%s", policy);
    proc_io io = {.extra_env = env, .log_path = "/dev/stderr", .out = out, .out_size = 1 << 20};
    lc_error err = {{0}};
    int rc = out ? proc_run(args, &io, &err) : -1;
    int nrows = rc == 0 || rc == 1 ? parse_rows(out, policy, rows, max) : -1;
    if (nrows < 0)
        fprintf(stderr, "cpu_peers: the run under %s %s\n", env,
                rc < 0 ? err.msg : rc > 1 ? "stopped (its error above)" : "printed what is not a row");
    free(out);
    return nrows;
}

/* Each row the better of its two runs (the limit: the higher rate); a
 * failure under either policy is the row's. */
static void merge_rows(peers_row *best, const peers_row *other, int nrows)
{
    for (int i = 0; i < nrows; i++) {
        const peers_row *o = &other[i];
        peers_row *b = &best[i];
        if ((o->status != LC_OK && o->status != LC_UNSUPPORTED) ||
            (o->status == LC_OK && (b->status == LC_UNSUPPORTED || (b->status == LC_OK && o->fwd_ms + o->bwd_ms < b->fwd_ms + b->bwd_ms))))
            *b = *o;
    }
}

static int measure_each_policy(int argc, char **argv, peers_row *rows, int max)
{
    peers_row *passive = malloc((size_t)max * sizeof *passive);
    int n = passive ? run_under("ACTIVE", argc, argv, rows, max) : -1;
    int m = n >= 0 ? run_under("PASSIVE", argc, argv, passive, max) : -1;
    if (m >= 0 && m != n)
        fprintf(stderr, "cpu_peers: the two runs gave %d and %d rows\n", n, m);
    if (m == n && n >= 0)
        merge_rows(rows, passive, n);
    free(passive);
    return m == n ? n : -1;
}

/* Every row measured here, under this process's OpenMP environment. */
static int measure_here(const peers_args *a, peers_row *rows)
{
    lc_error err = {{0}};
    numerics_context ctx;
    if (numerics_context_init(&ctx, &a->shape, 17, NULL, &err))
        return fprintf(stderr, "cpu_peers: %s\n", err.msg), -1;
    const char *policy = getenv("OMP_WAIT_POLICY");
    int nrows = 0;
    for (int t = 0; t < a->nthreads; t++) {
        int first = nrows;
        measure_at(a->threads[t], a, &ctx, rows, &nrows);
        for (int i = first; i < nrows; i++)
            snprintf(rows[i].policy, sizeof rows[i].policy, "%s", policy ? policy : "-");
        fprintf(stderr, "cpu_peers: %d thread(s) measured (OMP_WAIT_POLICY %s)\n", a->threads[t], policy ? policy : "unset");
    }
    numerics_context_free(&ctx);
    return nrows;
}

int main(int argc, char **argv)
{
    peers_args a;
    if (parse_args(argc, argv, &a))
        return 2;
    lc_error err = {{0}};
    for (int i = 0; i < a.nplugins; i++)
        if (isolate_plugin_load(a.plugins[i], &err))
            return fprintf(stderr, "cpu_peers: %s\n", err.msg), 2;
    for (int i = 0; i < a.nrunners; i++)
        if (!registry_find(a.runners[i]) && !absent_reason(a.runners[i]))
            return fprintf(stderr, "cpu_peers: no runner named %s (a plugin's runner needs its --plugin)\n",
                           a.runners[i]), 2;
    enum { MAX_ROWS = MAX_THREAD_COUNTS * (MAX_RUNNERS + 1) };
    static peers_row rows[MAX_ROWS];
    int nrows = a.inherit_policy ? measure_here(&a, rows) : measure_each_policy(argc, argv, rows, MAX_ROWS);
    if (nrows < 0)
        return 2;
    if (a.rows_out) {
        print_rows(rows, nrows);
    } else {
        print_legend(&a);
        print_table(&a, rows, nrows);
    }
    int failed = 0;
    for (int i = 0; i < nrows; i++)
        failed |= rows[i].status != LC_OK && rows[i].status != LC_UNSUPPORTED;
    return failed;
}
