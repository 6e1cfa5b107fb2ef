/* lstmcheck profile: the original's profile.py. Each runner passes the
 * numerics gate, then runs --nloops forward + backward iterations (no
 * warm-up), with a pause between runners. With --tool nsys|ncu the command
 * re-executes itself with --internal-run under the profiler (the original's
 * full_profile); with --tool none it records the built-in trace (host
 * ranges, and GPU activity through CUPTI on a CUDA device). NVTX ranges mark
 * gate, runner, iteration, forward, backward and the GPU runners' steps.
 * A summary per runner goes to stdout: time mean/std over the iterations,
 * memory, GPU utilization and GEMM share. */
#include "cmd/commands.h"
#include "base/paths.h"
#include "base/proc.h"
#include "device/device.h"
#include "check/gate.h"
#include "perf/harness.h"
#include "check/isolate.h"
#include "device/memstats.h"
#include "report/op_table.h"
#include "report/profiling.h"
#include "cmd/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)

/* Full path of an executable: name itself when it holds a '/', else the
 * first match on PATH. 0 when found. */
static int find_executable(const char *name, char *out, size_t n)
{
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return access(out, X_OK) == 0 ? 0 : 1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len > 0) {
            int w = snprintf(out, n, "%.*s/%s", (int)len, path, name);
            struct stat st;
            if (w > 0 && (size_t)w < n && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
                access(out, X_OK) == 0)
                return 0;
        }
        path += len + (end ? 1 : 0);
    }
    return 1;
}

static int runner_names(const session *s, const char **names)
{
    for (int i = 0; i < s->nrunners; i++)
        names[i] = s->runners[i].runner->name;
    return s->nrunners;
}

static int output_name(const cli_options *o, const session *s, const char *ext, char *buf,
                       size_t n, lc_error *err)
{
    const char *names[CLI_MAX_RNNS * 2];
    int k = runner_names(s, names);
    time_t now = time(NULL);
    struct tm tm;
    if (!localtime_r(&now, &tm)) {
        lc_error_set(err, "cannot read the local time");
        return 1;
    }
    return prof_output_name(buf, n, o->out_dir, names, k, &o->shape, &tm, ext, err);
}

/* ---- the external profiler: re-execute ourselves under it ---- */

/* The profiler's own arguments: it writes to out. */
static lc_status tool_args(cli_line *a, int nsys, const char *tool_path, const char *out, lc_error *err)
{
    const char *const nsys_args[] = {tool_path, "profile", "-o", out, "--force-overwrite=true",
                                     "--trace=cuda,nvtx,osrt", NULL};
    const char *const ncu_args[] = {tool_path, "-o", out, "-f", "--clock-control", "none", "--nvtx", NULL};
    lc_status rc = LC_OK;
    for (const char *const *w = nsys ? nsys_args : ncu_args; !rc && *w; w++)
        rc = cli_line_add(a, *w, err);
    return rc;
}

/* Linux's longest single argument of a program it starts (MAX_ARG_STRLEN,
 * the NUL included): many --lengths make one longer. */
#define EXEC_ARG_MAX (32 * 4096)

/* The child: this command, run here (--internal-run) instead of under the
 * tool, every other flag written back through the flag table; LC_BAD_INPUT
 * where an argument is too long to be given (exit 2, before any work). */
static lc_status child_args(cli_line *a, const cli_options *o, const char *self, lc_error *err)
{
    cli_options child = *o;
    snprintf(child.tool, sizeof child.tool, "none");
    child.internal_run = 1;
    lc_status rc = cli_line_add(a, self, err);
    if (!rc)
        rc = cli_format(&child, a, err);
    for (int i = 0; !rc && i < a->n; i++)
        if (strlen(a->words[i]) >= EXEC_ARG_MAX) {
            lc_error_set(err, "an argument of %zu bytes (%.20s...), longer than a program can be given (%d)",
                         strlen(a->words[i]), a->words[i], EXEC_ARG_MAX - 1);
            rc = LC_BAD_INPUT;
        }
    return rc;
}

