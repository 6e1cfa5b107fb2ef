/* The perf verdict (see verdict.h). */
#include "perf/verdict.h"

#include "model/inputs.h"
#include "perf/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *verdict_name(verdict_kind k)
{
    switch (k) {
    case VERDICT_SAME: return "SAME";
    case VERDICT_FASTER: return "FASTER";
    case VERDICT_SLOWER: return "SLOWER";
    default: return "INCONCLUSIVE";
    }
}

verdict_kind verdict_worse(verdict_kind a, verdict_kind b)
{
    static const int rank[] = {[VERDICT_SAME] = 0, [VERDICT_FASTER] = 1, [VERDICT_INCONCLUSIVE] = 2,
                               [VERDICT_SLOWER] = 3};
    return rank[a] >= rank[b] ? a : b;
}

double verdict_min_effect(double noise)
{
    double d = VERDICT_NOISE_FACTOR * (noise > 0 ? noise : 0);
    return d > VERDICT_MIN_EFFECT ? d : VERDICT_MIN_EFFECT;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return stats_quantile_sorted(v, n, 0.5);
}

/* The interval of out's change at level 1 - alpha_each from nboot
 * bootstrap changes (sorted here). */
static void percentile_interval(double *boot, int nboot, verdict_result *out)
{
    qsort(boot, (size_t)nboot, sizeof *boot, cmp_double);
    out->ci_low = stats_quantile_sorted(boot, nboot, out->alpha_each / 2);
    out->ci_high = stats_quantile_sorted(boot, nboot, 1 - out->alpha_each / 2);
}

/* The rule itself, from out's change, interval, p, delta, alpha_each and
 * control drift: SLOWER, FASTER, SAME or INCONCLUSIVE, and why. */
static void verdict_classify(verdict_result *out)
{
    const int significant = out->p < out->alpha_each;
    if (fabs(out->control_drift) > VERDICT_MAX_CONTROL_DRIFT) {
        out->kind = VERDICT_INCONCLUSIVE;
        snprintf(out->reason, sizeof out->reason,
                 "the control workload runs %+.0f%% against its baseline: the machine is in another state",
                 100 * out->control_drift);
    } else if (significant && out->ci_low > out->delta) {
        out->kind = VERDICT_SLOWER;
        snprintf(out->reason, sizeof out->reason, "slower by %.1f%% (interval %+.1f%%..%+.1f%% beyond %.1f%%)",
                 100 * out->change, 100 * out->ci_low, 100 * out->ci_high, 100 * out->delta);
    } else if (significant && out->ci_high < -out->delta) {
        out->kind = VERDICT_FASTER;
        snprintf(out->reason, sizeof out->reason,
                 "faster by %.1f%%: run 'lstmcheck baseline update' to record it", -100 * out->change);
    } else if (out->ci_low > -out->delta && out->ci_high < out->delta) {
        out->kind = VERDICT_SAME;
        snprintf(out->reason, sizeof out->reason, "within +-%.1f%%", 100 * out->delta);
    } else if (out->ci_low > out->delta || out->ci_high < -out->delta) { /* too few samples to be significant */
        out->kind = VERDICT_INCONCLUSIVE;
        snprintf(out->reason, sizeof out->reason,
                 "interval %+.1f%%..%+.1f%% beyond the +-%.1f%% minimum effect, but p=%.2g is not below %.2g: "
                 "measure more",
                 100 * out->ci_low, 100 * out->ci_high, 100 * out->delta, out->p, out->alpha_each);
    } else {
        out->kind = VERDICT_INCONCLUSIVE;
        snprintf(out->reason, sizeof out->reason,
                 "interval %+.1f%%..%+.1f%% straddles the +-%.1f%% minimum effect (p=%.2g)",
                 100 * out->ci_low, 100 * out->ci_high, 100 * out->delta, out->p);
    }
}

