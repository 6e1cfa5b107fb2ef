/* cpu_peers: our cpu runner beside its peers on this machine, in one run
 * and one table: oneDNN's LSTM (onednn), PyTorch's own nn.LSTM (torch:lstm,
 * the plugin of tests/torch, C++: no Python in the timed region) and the
 * machine's limit, the time the LSTM's FLOPs take at the best sustained
 * SGEMM rate (OpenBLAS's or oneDNN's: device/roofline.h) measured beside
 * them. Forward and backward, at each
 * thread count asked (default: one, and every core).
 *
 * Every row is measured the way users measure: `lstmcheck bench --print-json
 * full`, one process per (runner, thread count), OPENBLAS_NUM_THREADS set to
 * the count (every CPU runner follows OpenBLAS's, docs/perf.md). So each is
 * gated first (a wrong runner is not timed), timed by the same harness, a
 * plugin's runner isolated in a child with a deadline per call, and no
 * runner shares a process, or spinning threads, with another.
 *
 * OpenMP's wait policy (how long an idle OpenMP thread spins) decides who
 * gets the cores where two thread pools meet: PyTorch's OpenMP pool and
 * OpenBLAS's pthreads take turns in every step, and spinning workers of one
 * slow the other's several times on a machine without spare cores. No one
 * setting is fair to every runner, so by default (--omp-wait-policy each)
 * each is measured under OMP_WAIT_POLICY=ACTIVE and under PASSIVE, and its
 * row is the better, the policy named; `inherit` measures once, under the
 * environment's.
 *
 * One process per runner is one draw of the host's state, which on a shared
 * machine moves a runner by 5-10% from one minute to the next: --rounds N
 * (N > 1) first measures each runner under both policies to pick its own
 * (not counted), then every runner N times at each thread count under its
 * policy, the runners' order reversed every other round, each row the
 * median of its rounds. Then the first runner of --rnns is judged against
 * each other by the verdict rule of `ctest -L perf` (perf/verdict.h) over
 * the rounds' ratios, the two of a ratio measured in the same round
 * (verdict_decide_paired): SAME, FASTER, SLOWER or INCONCLUSIVE. SAME needs
 * 5 rounds; FASTER or SLOWER a sign test below 0.01 over the comparisons
 * printed: 9 rounds at least for 2 comparisons, 10 for 4, 11 for the
 * default 8. A benchmark: the verdicts do not change the exit code.
 *
 *   cpu_peers [--rnns cpu,onednn,torch:lstm] [--plugin PATH]... [--threads 1,all]
 *             [--seqLength T --miniBatch B --inputSize I --hiddenSize H --numLayers L]
 *             [--nloops N] [--warmup N] [--rounds N] [--omp-wait-policy each|inherit] [--lstmcheck PATH]
 * A benchmark, not a test: its output goes to docs/perf.md with this command.
 * Exit 0: every row measured or skipped with its reason; 1: a runner failed
 * its gate or broke; 2: bad input, or lstmcheck could not be run. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "base/proc.h"
#include "check/isolate.h"
#include "device/roofline.h"
#include "model/lstm.h"
#include "perf/stats.h"
#include "perf/verdict.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);

#define MAX_RUNNERS 8
#define MAX_THREAD_COUNTS 8
#define MAX_PLUGINS 4
#define MAX_ROUNDS 64
#define WORD_MAX 32 /* a word of a list: a runner's qualified name (31) and its NUL */

/* What the command line asked for. */
typedef struct peers_args {
    lstm_shape shape;
    int nloops, warmup, rounds;
    char runners[MAX_RUNNERS][WORD_MAX];
    int nrunners;
    int threads[MAX_THREAD_COUNTS];
    int nthreads;
    const char *plugins[MAX_PLUGINS + 1]; /* the torch plugin, when built, and --plugin's */
    int nplugins, default_plugins;
    int inherit_policy; /* once, under this process's OMP_WAIT_POLICY */
    const char *lstmcheck;
} peers_args;

