/* A/B comparison of two lstmcheck binaries (see ab.h). */
#include "perf/ab.h"

#include "base/proc.h"
#include "base/status.h"
#include "perf/stats.h"
#include "perf/verdict.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4 /* processes per block: A B B A or B A A B */
/* How far beyond the critical value the most extreme ranking must reach
 * before the budget may end a decision (one or two inversions allowed). */
#define AB_SIGNIFICANCE_MARGIN 0.5
/* Blocks left out in a row (a side could not measure here) that end the
 * comparison INCONCLUSIVE: the host stays in that state for a while, and a
 * side that can never measure here must not spin through the budget. */
#define AB_MAX_LEFT_OUT_IN_A_ROW 3

/* Process orders of successive blocks: each cancels a linear drift of the
 * machine between the sides. */
static const char *const block_orders[] = {"ABBA", "BAAB"};

typedef struct ab_run {
    const ab_side *sides;
    const char *const *measure;
    ab_outcome *out;
    int blocks;
    int left_out_in_a_row;
    lc_status failure;
} ab_run;

/* The argument vector of one measuring process (free it, not its words);
 * NULL when out of memory. */
static char **side_argv(const ab_side *side, const char *const *measure, const char *dir)
{
    int n = 0;
    while (measure[n])
        n++;
    char **argv = malloc((size_t)(n + 6) * sizeof *argv);
    if (!argv)
        return NULL;
    int k = 0;
    argv[k++] = (char *)side->exe;
    for (int i = 0; i < n; i++)
        argv[k++] = (char *)measure[i];
    argv[k++] = "--baseline-dir";
    argv[k++] = (char *)dir;
    argv[k++] = "--no-progress";
    if (side->allow_dirty)
        argv[k++] = "--allow-dirty";
    argv[k] = NULL;
    return argv;
}

/* The one entry a side's process wrote into dir (it measured one runner
 * at one shape). */
static int read_side_entry(const char *dir, baseline_entry *e, lc_error *err)
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
    if (b.nentries != 1) {
        lc_error_set(err, "%s has %d entries, not the one of the runner and shape measured", path, b.nentries);
        baseline_free(&b);
        return 1;
    }
    *e = b.entries[0];
    memset(&b.entries[0], 0, sizeof b.entries[0]); /* the arrays are e's now */
    baseline_free(&b);
    return 0;
}

/* Why a side's process stopped: its last line that says an error
 * ("lstmcheck: ..." on stderr, a gate's "WRONG ..." or "ERROR ..."), since
 * stdout's summary lines reach the log only at exit, after them; else its
 * last line. */
static void side_reason(const char *log, char *buf, size_t n)
{
    static const char *const tags[] = {"lstmcheck: ", "WRONG ", "ERROR "};
    char line[1024];
    FILE *f = fopen(log, "r");
    buf[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        for (int t = 0; t < 3; t++)
            if (!strncmp(line, tags[t], strlen(tags[t])))
                snprintf(buf, n, "%s", line + (t ? 0 : strlen(tags[t])));
    }
    if (f)
        fclose(f);
    if (!buf[0])
        proc_log_last_line(log, buf, n);
}

/* One process of one side: its baseline entry, read from a scratch folder.
 * LC_OK; LC_UNSUPPORTED when the side could not measure here (exit 3: the
 * host's state, such as a noise beyond what a baseline holds); LC_FAILED
 * when side B's runner gave wrong results in its timed calls; LC_ERROR. */
