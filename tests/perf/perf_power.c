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
    const ab_request rq = {.device = "cpu", .runner = ps->runner->name, .shape = ps->problem->shape,
                           .seed = 17, .warmup = -1, .nloops = 0};
    ab_outcome out;
    if (ab_compare(sides, &rq, &ps->settings, POWER_COMPARISONS, &out, err) != LC_OK)
        return 1;
    *c = out.cmp;
    return 0;
}

int main(int argc, char **argv)
{
    int trials = 20;
    double levels[MAX_LEVELS] = {0, 5, 10};
    int nlevels = 3;
    const char *set_name = "small";
    power_setup ps = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc) {
            trials = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--levels") && i + 1 < argc) {
            nlevels = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && nlevels < MAX_LEVELS; t = strtok(NULL, ","))
                levels[nlevels++] = atof(t);
        } else if (!strcmp(argv[i], "--shape-set") && i + 1 < argc) {
            set_name = argv[++i];
        } else if (!strcmp(argv[i], "--ab") && i + 1 < argc) {
            ps.ab_exe = argv[++i];
        } else {
            fprintf(stderr, "usage: perf_power [--trials N] [--levels 0,5,10] [--shape-set NAME] [--ab EXE]\n");
            return 2;
        }
    }
    if (trials < 1) {
        fprintf(stderr, "perf_power: --trials must be positive\n");
        return 2;
    }
    perf_prepare_device("cpu");
    const perf_shape_set *set = perf_find_shape_set("cpu", set_name);
    const runner_ops *cpu = registry_find("cpu");
    if (!set || !cpu) {
        fprintf(stderr, "perf_power: no cpu shape set '%s'\n", set_name);
        return 2;
    }
    lc_error err = {{0}};
    numerics_context ctx;
    const lstm_problem *p;
    const lstm_results *ref;
    if (numerics_context_init(&ctx, &set->shape, 17, NULL, &err) ||
        numerics_context_get(&ctx, cpu, &p, &ref, &err)) {
        fprintf(stderr, "perf_power: %s\n", err.msg);
        return 1;
    }
    perf_default_settings("cpu", &ps.settings);
    ps.runner = cpu;
    ps.problem = p;
    double t0 = wall_seconds();
    baseline_entry base;
    memset(&base, 0, sizeof base);
    if (ps.ab_exe) {
        printf("A/B: %s against itself with the slowdown planted, cpu %s\n", ps.ab_exe, set_name);
    } else {
        lstm_extra_work_percent = 0;
        if (perf_measure_entry(cpu, p, 17, &ps.settings, &base, &err)) {
            fprintf(stderr, "perf_power: %s\n", err.msg);
            return 1;
        }
        printf("baseline: cpu %s, %d samples in %d rounds, run-to-run noise fwd %.2f%% bwd %.2f%%, "
               "minimum effect fwd %.1f%% bwd %.1f%%\n",
               set_name, base.fwd.n, base.rounds, 100 * base.noise_fwd, 100 * base.noise_bwd,
               100 * verdict_min_effect(base.noise_fwd), 100 * verdict_min_effect(base.noise_bwd));
        ps.base = &base;
    }
    int ok = 1;
    printf("%8s %7s %7s %7s %7s %12s %14s %14s %11s %9s\n", "slowdown", "trials", "SLOWER", "SAME", "FASTER",
           "INCONCLUSIVE", "median change", "mean samples", "min effect", "s/trial");
    for (int li = 0; li < nlevels; li++) {
        int count[4] = {0, 0, 0, 0};
        double changes[1024], deltas[1024];
        int nchanges = 0;
        const double level_t0 = wall_seconds();
        long samples = 0;
        for (int t = 0; t < trials; t++) {
            perf_comparison c;
            if (run_trial(&ps, levels[li], &c, &err)) {
                fprintf(stderr, "perf_power: %s\n", err.msg);
                return 1;
            }
            count[perf_overall(&c)]++;
            if (getenv("PERF_POWER_VERBOSE"))
                printf("  trial %d: fwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%; bwd %s %+.1f%% [%+.1f, %+.1f] min %.1f%%\n",
                       t, verdict_name(c.fwd.kind), 100 * c.fwd.change, 100 * c.fwd.ci_low, 100 * c.fwd.ci_high,
                       100 * c.fwd.delta, verdict_name(c.bwd.kind), 100 * c.bwd.change, 100 * c.bwd.ci_low,
                       100 * c.bwd.ci_high, 100 * c.bwd.delta);
            if (nchanges < 1024) {
                deltas[nchanges] = (c.fwd.delta + c.bwd.delta) / 2;
                changes[nchanges++] = (c.fwd.change + c.bwd.change) / 2;
            }
            samples += c.samples;
        }
        sample_summary ch, dl;
        stats_summarize(changes, nchanges, &ch);
        stats_summarize(deltas, nchanges, &dl);
        double slower_rate = (double)count[VERDICT_SLOWER] / trials;
        printf("%7.1f%% %7d %7d %7d %7d %12d %+13.1f%% %14.1f %10.1f%% %9.1f\n", levels[li], trials,
               count[VERDICT_SLOWER], count[VERDICT_SAME], count[VERDICT_FASTER], count[VERDICT_INCONCLUSIVE],
               100 * ch.median, (double)samples / trials, 100 * dl.median, (wall_seconds() - level_t0) / trials);
        fflush(stdout);
        if (levels[li] == 0 && count[VERDICT_SLOWER] > 0) {
            printf("  -> FALSE ALARM: unchanged code was called SLOWER\n");
            ok = 0;
        }
        if (levels[li] >= 10 && slower_rate < 1.0) {
            printf("  -> a %.0f%% slowdown was missed\n", levels[li]);
            ok = 0;
        }
        if (levels[li] >= 5 && levels[li] < 10 && slower_rate < 0.95) {
            printf("  -> a %.0f%% slowdown was caught in only %.0f%% of trials\n", levels[li], 100 * slower_rate);
            ok = 0;
        }
    }
    printf("elapsed %.0f s\n", wall_seconds() - t0);
    baseline_entry_free(&base);
    numerics_context_free(&ctx);
    return ok ? 0 : 1;
}
