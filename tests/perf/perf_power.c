/* perf_power: the perf verdict's own power on this machine. Measures a
 * baseline of the cpu runner (test build), then compares fresh runs with
 * a planted slowdown (src/runners/faults.h: extra work taking a known share of the
 * time) against it, many times per level, and counts the verdicts.
 *   perf_power [--trials N] [--levels 0,5,10] [--shape-set small] [--ab EXE]
 * With --ab EXE (the test build of lstmcheck, tests/perf/lstmcheck_faults)
 * each trial is an A/B comparison instead (src/perf/ab.h): EXE unchanged against
 * EXE with the slowdown planted through LSTMCHECK_TEST_EXTRA_WORK.
 * Passes when: 10% is always SLOWER, 5% is SLOWER in >= 95% of trials, and
 * unchanged code (0%) is never SLOWER. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/ab.h"
#include "runners/faults.h"
#include "check/gate.h"
#include "perf/perf.h"
#include "device/timer.h"

#define MAX_LEVELS 8
/* the family size of the committed CPU perf matrix: the cpu runner x 2
 * shape sets x (forward, backward) */
#define POWER_COMPARISONS 4

/* What one trial compares: a baseline measured once here, or two processes
 * of the test binary (A/B). */
typedef struct power_setup {
    const char *ab_exe;        /* NULL: against the baseline */
    const runner_ops *runner;
    const lstm_problem *problem;
    const baseline_entry *base;
    perf_settings settings;
} power_setup;

static int run_trial(const power_setup *ps, double level, perf_comparison *c, lc_error *err)
{
    if (!ps->ab_exe) {
        lstm_extra_work_percent = level;
        return perf_compare(ps->runner, ps->problem, ps->base, &ps->settings, POWER_COMPARISONS, c, err);
    }
    char env[64];
    snprintf(env, sizeof env, "LSTMCHECK_TEST_EXTRA_WORK=%g", level);
    /* both sides are this tree's test build: it may have uncommitted changes */
    const ab_side sides[2] = {{.exe = ps->ab_exe, .allow_dirty = 1},
                              {.exe = ps->ab_exe, .env = env, .allow_dirty = 1}};
    const ab_request rq = {.device = LC_DEVICE_CPU, .runner = ps->runner->name, .shape = ps->problem->shape,
                           .seed = 17, .warmup = -1, .nloops = 0};
    ab_outcome out;
    if (ab_compare(sides, &rq, &ps->settings, POWER_COMPARISONS, &out, err) != LC_OK)
        return 1;
    *c = out.cmp;
    return 0;
}

/* The command line. */
typedef struct power_args {
    int trials;
    double levels[MAX_LEVELS];
    int nlevels;
    const char *set_name;
    const char *ab_exe; /* --ab EXE, or NULL */
} power_args;

/* 0, or 2 (usage) with the message printed. */
static int parse_args(int argc, char **argv, power_args *a)
{
    *a = (power_args){.trials = 20, .levels = {0, 5, 10}, .nlevels = 3, .set_name = "small"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc) {
            a->trials = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--levels") && i + 1 < argc) {
            a->nlevels = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && a->nlevels < MAX_LEVELS; t = strtok(NULL, ","))
                a->levels[a->nlevels++] = atof(t);
        } else if (!strcmp(argv[i], "--shape-set") && i + 1 < argc) {
            a->set_name = argv[++i];
        } else if (!strcmp(argv[i], "--ab") && i + 1 < argc) {
            a->ab_exe = argv[++i];
        } else {
            fprintf(stderr, "usage: perf_power [--trials N] [--levels 0,5,10] [--shape-set NAME] [--ab EXE]\n");
            return 2;
        }
    }
    if (a->trials < 1) {
        fprintf(stderr, "perf_power: --trials must be positive\n");
        return 2;
    }
    return 0;
}

/* Against a baseline: measure it here (its line printed) and point ps at
 * it. With --ab only the line saying what is compared. */
static int prepare_reference(power_setup *ps, const char *set_name, baseline_entry *base, lc_error *err)
{
    if (ps->ab_exe) {
        printf("A/B: %s against itself with the slowdown planted, cpu %s\n", ps->ab_exe, set_name);
        return 0;
    }
    lstm_extra_work_percent = 0;
    if (perf_measure_entry(ps->runner, ps->problem, 17, &ps->settings, base, err))
        return 1;
    printf("baseline: cpu %s, %d samples in %d rounds, run-to-run noise fwd %.2f%% bwd %.2f%%, "
           "minimum effect fwd %.1f%% bwd %.1f%%\n",
           set_name, base->fwd.n, base->rounds, 100 * base->noise_fwd, 100 * base->noise_bwd,
           100 * verdict_min_effect(base->noise_fwd), 100 * verdict_min_effect(base->noise_bwd));
    ps->base = base;
    return 0;
}

