/* perf_power: the perf verdict's own power on this machine. Measures a
 * baseline of a runner (test build: the cpu runner, or with --device cuda
 * cudnn), then compares fresh runs with a planted slowdown
 * (src/runners/faults.h: extra work taking a known share of the time; on
 * the GPU a wait on the runner's stream, kernels/fault_gpu.cu) against it,
 * many times per level, and counts the verdicts, each decided as in the
 * device's whole perf matrix (its family size).
 *   perf_power [--trials N] [--levels 0,5,10,auto] [--budget SECONDS]
 *              [--shape-set small] [--device cpu|cuda] [--rnn NAME] [--ab EXE]
 * With --ab EXE (the test build of lstmcheck, tests/perf/lstmcheck_faults)
 * each trial is an A/B comparison instead (src/perf/ab.h): EXE unchanged against
 * EXE with the slowdown planted through LSTMCHECK_TEST_EXTRA_WORK.
 *
 * What the verdict promises depends on the host's noise, so the pass rule
 * judges it against the resolution R the unchanged trials (level 0, first)
 * report: the minimum effect plus the interval's half width, the smallest
 * slowdown whose interval clears the minimum effect. It passes when
 *   - unchanged code is never SLOWER (on any host),
 *   - a planted slowdown is never FASTER,
 *   - a slowdown of at least 2R is SLOWER in >= 95% of trials (all, under 20),
 *     not counting trials the host decided (its state, not a miss): those
 *     the control drift made INCONCLUSIVE, those of an A/B that a side could
 *     not measure here (exit 3: a noise beyond what a baseline holds), and
 *     those not SLOWER whose own resolution (measured in the trial) was
 *     worse than half the planted level: the host could not resolve it then.
 * A judged level whose median change (over the trials the host did not
 * decide) is under half of it was not planted (a runner without the
 * hooks): that fails too.
 * Levels between 0 and 2R are reported, not judged for power. `auto` plants
 * 2R (rounded up), so every run judges power at some level; a host so noisy
 * that 2R exceeds MAX_AUTO_LEVEL, or that decided every trial of the judged
 * level itself, is a skip (exit 77) after the false-alarm check, its reason
 * the resolution measured. --budget bounds the run: each level starts no
 * trial after its share of the budget is spent (at least one trial per
 * level), and holds each decision of a trial to half a share (and a round):
 * a run ends within about twice its budget, plus the baseline's rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "perf/ab.h"
#include "cmd/cli.h"
#include "runners/faults.h"
#include "check/gate.h"
#include "perf/comparison.h"
#include "perf/perf.h"
#include "device/timer.h"

#define MAX_LEVELS 8
#define AUTO_LEVEL (-1.0)     /* --levels ...,auto: 2R, computed after level 0 */
#define MAX_AUTO_LEVEL 50.0   /* planted slowdowns beyond this say nothing useful */
#define POWER_RATE 0.95       /* SLOWER rate a judged level needs */
#define EXIT_SKIP 77          /* ctest SKIP_RETURN_CODE */

/* What one trial compares: a baseline measured once here, or two processes
 * of the test binary (A/B). */
typedef struct power_setup {
    const char *ab_exe;        /* NULL: against the baseline */
    const runner_ops *runner;
    const lstm_problem *problem;
    const gate_expected *expected;
    const baseline_entry *base;
    perf_settings settings;
    int family; /* comparisons decided together in a perf run of the device (comparison.h) */
} power_setup;

/* One trial into c; *left_out: A/B blocks a side could not measure here
 * (the host's state), and why. */
