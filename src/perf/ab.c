/* A/B comparison of two lstmcheck binaries (see ab.h). */
#include "perf/ab.h"

#include "base/proc.h"
#include "perf/stats.h"
#include "perf/verdict.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4 /* processes per block: A B B A or B A A B */
/* Samples per round of a measuring process unless asked (--nloops): the
 * unit is the process, so many short processes resolve more than a few long
 * ones (a process of the cpu small shape: 1.5 s instead of 5.5 s). */
#define AB_SAMPLES_PER_ROUND 50
/* How far beyond the critical value the most extreme ranking must reach
 * before the budget may end a decision (one or two inversions allowed). */
#define AB_SIGNIFICANCE_MARGIN 0.5

/* Process orders of successive blocks: each cancels a linear drift of the
 * machine between the sides. */
static const char *const block_orders[] = {"ABBA", "BAAB"};

typedef struct ab_run {
    const ab_side *sides;
    const ab_request *rq;
    ab_outcome *out;
    int blocks;
    lc_status failure;
} ab_run;

/* The argument vector of one measuring process. */
static void side_argv(const ab_side *side, const ab_request *rq, const char *dir, char *argv[], char store[][32])
{
    int k = 0, st = 0;
#define NUM(flag, v) (argv[k++] = flag, snprintf(store[st], 32, "%lld", (long long)(v)), argv[k++] = store[st++])
    argv[k++] = (char *)side->exe;
    argv[k++] = "baseline";
    argv[k++] = "update";
    argv[k++] = "--device";
    argv[k++] = (char *)lc_device_name(rq->device);
    argv[k++] = "--rnns";
    argv[k++] = (char *)rq->runner;
    NUM("--seqLength", rq->shape.seq_length);
    NUM("--numLayers", rq->shape.num_layers);
    NUM("--inputSize", rq->shape.input_size);
    NUM("--hiddenSize", rq->shape.hidden_size);
    NUM("--miniBatch", rq->shape.batch);
    NUM("--seed", rq->seed);
    if (rq->warmup >= 0)
        NUM("--warmup", rq->warmup);
    NUM("--nloops", rq->nloops > 0 ? rq->nloops : AB_SAMPLES_PER_ROUND);
#undef NUM
    argv[k++] = "--baseline-dir";
    argv[k++] = (char *)dir;
    argv[k++] = "--no-progress";
    if (side->allow_dirty)
        argv[k++] = "--allow-dirty";
    argv[k] = NULL;
}

/* The entry a side's process wrote into dir. */
static int read_side_entry(const char *dir, const ab_request *rq, baseline_entry *e, lc_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096] = "";
    while (d && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, ".json"))
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    }
    if (d)
        closedir(d);
    if (!path[0]) {
        lc_error_set(err, "the measuring process wrote no baseline file into %s", dir);
        return 1;
    }
    baseline_file b;
    if (baseline_load(path, &b, err) != LC_OK)
        return 1;
    baseline_entry *found = baseline_find(&b, rq->runner, &rq->shape);
    if (!found) {
        lc_error_set(err, "%s has no entry for %s", path, rq->runner);
        baseline_free(&b);
        return 1;
    }
    *e = *found;
    memset(found, 0, sizeof *found); /* the arrays are e's now */
    baseline_free(&b);
    return 0;
}

/* One process of one side: its baseline entry, read from a scratch folder. */
static int run_side_process(ab_run *run, int side, baseline_entry *e, lc_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], log[4200];
    snprintf(dir, sizeof dir, "%s/lstmcheck-ab-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        lc_error_set(err, "cannot create a scratch folder in %s", tmp && *tmp ? tmp : "/tmp");
        return 1;
    }
    snprintf(log, sizeof log, "%s/log", dir);
    char *argv[40], store[8][32];
    side_argv(&run->sides[side], run->rq, dir, argv, store);
    proc_io io = {.extra_env = run->sides[side].env, .log_path = log};
    int status = proc_run(argv, &io, err);
    if (status > 0) {
        char last[512];
        proc_log_last_line(log, last, sizeof last);
        lc_error_set(err, "side %c (%s) exited %d: %s", "AB"[side], run->sides[side].exe, status, last);
    }
    int rc = status != 0 || read_side_entry(dir, run->rq, e, err);
    proc_remove_dir(dir);
    return rc;
}

/* One process of one side: its times pooled into acc (the report and the
 * control drift) and its median ratios into fwd, bwd (the decision). */
static int measure_side(ab_run *run, int side, baseline_entry *acc, double *fwd, double *bwd, lc_error *err)
{
    baseline_entry e;
    memset(&e, 0, sizeof e);
    if (run_side_process(run, side, &e, err))
        return 1;
    ab_outcome *o = run->out;
    if (!o->control[0])
        snprintf(o->control, sizeof o->control, "%s", e.control);
    int rc = strcmp(o->control, e.control) != 0;
    if (rc)
        lc_error_set(err, "the sides time different control workloads ('%s', '%s'): their ratios do not compare",
                     o->control, e.control);
    snprintf(o->commit[side], sizeof o->commit[side], "%s", e.git_commit);
    o->processes[side]++;
    sample_summary f, b;
    stats_summarize(e.fwd_ratio.samples, e.fwd_ratio.n, &f);
    stats_summarize(e.bwd_ratio.samples, e.bwd_ratio.n, &b);
    *fwd = f.median;
    *bwd = b.median;
    rc = rc || baseline_series_append(&acc->fwd, e.fwd.samples, e.fwd.n, err) ||
         baseline_series_append(&acc->bwd, e.bwd.samples, e.bwd.n, err) ||
         baseline_series_append(&acc->ctl, e.ctl.samples, e.ctl.n, err);
    acc->rounds += e.rounds;
    baseline_entry_free(&e);
    return rc;
}

