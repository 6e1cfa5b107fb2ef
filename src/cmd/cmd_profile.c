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
#include "device/device.h"
#include "check/gate.h"
#include "perf/harness.h"
#include "check/isolate.h"
#include "device/memstats.h"
#include "report/profiling.h"
#include "cmd/session.h"

#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

typedef struct arg_list {
    char *argv[CLI_MAX_RNNS + 64];
    int n;
    char pool[16384];
    size_t used;
    int overflow;
} arg_list;

static void arg_add(arg_list *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void arg_add(arg_list *a, const char *fmt, ...)
{
    if (a->overflow || a->n + 1 >= (int)(sizeof a->argv / sizeof a->argv[0])) {
        a->overflow = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(a->pool + a->used, sizeof a->pool - a->used, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof a->pool - a->used) {
        a->overflow = 1;
        return;
    }
    a->argv[a->n++] = a->pool + a->used;
    a->argv[a->n] = NULL;
    a->used += (size_t)w + 1;
}

static int run_external(const cli_options *o, const session *s, const char *tool_path)
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
        fprintf(stderr, "lstmcheck: cannot find this program through /proc/self/exe: %s\n",
                strerror(errno));
        return LC_FAILED;
    }
    self[len] = '\0';

    arg_list a = {.n = 0};
    arg_add(&a, "%s", tool_path);
    if (nsys) {
        arg_add(&a, "profile");
        arg_add(&a, "-o");
        arg_add(&a, "%s", out);
        arg_add(&a, "--force-overwrite=true");
        arg_add(&a, "--trace=cuda,nvtx,osrt");
    } else {
        arg_add(&a, "-o");
        arg_add(&a, "%s", out);
        arg_add(&a, "-f");
        arg_add(&a, "--clock-control");
        arg_add(&a, "none");
        arg_add(&a, "--nvtx");
    }
    /* the child: the same command with every setting spelled out, as the
     * original's full_profile passes --k=v for each argument */
    arg_add(&a, "%s", self);
    arg_add(&a, "profile");
    arg_add(&a, "--seqLength=%d", o->shape.seq_length);
    arg_add(&a, "--numLayers=%d", o->shape.num_layers);
    arg_add(&a, "--inputSize=%d", o->shape.input_size);
    arg_add(&a, "--hiddenSize=%d", o->shape.hidden_size);
    if (!o->nlengths)
        arg_add(&a, "--miniBatch=%d", o->shape.batch);
    arg_add(&a, "--nloops=%d", o->nloops);
    arg_add(&a, "--sleep-between-seconds=%.17g", o->sleep_between_s);
    arg_add(&a, "--seed=%llu", (unsigned long long)o->seed);
    arg_add(&a, "--device=%s", o->device);
    if (o->nrnns) {
        arg_add(&a, "--rnns");
        for (int i = 0; i < o->nrnns; i++)
            arg_add(&a, "%s", o->rnns[i]);
    }
    if (o->variable_lstms)
        arg_add(&a, "--variable-lstms");
    if (o->nlengths) {
        char lengths[8192];
        size_t k = 0;
        for (int i = 0; i < o->nlengths && k < sizeof lengths; i++)
            k += (size_t)snprintf(lengths + k, sizeof lengths - k, "%s%d", i ? "," : "", o->lengths[i]);
        if (k >= sizeof lengths) {
            fprintf(stderr, "lstmcheck: too many --lengths to pass to the profiled run\n");
            return LC_BAD_INPUT;
        }
        arg_add(&a, "--lengths=%s", lengths);
    }
    arg_add(&a, "--internal-run");
    if (a.overflow) {
        fprintf(stderr, "lstmcheck: the profiler's command line is too long\n");
        return LC_BAD_INPUT;
    }
    fprintf(stderr, "[system]");
    for (int i = 0; i < a.n; i++)
        fprintf(stderr, " %s", a.argv[i]);
    fprintf(stderr, "\n");
    fflush(stderr);
    fflush(stdout);

    pid_t pid;
    int rc = posix_spawn(&pid, tool_path, NULL, NULL, a.argv, environ);
    if (rc != 0) {
        fprintf(stderr, "lstmcheck: cannot start %s: %s\n", tool_path, strerror(rc));
        return LC_FAILED;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "lstmcheck: waiting for %s: %s\n", o->tool, strerror(errno));
            return LC_FAILED;
        }
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "lstmcheck: %s was killed by signal %d\n", o->tool, WTERMSIG(status));
        return LC_FAILED;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    /* the child's own codes (1 failed, 2 bad input, 3 skipped) pass through;
     * the profiler's failures become 1 */
    if (code != LC_OK && code != LC_FAILED && code != LC_BAD_INPUT && code != LC_UNSUPPORTED) {
        fprintf(stderr, "lstmcheck: %s exited with status %d\n", o->tool, code);
        return LC_FAILED;
    }
    if (access(out, F_OK) == 0)
        fprintf(stderr, "lstmcheck profile: wrote %s\n", out);
    else if (code == LC_OK) {
        fprintf(stderr, "lstmcheck: %s finished but %s is missing\n", o->tool, out);
        return LC_FAILED;
    }
    return code;
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
    fit(r->name);
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

