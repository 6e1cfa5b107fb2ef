/* The perf verdict, in one place. Reasoning and measured rates: docs/perf.md.
 *
 * Inputs: per-sample ratios runner/control of the baseline and of the
 * current run (the control workload cancels drift of the machine's speed).
 *   change   = median(current) / median(baseline) - 1
 *   interval = bootstrap confidence interval of change at level 1 - alpha/m
 *   p        = two-sided Mann-Whitney U p-value
 *   delta    = the minimum effect: max(VERDICT_MIN_EFFECT, VERDICT_NOISE_FACTOR *
 *              run-to-run noise of unchanged code measured on this machine)
 * m comparisons share one family-wise false-alarm rate alpha (Bonferroni).
 *   SLOWER       p < alpha/m and the whole interval above +delta   (fails)
 *   FASTER       p < alpha/m and the whole interval below -delta   (passes; update due)
 *   SAME         the whole interval inside (-delta, +delta)
 *   INCONCLUSIVE otherwise: measure more; if it stays so, the test is skipped */
#ifndef LSTMCHECK_VERDICT_H
#define LSTMCHECK_VERDICT_H

#ifdef __cplusplus
extern "C" {
#endif

#define VERDICT_ALPHA 0.01         /* family-wise false-alarm rate of one perf run */
#define VERDICT_MIN_EFFECT 0.02    /* never call a change under 2% */
#define VERDICT_NOISE_FACTOR 3.0   /* delta >= 3 x run-to-run noise */
#define VERDICT_BOOTSTRAP 4000     /* resamples for the interval */

typedef enum verdict_kind {
    VERDICT_SAME = 0,
    VERDICT_FASTER,
    VERDICT_SLOWER,
    VERDICT_INCONCLUSIVE,
} verdict_kind;

typedef struct verdict_result {
    verdict_kind kind;
    double change;           /* relative change of the median ratio */
    double ci_low, ci_high;  /* interval of change */
    double p;                /* Mann-Whitney p-value */
    double delta;            /* minimum effect used */
    double alpha_each;       /* alpha / m */
    char reason[256];
} verdict_result;

const char *verdict_name(verdict_kind k);

/* The minimum effect for a measured run-to-run noise (relative sd). */
double verdict_min_effect(double noise);

/* Decide for one (runner, shape, forward|backward). comparisons >= 1. */
void verdict_decide(const double *baseline, int nb, const double *current, int nc, double noise,
                    int comparisons, verdict_result *out);

#ifdef __cplusplus
}
#endif
#endif