/* One row of the table: a runner (or the limit) at a thread count. */
typedef struct peers_row {
    int threads;
    char name[WORD_MAX];
    char policy[8];   /* the OMP_WAIT_POLICY it was measured under ("-": the environment's) */
    lc_status status; /* LC_OK measured; LC_UNSUPPORTED skipped; else failed or broke */
    double fwd_ms, bwd_ms; /* the median of its rounds' */
    double x_limit[2];     /* the median of its rounds' times over the round's limit; NAN: none */
    double round_ms[2][MAX_ROUNDS]; /* each round's bench medians (the limit: its time): forward, backward */
    int rounds;       /* measured */
    double worst;     /* the gate's worst ratio over the rounds */
    char note[600];   /* the gate's worst ratio, or why it was not measured */
} peers_row;

/* ---- the machine's limit ---- */

/* The limit's rate now (device/roofline.h, as bench measures it), its
 * library and GEMM into shape; 0 when it could not be measured (why into
 * shape). */
static double sgemm_peak(const lstm_shape *s, char *shape, size_t n)
{
    roofline_limit l;
    lc_error err = {{0}};
    if (roofline_measure(LC_DEVICE_CPU, s, &l, &err)) {
        snprintf(shape, n, "%s", err.msg);
        return 0;
    }
    snprintf(shape, n, "%s's %dx%dx%d", l.library, l.m, l.n, l.k);
    return l.gflops;
}

/* ---- the command line ---- */

/* Split a comma list into words (at most max, each non-empty and shorter
 * than WORD_MAX). The count, or -1. */
static int split_list(const char *list, char words[][WORD_MAX], int max)
{
    int n = 0;
    for (const char *w = list;; n++) {
        const size_t len = strcspn(w, ",");
        if (!len || len >= WORD_MAX || n == max)
            return -1;
        memcpy(words[n], w, len);
        words[n][len] = '\0';
        if (!w[len])
            return n + 1;
        w += len + 1;
    }
}

/* --threads: whole counts 1..1024 or "all" (every core), each once */
static int parse_threads(const char *list, peers_args *a)
{
    char words[MAX_THREAD_COUNTS][WORD_MAX];
    int n = split_list(list, words, MAX_THREAD_COUNTS);
    a->nthreads = 0;
    for (int i = 0; i < n; i++) {
        char *end = words[i] + strlen(words[i]); /* "all": nothing left over */
        long v = !strcmp(words[i], "all") ? lc_online_cpus() : strtol(words[i], &end, 10);
        if (*end || v < 1 || v > 1024)
            return 2;
        int seen = 0;
        for (int j = 0; j < a->nthreads; j++)
            seen |= a->threads[j] == v;
        if (!seen)
            a->threads[a->nthreads++] = (int)v;
    }
    return n > 0 ? 0 : 2;
}

/* --rnns: each once, and one line of text */
static int parse_runners(const char *list, peers_args *a)
{
    a->nrunners = split_list(list, a->runners, MAX_RUNNERS);
    for (int i = 0; i < a->nrunners; i++)
        for (int j = 0; j <= i; j++)
            if (j == i ? strcspn(a->runners[i], "\t\n\r") != strlen(a->runners[i]) :
                         !strcmp(a->runners[i], a->runners[j]))
                return 2;
    return a->nrunners > 0 ? 0 : 2;
}

static int *number_flag(peers_args *a, const char *flag)
{
    return !strcmp(flag, "--seqLength") ? &a->shape.seq_length : !strcmp(flag, "--miniBatch") ? &a->shape.batch
         : !strcmp(flag, "--inputSize") ? &a->shape.input_size : !strcmp(flag, "--hiddenSize") ? &a->shape.hidden_size
         : !strcmp(flag, "--numLayers") ? &a->shape.num_layers : !strcmp(flag, "--nloops") ? &a->nloops
         : !strcmp(flag, "--warmup") ? &a->warmup : !strcmp(flag, "--rounds") ? &a->rounds : NULL;
}