static int run_trial(const power_setup *ps, double level, perf_comparison *c, int *left_out, char why[256],
                     lc_error *err)
{
    *left_out = 0;
    if (!ps->ab_exe) {
        lstm_extra_work_percent = level;
        return perf_compare(ps->runner, ps->problem, ps->expected, ps->base, &ps->settings, ps->family, c, err);
    }
    char env[64];
    snprintf(env, sizeof env, "LSTMCHECK_TEST_EXTRA_WORK=%g", level);
    /* both sides are this tree's test build: it may have uncommitted changes */
    const ab_side sides[2] = {{.exe = ps->ab_exe, .allow_dirty = 1},
                              {.exe = ps->ab_exe, .env = env, .allow_dirty = 1}};
    cli_options o; /* what each process measures, written as the command layer writes it */
    cli_defaults(&o);
    o.command = "baseline";
    o.subcommand = "update";
    o.device = (lc_device)ps->runner->device;
    o.rnns[o.nrnns++] = ps->runner->name;
    o.shape = ps->problem->shape;
    o.shape_given = o.batch_given = 1;
    o.nloops = AB_SAMPLES_PER_ROUND;
    cli_line measure = {0};
    ab_outcome out;
    const int failed = cli_format(&o, &measure, err) != LC_OK ||
                       ab_compare(sides, (const char *const *)measure.words, &ps->settings, ps->family, &out,
                                  err) != LC_OK;
    cli_line_free(&measure);
    if (failed)
        return 1;
    *c = out.cmp;
    *left_out = out.blocks_left_out;
    snprintf(why, 256, "%s", out.left_out_why);
    return 0;
}

/* The command line. */
typedef struct power_args {
    int trials;
    double levels[MAX_LEVELS]; /* percent, or AUTO_LEVEL */
    int nlevels;
    double budget_s;           /* 0: unbounded */
    const char *set_name;
    lc_device device;
    const char *rnn;    /* --rnn NAME: the device's default runner when NULL */
    const char *ab_exe; /* --ab EXE, or NULL */
} power_args;

/* One --levels item: a percent in [0, MAX_AUTO_LEVEL] or "auto". */
static int parse_level(const char *t, double *level)
{
    if (!strcmp(t, "auto")) {
        *level = AUTO_LEVEL;
        return 0;
    }
    char *end;
    *level = strtod(t, &end);
    return !*t || *end || !(*level >= 0 && *level <= MAX_AUTO_LEVEL);
}

/* 0 when the list is levels, the first of them 0 (it measures R). */
static int parse_levels(const char *list, power_args *a)
{
    char buf[256];
    if (strlen(list) >= sizeof buf)
        return 1;
    snprintf(buf, sizeof buf, "%s", list);
    a->nlevels = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (a->nlevels == MAX_LEVELS || parse_level(t, &a->levels[a->nlevels++]))
            return 1;
    return a->nlevels == 0 || a->levels[0] != 0;
}

static int usage(const char *why)
{
    fprintf(stderr, "perf_power: %s (usage: perf_power [--trials N] [--levels 0,5,10,auto] [--budget SECONDS] "
                    "[--shape-set NAME] [--device cpu|cuda] [--rnn NAME] [--ab EXE])\n", why);
    return 2;
}

/* 0, or 2 (usage) with the message printed. */
static int parse_args(int argc, char **argv, power_args *a)
{
    *a = (power_args){.trials = 20, .levels = {0, 5, 10}, .nlevels = 3, .set_name = "small", .device = LC_DEVICE_CPU};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage("every option takes a value");
        if (!strcmp(argv[i], "--trials"))
            a->trials = atoi(v);
        else if (!strcmp(argv[i], "--levels")) {
            if (parse_levels(v, a))
                return usage("--levels: up to 8 percents in 0..50 or 'auto', the first of them 0");
        } else if (!strcmp(argv[i], "--budget"))
            a->budget_s = atof(v);
        else if (!strcmp(argv[i], "--shape-set"))
            a->set_name = v;
        else if (!strcmp(argv[i], "--device")) {
            if (lc_device_from_name(v, &a->device))
                return usage("--device: cpu or cuda");
        } else if (!strcmp(argv[i], "--rnn"))
            a->rnn = v;
        else if (!strcmp(argv[i], "--ab"))
            a->ab_exe = v;
        else
            return usage("unknown option");
        i++;
    }
    if (a->trials < 1 || a->budget_s < 0)
        return usage("--trials must be positive and --budget not negative");
    return 0;
}