void verdict_decide(const double *base, int nb, const double *cur, int nc, double noise,
                    int comparisons, double control_drift, verdict_result *out)
{
    memset(out, 0, sizeof *out);
    if (comparisons < 1)
        comparisons = 1;
    /* the ratio cancels the control's drift to first order only: what it
     * leaves is at most about the drift itself (docs/perf.md) */
    out->delta = verdict_min_effect(noise) + (isfinite(control_drift) ? fabs(control_drift) : 0);
    out->alpha_each = VERDICT_ALPHA / comparisons;
    out->kind = VERDICT_INCONCLUSIVE;
    out->control_drift = control_drift;
    if (nb < 5 || nc < 5) {
        snprintf(out->reason, sizeof out->reason, "too few samples (%d baseline, %d current; 5 needed)", nb, nc);
        return;
    }
    double *b = malloc((size_t)nb * sizeof *b), *c = malloc((size_t)nc * sizeof *c);
    int nboot = VERDICT_BOOTSTRAP;
    double *boot = malloc((size_t)nboot * sizeof *boot);
    if (!b || !c || !boot) {
        free(b); free(c); free(boot);
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return;
    }
    memcpy(b, base, (size_t)nb * sizeof *b);
    memcpy(c, cur, (size_t)nc * sizeof *c);
    const double mb = median_of(b, nb), mc = median_of(c, nc);
    if (!(mb > 0 && mc > 0 && isfinite(mb) && isfinite(mc))) { /* no time is 0: nothing measured */
        free(b); free(c); free(boot);
        snprintf(out->reason, sizeof out->reason, "a median is not a positive number (%g baseline, %g current)", mb,
                 mc);
        return;
    }
    out->change = mc / mb - 1;
    out->p = stats_mann_whitney(cur, nc, base, nb, NULL);
    /* percentile bootstrap of the ratio of medians; fixed seed: the same
     * samples always give the same verdict. A resample draws from all of a
     * side's samples, but at most VERDICT_BOOTSTRAP_MAX_DRAWS of them: the
     * work is bounded, and the interval only wider (verdict.h). */
    const int kb = nb < VERDICT_BOOTSTRAP_MAX_DRAWS ? nb : VERDICT_BOOTSTRAP_MAX_DRAWS;
    const int kc = nc < VERDICT_BOOTSTRAP_MAX_DRAWS ? nc : VERDICT_BOOTSTRAP_MAX_DRAWS;
    double *rb = malloc((size_t)kb * sizeof *rb), *rc = malloc((size_t)kc * sizeof *rc);
    if (!rb || !rc) {
        free(b); free(c); free(boot); free(rb); free(rc);
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return;
    }
    lc_rng rng;
    lc_rng_init(&rng, 0x5eed, 0, 0);
    for (int k = 0; k < nboot; k++) {
        for (int i = 0; i < kb; i++)
            rb[i] = b[lc_rng_next(&rng) % (uint64_t)nb];
        for (int i = 0; i < kc; i++)
            rc[i] = c[lc_rng_next(&rng) % (uint64_t)nc];
        out->bootstrap_draws += kb + kc;
        const double sb = stats_median_select(rb, kb), sc = stats_median_select(rc, kc);
        boot[k] = sb > 0 ? sc / sb - 1 : 0;
    }
    percentile_interval(boot, nboot, out);
    free(b); free(c); free(boot); free(rb); free(rc);

    verdict_classify(out);
}

void verdict_decide_paired(const double *ratio, int n, double noise, int comparisons, verdict_result *out)
{
    memset(out, 0, sizeof *out);
    out->delta = verdict_min_effect(noise);
    out->alpha_each = VERDICT_ALPHA / (comparisons < 1 ? 1 : comparisons);
    out->kind = VERDICT_INCONCLUSIVE;
    if (n < 5) {
        snprintf(out->reason, sizeof out->reason, "too few pairs (%d; 5 needed)", n);
        return;
    }
    int below = 0, above = 0;
    for (int i = 0; i < n; i++) {
        if (!(ratio[i] > 0 && isfinite(ratio[i]))) {
            snprintf(out->reason, sizeof out->reason, "pair %d's ratio %g is not a positive number", i + 1, ratio[i]);
            return;
        }
        below += ratio[i] < 1, above += ratio[i] > 1;
    }
    double *r = malloc((size_t)n * sizeof *r), *boot = malloc(VERDICT_BOOTSTRAP * sizeof *boot);
    if (!r || !boot) {
        free(r); free(boot);
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return;
    }
    memcpy(r, ratio, (size_t)n * sizeof *r);
    out->change = median_of(r, n) - 1;
    out->p = stats_sign_test(below, above);
    /* percentile bootstrap of the median ratio, the pairs resampled whole */
    lc_rng rng;
    lc_rng_init(&rng, 0x5eed, 0, 0);
    for (int k = 0; k < VERDICT_BOOTSTRAP; k++) {
        for (int i = 0; i < n; i++)
            r[i] = ratio[lc_rng_next(&rng) % (uint64_t)n];
        out->bootstrap_draws += n;
        boot[k] = stats_median_select(r, n) - 1;
    }
    percentile_interval(boot, VERDICT_BOOTSTRAP, out);
    free(r); free(boot);
    verdict_classify(out);
    if (out->kind == VERDICT_FASTER) /* no baseline here to update */
        snprintf(out->reason, sizeof out->reason, "faster by %.1f%%", -100 * out->change);
}

void verdict_confirm(verdict_result *first, const verdict_result *confirmation)
{
    if (first->kind != VERDICT_SLOWER)
        return;
    if (confirmation->kind == VERDICT_SLOWER) {
        *first = *confirmation;
        snprintf(first->reason, sizeof first->reason, "slower by %.1f%%, confirmed by an independent round",
                 100 * confirmation->change);
        return;
    }
    const double was = first->change;
    *first = *confirmation;
    char tail[160];
    snprintf(tail, sizeof tail, " (a first measurement said %+.1f%%; not confirmed)", 100 * was);
    strncat(first->reason, tail, sizeof first->reason - strlen(first->reason) - 1);
}
