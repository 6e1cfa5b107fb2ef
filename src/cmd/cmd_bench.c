/* lstmcheck bench: the bench.py workflow. Every runner passes the
 * numerics gate on the bench inputs before it is timed; the table goes to
 * stderr, JSON to stdout. Each GPU runner is gated and timed in a process
 * of its own (isolate.h), except under --trace. */
#include "cmd/commands.h"
#include "base/files.h"
#include "device/roofline.h"
#include "check/gate.h"
#include "perf/harness.h"
#include "check/isolate.h"
#include "report/op_table.h"
#include "report/profiling.h"
#include "report/report.h"
#include "cmd/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct progress_ctx {
    const char *name;
} progress_ctx;

static void show_progress(void *vctx, const char *phase, int done, int total)
{
    progress_ctx *c = vctx;
    fprintf(stderr, "\r%16s  %s %d/%d   ", c->name, phase, done, total);
    fflush(stderr);
}

static size_t peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * 1024; /* Linux reports kilobytes */
}

/* One runner of a group: gated, then timed if it passed. */
typedef struct bench_job {
    const cli_options *o;
    numerics_context *ctx;
    const char *dump_dir; /* --dump, for this group */
    prof_session *prof;   /* the profiling layer with --trace (NULL without) */
    double budget;
    int progress;
    bench_entry *e;
    int trace_failed; /* the runner's trace could not be closed */
} bench_job;

static void bench_trace_end(bench_job *j, int rc)
{
    bench_entry *e = j->e;
    prof_runner_stats st;
    lc_error perr = {{0}};
    if (prof_runner_end(j->prof, rc ? NULL : &e->res, &st, &perr)) {
        fprintf(stderr, "lstmcheck: trace of %s: %s\n", e->runner->name, perr.msg);
        j->trace_failed = 1;
    }
    e->have_trace_stats = st.have_gpu_stats;
    e->gpu_utilization = st.gpu.utilization;
    e->gemm_share = st.gpu.gemm_share;
    if (st.before.have)
        e->dev_used_before = st.before.total_bytes - st.before.free_bytes;
    if (st.after.have)
        e->dev_used_after = st.after.total_bytes - st.after.free_bytes;
}

/* The timing after a passed gate; fills e->res (timed) or e->error. */
static void bench_time(bench_job *j)
{
    bench_entry *e = j->e;
    const runner_ops *r = e->runner;
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    if (numerics_context_timed(j->ctx, r, &p, &expected, &err)) { /* made before the fork, if any (bench_runner) */
        snprintf(e->error, sizeof e->error, "%s", err.msg);
        return;
    }
    progress_ctx pc = {r->name};
    harness_config cfg = {
        .warmup = j->o->warmup,
        .min_samples = j->o->nloops, /* bench takes every loop unless the budget ends it */
        .max_samples = j->o->nloops,
        .target_rel_error = 0,
        .time_budget_s = j->budget,
        .with_control = 0,
        .progress = j->progress ? show_progress : NULL,
        .progress_ctx = &pc,
        .hooks = j->prof ? prof_hooks(j->prof) : NULL,
        .expected = expected, /* what is timed is what was checked (NULL: it cannot be; res says so) */
    };
    if (j->budget > 0 && cfg.min_samples > 2)
        cfg.min_samples = 2; /* std needs two; the budget may stop after them */
    if (j->prof && prof_runner_begin(j->prof, r, j->e->group, &err)) {
        snprintf(e->error, sizeof e->error, "%s", err.msg);
        return;
    }
    const lc_status rc = harness_run(r, p, &cfg, &e->res, &err);
    if (j->prof)
        bench_trace_end(j, rc);
    if (j->progress)
        fprintf(stderr, "\r%60s\r", "");
    if (rc == LC_FAILED) { /* a timed iteration's results differ: the runner fails, untimed */
        e->gate = e->res.timed_check;
        return;
    }
    if (rc) {
        snprintf(e->error, sizeof e->error, "%s", err.msg);
        return;
    }
    e->timed = 1;
    e->peak_rss_bytes = peak_rss_bytes();
}