/* Against a baseline: measure it here (its line printed) and point ps at
 * it. With --ab only the line saying what is compared. */
static int prepare_reference(power_setup *ps, const char *set_name, baseline_entry *base, lc_error *err)
{
    if (ps->ab_exe) {
        printf("A/B: %s against itself with the slowdown planted, %s %s, family of %d comparisons\n", ps->ab_exe,
               ps->runner->name, set_name, ps->family);
        return 0;
    }
    lstm_extra_work_percent = 0;
    if (perf_measure_entry(ps->runner, ps->problem, ps->expected, 17, &ps->settings, base, err))
        return 1;
    printf("baseline: %s %s, %d samples in %d rounds, run-to-run noise fwd %.2f%% bwd %.2f%%, "
           "minimum effect fwd %.1f%% bwd %.1f%%; family of %d comparisons\n",
           ps->runner->name, set_name, base->fwd.n, base->rounds, 100 * base->noise_fwd, 100 * base->noise_bwd,
           100 * verdict_min_effect(base->noise_fwd), 100 * verdict_min_effect(base->noise_bwd), ps->family);
    ps->base = base;
    return 0;
}

/* The verdicts of one slowdown level's trials. */
typedef struct level_tally {
    int trials;
    int host;          /* trials the host's state decided, not the verdict (header comment) */
    char host_why[320]; /* the last such trial's reason */
    int count[4];
    double changes[1024], deltas[1024], resolutions[1024];
    int nchanges;
    double judged_changes[1024]; /* those of the trials the host did not decide */
    int njudged;
    double t0; /* when the level began */
    long samples;
} level_tally;

static void print_trial(int t, const perf_comparison *c)
{
    printf("  trial %d: fwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%; bwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%; "
           "control %+.1f%%\n",
           t, verdict_name(c->fwd.kind), 100 * c->fwd.change, 100 * c->fwd.ci_low, 100 * c->fwd.ci_high,
           100 * c->fwd.delta, verdict_name(c->bwd.kind), 100 * c->bwd.change, 100 * c->bwd.ci_low,
           100 * c->bwd.ci_high, 100 * c->bwd.delta, 100 * c->fwd.control_drift);
}

/* The smallest slowdown this trial's interval would have cleared its
 * minimum effect by: delta + half the interval's width (percent). */
static double trial_resolution(const verdict_result *v)
{
    if (v->ci_high <= v->ci_low) /* no interval: too few samples to decide */
        return INFINITY;
    return 100 * (v->delta + (v->ci_high - v->ci_low) / 2);
}

/* Whether the host's state decided this trial at `level` (percent), and
 * why: 0 when the verdict did. */
static int host_decided(const perf_comparison *c, double level, double resolution, int left_out,
                        const char *left_out_why, char *why, size_t n)
{
    const verdict_kind k = perf_overall(c);
    if (k == VERDICT_INCONCLUSIVE && fabs(perf_undecided_drift(c)) > VERDICT_MAX_CONTROL_DRIFT)
        snprintf(why, n, "the control workload drifted %+.0f%%", 100 * perf_undecided_drift(c));
    else if (k == VERDICT_INCONCLUSIVE && left_out)
        snprintf(why, n, "%d A/B blocks left out: %s", left_out, left_out_why);
    else if (level > 0 && k != VERDICT_SLOWER && level < 2 * resolution)
        snprintf(why, n, "the trial resolved only %.1f%% (2x that > %.1f%% planted)", resolution, level);
    else
        return 0;
    return 1;
}

