/* Summary statistics of timing samples, and the rank test the verdict uses. */
#ifndef LSTMCHECK_STATS_H
#define LSTMCHECK_STATS_H

#include <stddef.h>

#include "base/json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sample_summary {
    int n;
    double mean, std; /* std: unbiased (n-1), 0 for n < 2 */
    double median, min, max, q1, q3;
    double mad;       /* median absolute deviation from the median (unscaled) */
} sample_summary;

/* Summarize n values (n may be 0: all zero). Quantiles interpolate
 * linearly between order statistics (NumPy's default). */
void stats_summarize(const double *v, int n, sample_summary *s);
double stats_quantile_sorted(const double *sorted, int n, double q);
/* The median of n values, as stats_quantile_sorted gives it of the sorted
 * values (the same number, bit for bit), found by selection in O(n) time
 * on average instead of a sort; v is reordered. 0 for n <= 0. */
double stats_median_select(double *v, int n);
/* The summary as a JSON object {"n", "mean", "std", "median", "min", "max",
 * "q1", "q3", "mad"}, and "samples" (on one line) when samples is not NULL. */
void stats_json(json_writer *w, const sample_summary *s, const double *samples);

/* Robust relative spread: 1.4826 * MAD / median (a normal sigma estimate). */
double stats_robust_rel_spread(const sample_summary *s);

/* Two-sided Mann-Whitney U test with tie correction and the normal
 * approximation (with continuity correction); returns the p-value for
 * "a and b come from the same distribution". Also returns through
 * *a_greater the probability estimate P(a > b) + P(a = b)/2. */
double stats_mann_whitney(const double *a, int na, const double *b, int nb, double *a_greater);

/* The exact two-sided sign test: p of `below` values under and `above`
 * over a median of 0 difference (ties dropped before): 2 P(X <= min) for
 * X ~ Binomial(below + above, 1/2), at most 1; 1 with no values. */
double stats_sign_test(int below, int above);

/* Upper quantile of the standard normal distribution: z with P(Z > z) = p. */
double stats_normal_upper_quantile(double p);

#ifdef __cplusplus
}
#endif
#endif
