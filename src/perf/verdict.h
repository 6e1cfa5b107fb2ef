/* The perf verdict, in one place. Reasoning and measured rates: docs/perf.md.
 *
 * Inputs: per-sample ratios runner/control of the baseline and of the
 * current run (the control workload cancels drift of the machine's speed).
 *   change   = median(current) / median(baseline) - 1
 *   interval = bootstrap confidence interval of change at level 1 - alpha/m
 *              (a resample draws at most VERDICT_BOOTSTRAP_MAX_DRAWS values)
 *   p        = two-sided Mann-Whitney U p-value
 *   delta    = the minimum effect: max(VERDICT_MIN_EFFECT, VERDICT_NOISE_FACTOR *
 *              run-to-run noise of unchanged code measured on this machine)
 *              + |control drift|: the ratio cancels a drift of the machine
 *              only to first order, and what it left of a control drift of
 *              a few percent was 0.6 to 1 times that drift, the other way
 *              (a baseline measured beside a busy neighbour, compared on a
 *              quiet machine, looked 3-5% slower: docs/perf.md)
 * m comparisons share one family-wise false-alarm rate alpha (Bonferroni).
 *   INCONCLUSIVE first, when the control workload itself moved more than
 *                VERDICT_MAX_CONTROL_DRIFT from its baseline median: the
 *                machine is in another state (a neighbour, another clock),
 *                and the ratio cancels such drift only to first order
 *   SLOWER       p < alpha/m and the whole interval above +delta   (fails)
 *   FASTER       p < alpha/m and the whole interval below -delta   (passes; update due)
 *   SAME         the whole interval inside (-delta, +delta)
 *   INCONCLUSIVE otherwise: measure more; if it stays so, the test is skipped
 * A SLOWER must be confirmed by an independent measurement (a fresh round
 * decided alone, verdict_confirm): a transient on a shared machine made
 * about 1 in 140 comparisons of unchanged code SLOWER; a real slowdown
 * persists. */
#ifndef LSTMCHECK_VERDICT_H
#define LSTMCHECK_VERDICT_H

#ifdef __cplusplus
extern "C" {
#endif

#define VERDICT_ALPHA 0.01         /* family-wise false-alarm rate of one perf run */
#define VERDICT_MIN_EFFECT 0.03    /* never call a change under 3% */
#define VERDICT_MAX_CONTROL_DRIFT 0.15 /* control median moved more: not comparable now */
#define VERDICT_NOISE_FACTOR 5.0   /* delta >= 5 x run-to-run noise (docs/perf.md) */
#define VERDICT_BOOTSTRAP 4000     /* resamples for the interval */
/* Values a resample draws from one side: its n samples, or this many of
 * them where n is larger (an m-out-of-n bootstrap), so that compare's time
 * stops growing with the samples a file stores (issue 19: 36 s at 30,000,
 * over 120 s at 100,000). What `baseline update` writes stays under it (5
 * rounds of at most 200 samples on a CPU, 500 on a GPU: 1000, 2500), and
 * there the interval is the full bootstrap's, bit for bit. Above it the
 * interval is that of a median of 4096 values: wider than n values' by
 * about sqrt(n / 4096), never narrower, so it can only withhold a verdict,
 * never call one on less evidence; and at 4096 values it is narrow, about
 * +-0.09 times the samples' relative spread (+-0.45% for a 5% spread) beside
 * the 3% floor of the minimum effect (docs/perf.md). */
#define VERDICT_BOOTSTRAP_MAX_DRAWS 4096

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
    double delta;            /* minimum effect used (noise and control drift) */
    double alpha_each;       /* alpha / m */
    double control_drift;    /* median(control now) / median(control at baseline) - 1 */
    long long bootstrap_draws; /* values the bootstrap drew, both sides: its work */
    char reason[256];
} verdict_result;

const char *verdict_name(verdict_kind k);
/* The worse of two verdicts: SLOWER > INCONCLUSIVE > FASTER > SAME. */
verdict_kind verdict_worse(verdict_kind a, verdict_kind b);

/* The minimum effect for a measured run-to-run noise (relative sd), with
 * no control drift. */
double verdict_min_effect(double noise);

/* Decide for one (runner, shape, forward|backward) from the per-sample
 * runner/control ratios. comparisons >= 1. control_drift: see above. */
void verdict_decide(const double *baseline, int nb, const double *current, int nc, double noise,
                    int comparisons, double control_drift, verdict_result *out);

/* Decide from n paired ratios current / baseline, the two of a pair
 * measured side by side (cpu_peers: two runners in one round), so that
 * the host's state in each pair cancels: the same rule, with change =
 * median(ratio) - 1, its interval the bootstrap of that median, and p the
 * exact two-sided sign test (how many ratios fall below 1 against above:
 * robust to a host's heavy tails, and at least 2 / 2^n, so that a verdict
 * of a difference needs n with 2^(1-n) < alpha / comparisons: 9 pairs for
 * 2 comparisons, 10 for 4, 11 for 8). No control, so no drift. */
void verdict_decide_paired(const double *ratio, int n, double noise, int comparisons, verdict_result *out);

/* The final verdict of a phase from a first decision and, when that was
 * SLOWER, an independent confirmation: SLOWER only if both are; otherwise
 * the confirmation stands (its reason says the first was not confirmed). */
void verdict_confirm(verdict_result *first, const verdict_result *confirmation);

#ifdef __cplusplus
}
#endif
#endif
