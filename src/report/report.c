/* Bench output (see report.h). */
#include "report/report.h"

#include "report/context_report.h"

#include "base/json.h"
#include "device/memstats.h"

#include <math.h>
#include <stdlib.h>

/* the original's fit_str: right-aligned in 16 columns, cut at 16 */
static void fit(FILE *f, const char *s)
{
    fprintf(f, "%16.16s", s);
}

/* a runner's name right-aligned in 16 columns, never cut: the original cut
 * jit_layernorm_decom to a name no runner has */
static void fit_name(FILE *f, const char *s)
{
    fprintf(f, "%16s", s);
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

/* the roofline's columns, last (after --trace's: those keep their places) */
static const char *const roofline_columns[] = {"GFLOP/s_fwd", "x_limit_fwd", "GFLOP/s_bwd", "x_limit_bwd", NULL};

static int limit_measured(const report_limit *l)
{
    return l->status == LC_OK && l->limit.gflops > 0;
}

void report_limit_lines(FILE *f, const report_limit limits[LC_DEVICE_COUNT], const double gemm_flops[2])
{
    for (int d = 0; d < LC_DEVICE_COUNT; d++) {
        const report_limit *l = &limits[d];
        const roofline_limit *x = &l->limit;
        if (!l->asked)
            continue;
        fprintf(f, "%s SGEMM limit: ", lc_device_name((lc_device)d));
        if (limit_measured(l))
            fprintf(f, "%.4g GFLOP/s (%s%s%dx%dx%d, %s", x->gflops, x->library ? x->library : "",
                    x->library ? " " : "", x->m, x->n, x->k, roofline_shape_name(x->which));
        else
            fprintf(f, "not measured (%s", l->why[0] ? l->why : "unknown why");
        if (limit_measured(l) && x->threads)
            fprintf(f, ", %d thread%s", x->threads, x->threads == 1 ? "" : "s");
        for (int i = 0; limit_measured(l) && i < x->libraries; i++) {
            const roofline_library *t = &x->tried[i];
            if (t->gflops <= 0)
                fprintf(f, "; %s not measured: %s", t->name, t->why);
            else if (t->name != x->library)
                fprintf(f, "; %s's best %.4g", t->name, t->gflops);
        }
        fprintf(f, "); the LSTM's GEMMs: %.4g GFLOP forward, %.4g backward; x_limit = median / their time at the "
                   "limit\n", gemm_flops[0] / 1e9, gemm_flops[1] / 1e9);
    }
}

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
    for (int i = 0; roofline_columns[i]; i++) {
        fputs(sep, f);
        fit(f, roofline_columns[i]);
    }
    fputc('\n', f);
}

void report_table_row(FILE *f, const char *sep, const bench_entry *e, int trace_cols)
{
    const harness_result *r = &e->res;
    fit_name(f, e->runner->name);
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
    for (int phase = 0; phase < 2; phase++) {
        fputs(sep, f); fit_num(f, e->gflops[phase]);
        fputs(sep, f);
        if (e->x_limit[phase] > 0) fit_num(f, e->x_limit[phase]); else fit(f, "None");
    }
    fputc('\n', f);
}

static int timed_in(const bench_entry *e, runner_group group)
{
    return e->timed && e->group == group;
}

/* The finished document and a newline; 1 when the writer ran out of memory. */
static int print_document(FILE *f, const json_writer *w)
{
    const char *text = json_text(w, NULL);
    if (text)
        fprintf(f, "%s\n", text);
    return text == NULL;
}

/* "lstm": {"cpu": mean, ...}: one phase of one group */
static void oss_phase(json_writer *w, const bench_entry *e, int n, runner_group group, int bwd)
{
    char key[64];
    snprintf(key, sizeof key, "%s%s", runner_group_name(group), bwd ? "-backward" : "");
    json_key(w, key);
    json_object_begin(w);
    for (int i = 0; i < n; i++)
        if (timed_in(&e[i], group))
            json_member_double(w, e[i].runner->name, bwd ? e[i].res.bwd.mean : e[i].res.fwd.mean);
    json_object_end(w);
}