typedef struct profile_counts {
    int done, failed, skipped;
} profile_counts;

static int profile_group(const cli_options *o, const session *s, const char *group,
                         numerics_context *ctx, prof_session *prof, profile_counts *c,
                         lc_error *fatal)
{
    for (int i = 0; i < s->nrunners; i++) {
        if (strcmp(s->runners[i].group, group))
            continue;
        const runner_ops *r = s->runners[i].runner;
        if (c->done > 0)
            pause_s(o->sleep_between_s);
        char label[160];
        snprintf(label, sizeof label, "gate %s", r->name);
        gate_report rep;
        prof_push(prof, label);
        if (!isolate_precheck(r, ctx, &rep)) /* a broken CUDA setup is an error, not a skip */
            gate_run(r, ctx, NULL, &rep);
        prof_pop(prof);
        if (rep.status != LC_OK) {
            char line[1024];
            gate_format_summary(r, &rep, line, sizeof line);
            fprintf(stderr, "%s%s\n", line, rep.status == LC_UNSUPPORTED ? "" : " (not profiled)");
            if (rep.status == LC_UNSUPPORTED) c->skipped++;
            else c->failed++;
            continue;
        }
        const lstm_problem *p;
        const lstm_results *ref;
        lc_error err = {{0}};
        numerics_context_get(ctx, r, &p, &ref, &err); /* ready: the gate made it */
        harness_config cfg = {
            .warmup = 0, /* the original's run_rnn: nloops iterations, nothing more */
            .min_samples = o->nloops,
            .max_samples = o->nloops,
            .target_rel_error = 0,
            .time_budget_s = 0,
            .with_control = 0,
            .hooks = prof_hooks(prof),
        };
        harness_result res;
        prof_runner_stats st;
        if (prof_runner_begin(prof, r, &err)) {
            *fatal = err;
            return 1;
        }
        int rc = harness_run(r, p, &cfg, &res, &err);
        lc_error end_err = {{0}};
        int end_rc = prof_runner_end(prof, rc ? NULL : &res, &st, &end_err);
        c->done++;
        if (rc) {
            fprintf(stderr, "ERROR %s: %s\n", r->name, err.msg);
            c->failed++;
        } else {
            table_row(r, &res, &st);
        }
        harness_result_free(&res);
        if (end_rc) {
            *fatal = end_err;
            return 1;
        }
    }
    return 0;
}

