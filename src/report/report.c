/* Bench output (see report.h). */
#include "report/report.h"

#include "device/memstats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void report_format_double(double v, char *buf, size_t n)
{
    if (isnan(v)) { snprintf(buf, n, "NaN"); return; }
    if (isinf(v)) { snprintf(buf, n, v > 0 ? "Infinity" : "-Infinity"); return; }
    if (v == 0) { snprintf(buf, n, signbit(v) ? "-0.0" : "0.0"); return; }
    /* shortest significand that reads back exactly */
    char sci[64];
    int digits = 1;
    for (; digits <= 17; digits++) {
        snprintf(sci, sizeof sci, "%.*e", digits - 1, v);
        if (strtod(sci, NULL) == v)
            break;
    }
    int exp = atoi(strchr(sci, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int decimals = digits - 1 - exp;
        if (decimals < 1)
            snprintf(buf, n, "%.0f.0", v);
        else
            snprintf(buf, n, "%.*f", decimals, v);
    } else {
        /* Python writes 1e-05 and 1.5e+16: C's %e with two exponent digits */
        snprintf(buf, n, "%s", sci);
    }
}

/* the original's fit_str: right-aligned in 16 columns, cut at 16 */
static void fit(FILE *f, const char *s)
{
    fprintf(f, "%16.16s", s);
}

static void fit_num(FILE *f, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.4g", v);
    fit(f, b);
}

static const char *const columns[] = {"name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd",
                                      "std_bwd", "info_bwd", "median_fwd", "min_fwd",
                                      "median_bwd", "min_bwd", "n", "peak_dev_MiB", NULL};

/* columns the profiling layer adds at the end (bench --trace) */
static const char *const trace_columns[] = {"gpu_util", "gemm_share", NULL};

void report_table_header(FILE *f, const char *sep, int trace_cols)
{
    for (int i = 0; columns[i]; i++) {
        if (i)
            fputs(sep, f);
        fit(f, columns[i]);
    }
    for (int i = 0; trace_cols && trace_columns[i]; i++) {
        fputs(sep, f);
        fit(f, trace_columns[i]);
    }
    fputc('\n', f);
}

void report_table_row(FILE *f, const char *sep, const bench_entry *e, int trace_cols)
{
    const harness_result *r = &e->res;
    fit(f, e->runner->name);
    fputs(sep, f); fit_num(f, r->fwd.mean);
    fputs(sep, f); fit_num(f, r->fwd.std);
    fputs(sep, f); fit(f, "None"); /* as the original: samples go to JSON */
    fputs(sep, f); fit_num(f, r->bwd.mean);
    fputs(sep, f); fit_num(f, r->bwd.std);
    fputs(sep, f); fit(f, "None");
    fputs(sep, f); fit_num(f, r->fwd.median);
    fputs(sep, f); fit_num(f, r->fwd.min);
    fputs(sep, f); fit_num(f, r->bwd.median);
    fputs(sep, f); fit_num(f, r->bwd.min);
    char b[32];
    snprintf(b, sizeof b, "%d", r->n);
    fputs(sep, f); fit(f, b);
    fputs(sep, f); fit_num(f, (double)r->peak_device_bytes / (1024.0 * 1024.0));
    if (trace_cols) {
        fputs(sep, f);
        if (e->have_trace_stats) fit_num(f, e->gpu_utilization); else fit(f, "None");
        fputs(sep, f);
        if (e->have_trace_stats) fit_num(f, e->gemm_share); else fit(f, "None");
    }
    fputc('\n', f);
}

static void json_num(FILE *f, double v)
{
    char b[64];
    report_format_double(v, b, sizeof b);
    fputs(b, f);
}

/* groups in the original's order: lstm, lstm-backward, vl_lstm, vl_lstm-backward */
static const char *const group_names[] = {"lstm", "vl_lstm", NULL};

void report_json_oss(FILE *f, const bench_entry *e, int n)
{
    int first_group = 1;
    fputc('{', f);
    for (int g = 0; group_names[g]; g++) {
        for (int bwd = 0; bwd < 2; bwd++) {
            int any = 0;
            for (int i = 0; i < n; i++)
                any |= e[i].timed && !strcmp(e[i].group, group_names[g]);
            if (!any)
                continue;
            fprintf(f, "%s\"%s%s\": {", first_group ? "" : ", ", group_names[g], bwd ? "-backward" : "");
            first_group = 0;
            int first = 1;
            for (int i = 0; i < n; i++) {
                if (!e[i].timed || strcmp(e[i].group, group_names[g]))
                    continue;
                fprintf(f, "%s\"%s\": ", first ? "" : ", ", e[i].runner->name);
                json_num(f, bwd ? e[i].res.bwd.mean : e[i].res.fwd.mean);
                first = 0;
            }
            fputc('}', f);
        }
    }
    fputs("}\n", f);
}

void report_json_pep(FILE *f, const bench_entry *e, int n)
{
    for (int g = 0; group_names[g]; g++) {
        for (int bwd = 0; bwd < 2; bwd++) {
            for (int i = 0; i < n; i++) {
                if (!e[i].timed || strcmp(e[i].group, group_names[g]))
                    continue;
                const double *v = bwd ? e[i].res.bwd_ms : e[i].res.fwd_ms;
                for (int k = 0; k < e[i].res.n; k++) {
                    char b[64];
                    report_format_double(v[k], b, sizeof b);
                    fprintf(f,
                            "Caffe2Observer {\"type\": \"NET\", \"metric\": \"%s%s-%s\", "
                            "\"unit\": \"ms\", \"value\": \"%s\"}\n",
                            group_names[g], bwd ? "-backward" : "", e[i].runner->name, b);
                }
            }
        }
    }
}

static void json_summary(FILE *f, const char *key, const sample_summary *s, const double *samples)
{
    fprintf(f, "\"%s\": {\"n\": %d, \"mean\": ", key, s->n);
    json_num(f, s->mean);
    fputs(", \"std\": ", f); json_num(f, s->std);
    fputs(", \"median\": ", f); json_num(f, s->median);
    fputs(", \"min\": ", f); json_num(f, s->min);
    fputs(", \"max\": ", f); json_num(f, s->max);
    fputs(", \"q1\": ", f); json_num(f, s->q1);
    fputs(", \"q3\": ", f); json_num(f, s->q3);
    fputs(", \"mad\": ", f); json_num(f, s->mad);
    if (samples) {
        fputs(", \"samples\": [", f);
        for (int i = 0; i < s->n; i++) {
            if (i)
                fputs(", ", f);
            json_num(f, samples[i]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

/* torch_geometric's get_stats_summary over the timed iterations: time
 * (forward + backward) mean/std and the maxima of memory. */
static void json_memory_summary(FILE *f, const bench_entry *x)
{
    const harness_result *r = &x->res;
    memstats_sample *s = calloc((size_t)(r->n > 0 ? r->n : 1), sizeof *s);
    if (!s)
        return;
    size_t used = x->dev_used_after > x->dev_used_before ? x->dev_used_after : x->dev_used_before;
    for (int i = 0; i < r->n; i++) {
        s[i].time_ms = r->fwd_ms[i] + r->bwd_ms[i];
        s[i].peak_device_bytes = r->peak_device_bytes;
        s[i].peak_rss_bytes = x->peak_rss_bytes;
        s[i].have_device = used != 0;
        s[i].dev_used_bytes = used;
    }
    memstats_summary m;
    memstats_summarize(s, r->n, &m);
    free(s);
    fprintf(f, ", \"summary\": {\"n\": %d, \"time_mean_ms\": ", m.n);
    json_num(f, m.time_mean_ms);
    fputs(", \"time_std_ms\": ", f);
    json_num(f, m.time_std_ms);
    fprintf(f, ", \"max_peak_device_bytes\": %zu, \"max_peak_rss_bytes\": %zu",
            m.max_peak_device_bytes, m.max_peak_rss_bytes);
    if (m.have_device)
        fprintf(f, ", \"max_dev_used_bytes\": %zu", m.max_dev_used_bytes);
    fputc('}', f);
}

void report_json_full(FILE *f, const bench_entry *e, int n, const lstm_shape *s, uint64_t seed,
                      const char *device)
{
    fprintf(f,
            "{\"version\": 1, \"device\": \"%s\", \"seed\": %llu, \"shape\": {\"seqLength\": %d, "
            "\"numLayers\": %d, \"inputSize\": %d, \"hiddenSize\": %d, \"miniBatch\": %d}, "
            "\"unit\": \"ms\", \"runners\": [",
            device, (unsigned long long)seed, s->seq_length, s->num_layers, s->input_size,
            s->hidden_size, s->batch);
    for (int i = 0; i < n; i++) {
        const bench_entry *x = &e[i];
        const char *gate = x->gate.status == LC_OK ? "pass"
                           : x->gate.status == LC_FAILED ? "fail"
                           : x->gate.status == LC_UNSUPPORTED ? "skip" : "error";
        fprintf(f, "%s{\"name\": \"%s\", \"group\": \"%s\", \"gate\": \"%s\"", i ? ", " : "",
                x->runner->name, x->group, gate);
        if (x->gate.status == LC_OK || x->gate.status == LC_FAILED) {
            fputs(", \"gate_worst_ratio\": ", f);
            json_num(f, x->gate.worst.ratio);
        }
        if (x->timed) {
            fputs(", ", f);
            json_summary(f, "forward", &x->res.fwd, x->res.fwd_ms);
            fputs(", ", f);
            json_summary(f, "backward", &x->res.bwd, x->res.bwd_ms);
            if (x->res.ctl_ms) {
                fputs(", ", f);
                json_summary(f, "control", &x->res.ctl, x->res.ctl_ms);
                fprintf(f, ", \"control_workload\": \"%s\"", x->res.control_name);
            }
            fprintf(f, ", \"warmup\": %d, \"budget_hit\": %s, \"peak_device_bytes\": %zu",
                    x->res.warmup_done, x->res.budget_hit ? "true" : "false",
                    x->res.peak_device_bytes);
            fprintf(f, ", \"peak_rss_bytes\": %zu", x->peak_rss_bytes);
            if (x->dev_used_before || x->dev_used_after)
                fprintf(f, ", \"dev_used_before_bytes\": %zu, \"dev_used_after_bytes\": %zu",
                        x->dev_used_before, x->dev_used_after);
            json_memory_summary(f, x);
            if (x->have_trace_stats) {
                fputs(", \"gpu_utilization\": ", f);
                json_num(f, x->gpu_utilization);
                fputs(", \"gemm_share\": ", f);
                json_num(f, x->gemm_share);
            }
        }
        fputc('}', f);
    }
    fputs("]}\n", f);
}