/* "unchecked": {"cudnn_dropout": why}: the timings no reference checked,
 * after the original's members and only where there are any */
static void oss_unchecked(json_writer *w, const bench_entry *e, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (!e[i].timed || !e[i].res.unchecked[0])
            continue;
        if (!any++) {
            json_key(w, "unchecked");
            json_object_begin(w);
        }
        json_member_string(w, e[i].runner->name, e[i].res.unchecked);
    }
    if (any)
        json_object_end(w);
}

/* groups in the original's order: lstm, lstm-backward, vl_lstm, vl_lstm-backward */
static void json_oss(json_writer *w, const bench_entry *e, int n)
{
    json_object_begin(w);
    for (runner_group g = 0; g < RUNNER_GROUP_COUNT; g++) {
        int any = 0;
        for (int i = 0; i < n; i++)
            any |= timed_in(&e[i], g);
        for (int bwd = 0; any && bwd < 2; bwd++)
            oss_phase(w, e, n, g, bwd);
    }
    oss_unchecked(w, e, n);
    json_object_end(w);
}

/* One Caffe2Observer line: the value is the sample's repr, as a string. */
static int pep_line(FILE *f, json_writer *w, runner_group group, int bwd, const bench_entry *e, double v)
{
    const char *runner = e->runner->name;
    char metric[160], value[64];
    snprintf(metric, sizeof metric, "%s%s-%s", runner_group_name(group), bwd ? "-backward" : "", runner);
    json_format_double(v, value, sizeof value);
    json_reset(w);
    json_object_begin(w);
    json_member_string(w, "type", "NET");
    json_member_string(w, "metric", metric);
    json_member_string(w, "unit", "ms");
    json_member_string(w, "value", value);
    if (e->res.unchecked[0])
        json_member_string(w, "unchecked", e->res.unchecked);
    json_object_end(w);
    fputs("Caffe2Observer ", f);
    return print_document(f, w);
}

/* A line per sample, in the original's order of groups and phases. */
static int print_pep(FILE *f, const bench_entry *e, int n)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    int rc = 0;
    for (runner_group g = 0; g < RUNNER_GROUP_COUNT; g++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int i = 0; i < n; i++) {
                const double *v = bwd ? e[i].res.bwd_ms : e[i].res.fwd_ms;
                for (int k = 0; timed_in(&e[i], g) && k < e[i].res.n && !rc; k++)
                    rc = pep_line(f, &w, g, bwd, &e[i], v[k]);
            }
    json_free(&w);
    return rc;
}

static void json_summary(json_writer *w, const char *key, const sample_summary *s, const double *samples)
{
    json_key(w, key);
    stats_json(w, s, samples);
}

/* torch_geometric's get_stats_summary over the timed iterations: time
 * (forward + backward) mean/std and the maxima of memory. */
static void json_memory_summary(json_writer *w, const bench_entry *x)
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
    json_key(w, "summary");
    json_object_begin(w);
    json_member_int(w, "n", m.n);
    json_member_double(w, "time_mean_ms", m.time_mean_ms);
    json_member_double(w, "time_std_ms", m.time_std_ms);
    json_member_uint(w, "max_peak_device_bytes", m.max_peak_device_bytes);
    json_member_uint(w, "max_peak_rss_bytes", m.max_peak_rss_bytes);
    if (m.have_device)
        json_member_uint(w, "max_dev_used_bytes", m.max_dev_used_bytes);
    json_object_end(w);
}

/* A phase pair {"forward": a, "backward": b} under key. */
static void json_phases(json_writer *w, const char *key, const double v[2])
{
    json_key(w, key);
    json_object_begin(w);
    json_member_double(w, "forward", v[0]);
    json_member_double(w, "backward", v[1]);
    json_object_end(w);
}

