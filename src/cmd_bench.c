/* lstmcheck bench: the bench.py workflow. Every runner passes the
 * numerics gate on the bench inputs before it is timed; the table goes to
 * stderr, JSON to stdout. */
#include "commands.h"
#include "gate.h"
#include "harness.h"
#include "profiling.h"
#include "report.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Default per-runner time budget on a CPU: the reference alone takes
 * about 15 s per iteration at the default shape on these 2 cores. */
#define BENCH_CPU_BUDGET_S 30.0

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

/* prof: the profiling layer with --trace (NULL without: bench as always). */
static void bench_group(const cli_options *o, const session *s, const char *group,
                        numerics_context *ctx, bench_entry *entries, int *n, int *failed,
                        int *skipped, prof_session *prof)
{
    const int progress = o->progress == 1 || (o->progress == -1 && isatty(2));
    double budget = o->time_budget_s >= 0 ? o->time_budget_s
                                          : (strcmp(s->device, "cpu") == 0 ? BENCH_CPU_BUDGET_S : 0);
    for (int i = 0; i < s->nrunners; i++) {
        if (strcmp(s->runners[i].group, group))
            continue;
        const runner_ops *r = s->runners[i].runner;
        bench_entry *e = &entries[(*n)++];
        memset(e, 0, sizeof *e);
        e->runner = r;
        e->group = group;
        char line[1024];
        if (prof) {
            snprintf(line, sizeof line, "gate %s", r->name);
            prof_push(prof, line);
        }
        gate_run(r, ctx, o->dump_dir, &e->gate);
        if (prof)
            prof_pop(prof);
        if (e->gate.status != GATE_PASS) {
            gate_format_summary(r, &e->gate, line, sizeof line);
            fprintf(stderr, "%s%s\n", line, e->gate.status == GATE_SKIP ? "" : " (not timed)");
            if (e->gate.status == GATE_SKIP) (*skipped)++;
            else (*failed)++;
            continue;
        }
        const lstm_problem *p;
        const lstm_results *ref;
        lc_error err = {{0}};
        numerics_context_get(ctx, r, &p, &ref, &err); /* ready: the gate made it */
        progress_ctx pc = {r->name};
        harness_config cfg = {
            .warmup = o->warmup,
            .min_samples = o->nloops, /* bench takes every loop unless the budget ends it */
            .max_samples = o->nloops,
            .target_rel_error = 0,
            .time_budget_s = budget,
            .with_control = 0,
            .progress = progress ? show_progress : NULL,
            .progress_ctx = &pc,
            .hooks = prof ? prof_hooks(prof) : NULL,
        };
        if (budget > 0 && cfg.min_samples > 2)
            cfg.min_samples = 2; /* std needs two; the budget may stop after them */
        if (prof && prof_runner_begin(prof, r, &err)) {
            snprintf(e->error, sizeof e->error, "%s", err.msg);
            fprintf(stderr, "ERROR %s: %s (not timed)\n", r->name, err.msg);
            (*failed)++;
            continue;
        }
        int rc = harness_run(r, p, &cfg, &e->res, &err);
        if (prof) {
            prof_runner_stats st;
            lc_error perr = {{0}};
            if (prof_runner_end(prof, rc ? NULL : &e->res, &st, &perr)) {
                fprintf(stderr, "lstmcheck: trace of %s: %s\n", r->name, perr.msg);
                (*failed)++;
            }
            e->have_trace_stats = st.have_gpu_stats;
            e->gpu_utilization = st.gpu.utilization;
            e->gemm_share = st.gpu.gemm_share;
            if (st.before.have)
                e->dev_used_before = st.before.total_bytes - st.before.free_bytes;
            if (st.after.have)
                e->dev_used_after = st.after.total_bytes - st.after.free_bytes;
        }
        if (progress)
            fprintf(stderr, "\r%60s\r", "");
        if (rc) {
            snprintf(e->error, sizeof e->error, "%s", err.msg);
            fprintf(stderr, "ERROR %s: %s (not timed)\n", r->name, err.msg);
            (*failed)++;
            continue;
        }
        e->timed = 1;
        e->peak_rss_bytes = peak_rss_bytes();
        report_table_row(stderr, o->sep, e, prof != NULL);
        if (e->res.budget_hit)
            fprintf(stderr,
                    "%16s  note: the %.0f s time budget ended sampling after %d of %d loops "
                    "(%d warm-up); --time-budget 0 removes it\n",
                    "", budget, e->res.n, o->nloops, e->res.warmup_done);
    }
}