static int parse_value(peers_args *a, const char *flag, const char *value)
{
    int *field = number_flag(a, flag);
    if (field) {
        char *end;
        long v = strtol(value, &end, 10);
        if (*end || !*value || v < (field == &a->warmup ? 0 : 1) || v > (field == &a->rounds ? MAX_ROUNDS : 100000))
            return fprintf(stderr, "cpu_peers: %s needs a whole number in range, not '%s'\n", flag, value), 2;
        *field = (int)v;
    } else if (!strcmp(flag, "--rnns")) {
        if (parse_runners(value, a))
            return fprintf(stderr, "cpu_peers: --rnns takes 1 to %d different runners, comma-separated\n",
                           MAX_RUNNERS), 2;
    } else if (!strcmp(flag, "--threads")) {
        if (parse_threads(value, a))
            return fprintf(stderr, "cpu_peers: --threads takes up to %d counts 1..1024 or 'all', comma-separated\n",
                           MAX_THREAD_COUNTS), 2;
    } else if (!strcmp(flag, "--omp-wait-policy")) {
        if (strcmp(value, "each") && strcmp(value, "inherit"))
            return fprintf(stderr, "cpu_peers: --omp-wait-policy is each or inherit, not '%s'\n", value), 2;
        a->inherit_policy = !strcmp(value, "inherit");
    } else if (!strcmp(flag, "--lstmcheck")) {
        a->lstmcheck = value;
    } else if (!strcmp(flag, "--plugin")) {
        for (int i = 0; i < a->nplugins; i++)
            if (!strcmp(a->plugins[i], value))
                return 0; /* the default one, or one named again */
        if (a->nplugins - a->default_plugins == MAX_PLUGINS)
            return fprintf(stderr, "cpu_peers: at most %d --plugin\n", MAX_PLUGINS), 2;
        a->plugins[a->nplugins++] = value;
    } else {
        return fprintf(stderr, "cpu_peers: unknown flag %s (see the top of tests/perf/cpu_peers.c)\n", flag), 2;
    }
    return 0;
}

static int parse_args(int argc, char **argv, peers_args *a)
{
    *a = (peers_args){.shape = {.seq_length = 100, .batch = 64, .input_size = 512, .hidden_size = 512, .num_layers = 1},
                      .nloops = 10, .warmup = 2, .rounds = 1, .lstmcheck = LSTMCHECK_PROGRAM};
    parse_runners("cpu,onednn,torch:lstm", a);
    parse_threads("1,all", a);
#ifdef LSTMCHECK_TORCH_PLUGIN
    a->plugins[a->nplugins++] = LSTMCHECK_TORCH_PLUGIN;
    a->default_plugins = 1;
#endif
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc)
            return fprintf(stderr, "cpu_peers: %s needs a value\n", argv[i]), 2;
        if (parse_value(a, argv[i], argv[i + 1]))
            return 2;
    }
    lc_error err = {{0}};
    if (lstm_shape_validate(&a->shape, &err))
        return fprintf(stderr, "cpu_peers: %s\n", err.msg), 2;
    return 0;
}

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

/* ---- one runner, one `lstmcheck bench` ---- */

/* The bench's argv for runner r (storage in buf). */
static void bench_argv(const peers_args *a, const char *r, char *const *out, char buf[][16])
{
    const char **v = (const char **)out;
    int n = 0, nb = 0;
    v[n++] = a->lstmcheck, v[n++] = "bench", v[n++] = "--device", v[n++] = "cpu", v[n++] = "--rnns", v[n++] = r;
    for (int i = 0; i < a->nplugins; i++)
        v[n++] = "--plugin", v[n++] = a->plugins[i];
    const char *flags[] = {"--seqLength", "--miniBatch", "--inputSize", "--hiddenSize", "--numLayers", "--nloops",
                           "--warmup"};
    const int values[] = {a->shape.seq_length, a->shape.batch, a->shape.input_size, a->shape.hidden_size,
                          a->shape.num_layers, a->nloops, a->warmup};
    for (int i = 0; i < 7; i++) {
        snprintf(buf[nb], 16, "%d", values[i]);
        v[n++] = flags[i], v[n++] = buf[nb++];
    }
    v[n++] = "--print-json", v[n++] = "full", v[n] = NULL;
}