static int run_here(const cli_options *o, session *s, const char *trace_path)
{
    lc_error err = {{0}};
    prof_session prof;
    if (prof_begin(&prof, s->device, trace_path != NULL, 1, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return LC_FAILED;
    }
    fprintf(stderr,
            "lstmcheck profile: device %s, seqLength %d numLayers %d inputSize %d hiddenSize %d "
            "miniBatch %d, nloops %d, sleep %g s, seed %llu%s\n",
            s->device, o->shape.seq_length, o->shape.num_layers, o->shape.input_size,
            o->shape.hidden_size, o->shape.batch, o->nloops, o->sleep_between_s,
            (unsigned long long)o->seed,
            trace_path ? (prof.gpu_trace ? ", trace: host ranges + GPU activity (CUPTI)"
                                         : ", trace: host ranges")
                       : "");
    printf("times in ms (time = forward + backward per iteration), memory in MiB\n");
    table_header();
    profile_counts c = {0, 0, 0};
    numerics_context ctx;
    int fatal = 0;
    lc_error fatal_err = {{0}};
    if (numerics_context_init(&ctx, &o->shape, o->seed, o->nlengths ? o->lengths : NULL, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        prof_free(&prof);
        return LC_BAD_INPUT;
    }
    fatal = profile_group(o, s, o->nlengths ? "vl_lstm" : "lstm", &ctx, &prof, &c, &fatal_err);
    numerics_context_free(&ctx);
    if (!fatal && s->vl_lengths) {
        if (numerics_context_init(&ctx, &s->vl_shape, o->seed, s->vl_lengths, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            c.failed++;
        } else {
            fatal = profile_group(o, s, "vl_lstm", &ctx, &prof, &c, &fatal_err);
            numerics_context_free(&ctx);
        }
    }
    if (fatal) {
        fprintf(stderr, "lstmcheck: profiling: %s\n", fatal_err.msg);
        prof_free(&prof);
        return LC_FAILED;
    }
    if (prof_finish(&prof, trace_path, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        prof_free(&prof);
        return LC_FAILED;
    }
    if (trace_path) {
        uint64_t dropped = trace_dropped(prof.trace);
        fprintf(stderr, "lstmcheck profile: wrote %s (%zu events%s)\n", trace_path,
                trace_count(prof.trace), dropped ? ", some records dropped" : "");
    }
    prof_free(&prof);
    return c.failed ? LC_FAILED : c.skipped ? LC_UNSUPPORTED : LC_OK;
}

lc_status cmd_profile(const cli_options *o_in)
{
    cli_options o = *o_in;
    if (o.nloops <= 0)
        o.nloops = 5;
    const int external = strcmp(o.tool, "none") != 0;
    if (external && o.trace_path) {
        fprintf(stderr, "lstmcheck: --trace and --tool %s exclude each other (both use CUPTI); "
                        "use --tool none for the built-in trace\n", o.tool);
        return LC_BAD_INPUT;
    }
    if (external && !strcmp(o.device, "cpu")) {
        fprintf(stderr, "lstmcheck: --tool %s profiles GPU work, but --device is cpu\n", o.tool);
        return LC_BAD_INPUT;
    }
    char tool_path[4096];
    if (external && !o.internal_run) {
        if (find_executable(o.tool, tool_path, sizeof tool_path)) {
            fprintf(stderr, "lstmcheck: %s not found on PATH (install Nsight %s, or use --tool none "
                            "for the built-in trace)\n", o.tool,
                    strcmp(o.tool, "nsys") ? "Compute" : "Systems");
            return LC_BAD_INPUT;
        }
        lc_error why = {{0}};
        if (device_cuda_count(&why) <= 0) {
            fprintf(stderr, "lstmcheck: --tool %s needs a CUDA device: %s\n", o.tool, why.msg);
            return LC_BAD_INPUT;
        }
    }
    session s;
    lc_error err = {{0}};
    const session_request rq = session_request_from(&o);
    lc_status rc = session_setup(&rq, &s, &err);
    if (rc) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return rc;
    }
    char trace_path[4096];
    const char *trace = NULL;
    if (external && !o.internal_run) {
        if (prof_check_output_dir(o.out_dir, 1, &err)) {
            fprintf(stderr, "lstmcheck: --out-dir: %s\n", err.msg);
            session_free(&s);
            return LC_BAD_INPUT;
        }
        rc = run_external(&o, &s, tool_path);
        session_free(&s);
        return rc;
    }
    if (o.trace_path) {
        trace = o.trace_path;
        if (prof_check_output_dir(trace, 0, &err)) {
            fprintf(stderr, "lstmcheck: --trace: %s\n", err.msg);
            session_free(&s);
            return LC_BAD_INPUT;
        }
    } else if (!o.internal_run) {
        /* --tool none: the built-in trace under the original's file name */
        if (prof_check_output_dir(o.out_dir, 1, &err) ||
            output_name(&o, &s, "json", trace_path, sizeof trace_path, &err)) {
            fprintf(stderr, "lstmcheck: --out-dir: %s\n", err.msg);
            session_free(&s);
            return LC_BAD_INPUT;
        }
        trace = trace_path;
    }
    rc = run_here(&o, &s, trace);
    session_free(&s);
    return rc;
}