/* --out-dir, made where missing (as --dump's folder): it was checked before
 * any work (session_check_outputs). */
static lc_status make_out_dir(const cli_options *o)
{
    lc_error err = {{0}};
    if (!path_mkdir_p(o->out_dir, &err))
        return LC_OK;
    fprintf(stderr, "lstmcheck: --out-dir '%s': %s\n", o->out_dir, err.msg);
    return LC_ERROR;
}

/* Run the profiler and wait: what the lstmcheck it ran said (its exit code,
 * passed through), or LC_ERROR after saying how the profiler failed. */
static lc_status spawn_and_wait(const cli_line *a, const char *tool)
{
    fprintf(stderr, "[system]");
    for (int i = 0; i < a->n; i++)
        fprintf(stderr, " %s", a->words[i]);
    fprintf(stderr, "\n");
    /* the profiler and the lstmcheck it runs print this command's output:
     * theirs are this process's stdout and stderr; it dies with this process */
    const proc_io io = {.inherit_output = 1};
    lc_error err = {{0}};
    const int code = proc_run(a->words, &io, &err);
    if (code < 0) {
        fprintf(stderr, "lstmcheck: %s: %s\n", tool, err.msg);
        return LC_ERROR;
    }
    const lc_status said = lc_status_from_exit_code(code);
    if (lc_status_exit_code(said) != code) /* none of ours: the profiler's own */
        fprintf(stderr, "lstmcheck: %s exited with status %d\n", tool, code);
    return said;
}

static lc_status run_external(const cli_options *o, const session *s, const char *tool_path)
{
    lc_error err = {{0}};
    const int nsys = !strcmp(o->tool, "nsys");
    char out[4096];
    if (output_name(o, s, nsys ? "nsys-rep" : "ncu-rep", out, sizeof out, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return LC_BAD_INPUT;
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "lstmcheck: cannot find this program through /proc/self/exe: %s\n", strerror(errno));
        return LC_ERROR;
    }
    self[len] = '\0';
    cli_line a = {0};
    lc_status rc = tool_args(&a, nsys, tool_path, out, &err);
    if (rc || child_args(&a, o, self, &err)) {
        fprintf(stderr, "lstmcheck: the profiled run's command line: %s\n", err.msg);
        cli_line_free(&a);
        return LC_BAD_INPUT;
    }
    if ((rc = make_out_dir(o))) { /* last, once nothing else can refuse: a refusal leaves no folder */
        cli_line_free(&a);
        return rc;
    }
    const lc_status said = spawn_and_wait(&a, o->tool);
    cli_line_free(&a);
    if (access(out, F_OK) == 0)
        fprintf(stderr, "lstmcheck profile: wrote %s\n", out);
    else if (said == LC_OK) {
        fprintf(stderr, "lstmcheck: %s finished but %s is missing\n", o->tool, out);
        return LC_ERROR;
    }
    return said;
}

/* ---- the runs themselves ---- */

static void fit(const char *s) { printf("%16.16s", s); }

static void fit_num(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.4g", v);
    fit(b);
}

static const char *const columns[] = {"name", "n", "time_mean", "time_std", "fwd_mean",
                                      "bwd_mean", "peak_dev_MiB", "dev_before_MiB",
                                      "dev_after_MiB", "peak_rss_MiB", "gpu_util", "gemm_share",
                                      NULL};

static void table_header(void)
{
    for (int i = 0; columns[i]; i++) {
        if (i)
            putchar(' ');
        fit(columns[i]);
    }
    putchar('\n');
}