/* bench's JSON for one runner into row. */
static void read_bench_json(const char *text, peers_row *row)
{
    cJSON *doc = cJSON_Parse(text);
    const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runners"), 0);
    const char *gate = cJSON_GetStringValue(cJSON_GetObjectItem(r, "gate"));
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "reason"));
    const char *error = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "error"));
    const cJSON *fwd = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "forward"), "median");
    const cJSON *bwd = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "backward"), "median");
    const double worst = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "gate_worst_ratio"));
    row->status = LC_ERROR;
    if (!gate) {
        snprintf(row->note, sizeof row->note, "lstmcheck bench: %s", error ? error : "no runner in its JSON");
    } else if (!strcmp(gate, "pass") && cJSON_IsNumber(fwd) && cJSON_IsNumber(bwd) && fwd->valuedouble > 0 &&
               bwd->valuedouble > 0 && isfinite(fwd->valuedouble) && isfinite(bwd->valuedouble)) {
        row->status = LC_OK;
        row->fwd_ms = fwd->valuedouble;
        row->bwd_ms = bwd->valuedouble;
        row->worst = worst;
        snprintf(row->note, sizeof row->note, "gate passed, worst ratio %.3g", worst);
    } else {
        row->status = !strcmp(gate, "skip") ? LC_UNSUPPORTED : !strcmp(gate, "fail") ? LC_FAILED : LC_ERROR;
        const char *err = cJSON_GetStringValue(cJSON_GetObjectItem(r, "error"));
        if (!strcmp(gate, "fail") && !why) /* a failure's measure is its worst element */
            snprintf(row->note, sizeof row->note, "gate failed, worst ratio %.3g", worst);
        else
            snprintf(row->note, sizeof row->note, "%s%s", !strcmp(gate, "fail") ? "gate failed: " : "",
                     why ? why : err ? err : gate);
    }
    cJSON_Delete(doc);
}

/* `lstmcheck bench` of runner r at this process's OPENBLAS_NUM_THREADS,
 * under OMP_WAIT_POLICY=policy (NULL: the environment's), into row. Its
 * stderr goes to a scratch log, whose last line says why where it stopped
 * without JSON. */
static void bench_runner(const peers_args *a, const char *r, const char *policy, peers_row *row)
{
    /* lstmcheck bench --device cpu --rnns R, two words per plugin and per number flag, --print-json full, NULL */
    char *argv[6 + 2 * (MAX_PLUGINS + 1) + 2 * 7 + 2 + 1], numbers[7][16], env[64], log[] = "/tmp/cpu_peers.XXXXXX";
    const size_t out_size = 8u << 20;
    char *out = malloc(out_size);
    bench_argv(a, r, argv, numbers);
    snprintf(env, sizeof env, "OMP_WAIT_POLICY=%s", policy ? policy : "");
    int fd = mkstemp(log);
    proc_io io = {.extra_env = policy ? env : NULL, .log_path = fd >= 0 ? log : NULL, .out = out, .out_size = out_size};
    lc_error err = {{0}};
    const int rc = out ? proc_run(argv, &io, &err) : -1;
    if (rc >= 0 && out[0] == '{') {
        read_bench_json(out, row);
    } else {
        char last[512] = "";
        if (fd >= 0)
            proc_log_last_line(log, last, sizeof last);
        row->status = LC_ERROR;
        snprintf(row->note, sizeof row->note, "lstmcheck bench %s: %s", rc < 0 ? "did not run" : "wrote no JSON",
                 rc < 0 ? err.msg : last);
    }
    if (fd >= 0)
        close(fd), unlink(log);
    free(out);
}

