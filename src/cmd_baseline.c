/* lstmcheck baseline update | show | compare: per-machine baselines and
 * the perf verdict. `ctest -L perf` runs `baseline compare`. */
#include "baseline.h"
#include "commands.h"
#include "device.h"
#include "gate.h"
#include "machine.h"
#include "perf.h"
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct work_item {
    const runner_ops *runner;
    lstm_shape shape;
    const char *set; /* shape set name, or NULL for an explicit shape */
} work_item;

/* The (runner, shape) pairs a command works on. */
static int plan(const cli_options *o, const char *device, work_item **items, int *n, lc_error *err)
{
    const runner_ops *runners[64];
    int nr = 0;
    if (o->nrnns) {
        for (int i = 0; i < o->nrnns; i++) {
            const runner_ops *r = registry_find(o->rnns[i]);
            if (!r) {
                lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", o->rnns[i]);
                return 1;
            }
            if (strcmp(r->device, device)) {
                lc_error_set(err, "runner '%s' runs on %s, but the device is %s", r->name, r->device, device);
                return 1;
            }
            runners[nr++] = r;
        }
    } else {
        for (int i = 0; lstm_runners[i] && nr < 64; i++)
            if (!strcmp(lstm_runners[i]->device, device) && perf_in_matrix(lstm_runners[i]))
                runners[nr++] = lstm_runners[i];
    }
    if (o->shape_given && o->shape_set) {
        lc_error_set(err, "give shape flags or --shape-set, not both");
        return 1;
    }
    lstm_shape shapes[16];
    const char *sets[16];
    int ns = 0;
    if (o->shape_given) {
        if (lstm_shape_validate(&o->shape, err))
            return 1;
        shapes[ns] = o->shape;
        sets[ns++] = NULL;
    } else if (o->shape_set) {
        const perf_shape_set *ss = perf_find_shape_set(device, o->shape_set);
        if (!ss) {
            lc_error_set(err, "no shape set '%s' for %s in the perf matrix", o->shape_set, device);
            return 1;
        }
        shapes[ns] = ss->shape;
        sets[ns++] = ss->name;
    } else {
        for (int i = 0; perf_shape_sets[i].name && ns < 16; i++)
            if (!strcmp(perf_shape_sets[i].device, device)) {
                shapes[ns] = perf_shape_sets[i].shape;
                sets[ns++] = perf_shape_sets[i].name;
            }
    }
    const int total = nr * ns;
    *items = calloc((size_t)(total > 0 ? total : 1), sizeof **items);
    if (!*items) {
        lc_error_set(err, "out of memory");
        return 1;
    }
    *n = 0;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ns; j++)
            (*items)[(*n)++] = (work_item){runners[i], shapes[j], sets[j]};
    return 0;
}

static void settings_from(const cli_options *o, const char *device, perf_settings *s)
{
    perf_default_settings(device, s);
    if (o->warmup >= 0)
        s->warmup = o->warmup;
    if (o->nloops > 0) {
        s->max_samples = o->nloops;
        if (s->min_samples > o->nloops)
            s->min_samples = o->nloops;
    }
    if (o->max_seconds > 0)
        s->compare_budget_s = o->max_seconds;
}

/* Gate the runner on the shape; 0 pass, EXIT_SKIPPED, or EXIT_FAILED. */
static int gate_first(const runner_ops *r, numerics_context *ctx, const char *tag)
{
    gate_report rep;
    char line[1024];
    gate_run(r, ctx, NULL, &rep);
    if (rep.status == GATE_PASS)
        return 0;
    gate_format_summary(r, &rep, line, sizeof line);
    if (rep.status == GATE_SKIP) {
        printf("SKIP %s %s: %s\n", r->name, tag, rep.reason);
        return EXIT_SKIPPED;
    }
    printf("%s %s: %s\n", rep.status == GATE_FAIL ? "WRONG" : "ERROR", tag, line);
    printf("  %s is wrong, not slow: fix the numerics before any timing\n", r->name);
    return EXIT_FAILED;
}

static void warn_stale(const char *path, const baseline_file *b)
{
    for (int i = 0; i < b->nentries; i++)
        if (!registry_find(b->entries[i].runner))
            fprintf(stderr, "lstmcheck: warning: %s: entries[%d] is for runner '%s', which no longer exists "
                            "(stale: remove it from the file)\n", path, i, b->entries[i].runner);
}