/* A timed runner's roofline: its GEMM FLOPs, rates, and multiples of the
 * limit where one was measured (the run's "limit" of its device says which). */
static void json_roofline(json_writer *w, const bench_entry *x)
{
    json_key(w, "roofline");
    json_object_begin(w);
    json_phases(w, "gemm_flops", x->gemm_flops);
    json_phases(w, "gflops", x->gflops);
    if (x->x_limit[0] > 0)
        json_phases(w, "x_limit", x->x_limit);
    json_object_end(w);
}

/* Each library's best rate, "libraries": {"OpenBLAS": 44.7, "oneDNN": 224.4},
 * and why one has none, "not_measured": {"oneDNN": "..."} (only when one has none). */
static void json_limit_tried(json_writer *w, const roofline_limit *x)
{
    int unmeasured = 0;
    json_key(w, "libraries");
    json_object_begin(w);
    for (int i = 0; i < x->libraries; i++) {
        if (x->tried[i].gflops > 0)
            json_member_double(w, x->tried[i].name, x->tried[i].gflops);
        else
            unmeasured++;
    }
    json_object_end(w);
    if (!unmeasured)
        return;
    json_key(w, "not_measured");
    json_object_begin(w);
    for (int i = 0; i < x->libraries; i++)
        if (x->tried[i].gflops <= 0)
            json_member_string(w, x->tried[i].name, x->tried[i].why);
    json_object_end(w);
}

/* The limits, per device asked: {"cpu": {"what", "gflops", "library",
 * "gemm": [m, n, k], "gemm_is", "threads", "libraries"}} or {"cuda":
 * {"error": why}}. */
static void json_limits(json_writer *w, const report_limit limits[LC_DEVICE_COUNT])
{
    json_key(w, "limit");
    json_object_begin(w);
    for (int d = 0; d < LC_DEVICE_COUNT; d++) {
        const report_limit *l = &limits[d];
        if (!l->asked)
            continue;
        json_key(w, lc_device_name((lc_device)d));
        json_object_begin(w);
        if (limit_measured(l)) {
            json_member_string(w, "what", "best sustained FP32 GEMM rate, measured before the runners");
            json_member_double(w, "gflops", l->limit.gflops);
            if (l->limit.library)
                json_member_string(w, "library", l->limit.library);
            json_key(w, "gemm");
            json_array_begin(w);
            json_int(w, l->limit.m);
            json_int(w, l->limit.n);
            json_int(w, l->limit.k);
            json_array_end(w);
            json_member_string(w, "gemm_is", roofline_shape_name(l->limit.which));
            json_member_int(w, "threads", l->limit.threads);
            json_limit_tried(w, &l->limit);
        } else {
            json_member_string(w, "error", l->why[0] ? l->why : "unknown why");
        }
        json_object_end(w);
    }
    json_object_end(w);
}

/* What was measured of a runner that passed the gate and was timed. */
static void json_timing(json_writer *w, const bench_entry *x)
{
    json_summary(w, "forward", &x->res.fwd, x->res.fwd_ms);
    json_summary(w, "backward", &x->res.bwd, x->res.bwd_ms);
    if (x->res.ctl_ms) {
        json_summary(w, "control", &x->res.ctl, x->res.ctl_ms);
        json_member_string(w, "control_workload", x->res.control_name);
    }
    json_member_int(w, "warmup", x->res.warmup_done);
    json_member_int(w, "checked_iterations", x->res.checked); /* timed ones compared with the reference */
    if (x->res.unchecked[0])
        json_member_string(w, "unchecked", x->res.unchecked); /* why none were */
    json_member_bool(w, "budget_hit", x->res.budget_hit);
    json_member_uint(w, "peak_device_bytes", x->res.peak_device_bytes);
    json_member_uint(w, "peak_rss_bytes", x->peak_rss_bytes);
    if (x->dev_used_before || x->dev_used_after) {
        json_member_uint(w, "dev_used_before_bytes", x->dev_used_before);
        json_member_uint(w, "dev_used_after_bytes", x->dev_used_after);
    }
    json_memory_summary(w, x);
    json_roofline(w, x);
    if (x->have_trace_stats) {
        json_member_double(w, "gpu_utilization", x->gpu_utilization);
        json_member_double(w, "gemm_share", x->gemm_share);
    }
}