static void tally_trial(level_tally *tl, double level, const perf_comparison *c, int left_out, const char *left_out_why)
{
    const double rf = trial_resolution(&c->fwd), rb = trial_resolution(&c->bwd);
    const double resolution = rf > rb ? rf : rb;
    tl->trials++;
    tl->count[perf_overall(c)]++;
    const int by_host = host_decided(c, level, resolution, left_out, left_out_why, tl->host_why, sizeof tl->host_why);
    tl->host += by_host;
    if (!by_host && tl->njudged < 1024)
        tl->judged_changes[tl->njudged++] = (c->fwd.change + c->bwd.change) / 2;
    if (tl->nchanges < 1024) {
        tl->resolutions[tl->nchanges] = resolution;
        tl->deltas[tl->nchanges] = (c->fwd.delta + c->bwd.delta) / 2;
        tl->changes[tl->nchanges++] = (c->fwd.change + c->bwd.change) / 2;
    }
    tl->samples += c->samples;
}

/* Up to `trials` trials, none started after budget_s (0: no bound). */
static int run_level(const power_setup *ps, double level, int trials, double budget_s, level_tally *tl,
                     lc_error *err)
{
    memset(tl, 0, sizeof *tl);
    tl->t0 = wall_seconds();
    for (int t = 0; t < trials; t++) {
        if (t > 0 && budget_s > 0 && wall_seconds() - tl->t0 > budget_s)
            break;
        perf_comparison c;
        char why[256];
        int left_out;
        if (run_trial(ps, level, &c, &left_out, why, err))
            return 1;
        tally_trial(tl, level, &c, left_out, why);
        if (getenv("PERF_POWER_VERBOSE"))
            print_trial(t, &c);
    }
    return 0;
}

static void print_row(double level, const level_tally *tl)
{
    sample_summary ch, dl;
    stats_summarize(tl->changes, tl->nchanges, &ch);
    stats_summarize(tl->deltas, tl->nchanges, &dl);
    printf("%7.1f%% %7d %7d %7d %7d %12d %+13.1f%% %14.1f %10.1f%% %9.1f%s\n", level, tl->trials,
           tl->count[VERDICT_SLOWER], tl->count[VERDICT_SAME], tl->count[VERDICT_FASTER],
           tl->count[VERDICT_INCONCLUSIVE], 100 * ch.median, (double)tl->samples / tl->trials, 100 * dl.median,
           (wall_seconds() - tl->t0) / tl->trials, tl->host ? "  (some decided by the host, below)" : "");
    if (tl->host)
        printf("  -> %d of %d trials decided by the host's state, last: %s\n", tl->host, tl->trials, tl->host_why);
    fflush(stdout);
}

/* The pass rule for one level (header comment), given the resolution R
 * (percent) measured at level 0: 1 when it holds. *judged is set when the
 * level was judged for power; why a level at or beyond 2R was not, in
 * skip_why. */
static int judge_level(double level, double resolution, const level_tally *tl, int *judged, char *skip_why,
                       size_t n)
{
    const int judged_trials = tl->trials - tl->host;
    const double slower_rate = judged_trials ? (double)tl->count[VERDICT_SLOWER] / judged_trials : 0;
    const double needed = judged_trials < 20 ? 1.0 : POWER_RATE;
    if (level == 0 && tl->count[VERDICT_SLOWER] > 0) {
        printf("  -> FALSE ALARM: unchanged code was called SLOWER\n");
        return 0;
    }
    if (level > 0 && tl->count[VERDICT_FASTER] > 0) {
        printf("  -> a planted slowdown was called FASTER\n");
        return 0;
    }
    if (level > 0 && level < 2 * resolution)
        printf("  -> under 2R = %.1f%%: reported, not judged for power\n", 2 * resolution);
    if (level > 0 && level >= 2 * resolution && !judged_trials) {
        snprintf(skip_why, n, "the host's state decided every trial of the %.1f%% level (last: %s)", level,
                 tl->host_why);
        printf("  -> %s: not judged for power\n", skip_why);
    }
    if (level == 0 || level < 2 * resolution || !judged_trials)
        return 1;
    *judged = 1;
    sample_summary change;
    stats_summarize(tl->judged_changes, tl->njudged, &change);
    if (100 * change.median < level / 2) { /* a runner whose pass lacks the hooks (kernels/cuda_util.h) */
        printf("  -> a %.1f%% slowdown was planted and the times moved by %+.1f%% (median): it did not take "
               "effect in this runner\n", level, 100 * change.median);
        return 0;
    }
    if (slower_rate < needed) {
        printf("  -> a %.1f%% slowdown (>= 2R = %.1f%%) was caught in only %.0f%% of the %d trials the host "
               "did not decide\n", level, 2 * resolution, 100 * slower_rate, judged_trials);
        return 0;
    }
    return 1;
}