/* Whether measure_runner's measurement is a round: only where it is the
 * only one (--rounds 1) or under one policy (inherit). The better of two
 * draws is no draw like the others. */
static int policy_round_counted(const peers_args *a)
{
    return a->rounds == 1 || a->inherit_policy;
}

/* One round's figures into the row's rounds. */
static void add_round(peers_row *row, const peers_row *got)
{
    if (!row->rounds || got->worst > row->worst)
        row->worst = got->worst;
    row->round_ms[0][row->rounds] = got->fwd_ms;
    row->round_ms[1][row->rounds] = got->bwd_ms;
    row->rounds++;
}

/* A bench's figures on stderr, for the record: of round `round`, or
 * (round < 0) of choosing the runner's policy, not counted. */
static void report_bench(const char *r, const peers_row *got, int round)
{
    char what[32] = "choosing its policy";
    if (round >= 0)
        snprintf(what, sizeof what, "round %d", round + 1);
    fprintf(stderr, "cpu_peers: %s at %d thread(s), %s, OMP_WAIT_POLICY %s: ", r, got->threads, what, got->policy);
    if (got->status == LC_OK)
        fprintf(stderr, "%.4g / %.4g ms\n", got->fwd_ms, got->bwd_ms);
    else
        fprintf(stderr, "%s\n", got->note);
}

/* Runner r's wait policy at the current thread count: under each policy,
 * the better (fwd + bwd) is the row's figure and policy; a failure under
 * either is the row's. Its first round where policy_round_counted. */
static void measure_runner(const peers_args *a, const char *r, peers_row *row)
{
    static const char *const policies[] = {"ACTIVE", "PASSIVE"};
    const int n = a->inherit_policy ? 1 : 2;
    for (int i = 0; i < n; i++) {
        peers_row got = *row;
        bench_runner(a, r, a->inherit_policy ? NULL : policies[i], &got);
        snprintf(got.policy, sizeof got.policy, "%s", a->inherit_policy ? "-" : policies[i]);
        report_bench(r, &got, policy_round_counted(a) ? 0 : -1);
        const int broke = got.status != LC_OK && got.status != LC_UNSUPPORTED;
        const int row_broke = row->status != LC_OK && row->status != LC_UNSUPPORTED;
        const int better = got.status == LC_OK &&
                           (row->status != LC_OK || got.fwd_ms + got.bwd_ms < row->fwd_ms + row->bwd_ms);
        if (i == 0 || broke || (better && !row_broke))
            *row = got;
    }
    if (row->status == LC_OK && policy_round_counted(a))
        add_round(row, row);
}

/* A round of runner r under the policy measure_runner chose. Anything but
 * a measurement (a wrong result is not timed; a skip after a measurement
 * is no lack of support) ends its rounds and fails its row. */
static void measure_round(const peers_args *a, const char *r, peers_row *row, int round)
{
    if (row->status != LC_OK)
        return;
    peers_row got = *row;
    bench_runner(a, r, strcmp(row->policy, "-") ? row->policy : NULL, &got);
    report_bench(r, &got, round);
    if (got.status == LC_OK) {
        add_round(row, &got);
        return;
    }
    row->status = got.status == LC_UNSUPPORTED ? LC_ERROR : got.status;
    snprintf(row->note, sizeof row->note, "round %d, after %d measured: %s", round + 1, row->rounds, got.note);
}

/* The median of the rounds' v[k] / over[k] (over NULL: of v itself). */
static double median_of_rounds(const double *v, const double *over, int rounds)
{
    double r[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++)
        r[k] = over ? v[k] / over[k] : v[k];
    return stats_median_select(r, rounds);
}

/* The row's figures: the medians of its rounds, and of their ratios to
 * the limit of the same round (limit NULL: none measured). */