/* Relative sd of the values, pooled over both sides (each around its own
 * mean). */
static double pooled_rel_sd(const baseline_series *a, const baseline_series *b)
{
    const baseline_series *sides[2] = {a, b};
    double ss = 0, total = 0;
    int df = 0, n = 0;
    for (int k = 0; k < 2; k++) {
        const baseline_series *s = sides[k];
        if (s->n < 2)
            continue;
        double mean = 0;
        for (int i = 0; i < s->n; i++)
            mean += s->samples[i] / s->n;
        for (int i = 0; i < s->n; i++)
            ss += (s->samples[i] - mean) * (s->samples[i] - mean);
        df += s->n - 1;
        total += mean * s->n;
        n += s->n;
    }
    return df > 0 && total > 0 ? sqrt(ss / df) / (total / n) : 0;
}


/* perf_source.measure: one block of processes in alternating order.
 *
 * The unit of the decision is the process: its median ratios (the samples of
 * one process share its memory placement and the machine's state, so they
 * are not independent). Each block's four process medians are divided by
 * their mean: what the machine's state did to the whole block (a neighbour,
 * another clock), which both sides shared, cancels; what stays is how the
 * sides differ within the block. Measured on this 2-core VM under load, this
 * halved the spread of the A/B change of unchanged code (docs/perf.md). */
static int measure_block(void *ctx, baseline_entry *base, baseline_entry *cur, lc_error *err)
{
    ab_run *run = ctx;
    const char *order = block_orders[run->blocks++ % 2];
    double fwd[BLOCK], bwd[BLOCK], fwd_mean = 0, bwd_mean = 0;
    for (int k = 0; k < BLOCK; k++) {
        const int side = order[k] == 'B';
        if (measure_side(run, side, side ? cur : base, &fwd[k], &bwd[k], err)) {
            run->failure = side ? LC_ERROR : LC_UNSUPPORTED;
            return 1;
        }
        fwd_mean += fwd[k] / BLOCK;
        bwd_mean += bwd[k] / BLOCK;
    }
    for (int k = 0; k < BLOCK; k++) {
        baseline_entry *acc = order[k] == 'B' ? cur : base;
        const double f = fwd[k] / fwd_mean, b = bwd[k] / bwd_mean;
        if (baseline_series_append(&acc->fwd_ratio, &f, 1, err) || baseline_series_append(&acc->bwd_ratio, &b, 1, err))
            return 1;
    }
    /* The verdict's noise term stands for run-to-run noise that its interval
     * cannot see. Here the runs are the interval's own units (processes,
     * interleaved and measured now), so it sees them: the term is zero and
     * the minimum effect is the rule's fixed floor. The spread is reported. */
    base->noise_fwd = base->noise_bwd = 0;
    run->out->process_noise_fwd = pooled_rel_sd(&base->fwd_ratio, &cur->fwd_ratio);
    run->out->process_noise_bwd = pooled_rel_sd(&base->bwd_ratio, &cur->bwd_ratio);
    return 0;
}

/* The fewest blocks with which the Mann-Whitney test over process medians
 * (n = 2 per side per block) can be significant at the verdict's level at
 * all, with AB_SIGNIFICANCE_MARGIN to spare: its z for a complete separation
 * is (n^2/2 - 1/2) / sqrt(n^2 (2n + 1) / 12). With alpha/m = 0.01/4 that is
 * 5 blocks; fewer, and a budget would turn every real change INCONCLUSIVE. */
static int ab_min_blocks(int comparisons)
{
    const double z_crit = stats_normal_upper_quantile(VERDICT_ALPHA / (comparisons > 1 ? comparisons : 1) / 2);
    int k = 1;
    for (; k < 64; k++) {
        const double n = 2.0 * k;
        if ((n * n / 2 - 0.5) / sqrt(n * n * (2 * n + 1) / 12) >= z_crit + AB_SIGNIFICANCE_MARGIN)
            break;
    }
    return k;
}

lc_status ab_compare(const ab_side sides[2], const ab_request *rq, const perf_settings *s, int comparisons,
                     ab_outcome *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    ab_run run = {.sides = sides, .rq = rq, .out = out, .failure = LC_OK};
    perf_source src = {.measure = measure_block, .ctx = &run, .fixed_base = NULL,
                       .min_rounds = ab_min_blocks(comparisons)};
    if (perf_compare_source(&src, s, comparisons, &out->cmp, err))
        return run.failure != LC_OK ? run.failure : LC_ERROR;
    return LC_OK;
}