/* 2R rounded up to a whole percent: the level `auto` plants. */
static double auto_level(double resolution)
{
    const double l = ceil(2 * resolution);
    return l < MAX_AUTO_LEVEL ? l : MAX_AUTO_LEVEL;
}

/* R: the median over the unchanged trials that resolved anything (an
 * interval); INFINITY when none did (the host decided them all). */
static double measured_resolution(const level_tally *tl)
{
    double finite[1024];
    int n = 0;
    for (int i = 0; i < tl->nchanges; i++)
        if (isfinite(tl->resolutions[i]))
            finite[n++] = tl->resolutions[i];
    sample_summary r;
    stats_summarize(finite, n, &r);
    return n ? r.median : INFINITY;
}

/* Every level's trials and rows; 0: the pass rule held with power judged
 * somewhere, EXIT_SKIP: it held but no level could be judged for power
 * (why printed), 1: it did not hold, -1: a trial failed (err). */
static int run_levels(const power_setup *ps, const power_args *a, lc_error *err)
{
    level_tally tl;
    int ok = 1, judged = 0;
    double resolution = 0;
    char skip_why[512] = "";
    const double share = a->budget_s / a->nlevels;
    printf("%8s %7s %7s %7s %7s %12s %14s %14s %11s %9s\n", "slowdown", "trials", "SLOWER", "SAME", "FASTER",
           "INCONCLUSIVE", "median change", "mean samples", "min effect", "s/trial");
    for (int li = 0; li < a->nlevels && isfinite(resolution); li++) {
        const double level = a->levels[li] == AUTO_LEVEL ? auto_level(resolution) : a->levels[li];
        if (run_level(ps, level, a->trials, share, &tl, err))
            return -1;
        print_row(level, &tl);
        if (li == 0 && isfinite(resolution = measured_resolution(&tl)))
            printf("  -> resolution R = %.1f%% (minimum effect + half the interval, median of these trials)\n",
                   resolution);
        else if (li == 0)
            snprintf(skip_why, sizeof skip_why, "no unchanged trial resolved anything, R unknown (%s)",
                     tl.host_why[0] ? tl.host_why : "no interval");
        ok = judge_level(level, resolution, &tl, &judged, skip_why, sizeof skip_why) && ok;
    }
    if (ok && !judged && !skip_why[0])
        snprintf(skip_why, sizeof skip_why, "no level reached 2R = %.1f%% (at most %.0f%% is planted)",
                 2 * resolution, MAX_AUTO_LEVEL);
    if (ok && !judged && isfinite(resolution))
        printf("SKIP: power not judged on this host now: %s; measured resolution R = %.1f%%\n", skip_why,
               resolution);
    else if (ok && !judged)
        printf("SKIP: power not judged on this host now: %s\n", skip_why);
    return !ok ? 1 : judged ? 0 : EXIT_SKIP;
}

/* The measurement: -1 when something failed (err), else run_levels'
 * answer. */