static lc_status run_side_process(ab_run *run, int side, baseline_entry *e, lc_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], log[4200];
    snprintf(dir, sizeof dir, "%s/lstmcheck-ab-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        lc_error_set(err, "cannot create a scratch folder in %s", tmp && *tmp ? tmp : "/tmp");
        return 1;
    }
    snprintf(log, sizeof log, "%s/log", dir);
    char **argv = side_argv(&run->sides[side], run->measure, dir);
    proc_io io = {.extra_env = run->sides[side].env, .log_path = log};
    int status = argv ? proc_run(argv, &io, err) : -1;
    if (!argv)
        lc_error_set(err, "out of memory");
    free(argv);
    char why[512];
    if (status > 0)
        side_reason(log, why, sizeof why);
    const lc_status said = status < 0 ? LC_ERROR : lc_status_from_exit_code(status);
    if (said == LC_UNSUPPORTED)
        lc_error_set(err, "side %c (exit %d): %s", "AB"[side], status, why);
    else if (status > 0)
        lc_error_set(err, "side %c (%s) exited %d: %s", "AB"[side], run->sides[side].exe, status, why);
    const int rc = status != 0 || read_side_entry(dir, e, err);
    proc_remove_dir(dir);
    /* this build's side B says a wrong runner apart from a broken one; side
     * A's build may be older, where exit 1 said either */
    if (said == LC_UNSUPPORTED || (said == LC_FAILED && side == 1))
        return said;
    return rc ? LC_ERROR : LC_OK;
}

/* A process's entry joins its side: its times pooled into acc (the report
 * and the control drift); the control must be the one of every process. */
static int pool_process(ab_run *run, int side, const baseline_entry *e, baseline_entry *acc, lc_error *err)
{
    ab_outcome *o = run->out;
    if (!o->control[0])
        snprintf(o->control, sizeof o->control, "%s", e->control);
    if (strcmp(o->control, e->control)) {
        lc_error_set(err, "the sides time different control workloads ('%s', '%s'): their ratios do not compare",
                     o->control, e->control);
        run->failure = LC_UNSUPPORTED;
        return 1;
    }
    snprintf(o->commit[side], sizeof o->commit[side], "%s", e->git_commit);
    o->processes[side]++;
    acc->rounds += e->rounds;
    return baseline_series_append(&acc->fwd, e->fwd.samples, e->fwd.n, err) ||
           baseline_series_append(&acc->bwd, e->bwd.samples, e->bwd.n, err) ||
           baseline_series_append(&acc->ctl, e->ctl.samples, e->ctl.n, err);
}