int cmd_bench(const cli_options *o_in)
{
    cli_options o = *o_in;
    if (o.warmup < 0) o.warmup = 10;
    if (o.nloops <= 0) o.nloops = 100;
    lc_error terr = {{0}};
    if (o.trace_path && prof_check_output_dir(o.trace_path, 0, &terr)) {
        fprintf(stderr, "lstmcheck: --trace: %s\n", terr.msg);
        return EXIT_USAGE;
    }
    session s;
    lc_error err = {{0}};
    int rc = session_setup(&o, &s, &err);
    if (rc) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        session_free(&s);
        return rc;
    }
    bench_entry *entries = calloc((size_t)s.nrunners, sizeof *entries);
    if (!entries) {
        fprintf(stderr, "lstmcheck: out of host memory\n");
        session_free(&s);
        return EXIT_FAILED;
    }
    prof_session prof_storage, *prof = NULL;
    if (o.trace_path) {
        if (prof_begin(&prof_storage, s.device, 1, 1, &err)) {
            fprintf(stderr, "lstmcheck: --trace: %s\n", err.msg);
            free(entries);
            session_free(&s);
            return EXIT_FAILED;
        }
        prof = &prof_storage;
    }
    int n = 0, failed = 0, skipped = 0;
    fprintf(stderr,
            "lstmcheck bench: device %s, seqLength %d numLayers %d inputSize %d hiddenSize %d "
            "miniBatch %d, warmup %d nloops %d, seed %llu, times in ms\n",
            s.device, o.shape.seq_length, o.shape.num_layers, o.shape.input_size,
            o.shape.hidden_size, o.shape.batch, o.warmup, o.nloops, (unsigned long long)o.seed);
    fprintf(stderr, "Benchmarking LSTMs...\n");
    report_table_header(stderr, o.sep, prof != NULL);
    numerics_context ctx;
    if (numerics_context_init(&ctx, &o.shape, o.seed, o.nlengths ? o.lengths : NULL, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        if (prof)
            prof_free(prof);
        free(entries);
        session_free(&s);
        return EXIT_USAGE;
    }
    bench_group(&o, &s, o.nlengths ? "vl_lstm" : "lstm", &ctx, entries, &n, &failed, &skipped, prof);
    numerics_context_free(&ctx);
    if (s.vl_lengths) {
        fprintf(stderr, "\nBenchmarking variable-length LSTMs (lengths %d..%d, seqLength ignored)...\n",
                VL_MIN_LENGTH, VL_MAX_LENGTH);
        report_table_header(stderr, o.sep, prof != NULL);
        if (numerics_context_init(&ctx, &s.vl_shape, o.seed, s.vl_lengths, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
        } else {
            cli_options vo = o;
            char vl_dump[4096];
            if (o.dump_dir) {
                snprintf(vl_dump, sizeof vl_dump, "%s/vl_lstm", o.dump_dir);
                vo.dump_dir = vl_dump;
            }
            bench_group(&vo, &s, "vl_lstm", &ctx, entries, &n, &failed, &skipped, prof);
            numerics_context_free(&ctx);
        }
    }
    fprintf(stderr, "\n");
    if (prof) {
        if (prof_finish(prof, o.trace_path, &err)) {
            fprintf(stderr, "lstmcheck: --trace: %s\n", err.msg);
            failed++;
        } else {
            fprintf(stderr, "lstmcheck bench: wrote %s (%zu events)\n", o.trace_path,
                    trace_count(prof->trace));
        }
        prof_free(prof);
    }
    if (!strcmp(o.print_json, "oss"))
        report_json_oss(stdout, entries, n);
    else if (!strcmp(o.print_json, "pep"))
        report_json_pep(stdout, entries, n);
    else if (!strcmp(o.print_json, "full"))
        report_json_full(stdout, entries, n, &o.shape, o.seed, s.device);
    for (int i = 0; i < n; i++)
        harness_result_free(&entries[i].res);
    free(entries);
    session_free(&s);
    return failed ? EXIT_FAILED : skipped ? EXIT_SKIPPED : EXIT_OK;
}