static void table_row(const runner_ops *r, const harness_result *res, const prof_runner_stats *st)
{
    const memstats_summary *m = &st->summary;
    char n[16];
    snprintf(n, sizeof n, "%d", m->n);
    printf("%16s", r->name); /* never cut (as bench's table) */
    putchar(' '); fit(n);
    putchar(' '); fit_num(m->time_mean_ms);
    putchar(' '); fit_num(m->time_std_ms);
    putchar(' '); fit_num(res->fwd.mean);
    putchar(' '); fit_num(res->bwd.mean);
    putchar(' '); fit_num((double)m->max_peak_device_bytes / MIB);
    putchar(' ');
    if (st->before.have) fit_num((double)(st->before.total_bytes - st->before.free_bytes) / MIB);
    else fit("None");
    putchar(' ');
    if (st->after.have) fit_num((double)(st->after.total_bytes - st->after.free_bytes) / MIB);
    else fit("None");
    putchar(' '); fit_num((double)m->max_peak_rss_bytes / MIB);
    putchar(' ');
    if (st->have_gpu_stats) fit_num(st->gpu.utilization); else fit("None");
    putchar(' ');
    if (st->have_gpu_stats) fit_num(st->gpu.gemm_share); else fit("None");
    putchar('\n');
    if (res->unchecked[0])
        printf("%16s  note: %s: %s\n", "", r->name, res->unchecked);
    fflush(stdout);
}

static void pause_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* One profile run here: options, session, the profiling layer, the
 * counts that make the exit status, and the first error that ends it. */
typedef struct profile_run {
    const cli_options *o;
    const session *s;
    prof_session prof;
    int done;
    lc_status status;  /* the worst so far (lc_status_worse): the exit status */
    int fatal;         /* the profiling layer failed: stop */
    lc_error fatal_err;
} profile_run;

/* The gate, in its own range; 0 when the runner passed. */
static int profile_gate(profile_run *run, const runner_ops *r, numerics_context *ctx)
{
    char label[160];
    snprintf(label, sizeof label, "gate %s", r->name);
    gate_report rep;
    prof_push(&run->prof, label);
    if (!isolate_precheck(r, ctx, &rep)) /* a broken CUDA setup is an error, not a skip */
        gate_run(r, ctx, NULL, &rep);
    prof_pop(&run->prof);
    if (rep.status == LC_OK)
        return 0;
    char line[1024];
    gate_format_summary(r, &rep, line, sizeof line);
    fprintf(stderr, "%s%s\n", line, rep.status == LC_UNSUPPORTED ? "" : " (not profiled)");
    run->status = lc_status_worse(run->status, rep.status);
    return 1;
}

/* The original's run_rnn: nloops iterations under the profiling hooks,
 * then the row. */
static void profile_runner(profile_run *run, const runner_ops *r, runner_group group, numerics_context *ctx)
{
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    if (numerics_context_timed(ctx, r, &p, &expected, &err)) { /* the gate made the reference; this may draw */
        fprintf(stderr, "ERROR %s: %s\n", r->name, err.msg);
        run->status = lc_status_worse(run->status, LC_ERROR);
        return;
    }
    harness_config cfg = {
        .warmup = 0, /* nloops iterations, nothing more */
        .min_samples = run->o->nloops,
        .max_samples = run->o->nloops,
        .hooks = prof_hooks(&run->prof),
        .expected = expected, /* what is profiled is what was checked (NULL: it cannot be; res says so) */
    };
    if (prof_runner_begin(&run->prof, r, group, &err)) {
        run->fatal = 1;
        run->fatal_err = err;
        return;
    }
    harness_result res;
    prof_runner_stats st;
    const lc_status rc = harness_run(r, p, &cfg, &res, &err);
    lc_error end_err = {{0}};
    int end_rc = prof_runner_end(&run->prof, rc ? NULL : &res, &st, &end_err);
    run->done++;
    if (rc) {
        if (rc == LC_FAILED) /* a timed call's results differ: err is the gate's FAIL line */
            fprintf(stderr, "%s (not profiled)\n", err.msg);
        else
            fprintf(stderr, "ERROR %s: %s\n", r->name, err.msg);
        run->status = lc_status_worse(run->status, rc == LC_FAILED ? LC_FAILED : LC_ERROR);
    } else {
        table_row(r, &res, &st);
    }
    harness_result_free(&res);
    if (end_rc) {
        run->fatal = 1;
        run->fatal_err = end_err;
    }
}