/* Gate, then time: everything that touches the runner. */
static void bench_one(bench_job *j)
{
    bench_entry *e = j->e;
    char label[160];
    if (j->prof) {
        snprintf(label, sizeof label, "gate %s", e->runner->name);
        prof_push(j->prof, label);
    }
    gate_run(e->runner, j->ctx, j->dump_dir, &e->gate);
    if (j->prof)
        prof_pop(j->prof);
    if (e->gate.status == LC_OK)
        bench_time(j);
}

/* bench_one in a child process (isolate.h): the entry and its samples
 * come back through the pipe. */
static int bench_child(void *arg, int fd)
{
    bench_job *j = arg;
    bench_one(j);
    const harness_result *res = &j->e->res;
    if (fd_write_all(fd, j->e, sizeof *j->e) ||
        fd_write_all(fd, &j->trace_failed, sizeof j->trace_failed))
        return 1;
    if (!j->e->timed)
        return 0;
    const size_t bytes = (size_t)res->n * sizeof(double);
    return fd_write_all(fd, res->fwd_ms, bytes) || fd_write_all(fd, res->bwd_ms, bytes);
}

static int bench_parent(void *arg, int fd, lc_error *err)
{
    bench_job *j = arg;
    bench_entry *e = j->e;
    if (fd_read_all(fd, e, sizeof *e) || fd_read_all(fd, &j->trace_failed, sizeof j->trace_failed)) {
        lc_error_set(err, "its process sent no result");
        return 1;
    }
    gate_report_received(&e->gate);
    e->error[sizeof e->error - 1] = 0;
    harness_result *res = &e->res;
    res->fwd_ms = res->bwd_ms = res->ctl_ms = NULL; /* the child's pointers */
    res->unchecked[sizeof res->unchecked - 1] = 0;
    if (!e->timed)
        return 0;
    const size_t bytes = (size_t)(res->n > 0 ? res->n : 1) * sizeof(double);
    res->fwd_ms = malloc(bytes);
    res->bwd_ms = malloc(bytes);
    if (!res->fwd_ms || !res->bwd_ms || fd_read_all(fd, res->fwd_ms, (size_t)res->n * sizeof(double)) ||
        fd_read_all(fd, res->bwd_ms, (size_t)res->n * sizeof(double))) {
        harness_result_free(res);
        e->timed = 0;
        lc_error_set(err, "its process sent a truncated result");
        return 1;
    }
    return 0;
}

/* bench_one here, or in a child for a GPU runner (not under --trace: the
 * trace is one timeline in this process). */
static void bench_runner(bench_job *j)
{
    bench_entry *e = j->e;
    if (isolate_precheck(e->runner, j->ctx, &e->gate))
        return;
    if (j->prof || !isolate_runner(e->runner)) {
        bench_one(j);
        return;
    }
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    /* the reference and the timed problem, made here before the fork, are the child's too */
    if (numerics_context_get(j->ctx, e->runner, &p, &expected, &err) == 0 &&
        numerics_context_timed(j->ctx, e->runner, &p, &expected, &err) == 0 &&
        isolate_run(bench_child, bench_parent, j, &err) == 0)
        return;
    const runner_ops *r = e->runner;
    const runner_group group = e->group;
    memset(e, 0, sizeof *e);
    e->runner = r;
    e->group = group;
    gate_report_startf(&e->gate, LC_ERROR, "%s: %s", r->name, err.msg);
}

/* ---- the roofline: the machine's limit, measured before the runners ---- */

typedef struct limit_job {
    lc_device device;
    const lstm_shape *shape;
    report_limit got;
} limit_job;

static void measure_limit(const limit_job *j, report_limit *l)
{
    lc_error err = {{0}};
    memset(l, 0, sizeof *l);
    l->status = roofline_measure(j->device, j->shape, &l->limit, &err);
    snprintf(l->why, sizeof l->why, "%s", err.msg);
}

static int limit_child(void *arg, int fd)
{
    report_limit l;
    measure_limit(arg, &l);
    return fd_write_all(fd, &l, sizeof l);
}