static int measure_power(power_setup *ps, const power_args *a, numerics_context *ctx,
                         baseline_entry *base, lc_error *err)
{
    const lstm_problem *p;
    const gate_expected *expected;
    if (numerics_context_get(ctx, ps->runner, &p, &expected, err))
        return -1;
    perf_default_settings((lc_device)ps->runner->device, &ps->settings);
    /* each of a trial's decisions (the first, a SLOWER's confirmation) ends
     * within half its level's share and a round: a level within about
     * twice its share */
    const double half_share = a->budget_s / a->nlevels / 2;
    if (half_share > 0 && half_share < ps->settings.compare_budget_s)
        ps->settings.compare_budget_s = half_share;
    ps->problem = p;
    ps->expected = expected;
    const double t0 = wall_seconds();
    if (prepare_reference(ps, a->set_name, base, err))
        return -1;
    const int verdict = run_levels(ps, a, err);
    if (verdict >= 0)
        printf("elapsed %.0f s\n", wall_seconds() - t0);
    return verdict;
}

/* Whether the test build plants the slowdown in r: the cpu runner's tables
 * (runner_cpu.c, extra_work) and the GPU runners of the roster
 * (kernels/fault_gpu.cu); not onednn or ref. */
static int plants_slowdown(const runner_ops *r)
{
    return r->device == LC_DEVICE_CUDA || r->forward == registry_find("cpu")->forward;
}

/* The runner --rnn names (by default cpu, or cudnn with --device cuda: the
 * library's own LSTM, a few calls a pass, the steadiest GPU timing), of
 * the device, with the slowdown planted in it, and usable here: 0, else the
 * exit code with the line printed (2: usage; 77: no such device here; 1:
 * the device is broken). */
static int find_runner(const power_args *a, const runner_ops **r)
{
    const char *name = a->rnn ? a->rnn : a->device == LC_DEVICE_CUDA ? "cudnn" : "cpu";
    *r = registry_find(name);
    if (!*r || (*r)->device != (int)a->device) {
        fprintf(stderr, "perf_power: no %s runner '%s' in this build (lstmcheck list --device %s)\n",
                lc_device_name(a->device), name, lc_device_name(a->device));
        return 2;
    }
    if (!plants_slowdown(*r)) {
        fprintf(stderr, "perf_power: nothing is planted in %s: only the cpu runner's tables and the roster's GPU "
                        "runners take the slowdown\n", name);
        return 2;
    }
    lc_error why = {{0}};
    const int avail = (*r)->available(&why);
    if (avail == LC_ERROR) {
        fprintf(stderr, "perf_power: %s: %s\n", name, why.msg);
        return 1;
    }
    if (avail != LC_OK) {
        printf("SKIP: %s cannot run here: %s\n", name, why.msg);
        return EXIT_SKIP;
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it comes: a run cut by a timeout keeps them */
    power_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    const perf_shape_set *set = perf_find_shape_set(a.device, a.set_name);
    if (!set) {
        fprintf(stderr, "perf_power: no %s shape set '%s' (src/perf/shape_sets.def)\n", lc_device_name(a.device),
                a.set_name);
        return 2;
    }
    const runner_ops *runner;
    if ((rc = find_runner(&a, &runner)))
        return rc;
    perf_prepare_device(a.device);
    power_setup ps = {.ab_exe = a.ab_exe, .runner = runner, .family = comparison_family_size(a.device, 0, 0)};
    lc_error err = {{0}};
    numerics_context ctx;
    baseline_entry base;
    memset(&base, 0, sizeof base);
    rc = -1;
    if (!numerics_context_init(&ctx, &set->shape, 17, NULL, &err))
        rc = measure_power(&ps, &a, &ctx, &base, &err);
    if (rc < 0)
        fprintf(stderr, "perf_power: %s\n", err.msg);
    baseline_entry_free(&base);
    numerics_context_free(&ctx);
    return rc < 0 ? 1 : rc;
}