/* Every runner of one group, with the pause between runners. */
static void profile_group(profile_run *run, runner_group group, numerics_context *ctx)
{
    for (int i = 0; i < run->s->nrunners && !run->fatal; i++) {
        if (run->s->runners[i].group != group)
            continue;
        const runner_ops *r = run->s->runners[i].runner;
        if (run->done > 0)
            pause_s(run->o->sleep_between_s);
        if (!profile_gate(run, r, ctx))
            profile_runner(run, r, group, ctx);
    }
}

/* The main group, then --variable-lstms' group. LC_BAD_INPUT when the main
 * group's inputs cannot be made. */
static lc_status profile_groups(profile_run *run)
{
    const cli_options *o = run->o;
    lc_error err = {{0}};
    numerics_context ctx;
    if (numerics_context_init(&ctx, &o->shape, o->seed, o->nlengths ? o->lengths : NULL, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return LC_BAD_INPUT;
    }
    profile_group(run, o->nlengths ? RUNNER_GROUP_VL_LSTM : RUNNER_GROUP_LSTM, &ctx);
    numerics_context_free(&ctx);
    if (run->fatal || !run->s->vl_lengths)
        return LC_OK;
    if (numerics_context_init(&ctx, &run->s->vl_shape, o->seed, run->s->vl_lengths, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        run->status = lc_status_worse(run->status, LC_ERROR);
        return LC_OK;
    }
    profile_group(run, RUNNER_GROUP_VL_LSTM, &ctx);
    numerics_context_free(&ctx);
    return LC_OK;
}

static void run_header(const profile_run *run, const char *trace_path)
{
    const cli_options *o = run->o;
    char shape[128];
    fprintf(stderr, "lstmcheck profile: device %s, %s, nloops %d, sleep %g s, seed %llu%s\n",
            lc_device_name(run->s->device), lstm_shape_format(&o->shape, LSTM_SHAPE_FLAGS, shape, sizeof shape),
            o->nloops, o->sleep_between_s, (unsigned long long)o->seed,
            trace_path ? (run->prof.gpu_trace ? ", trace: host ranges + GPU activity (CUPTI)" : ", trace: host ranges")
                       : "");
    printf("times in ms (time = forward + backward per iteration), memory in MiB\n");
    table_header();
}

static lc_status run_here(const cli_options *o, const session *s, const char *trace_path)
{
    profile_run run = {.o = o, .s = s};
    lc_error err = {{0}};
    lc_status rc = prof_begin(&run.prof, s->device, trace_path != NULL, 1, &err);
    if (rc) { /* without a device for the GPU trace: not here (3), as for bench */
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return rc;
    }
    run_header(&run, trace_path);
    rc = profile_groups(&run);
    if (rc)
        goto out;
    rc = LC_ERROR;
    if (run.fatal) {
        fprintf(stderr, "lstmcheck: profiling: %s\n", run.fatal_err.msg);
        goto out;
    }
    if (prof_finish(&run.prof, trace_path, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        goto out;
    }
    if (trace_path)
        fprintf(stderr, "lstmcheck profile: wrote %s (%zu events%s)\n", trace_path, trace_count(run.prof.trace),
                trace_dropped(run.prof.trace) ? ", some records dropped" : "");
    if (run.prof.trace) {
        if (op_table_report(&run.prof, stdout, o->csv_path, &err)) {
            fprintf(stderr, "lstmcheck: the table of operations: %s\n", err.msg);
            goto out;
        }
        if (o->csv_path)
            fprintf(stderr, "lstmcheck profile: wrote %s\n", o->csv_path);
    }
    rc = run.status;
out:
    prof_free(&run.prof);
    return rc;
}

/* What can be refused before any work: the flags together, the profiler
 * and the device it needs. tool_path: where the profiler is (--tool). */
static lc_status check_request(const cli_options *o, char *tool_path, size_t n)
{
    const int external = strcmp(o->tool, "none") != 0;
    if (external && o->trace_path) {
        fprintf(stderr, "lstmcheck: --trace and --tool %s exclude each other (both use CUPTI); "
                        "use --tool none for the built-in trace\n", o->tool);
        return LC_BAD_INPUT;
    }
    if (external && o->csv_path && !o->internal_run) {
        fprintf(stderr, "lstmcheck: --csv writes the table of operations of the built-in trace, which --tool %s "
                        "replaces; use --tool none\n", o->tool);
        return LC_BAD_INPUT;
    }
    if (o->internal_run && o->csv_path && !o->trace_path) { /* the re-executed run collects a trace with --trace only */
        fprintf(stderr, "lstmcheck: --csv with --internal-run needs --trace: without it no trace is collected\n");
        return LC_BAD_INPUT;
    }
    if (external && o->device == LC_DEVICE_CPU) {
        fprintf(stderr, "lstmcheck: --tool %s profiles GPU work, but --device is cpu\n", o->tool);
        return LC_BAD_INPUT;
    }
    if (!external || o->internal_run)
        return LC_OK;
    if (find_executable(o->tool, tool_path, n)) {
        fprintf(stderr, "lstmcheck: %s not found on PATH (install Nsight %s, or use --tool none "
                        "for the built-in trace)\n", o->tool, strcmp(o->tool, "nsys") ? "Compute" : "Systems");
        return LC_UNSUPPORTED; /* the tool is not here: not the user's mistake */
    }
    lc_error why = {{0}};
    if (device_cuda_count(&why) <= 0) {
        fprintf(stderr, "lstmcheck: --tool %s needs a CUDA device: %s\n", o->tool, why.msg);
        return LC_UNSUPPORTED; /* as every command's --device cuda without a GPU */
    }
    return LC_OK;
}

/* Where the built-in trace goes: --trace, else (--tool none, not the
 * profiler's child) the original's file name in --out-dir; NULL: none.
 * Both paths were checked before any work (session_check_outputs). */
static lc_status trace_destination(const cli_options *o, const session *s, char *buf, size_t n,
                                   const char **trace)
{
    lc_error err = {{0}};
    *trace = NULL;
    if (o->trace_path) {
        *trace = o->trace_path;
    } else if (!o->internal_run) {
        if (output_name(o, s, "json", buf, n, &err)) { /* before the folder is made: a refusal leaves none */
            fprintf(stderr, "lstmcheck: --out-dir '%s': %s\n", o->out_dir, err.msg);
            return LC_BAD_INPUT;
        }
        if (o->csv_path && path_same_file(o->csv_path, buf)) { /* --out-dir may hold --csv, not as this name */
            fprintf(stderr, "lstmcheck: --csv '%s' is the trace's own file in --out-dir: give it another name\n",
                    o->csv_path);
            return LC_BAD_INPUT;
        }
        *trace = buf;
        return make_out_dir(o);
    }
    return LC_OK;
}

lc_status cmd_profile(const cli_options *o_in)
{
    cli_options o = *o_in;
    if (o.nloops <= 0)
        o.nloops = CLI_PROFILE_NLOOPS;
    char tool_path[4096], trace_path[4096];
    lc_status rc = check_request(&o, tool_path, sizeof tool_path);
    if (rc)
        return rc;
    session s;
    lc_error err = {{0}};
    const session_request rq = session_request_from(&o);
    if ((rc = session_setup(&rq, &s, &err))) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        goto out;
    }
    if (strcmp(o.tool, "none") && !o.internal_run) {
        rc = run_external(&o, &s, tool_path);
        goto out;
    }
    const char *trace;
    if (!(rc = trace_destination(&o, &s, trace_path, sizeof trace_path, &trace)))
        rc = run_here(&o, &s, trace);
out:
    session_free(&s);
    return rc;
}