static void finish_row(peers_row *row, const peers_row *limit)
{
    row->x_limit[0] = row->x_limit[1] = NAN;
    if (row->status != LC_OK)
        return;
    for (int ph = 0; ph < 2; ph++) {
        *(ph ? &row->bwd_ms : &row->fwd_ms) = median_of_rounds(row->round_ms[ph], NULL, row->rounds);
        if (limit)
            row->x_limit[ph] = median_of_rounds(row->round_ms[ph], limit->round_ms[ph], row->rounds);
    }
    if (row->rounds > 1)
        snprintf(row->note, sizeof row->note, "gate passed in %d rounds, worst ratio %.3g", row->rounds,
                 row->worst);
}

/* The limit of each round: the LSTM's GEMM FLOPs at the SGEMM rate
 * measured before and after it, the higher (rate[k], rate[k + 1]); its
 * note from the rates and the first and last measurement's GEMM (or why
 * it failed). */
static void finish_limit(const peers_args *a, peers_row *limit, const double *rate, char shape[2][64])
{
    const int rounds = a->rounds;
    double flops[2], lo = INFINITY, hi = 0;
    lstm_gemm_flops(&a->shape, NULL, flops);
    limit->status = LC_OK;
    for (int k = 0; k < rounds; k++) {
        const double peak = rate[k] > rate[k + 1] ? rate[k] : rate[k + 1];
        if (!(peak > 0))
            limit->status = LC_ERROR;
        for (int ph = 0; ph < 2; ph++)
            limit->round_ms[ph][k] = flops[ph] / (peak * 1e9) * 1e3;
    }
    limit->rounds = rounds;
    finish_row(limit, NULL);
    limit->x_limit[0] = limit->x_limit[1] = 1;
    for (int k = 0; k <= rounds; k++)
        lo = rate[k] < lo ? rate[k] : lo, hi = rate[k] > hi ? rate[k] : hi;
    if (rounds == 1)
        snprintf(limit->note, sizeof limit->note, "%.1f GFLOP/s (%s) before, %.1f (%s) after", rate[0], shape[0],
                 rate[1], shape[1]);
    else
        snprintf(limit->note, sizeof limit->note,
                 "a round's the higher SGEMM rate before and after it: %.1f-%.1f GFLOP/s over %d measurements "
                 "(the first %s, the last %s)", lo, hi, rounds + 1, shape[0], shape[1]);
}

/* One thread count: the limit (the SGEMM rate before and after the
 * runners, the higher), then each runner, --rounds times, the order
 * reversed every other round (so that no runner always follows the same
 * one). Rows appended at *nrows. */
static void measure_at(int threads, const peers_args *a, peers_row *rows, int *nrows)
{
    char count[16], rate_shape[2][64];
    snprintf(count, sizeof count, "%d", threads);
    setenv("OPENBLAS_NUM_THREADS", count, 1); /* for the benches */
    openblas_set_num_threads(threads);        /* for the limit, here */
    const int runs = openblas_get_num_threads() == threads;
    peers_row *limit = &rows[*nrows];
    for (int i = 0; i <= a->nrunners; i++) {
        peers_row *row = &rows[(*nrows)++];
        *row = (peers_row){.threads = threads, .status = LC_UNSUPPORTED, .policy = "-"};
        snprintf(row->name, sizeof row->name, "%s", i ? a->runners[i - 1] : "SGEMM limit");
        if (!runs) /* nothing at this count would be what it says */
            snprintf(row->note, sizeof row->note, "OpenBLAS runs %d threads here, not %d", openblas_get_num_threads(),
                     threads);
        else if (i && !registry_find(a->runners[i - 1]))
            snprintf(row->note, sizeof row->note, "%s", absent_reason(a->runners[i - 1]));
    }
    if (!runs)
        return;
    double rate[MAX_ROUNDS + 1];
    const int counted = policy_round_counted(a); /* measure_runner's is round 0 */
    if (counted)
        rate[0] = sgemm_peak(&a->shape, rate_shape[0], sizeof rate_shape[0]);
    for (int i = 0; i < a->nrunners; i++)
        if (registry_find(a->runners[i]))
            measure_runner(a, a->runners[i], &limit[1 + i]);
    for (int round = counted; round < a->rounds; round++) {
        rate[round] = sgemm_peak(&a->shape, round ? rate_shape[1] : rate_shape[0], sizeof rate_shape[0]);
        for (int k = 0; k < a->nrunners; k++) {
            const int i = round % 2 ? a->nrunners - 1 - k : k;
            if (registry_find(a->runners[i]))
                measure_round(a, a->runners[i], &limit[1 + i], round);
        }
    }
    rate[a->rounds] = sgemm_peak(&a->shape, rate_shape[1], sizeof rate_shape[1]);
    finish_limit(a, limit, rate, rate_shape);
    for (int i = 0; i < a->nrunners; i++)
        finish_row(&limit[1 + i], limit->status == LC_OK ? limit : NULL);
}