/* Load this machine's file. BASELINE_MISSING gives an empty file with the key. */
static int load_for(const char *dir, const machine_key *key, char *path, size_t n, baseline_file *b,
                    lc_error *err)
{
    baseline_path(dir, key, path, n);
    int rc = baseline_load(path, b, err);
    if (rc == BASELINE_MISSING) {
        memset(b, 0, sizeof *b);
        b->machine = *key;
        return BASELINE_MISSING;
    }
    if (rc == BASELINE_LOADED && !machine_key_equal(&b->machine, key)) {
        char have[1024], want[1024];
        machine_key_describe(&b->machine, have, sizeof have);
        machine_key_describe(key, want, sizeof want);
        lc_error_set(err, "%s: machine fields (%s) differ from this machine's (%s)", path, have, want);
        baseline_free(b);
        return BASELINE_INVALID;
    }
    return rc;
}

static void median_text(const baseline_series *s, char *buf, size_t n)
{
    sample_summary sum;
    stats_summarize(s->samples, s->n, &sum);
    snprintf(buf, n, "%.4g ms +-%.1f%%", sum.median, 100 * stats_robust_rel_spread(&sum));
}

static int cmd_update(const cli_options *o, const char *device, const char *dir, work_item *items, int n)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return EXIT_SKIPPED;
    }
    char path[4096];
    baseline_file b;
    int rc = load_for(dir, &key, path, sizeof path, &b, &err);
    if (rc == BASELINE_INVALID) {
        fprintf(stderr, "lstmcheck: %s (not overwritten: fix or remove the file first)\n", err.msg);
        return EXIT_USAGE;
    }
    warn_stale(path, &b);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "lstmcheck: cannot create %s: %s\n", dir, strerror(errno));
        baseline_free(&b);
        return EXIT_USAGE;
    }
    perf_settings s;
    settings_from(o, device, &s);
    baseline_entry *fresh = calloc((size_t)n, sizeof *fresh);
    if (!fresh) {
        baseline_free(&b);
        return EXIT_FAILED;
    }
    int status = EXIT_OK, measured = 0;
    for (int i = 0; i < n && status == EXIT_OK; i++) {
        char tag[64];
        shape_tag(&items[i].shape, tag, sizeof tag);
        numerics_context ctx;
        if (numerics_context_init(&ctx, &items[i].shape, o->seed, NULL, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            status = EXIT_USAGE;
            break;
        }
        int g = gate_first(items[i].runner, &ctx, tag);
        if (g == EXIT_SKIPPED) {
            numerics_context_free(&ctx);
            continue;
        }
        if (g) {
            printf("refusing to record a baseline for a runner that fails numerics; nothing written\n");
            status = g;
            numerics_context_free(&ctx);
            break;
        }
        const lstm_problem *p;
        const lstm_results *ref;
        numerics_context_get(&ctx, items[i].runner, &p, &ref, &err);
        fprintf(stderr, "measuring %s %s (%d rounds)...\n", items[i].runner->name, tag, s.baseline_rounds);
        if (perf_measure_entry(items[i].runner, p, o->seed, &s, &fresh[measured], &err)) {
            fprintf(stderr, "lstmcheck: %s %s: %s; nothing written\n", items[i].runner->name, tag, err.msg);
            status = EXIT_FAILED;
        } else {
            measured++;
        }
        numerics_context_free(&ctx);
    }
    if (status == EXIT_OK && measured) {
        printf("%-16s %-22s %-6s %-22s %-22s %8s %7s\n", "runner", "shape", "phase", "old median", "new median",
               "change", "noise");
        for (int i = 0; i < measured; i++) {
            baseline_entry *e = &fresh[i];
            baseline_entry *old = baseline_find(&b, e->runner, &e->shape);
            char tag[64];
            shape_tag(&e->shape, tag, sizeof tag);
            for (int ph = 0; ph < 2; ph++) {
                const baseline_series *nw = ph ? &e->bwd : &e->fwd;
                const baseline_series *ol = old ? (ph ? &old->bwd : &old->fwd) : NULL;
                char a[48] = "(none)", c[48], ch[16] = "";
                if (ol) {
                    median_text(ol, a, sizeof a);
                    sample_summary so, sn;
                    stats_summarize(ol->samples, ol->n, &so);
                    stats_summarize(nw->samples, nw->n, &sn);
                    snprintf(ch, sizeof ch, "%+.1f%%", 100 * (sn.median / so.median - 1));
                }
                median_text(nw, c, sizeof c);
                printf("%-16s %-22s %-6s %-22s %-22s %8s %6.2f%%\n", e->runner, tag, ph ? "bwd" : "fwd", a, c, ch,
                       100 * (ph ? e->noise_bwd : e->noise_fwd));
            }
        }
        for (int i = 0; i < measured; i++) {
            if (baseline_put(&b, &fresh[i], &err)) {
                status = EXIT_FAILED;
                break;
            }
            memset(&fresh[i], 0, sizeof fresh[i]); /* owned by b now */
        }
        if (status == EXIT_OK && baseline_save(path, &b, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            status = EXIT_FAILED;
        } else if (status == EXIT_OK) {
            printf("wrote %d entries to %s\n", measured, path);
        }
    } else if (status == EXIT_OK) {
        printf("nothing measured: no runner of %s can run here\n", device);
        status = EXIT_SKIPPED;
    }
    for (int i = 0; i < n; i++)
        baseline_entry_free(&fresh[i]);
    free(fresh);
    baseline_free(&b);
    return status;
}

static int cmd_show(const cli_options *o, const char *device, const char *dir)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return EXIT_SKIPPED;
    }
    char path[4096], desc[1024];
    baseline_file b;
    int rc = load_for(dir, &key, path, sizeof path, &b, &err);
    machine_key_describe(&key, desc, sizeof desc);
    if (rc == BASELINE_INVALID) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (rc == BASELINE_MISSING) {
        printf("no baseline for this machine (%s) at %s; make one with: lstmcheck baseline update --device %s\n",
               desc, path, device);
        baseline_free(&b);
        return EXIT_SKIPPED;
    }
    warn_stale(path, &b);
    if (o->json) {
        printf("{\"file\": \"%s\", \"entries\": [", path);
    } else {
        printf("%s\nmachine: %s\n", path, desc);
        printf("%-16s %-22s %-22s %-22s %7s %7s %-20s %s\n", "runner", "shape", "forward", "backward", "noise_f",
               "noise_b", "date", "commit");
    }
    for (int i = 0; i < b.nentries; i++) {
        const baseline_entry *e = &b.entries[i];
        char tag[64], f[48], bw[48];
        shape_tag(&e->shape, tag, sizeof tag);
        sample_summary sf, sb;
        stats_summarize(e->fwd.samples, e->fwd.n, &sf);
        stats_summarize(e->bwd.samples, e->bwd.n, &sb);
        if (o->json) {
            printf("%s{\"runner\": \"%s\", \"shape\": \"%s\", \"forward_median_ms\": %.6g, "
                   "\"backward_median_ms\": %.6g, \"noise_forward\": %.4g, \"noise_backward\": %.4g, "
                   "\"samples\": %d, \"date\": \"%s\", \"git_commit\": \"%s\"}",
                   i ? ", " : "", e->runner, tag, sf.median, sb.median, e->noise_fwd, e->noise_bwd, e->fwd.n,
                   e->date, e->git_commit);
        } else {
            median_text(&e->fwd, f, sizeof f);
            median_text(&e->bwd, bw, sizeof bw);
            printf("%-16s %-22s %-22s %-22s %6.2f%% %6.2f%% %-20s %s\n", e->runner, tag, f, bw,
                   100 * e->noise_fwd, 100 * e->noise_bwd, e->date, e->git_commit);
        }
    }
    if (o->json)
        printf("]}\n");
    baseline_free(&b);
    return EXIT_OK;
}