/* A process's median ratios: its contribution to the decision. */
static void process_medians(const baseline_entry *e, double *fwd, double *bwd)
{
    sample_summary f, b;
    stats_summarize(e->fwd_ratio.samples, e->fwd_ratio.n, &f);
    stats_summarize(e->bwd_ratio.samples, e->bwd_ratio.n, &b);
    *fwd = f.median;
    *bwd = b.median;
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


/* A side could not measure here (why): the block is left out, both sides'
 * processes of it, so that the blocks stay paired; LC_OK to go on, or
 * LC_UNSUPPORTED (perf_source: stop, INCONCLUSIVE) after
 * AB_MAX_LEFT_OUT_IN_A_ROW in a row. */
static lc_status leave_block_out(ab_run *run, const lc_error *why, lc_error *err)
{
    ab_outcome *o = run->out;
    o->blocks_left_out++;
    snprintf(o->left_out_why, sizeof o->left_out_why, "%s", why->msg);
    if (++run->left_out_in_a_row < AB_MAX_LEFT_OUT_IN_A_ROW)
        return LC_OK;
    lc_error_set(err, "%d blocks in a row left out: %s", run->left_out_in_a_row, why->msg);
    return LC_UNSUPPORTED;
}

/* The block's four process medians divided by their mean, each into its
 * side's ratios (the decision's units). */
static int append_normalized(const char *order, const double fwd[BLOCK], const double bwd[BLOCK],
                             baseline_entry *base, baseline_entry *cur, lc_error *err)
{
    double fwd_mean = 0, bwd_mean = 0;
    for (int k = 0; k < BLOCK; k++) {
        fwd_mean += fwd[k] / BLOCK;
        bwd_mean += bwd[k] / BLOCK;
    }
    for (int k = 0; k < BLOCK; k++) {
        baseline_entry *acc = order[k] == 'B' ? cur : base;
        const double f = fwd[k] / fwd_mean, b = bwd[k] / bwd_mean;
        if (baseline_series_append(&acc->fwd_ratio, &f, 1, err) || baseline_series_append(&acc->bwd_ratio, &b, 1, err))
            return 1;
    }
    return 0;
}

/* The block's processes in order, their entries into e; LC_OK, or as
 * run_side_process (run->failure set on LC_ERROR or LC_FAILED). */
static lc_status run_block(ab_run *run, const char *order, baseline_entry e[BLOCK], lc_error *err)
{
    for (int k = 0; k < BLOCK; k++) {
        const int side = order[k] == 'B';
        const lc_status st = run_side_process(run, side, &e[k], err);
        if (st == LC_ERROR || st == LC_FAILED)
            run->failure = side ? st : LC_UNSUPPORTED;
        if (st)
            return st;
    }
    return LC_OK;
}

/* A block whose processes all measured: pooled into its sides, and its
 * normalized process medians into the decision. */
static lc_status keep_block(ab_run *run, const char *order, const baseline_entry e[BLOCK], baseline_entry *base,
                            baseline_entry *cur, lc_error *err)
{
    double fwd[BLOCK], bwd[BLOCK];
    run->left_out_in_a_row = 0;
    for (int k = 0; k < BLOCK; k++) {
        const int side = order[k] == 'B';
        process_medians(&e[k], &fwd[k], &bwd[k]);
        if (pool_process(run, side, &e[k], side ? cur : base, err))
            return LC_ERROR;
    }
    if (append_normalized(order, fwd, bwd, base, cur, err))
        return LC_ERROR;
    /* The verdict's noise term stands for run-to-run noise that its interval
     * cannot see. Here the runs are the interval's own units (processes,
     * interleaved and measured now), so it sees them: the term is zero and
     * the minimum effect is the rule's fixed floor. The spread is reported. */
    base->noise_fwd = base->noise_bwd = 0;
    run->out->process_noise_fwd = pooled_rel_sd(&base->fwd_ratio, &cur->fwd_ratio);
    run->out->process_noise_bwd = pooled_rel_sd(&base->bwd_ratio, &cur->bwd_ratio);
    return LC_OK;
}

/* perf_source.measure: one block of processes in alternating order; LC_OK,
 * LC_UNSUPPORTED (the host: decide INCONCLUSIVE, err says why) or LC_ERROR
 * (run->failure says whose).
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
    baseline_entry e[BLOCK];
    memset(e, 0, sizeof e);
    lc_status st = run_block(run, order, e, err);
    if (st == LC_OK) {
        st = keep_block(run, order, e, base, cur, err);
    } else if (st == LC_UNSUPPORTED) {
        const lc_error why = *err;
        st = leave_block_out(run, &why, err);
    }
    for (int k = 0; k < BLOCK; k++)
        baseline_entry_free(&e[k]);
    return st;
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

/* An INCONCLUSIVE verdict says when blocks were left out, and why (unless
 * its reason is already that). */
static void say_left_out(verdict_result *v, const ab_outcome *o)
{
    if (v->kind != VERDICT_INCONCLUSIVE || !o->blocks_left_out || strstr(v->reason, "left out"))
        return;
    const size_t len = strlen(v->reason);
    snprintf(v->reason + len, sizeof v->reason - len, "; %d block%s left out: %s", o->blocks_left_out,
             o->blocks_left_out > 1 ? "s" : "", o->left_out_why);
}

lc_status ab_compare(const ab_side sides[2], const char *const *measure, const perf_settings *s, int comparisons,
                     ab_outcome *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    ab_run run = {.sides = sides, .measure = measure, .out = out, .failure = LC_OK};
    perf_source src = {.measure = measure_block, .ctx = &run, .fixed_base = NULL,
                       .min_rounds = ab_min_blocks(comparisons)};
    if (perf_compare_source(&src, s, comparisons, &out->cmp, err))
        return run.failure != LC_OK ? run.failure : LC_ERROR;
    say_left_out(&out->cmp.fwd, out);
    say_left_out(&out->cmp.bwd, out);
    return LC_OK;
}