static int limit_parent(void *arg, int fd, lc_error *err)
{
    limit_job *j = arg;
    if (fd_read_all(fd, &j->got, sizeof j->got)) {
        lc_error_set(err, "the measuring process sent no limit");
        return 1;
    }
    j->got.why[sizeof j->got.why - 1] = '\0';
    return 0;
}

/* The limit on the device's runners' terms (a CPU: OpenBLAS's threads, as
 * the runners have them); a GPU's in a child, so that this process makes no
 * CUDA call before it forks the GPU runners. Its failure is no runner's:
 * the x_limit columns say None and the line below the table says why. */
static void bench_limit(lc_device device, const lstm_shape *shape, report_limit *l)
{
    limit_job j = {.device = device, .shape = shape};
    lc_error err = {{0}};
    if (device != LC_DEVICE_CUDA || !isolate_gpu_work())
        measure_limit(&j, l);
    else if (isolate_run(limit_child, limit_parent, &j, &err) == 0)
        *l = j.got;
    else {
        *l = (report_limit){.status = LC_ERROR};
        snprintf(l->why, sizeof l->why, "%s", err.msg);
    }
    l->asked = 1;
}

/* The limit of every device the session's runners run on (asked; a CPU
 * runner beside GPU ones is held to the CPU's), at the main group's shape. */
static void bench_limits(const int asked[LC_DEVICE_COUNT], const lstm_shape *shape,
                         report_limit limits[LC_DEVICE_COUNT])
{
    memset(limits, 0, LC_DEVICE_COUNT * sizeof *limits);
    for (int d = 0; d < LC_DEVICE_COUNT; d++)
        if (asked[d])
            bench_limit((lc_device)d, shape, &limits[d]);
}

/* A timed runner's rates and multiples of the limit, from its medians. */
static void bench_roofline(const report_limit *l, bench_entry *e)
{
    const double ms[2] = {e->res.fwd.median, e->res.bwd.median};
    for (int phase = 0; phase < 2; phase++) {
        e->gflops[phase] = roofline_gflops(e->gemm_flops[phase], ms[phase]);
        e->x_limit[phase] = roofline_multiple(l->status == LC_OK ? &l->limit : NULL, e->gemm_flops[phase], ms[phase]);
    }
}

/* One bench: its options (the command's defaults filled in), the session,
 * what each runner gave, and the counts that make the exit status. */
typedef struct bench_run {
    cli_options o;
    session s;
    bench_entry *entries; /* one per session runner */
    int n;
    lc_status status;     /* the worst so far (lc_status_worse): the exit status */
    prof_session prof_storage;
    prof_session *prof;   /* --trace: &prof_storage, else NULL */
    double budget;        /* seconds per runner, 0: none */
    int progress;
    report_limit limit[LC_DEVICE_COUNT]; /* each device's SGEMM limit, measured before the runners */
    run_context context;                 /* where, when and with what: collected before the runners */
} bench_run;

/* The table row, or why there is none; counts into run. */
static void bench_report(bench_run *run, const bench_job *j)
{
    const bench_entry *e = j->e;
    if (j->trace_failed)
        run->status = lc_status_worse(run->status, LC_ERROR);
    if (e->gate.status != LC_OK) {
        char line[1024];
        gate_format_summary(e->runner, &e->gate, line, sizeof line);
        /* a failure seen in a timed iteration (its reason says which) was timed: its times are dropped */
        const char *what = e->gate.status == LC_UNSUPPORTED ? ""
                           : e->gate.status == LC_FAILED && e->gate.reason[0] ? " (its times are discarded)"
                                                                              : " (not timed)";
        fprintf(stderr, "%s%s\n", line, what);
        run->status = lc_status_worse(run->status, e->gate.status);
        return;
    }
    if (!e->timed) {
        fprintf(stderr, "ERROR %s: %s (not timed)\n", e->runner->name, e->error);
        run->status = lc_status_worse(run->status, LC_ERROR);
        return;
    }
    report_table_row(stderr, run->o.sep, e, run->prof != NULL);
    if (e->res.budget_hit)
        fprintf(stderr,
                "%16s  note: the %.0f s time budget ended sampling after %d of %d loops "
                "(%d warm-up); --time-budget 0 removes it\n",
                "", run->budget, e->res.n, run->o.nloops, e->res.warmup_done);
    if (e->res.unchecked[0])
        fprintf(stderr, "%16s  note: %s: %s\n", "", e->runner->name, e->res.unchecked);
}