/* The verdicts of one slowdown level's trials. */
typedef struct level_tally {
    int count[4];
    double changes[1024], deltas[1024];
    int nchanges;
    double t0; /* when the level began */
    long samples;
} level_tally;

static void print_trial(int t, const perf_comparison *c)
{
    printf("  trial %d: fwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%; bwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%\n",
           t, verdict_name(c->fwd.kind), 100 * c->fwd.change, 100 * c->fwd.ci_low, 100 * c->fwd.ci_high,
           100 * c->fwd.delta, verdict_name(c->bwd.kind), 100 * c->bwd.change, 100 * c->bwd.ci_low,
           100 * c->bwd.ci_high, 100 * c->bwd.delta);
}

static int run_level(const power_setup *ps, double level, int trials, level_tally *tl, lc_error *err)
{
    memset(tl, 0, sizeof *tl);
    tl->t0 = wall_seconds();
    for (int t = 0; t < trials; t++) {
        perf_comparison c;
        if (run_trial(ps, level, &c, err))
            return 1;
        tl->count[perf_overall(&c)]++;
        if (getenv("PERF_POWER_VERBOSE"))
            print_trial(t, &c);
        if (tl->nchanges < 1024) {
            tl->deltas[tl->nchanges] = (c.fwd.delta + c.bwd.delta) / 2;
            tl->changes[tl->nchanges++] = (c.fwd.change + c.bwd.change) / 2;
        }
        tl->samples += c.samples;
    }
    return 0;
}

/* The level's row of the table and what the pass rule says of it: 1 when
 * it holds. */
static int report_level(double level, int trials, const level_tally *tl)
{
    int ok = 1;
    sample_summary ch, dl;
    stats_summarize(tl->changes, tl->nchanges, &ch);
    stats_summarize(tl->deltas, tl->nchanges, &dl);
    double slower_rate = (double)tl->count[VERDICT_SLOWER] / trials;
    printf("%7.1f%% %7d %7d %7d %7d %12d %+13.1f%% %14.1f %10.1f%% %9.1f\n", level, trials,
           tl->count[VERDICT_SLOWER], tl->count[VERDICT_SAME], tl->count[VERDICT_FASTER],
           tl->count[VERDICT_INCONCLUSIVE], 100 * ch.median, (double)tl->samples / trials, 100 * dl.median,
           (wall_seconds() - tl->t0) / trials);
    fflush(stdout);
    if (level == 0 && tl->count[VERDICT_SLOWER] > 0) {
        printf("  -> FALSE ALARM: unchanged code was called SLOWER\n");
        ok = 0;
    }
    if (level >= 10 && slower_rate < 1.0) {
        printf("  -> a %.0f%% slowdown was missed\n", level);
        ok = 0;
    }
    if (level >= 5 && level < 10 && slower_rate < 0.95) {
        printf("  -> a %.0f%% slowdown was caught in only %.0f%% of trials\n", level, 100 * slower_rate);
        ok = 0;
    }
    return ok;
}

/* Every level's trials and rows; 0: the pass rule held, 1: it did not,
 * -1: a trial failed (err). */
static int run_levels(const power_setup *ps, const power_args *a, lc_error *err)
{
    level_tally tl;
    int ok = 1;
    printf("%8s %7s %7s %7s %7s %12s %14s %14s %11s %9s\n", "slowdown", "trials", "SLOWER", "SAME", "FASTER",
           "INCONCLUSIVE", "median change", "mean samples", "min effect", "s/trial");
    for (int li = 0; li < a->nlevels; li++) {
        if (run_level(ps, a->levels[li], a->trials, &tl, err))
            return -1;
        if (!report_level(a->levels[li], a->trials, &tl))
            ok = 0;
    }
    return ok ? 0 : 1;
}

/* The measurement: -1 when something failed (err), else 0 when the pass
 * rule held at every level and 1 when not. */
static int measure_power(power_setup *ps, const power_args *a, numerics_context *ctx,
                         baseline_entry *base, lc_error *err)
{
    const lstm_problem *p;
    const lstm_results *ref;
    if (numerics_context_get(ctx, ps->runner, &p, &ref, err))
        return -1;
    perf_default_settings(LC_DEVICE_CPU, &ps->settings);
    ps->problem = p;
    const double t0 = wall_seconds();
    if (prepare_reference(ps, a->set_name, base, err))
        return -1;
    const int verdict = run_levels(ps, a, err);
    if (verdict >= 0)
        printf("elapsed %.0f s\n", wall_seconds() - t0);
    return verdict;
}

int main(int argc, char **argv)
{
    power_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    perf_prepare_device(LC_DEVICE_CPU);
    const perf_shape_set *set = perf_find_shape_set(LC_DEVICE_CPU, a.set_name);
    const runner_ops *cpu = registry_find("cpu");
    if (!set || !cpu) {
        fprintf(stderr, "perf_power: no cpu shape set '%s'\n", a.set_name);
        return 2;
    }
    power_setup ps = {.ab_exe = a.ab_exe, .runner = cpu};
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