static const char *gate_word(lc_status status)
{
    return status == LC_OK ? "pass" : status == LC_FAILED ? "fail" : status == LC_UNSUPPORTED ? "skip" : "error";
}

/* Its model's sizes at its group's shape (lstm_sizes) */
static void json_sizes(json_writer *w, const bench_entry *x)
{
    json_key(w, "sizes");
    json_object_begin(w);
    json_member_uint(w, "parameters", x->sizes.parameters);
    json_member_uint(w, "parameter_bytes", x->sizes.parameter_bytes);
    json_member_uint(w, "input_bytes", x->sizes.input_bytes);
    json_member_uint(w, "activation_bytes", x->sizes.activation_bytes);
    json_object_end(w);
}

static void json_runner(json_writer *w, const bench_entry *x)
{
    json_object_begin(w);
    json_member_string(w, "name", x->runner->name);
    json_member_string(w, "group", runner_group_name(x->group));
    json_member_string(w, "model", lstm_model_name(x->runner->model));
    if (x->have_sizes)
        json_sizes(w, x);
    json_member_string(w, "gate", gate_word(x->gate.status));
    if (x->gate.status == LC_OK || x->gate.status == LC_FAILED)
        json_member_double(w, "gate_worst_ratio", x->gate.worst.ratio);
    if (x->gate.status != LC_OK && x->gate.reason[0])
        json_member_string(w, "reason", x->gate.reason); /* why it skipped, broke or failed */
    if (x->timed)
        json_timing(w, x);
    else if (x->gate.status == LC_OK && x->error[0])
        json_member_string(w, "error", x->error); /* why a runner that passed was not timed */
    json_object_end(w);
}

/* n lengths under key */
static void json_lengths(json_writer *w, const char *key, const int *lengths, int n)
{
    json_key(w, key);
    json_array_begin(w);
    for (int b = 0; b < n; b++)
        json_int(w, lengths[b]);
    json_array_end(w);
}

static void json_full(json_writer *w, const bench_entry *e, int n, const report_run *run)
{
    json_object_begin(w);
    json_member_int(w, "version", 1);
    json_member_string(w, "device", lc_device_name(run->device));
    json_member_uint(w, "seed", run->seed);
    json_key(w, "shape");
    lstm_shape_json(w, &run->shape);
    if (run->lengths)
        json_lengths(w, "lengths", run->lengths, run->shape.batch);
    if (run->vl_shape) { /* what the vl_lstm runners' sizes and FLOPs are of */
        json_key(w, "variable_lengths");
        json_object_begin(w);
        json_key(w, "shape");
        lstm_shape_json(w, run->vl_shape);
        json_lengths(w, "lengths", run->vl_lengths, run->vl_shape->batch);
        json_object_end(w);
    }
    json_member_string(w, "unit", "ms");
    if (run->context) {
        json_key(w, "context");
        report_context_json(w, run->context);
    }
    json_limits(w, run->limit);
    json_key(w, "runners");
    json_array_begin(w);
    for (int i = 0; i < n; i++)
        json_runner(w, &e[i]);
    json_array_end(w);
    json_object_end(w);
}

int report_json(FILE *f, report_json_format format, const bench_entry *e, int n, const report_run *run)
{
    if (format == REPORT_JSON_PEP)
        return print_pep(f, e, n);
    if (format != REPORT_JSON_OSS && format != REPORT_JSON_FULL)
        return 0;
    json_writer w;
    json_init(&w, JSON_ONE_LINE);
    if (format == REPORT_JSON_OSS)
        json_oss(&w, e, n);
    else
        json_full(&w, e, n, run);
    const int rc = print_document(f, &w);
    json_free(&w);
    return rc;
}