/* Every runner of one group, in the session's order, on ctx's inputs. */
static void bench_group(bench_run *run, runner_group group, numerics_context *ctx, const char *dump_dir,
                        const double gemm_flops[2])
{
    bench_job j = {.o = &run->o, .ctx = ctx, .dump_dir = dump_dir, .prof = run->prof, .budget = run->budget,
                   .progress = run->progress};
    for (int i = 0; i < run->s.nrunners; i++) {
        if (run->s.runners[i].group != group)
            continue;
        bench_entry *e = &run->entries[run->n++];
        memset(e, 0, sizeof *e);
        e->runner = run->s.runners[i].runner;
        e->group = group;
        j.e = e;
        j.trace_failed = 0;
        bench_runner(&j);
        memcpy(e->gemm_flops, gemm_flops, sizeof e->gemm_flops);
        lc_error size_err = {{0}};
        e->have_sizes = !lstm_model_sizes(&ctx->shape, ctx->lengths, e->runner->model, &e->sizes, &size_err);
        if (e->timed)
            bench_roofline(&run->limit[e->runner->device], e);
        bench_report(run, &j);
    }
}

/* The main group: lstm, or vl_lstm with explicit --lengths. LC_BAD_INPUT
 * when its inputs cannot be made. */
static lc_status bench_main_group(bench_run *run)
{
    const cli_options *o = &run->o;
    lc_error err = {{0}};
    char shape[128];
    fprintf(stderr, "lstmcheck bench: device %s, %s, warmup %d nloops %d, seed %llu, times in ms\n",
            lc_device_name(run->s.device), lstm_shape_format(&o->shape, LSTM_SHAPE_FLAGS, shape, sizeof shape),
            o->warmup, o->nloops, (unsigned long long)o->seed);
    const int *lengths = o->nlengths ? o->lengths : NULL;
    double flops[2];
    lstm_gemm_flops(&o->shape, lengths, flops);
    fprintf(stderr, "Benchmarking LSTMs...\n");
    report_table_header(stderr, o->sep, run->prof != NULL);
    numerics_context ctx;
    if (numerics_context_init(&ctx, &o->shape, o->seed, lengths, &err))
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    bench_group(run, o->nlengths ? RUNNER_GROUP_VL_LSTM : RUNNER_GROUP_LSTM, &ctx, o->dump_dir, flops);
    report_limit_lines(stderr, run->limit, flops);
    numerics_context_free(&ctx);
    return LC_OK;
}

/* --variable-lstms: the original's variable-length group, dumped (--dump)
 * under vl_lstm/. */