/* ---- the table ---- */

static void print_row(const peers_row *r)
{
    if (r->status != LC_OK) {
        printf("%-7d  %-12s  %10s  %7s  %11s  %7s  %-7s  %s: %s\n", r->threads, r->name, "-", "-", "-", "-", r->policy,
               r->status == LC_UNSUPPORTED ? "skipped" : "FAILED", r->note);
        return;
    }
    printf("%-7d  %-12s  %10.4g  %6.2fx  %11.4g  %6.2fx  %-7s  %s\n", r->threads, r->name, r->fwd_ms, r->x_limit[0],
           r->bwd_ms, r->x_limit[1], r->policy, r->note); /* x limit NAN where none was measured */
}

static void print_table(const peers_args *a, const peers_row *rows, int nrows)
{
    const lstm_shape *s = &a->shape;
    double flops[2];
    lstm_gemm_flops(s, NULL, flops);
    printf("OpenBLAS: %s, core %s; %d cores online\n", openblas_get_config(), openblas_get_corename(), lc_online_cpus());
    for (int i = 0; i < a->nrunners; i++) {
        const runner_ops *r = registry_find(a->runners[i]);
        if (r)
            printf("%-12s  %s\n", r->name, r->description);
    }
    printf("\ncpu_peers: s%d-l%d-i%d-h%d-b%d, %.3g GFLOP forward, %.3g backward; medians of %d timed "
           "iterations after %d warm-up (lstmcheck bench)%s; x limit = median / limit\n",
           s->seq_length, s->num_layers, s->input_size, s->hidden_size, s->batch, flops[0] / 1e9, flops[1] / 1e9,
           a->nloops, a->warmup, a->rounds > 1 ? ", a row the median of its rounds'" : "");
    printf("%-7s  %-12s  %10s  %7s  %11s  %7s  %-7s  %s\n", "threads", "runner", "forward ms", "x limit", "backward ms",
           "x limit", "OpenMP", "note");
    for (int i = 0; i < nrows; i += a->nrunners + 1)
        for (int j = 0; j <= a->nrunners; j++)
            print_row(&rows[i + j]);
}

/* ---- the first runner against each other ---- */

/* Rows of one thread count: the limit, then one per runner. */
static int pair_measured(const peers_row *at, int peer)
{
    return at[1].status == LC_OK && at[1 + peer].status == LC_OK;
}

/* first against peer at one thread count, forward and backward: the
 * rounds' ratios (the two measured in the same round) and the verdict
 * rule over them, peer standing for the baseline. */
