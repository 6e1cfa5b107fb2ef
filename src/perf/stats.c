/* Summary statistics and the Mann-Whitney U test (see stats.h). */
#include "perf/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Where quantile q of n ordered values lies: between positions lo and hi
 * (hi = lo at the end), frac of the way. One definition for the sorted and
 * the selecting quantile, so that both give the same number, bit for bit. */
static void quantile_position(int n, double q, int *lo, int *hi, double *frac)
{
    const double pos = q * (n - 1);
    *lo = (int)floor(pos);
    *hi = *lo + 1 < n ? *lo + 1 : *lo;
    *frac = pos - *lo;
}

double stats_quantile_sorted(const double *s, int n, double q)
{
    if (n <= 0)
        return 0;
    int lo, hi;
    double frac;
    quantile_position(n, q, &lo, &hi, &frac);
    return s[lo] + (s[hi] - s[lo]) * frac;
}

static void swap_values(double *a, double *b)
{
    const double t = *a;
    *a = *b;
    *b = t;
}

/* Reorder v so that v[k] is the value sorting would put there, nothing
 * greater before it and nothing smaller after it (quickselect, pivot the
 * median of three): O(n) on average where sorting is O(n log n). */
static void select_kth(double *v, int n, int k)
{
    int left = 0, right = n - 1;
    while (right > left) {
        const int mid = left + (right - left) / 2;
        if (v[mid] < v[left]) swap_values(&v[mid], &v[left]);
        if (v[right] < v[left]) swap_values(&v[right], &v[left]);
        if (v[right] < v[mid]) swap_values(&v[right], &v[mid]);
        const double pivot = v[mid];
        int i = left, j = right;
        while (i <= j) { /* Hoare's partition: left of i <= pivot <= right of j */
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j)
                swap_values(&v[i++], &v[j--]);
        }
        if (k <= j)
            right = j;
        else if (k >= i)
            left = i;
        else
            return; /* between j and i: equal to the pivot, in place */
    }
}

double stats_median_select(double *v, int n)
{
    if (n <= 0)
        return 0;
    int lo, hi;
    double frac;
    quantile_position(n, 0.5, &lo, &hi, &frac);
    select_kth(v, n, lo);
    double next = v[lo]; /* the value sorting puts at hi: the least after lo */
    if (hi > lo) {
        next = v[hi];
        for (int i = hi + 1; i < n; i++)
            if (v[i] < next)
                next = v[i];
    }
    return v[lo] + (next - v[lo]) * frac;
}

void stats_summarize(const double *v, int n, sample_summary *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n <= 0)
        return;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, v, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    s->mean = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - s->mean) * (v[i] - s->mean);
    s->std = n > 1 ? sqrt(ss / (n - 1)) : 0;
    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->median = stats_quantile_sorted(sorted, n, 0.5);
    s->q1 = stats_quantile_sorted(sorted, n, 0.25);
    s->q3 = stats_quantile_sorted(sorted, n, 0.75);
    for (int i = 0; i < n; i++)
        sorted[i] = fabs(v[i] - s->median);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    s->mad = stats_quantile_sorted(sorted, n, 0.5);
    free(sorted);
}

void stats_json(json_writer *w, const sample_summary *s, const double *samples)
{
    json_object_begin(w);
    json_member_int(w, "n", s->n);
    json_member_double(w, "mean", s->mean);
    json_member_double(w, "std", s->std);
    json_member_double(w, "median", s->median);
    json_member_double(w, "min", s->min);
    json_member_double(w, "max", s->max);
    json_member_double(w, "q1", s->q1);
    json_member_double(w, "q3", s->q3);
    json_member_double(w, "mad", s->mad);
    if (samples) {
        json_key(w, "samples");
        json_array_begin_inline(w);
        for (int i = 0; i < s->n; i++)
            json_double(w, samples[i]);
        json_array_end(w);
    }
    json_object_end(w);
}

double stats_robust_rel_spread(const sample_summary *s)
{
    return s->median > 0 ? 1.4826 * s->mad / s->median : 0;
}

typedef struct ranked {
    double v;
    int group;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_double(&((const ranked *)a)->v, &((const ranked *)b)->v);
}

double stats_mann_whitney(const double *a, int na, const double *b, int nb, double *a_greater)
{
    if (a_greater)
        *a_greater = 0.5;
    if (na < 1 || nb < 1)
        return 1.0;
    int n = na + nb;
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return 1.0;
    for (int i = 0; i < na; i++) r[i] = (ranked){a[i], 0};
    for (int i = 0; i < nb; i++) r[na + i] = (ranked){b[i], 1};
    qsort(r, (size_t)n, sizeof *r, cmp_ranked);
    double rank_sum_a = 0, tie_term = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        double avg_rank = (i + j) / 2.0 + 1.0; /* ranks are 1-based */
        int t = j - i + 1;
        tie_term += (double)t * t * t - t;
        for (int k = i; k <= j; k++)
            if (r[k].group == 0)
                rank_sum_a += avg_rank;
        i = j + 1;
    }
    free(r);
    double u_a = rank_sum_a - (double)na * (na + 1) / 2.0; /* in double: na * (na + 1) passes INT_MAX at 46341 */
    if (a_greater)
        *a_greater = u_a / ((double)na * nb);
    double mu = (double)na * nb / 2.0;
    double var = (double)na * nb / 12.0 * ((n + 1) - tie_term / ((double)n * (n - 1)));
    if (var <= 0)
        return 1.0;
    double z = (fabs(u_a - mu) - 0.5) / sqrt(var);
    if (z < 0)
        z = 0;
    return erfc(z / sqrt(2.0)); /* two-sided */
}

double stats_sign_test(int below, int above)
{
    const int n = below + above, k = below < above ? below : above;
    if (n < 1)
        return 1.0;
    double p = 0; /* the terms in logs: 2^-n underflows past n = 1074 */
    for (int i = 0; i <= k; i++)
        p += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    return 2 * p < 1 ? 2 * p : 1.0;
}

double stats_normal_upper_quantile(double p)
{
    /* bisection on erfc: plenty fast for the few calls a verdict makes */
    double lo = -10, hi = 10;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / sqrt(2.0)) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}