static void bench_variable_group(bench_run *run)
{
    const cli_options *o = &run->o;
    lc_error err = {{0}};
    fprintf(stderr, "\nBenchmarking variable-length LSTMs (lengths %d..%d, seqLength ignored)...\n",
            VL_MIN_LENGTH, VL_MAX_LENGTH);
    double flops[2];
    lstm_gemm_flops(&run->s.vl_shape, run->s.vl_lengths, flops);
    report_table_header(stderr, o->sep, run->prof != NULL);
    numerics_context ctx;
    if (numerics_context_init(&ctx, &run->s.vl_shape, o->seed, run->s.vl_lengths, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return;
    }
    char vl_dump[4096];
    if (o->dump_dir)
        snprintf(vl_dump, sizeof vl_dump, "%s/vl_lstm", o->dump_dir);
    bench_group(run, RUNNER_GROUP_VL_LSTM, &ctx, o->dump_dir ? vl_dump : NULL, flops);
    report_limit_lines(stderr, run->limit, flops);
    numerics_context_free(&ctx);
}

/* Options, session, entries and the profiling layer; LC_OK, or why not
 * after saying so. */
static lc_status bench_setup(bench_run *run, const cli_options *o_in)
{
    cli_options *o = &run->o;
    *o = *o_in;
    if (o->warmup < 0) o->warmup = CLI_BENCH_WARMUP;
    if (o->nloops <= 0) o->nloops = CLI_BENCH_NLOOPS;
    lc_error err = {{0}}; /* --dump and --trace were checked before (session_check_outputs) */
    const session_request rq = session_request_from(o);
    lc_status rc = session_setup(&rq, &run->s, &err);
    if (rc)
        return cmd_fail(o, rc, "%s", err.msg);
    run->entries = calloc((size_t)run->s.nrunners, sizeof *run->entries);
    if (!run->entries)
        return cmd_fail(o, LC_ERROR, "out of host memory");
    int asked[LC_DEVICE_COUNT] = {0}; /* the devices of the session's runners */
    for (int i = 0; i < run->s.nrunners; i++)
        asked[run->s.runners[i].runner->device] = 1;
    run_context_collect(&run->context, session_built_from(), asked);
    bench_limits(asked, &o->shape, run->limit); /* before the trace: it is no runner's */
    if (o->trace_path) {
        if ((rc = prof_begin(&run->prof_storage, run->s.device, 1, 1, &err)))
            return cmd_fail(o, rc, "--trace: %s", err.msg);
        run->prof = &run->prof_storage;
    }
    run->budget = o->time_budget_s >= 0 ? o->time_budget_s
                                        : (run->s.device == LC_DEVICE_CPU ? CLI_BENCH_CPU_BUDGET_S : 0);
    run->progress = o->progress == 1 || (o->progress == -1 && isatty(2));
    return LC_OK;
}

/* --trace's table of operations, after the runners' table (stderr), and
 * as CSV (--csv). */
static void bench_op_table(bench_run *run)
{
    lc_error err = {{0}};
    if (op_table_report(run->prof, stderr, run->o.csv_path, &err)) {
        fprintf(stderr, "lstmcheck: the table of operations: %s\n", err.msg);
        run->status = lc_status_worse(run->status, LC_ERROR);
    } else if (run->o.csv_path) {
        fprintf(stderr, "lstmcheck bench: wrote %s\n", run->o.csv_path);
    }
}

/* The trace file (--trace) and the JSON (--print-json). */
static void bench_outputs(bench_run *run)
{
    lc_error err = {{0}};
    if (run->prof) {
        if (prof_finish(run->prof, run->o.trace_path, &err)) {
            fprintf(stderr, "lstmcheck: --trace: %s\n", err.msg);
            run->status = lc_status_worse(run->status, LC_ERROR);
        } else {
            fprintf(stderr, "lstmcheck bench: wrote %s (%zu events)\n", run->o.trace_path,
                    trace_count(run->prof->trace));
            bench_op_table(run);
        }
    }
    report_run info = {.context = &run->context, .shape = run->o.shape, .seed = run->o.seed, .device = run->s.device,
                       .lengths = run->o.nlengths ? run->o.lengths : NULL,
                       .vl_shape = run->s.vl_lengths ? &run->s.vl_shape : NULL, .vl_lengths = run->s.vl_lengths};
    memcpy(info.limit, run->limit, sizeof info.limit);
    if (report_json(stdout, run->o.print_json, run->entries, run->n, &info)) {
        fprintf(stderr, "lstmcheck: out of host memory for the JSON output\n");
        run->status = lc_status_worse(run->status, LC_ERROR);
    }
}

static void bench_free(bench_run *run)
{
    if (run->prof)
        prof_free(run->prof);
    for (int i = 0; run->entries && i < run->n; i++)
        harness_result_free(&run->entries[i].res);
    free(run->entries);
    session_free(&run->s);
}

lc_status cmd_bench(const cli_options *o_in)
{
    bench_run run;
    memset(&run, 0, sizeof run);
    lc_status rc = bench_setup(&run, o_in);
    if (rc || (rc = bench_main_group(&run)))
        goto out;
    if (run.s.vl_lengths)
        bench_variable_group(&run);
    fprintf(stderr, "\n");
    bench_outputs(&run);
    rc = run.status;
out:
    bench_free(&run);
    return rc;
}