static void print_row(const char *runner, const char *tag, const char *phase, const sample_summary *b,
                      const sample_summary *c, double raw, const verdict_result *v)
{
    printf("%-16s %-22s %-4s %9.4g %9.4g %+7.1f%% %+7.1f%% [%+6.1f, %+6.1f] %5.1f%% %-12s %s\n", runner, tag,
           phase, b->median, c->median, 100 * raw, 100 * v->change, 100 * v->ci_low, 100 * v->ci_high,
           100 * v->delta, verdict_name(v->kind), v->reason);
}

static void json_verdict(const char *key, const verdict_result *v, const sample_summary *b,
                         const sample_summary *c, double raw)
{
    printf("\"%s\": {\"verdict\": \"%s\", \"baseline_median_ms\": %.6g, \"current_median_ms\": %.6g, "
           "\"raw_change\": %.6g, \"change\": %.6g, \"ci_low\": %.6g, \"ci_high\": %.6g, \"p\": %.4g, "
           "\"min_effect\": %.4g, \"reason\": \"%s\"}",
           key, verdict_name(v->kind), b->median, c->median, raw, v->change, v->ci_low, v->ci_high, v->p,
           v->delta, v->reason);
}

static int cmd_compare(const cli_options *o, const char *device, const char *dir, work_item *items, int n)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err)) {
        printf("SKIP: %s\n", err.msg);
        return EXIT_SKIPPED;
    }
    char path[4096], desc[1024];
    baseline_file b;
    int rc = load_for(dir, &key, path, sizeof path, &b, &err);
    machine_key_describe(&key, desc, sizeof desc);
    if (rc == BASELINE_INVALID) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (rc == BASELINE_MISSING) {
        printf("SKIP: no baseline for this machine (%s) at %s; make one with:\n"
               "  lstmcheck baseline update --device %s%s%s\n",
               desc, path, device, o->nrnns ? " --rnns ..." : "", o->shape_set ? " --shape-set ..." : "");
        baseline_free(&b);
        return EXIT_SKIPPED;
    }
    warn_stale(path, &b);
    perf_settings s;
    settings_from(o, device, &s);
    /* one family: every forward and backward entry of this machine's file */
    int m = 2 * (b.nentries > n ? b.nentries : n);
    int slower = 0, unclear = 0, faster = 0, failed = 0;
    if (o->json)
        printf("{\"baseline\": \"%s\", \"comparisons\": %d, \"results\": [", path, m);
    else
        printf("%-16s %-22s %-4s %9s %9s %8s %8s %16s %6s %-12s %s\n", "runner", "shape", "", "base_ms",
               "now_ms", "raw", "change", "interval", "min", "verdict", "why");
    int first = 1;
    for (int i = 0; i < n; i++) {
        char tag[64];
        shape_tag(&items[i].shape, tag, sizeof tag);
        const baseline_entry *e = baseline_find(&b, items[i].runner->name, &items[i].shape);
        if (!e) {
            if (!o->json)
                printf("SKIP %s %s: not in %s; add it with: lstmcheck baseline update --rnns %s%s%s\n",
                       items[i].runner->name, tag, path, items[i].runner->name,
                       items[i].set ? " --shape-set " : "", items[i].set ? items[i].set : "");
            unclear++;
            continue;
        }
        numerics_context ctx;
        if (numerics_context_init(&ctx, &items[i].shape, e->seed, NULL, &err)) {
            fprintf(stderr, "lstmcheck: %s\n", err.msg);
            failed++;
            continue;
        }
        int g = gate_first(items[i].runner, &ctx, tag);
        if (g) {
            numerics_context_free(&ctx);
            if (g == EXIT_SKIPPED) unclear++;
            else failed++;
            continue;
        }
        const lstm_problem *p;
        const lstm_results *ref;
        numerics_context_get(&ctx, items[i].runner, &p, &ref, &err);
        perf_comparison c;
        if (perf_compare(items[i].runner, p, e, &s, m, &c, &err)) {
            fprintf(stderr, "lstmcheck: %s %s: %s\n", items[i].runner->name, tag, err.msg);
            numerics_context_free(&ctx);
            failed++;
            continue;
        }
        numerics_context_free(&ctx);
        if (o->json) {
            printf("%s{\"runner\": \"%s\", \"shape\": \"%s\", \"samples\": %d, \"rounds\": %d, ", first ? "" : ", ",
                   items[i].runner->name, tag, c.samples, c.rounds);
            json_verdict("forward", &c.fwd, &c.base_fwd, &c.cur_fwd, c.raw_change_fwd);
            printf(", ");
            json_verdict("backward", &c.bwd, &c.base_bwd, &c.cur_bwd, c.raw_change_bwd);
            printf("}");
            first = 0;
        } else {
            print_row(items[i].runner->name, tag, "fwd", &c.base_fwd, &c.cur_fwd, c.raw_change_fwd, &c.fwd);
            print_row(items[i].runner->name, tag, "bwd", &c.base_bwd, &c.cur_bwd, c.raw_change_bwd, &c.bwd);
        }
        fflush(stdout);
        verdict_kind k = perf_overall(&c);
        slower += k == VERDICT_SLOWER;
        unclear += k == VERDICT_INCONCLUSIVE;
        faster += c.fwd.kind == VERDICT_FASTER || c.bwd.kind == VERDICT_FASTER;
    }
    if (o->json)
        printf("]}\n");
    else {
        if (faster)
            printf("note: %d faster: record it with 'lstmcheck baseline update' (or the update-baselines target)\n",
                   faster);
        if (unclear)
            printf("note: %d not decided here (no baseline entry, cannot run, or INCONCLUSIVE within %.0f s)\n",
                   unclear, s.compare_budget_s);
    }
    baseline_free(&b);
    if (failed || slower)
        return EXIT_FAILED;
    return unclear ? EXIT_SKIPPED : EXIT_OK;
}

int cmd_baseline(const cli_options *o)
{
    if (!o->subcommand) {
        fprintf(stderr, "lstmcheck: baseline needs a subcommand: update, show or compare\n");
        return EXIT_USAGE;
    }
    char device[8];
    session_resolve_device(o->device, device, sizeof device);
    perf_prepare_device(device);
    const char *dir = o->baseline_dir ? o->baseline_dir : baseline_default_dir();
    if (!strcmp(o->subcommand, "show"))
        return cmd_show(o, device, dir);
    work_item *items = NULL;
    int n = 0;
    lc_error err = {{0}};
    if (plan(o, device, &items, &n, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        free(items);
        return EXIT_USAGE;
    }
    int rc = !strcmp(o->subcommand, "update") ? cmd_update(o, device, dir, items, n)
                                              : cmd_compare(o, device, dir, items, n);
    free(items);
    return rc;
}
