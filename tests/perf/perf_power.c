/* perf_power: the perf verdict's own power on this machine. Measures a
 * baseline of the cpu runner (test build), then compares fresh runs with
 * a planted slowdown (src/faults.h: extra work taking a known share of the
 * time) against it, many times per level, and counts the verdicts.
 *   perf_power [--trials N] [--levels 0,5,10] [--shape-set small]
 * Passes when: 10% is always SLOWER, 5% is SLOWER in >= 95% of trials, and
 * unchanged code (0%) is never SLOWER. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "gate.h"
#include "perf.h"
#include "timer.h"

#define MAX_LEVELS 8
/* the family size of the committed CPU perf matrix: the cpu runner x 2
 * shape sets x (forward, backward) */
#define POWER_COMPARISONS 4

int main(int argc, char **argv)
{
    int trials = 20;
    double levels[MAX_LEVELS] = {0, 5, 10};
    int nlevels = 3;
    const char *set_name = "small";
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
        } else {
            fprintf(stderr, "usage: perf_power [--trials N] [--levels 0,5,10] [--shape-set NAME]\n");
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
    perf_settings s;
    perf_default_settings("cpu", &s);
    double t0 = wall_seconds();
    baseline_entry base;
    lstm_extra_work_percent = 0;
    if (perf_measure_entry(cpu, p, 17, &s, &base, &err)) {
        fprintf(stderr, "perf_power: %s\n", err.msg);
        return 1;
    }
    printf("baseline: cpu %s, %d samples in %d rounds, run-to-run noise fwd %.2f%% bwd %.2f%%, "
           "minimum effect fwd %.1f%% bwd %.1f%%\n",
           set_name, base.fwd.n, base.rounds, 100 * base.noise_fwd, 100 * base.noise_bwd,
           100 * verdict_min_effect(base.noise_fwd), 100 * verdict_min_effect(base.noise_bwd));
    int ok = 1;
    printf("%8s %7s %7s %7s %7s %12s %14s %14s\n", "slowdown", "trials", "SLOWER", "SAME", "FASTER",
           "INCONCLUSIVE", "median change", "mean samples");
    for (int li = 0; li < nlevels; li++) {
        int count[4] = {0, 0, 0, 0};
        double changes[1024];
        int nchanges = 0;
        long samples = 0;
        lstm_extra_work_percent = levels[li];
        for (int t = 0; t < trials; t++) {
            perf_comparison c;
            if (perf_compare(cpu, p, &base, &s, POWER_COMPARISONS, &c, &err)) {
                fprintf(stderr, "perf_power: %s\n", err.msg);
                return 1;
            }
            count[perf_overall(&c)]++;
            if (nchanges < 1024)
                changes[nchanges++] = (c.fwd.change + c.bwd.change) / 2;
            samples += c.samples;
        }
        sample_summary ch;
        stats_summarize(changes, nchanges, &ch);
        double slower_rate = (double)count[VERDICT_SLOWER] / trials;
        printf("%7.1f%% %7d %7d %7d %7d %12d %+13.1f%% %14.1f\n", levels[li], trials, count[VERDICT_SLOWER],
               count[VERDICT_SAME], count[VERDICT_FASTER], count[VERDICT_INCONCLUSIVE], 100 * ch.median,
               (double)samples / trials);
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