static void print_pair(const peers_row *first, const peers_row *peer, int comparisons)
{
    static const char *const phases[] = {"forward", "backward"};
    char pair[2 * WORD_MAX + 4];
    snprintf(pair, sizeof pair, "%s / %s", first->name, peer->name);
    for (int ph = 0; ph < 2; ph++) {
        double ratio[MAX_ROUNDS];
        int below = 0;
        for (int k = 0; k < first->rounds; k++) {
            ratio[k] = first->round_ms[ph][k] / peer->round_ms[ph][k];
            below += ratio[k] < 1;
        }
        sample_summary s;
        stats_summarize(ratio, first->rounds, &s);
        printf("%-7d  %-26s  %-8s  %6.3f  %6.3f-%-6.3f  %3d of %-3d  ", first->threads, pair, phases[ph], s.median,
               s.min, s.max, below, first->rounds);
        verdict_result v;
        verdict_decide_paired(ratio, first->rounds, 0, comparisons, &v);
        if (v.kind == VERDICT_INCONCLUSIVE && first->rounds < 5)
            printf("INCONCLUSIVE (%d round%s: a verdict needs 5 or more, --rounds)\n", first->rounds,
                   first->rounds > 1 ? "s" : "");
        else if (v.kind == VERDICT_INCONCLUSIVE)
            printf("INCONCLUSIVE (%s)\n", v.reason);
        else
            printf("%s (%+.1f%%, interval %+.1f%%..%+.1f%%, minimum effect %.1f%%)\n", verdict_name(v.kind),
                   100 * v.change, 100 * v.ci_low, 100 * v.ci_high, 100 * v.delta);
    }
}

/* The first runner of --rnns against each other one measured beside it. */
static void print_pairs(const peers_args *a, const peers_row *rows, int nrows)
{
    const int per = a->nrunners + 1;
    int comparisons = 0;
    for (int i = 0; i < nrows; i += per)
        for (int j = 1; j < a->nrunners; j++)
            comparisons += 2 * pair_measured(&rows[i], j);
    if (!comparisons) {
        if (a->nrunners > 1)
            printf("\nno pairs: %s was measured beside none of the others\n", a->runners[0]);
        return;
    }
    printf("\n%s against each peer measured beside it: each round's ratio of medians, and the verdict of "
           "`ctest -L perf` (perf/verdict.h) over the %d round%s' ratios, %d comparisons sharing its false-alarm "
           "rate\n",
           a->runners[0], a->rounds, a->rounds > 1 ? "s" : "", comparisons);
    printf("%-7s  %-26s  %-8s  %6s  %-13s  %-10s  %s\n", "threads", "pair", "phase", "ratio", "rounds' range",
           "below 1", "verdict (change of the first, interval)");
    for (int i = 0; i < nrows; i += per)
        for (int j = 1; j < a->nrunners; j++)
            if (pair_measured(&rows[i], j))
                print_pair(&rows[i + 1], &rows[i + 1 + j], comparisons);
}

int main(int argc, char **argv)
{
    peers_args a;
    if (parse_args(argc, argv, &a))
        return 2;
    lc_error err = {{0}};
    for (int i = 0; i < a.nplugins; i++) /* here too: names checked, descriptions for the legend */
        if (isolate_plugin_load(a.plugins[i], &err))
            return fprintf(stderr, "cpu_peers: %s\n", err.msg), 2;
    for (int i = 0; i < a.nrunners; i++)
        if (!registry_find(a.runners[i]) && !absent_reason(a.runners[i]))
            return fprintf(stderr, "cpu_peers: no runner named %s (a plugin's runner needs its --plugin)\n",
                           a.runners[i]), 2;
    if (access(a.lstmcheck, X_OK))
        return fprintf(stderr, "cpu_peers: cannot run %s (--lstmcheck)\n", a.lstmcheck), 2;
    static peers_row rows[MAX_THREAD_COUNTS * (MAX_RUNNERS + 1)];
    int nrows = 0, failed = 0;
    for (int t = 0; t < a.nthreads; t++)
        measure_at(a.threads[t], &a, rows, &nrows);
    print_table(&a, rows, nrows);
    print_pairs(&a, rows, nrows);
    for (int i = 0; i < nrows; i++)
        failed |= rows[i].status != LC_OK && rows[i].status != LC_UNSUPPORTED;
    return failed;
}
