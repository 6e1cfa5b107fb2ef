/* lstmcheck baseline update | show | compare: per-machine baselines and
 * the perf verdict. `ctest -L perf` runs `baseline compare`. */
#include "perf/ab.h"
#include "perf/baseline.h"
#include "cmd/commands.h"
#include "device/device.h"
#include "check/gate.h"
#include "device/machine.h"
#include "perf/perf.h"
#include "perf/revbuild.h"
#include "base/files.h"
#include "base/gitrev.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/text.h"
#include "check/isolate.h"
#include "cmd/session.h"
#include "report/compare_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LSTMCHECK_SOURCE_DIR
#define LSTMCHECK_SOURCE_DIR "."
#endif

typedef struct work_item {
    const runner_ops *runner;
    lstm_shape shape;
    const char *set; /* shape set name, or NULL for an explicit shape */
} work_item;

/* The runners asked for, or the device's perf matrix. */
static lc_status plan_runners(const cli_options *o, lc_device device, const runner_ops **runners, int *nr,
                              lc_error *err)
{
    *nr = 0;
    for (int i = 0; i < o->nrnns; i++) {
        const runner_ops *r = registry_find(o->rnns[i]);
        if (!r) {
            lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", o->rnns[i]);
            return LC_BAD_INPUT;
        }
        if (r->device != (int)device) {
            lc_error_set(err, "runner '%s' runs on %s, but the device is %s", r->name, lc_device_name(r->device),
                         lc_device_name(device));
            return LC_BAD_INPUT;
        }
        runners[(*nr)++] = r;
    }
    const runner_ops *d;
    for (int i = 0; !o->nrnns && (d = registry_default_runner(i)) && *nr < CLI_MAX_RNNS; i++)
        if (d->device == (int)device && (runner_roles(d) & ROLE_PERF))
            runners[(*nr)++] = d;
    return LC_OK;
}

#define PLAN_MAX_SHAPES 16

/* The shape given, the shape set named, or every set of the device. */
static lc_status plan_shapes(const cli_options *o, lc_device device, lstm_shape *shapes, const char **sets,
                             int *ns, lc_error *err)
{
    *ns = 0;
    if (o->shape_given && o->shape_set) {
        lc_error_set(err, "give shape flags or --shape-set, not both");
        return LC_BAD_INPUT;
    }
    if (o->shape_given) {
        /* as every command: a shape too large for this machine is refused before allocating */
        if (lstm_shape_validate(&o->shape, err) || session_check_memory(&o->shape, err))
            return LC_BAD_INPUT;
        shapes[0] = o->shape;
        sets[(*ns)++] = NULL;
        return LC_OK;
    }
    for (int i = 0; perf_shape_sets[i].name && *ns < PLAN_MAX_SHAPES; i++)
        if (perf_shape_sets[i].device == device &&
            (!o->shape_set || !strcmp(perf_shape_sets[i].name, o->shape_set))) {
            shapes[*ns] = perf_shape_sets[i].shape;
            sets[(*ns)++] = perf_shape_sets[i].name;
        }
    if (o->shape_set && !*ns) {
        lc_error_set(err, "no shape set '%s' for %s in the perf matrix", o->shape_set, lc_device_name(device));
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* The (runner, shape) pairs a command works on. */
static lc_status plan(const cli_options *o, lc_device device, work_item **items, int *n, lc_error *err)
{
    const runner_ops *runners[CLI_MAX_RNNS];
    lstm_shape shapes[PLAN_MAX_SHAPES];
    const char *sets[PLAN_MAX_SHAPES];
    int nr, ns;
    lc_status rc = plan_runners(o, device, runners, &nr, err);
    if (rc || (rc = plan_shapes(o, device, shapes, sets, &ns, err)))
        return rc;
    *items = calloc((size_t)(nr * ns > 0 ? nr * ns : 1), sizeof **items);
    if (!*items) {
        lc_error_set(err, "out of host memory");
        return LC_ERROR;
    }
    *n = 0;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ns; j++)
            (*items)[(*n)++] = (work_item){runners[i], shapes[j], sets[j]};
    return LC_OK;
}

static void settings_from(const cli_options *o, lc_device device, perf_settings *s)
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

/* A gate report said: LC_OK, LC_UNSUPPORTED (a skip: why in skip, for the
 * caller to report), LC_FAILED (wrong) or LC_ERROR, said on out (stderr
 * under --json: stdout is the document). */
static lc_status gate_said(const runner_ops *r, const gate_report *rep, const char *tag, FILE *out, char *skip,
                           size_t nskip)
{
    char line[1024];
    if (rep->status == LC_OK)
        return LC_OK;
    gate_format_summary(r, rep, line, sizeof line);
    if (rep->status == LC_UNSUPPORTED) {
        snprintf(skip, nskip, "%s", rep->reason);
        return LC_UNSUPPORTED;
    }
    if (rep->status == LC_FAILED) {
        fprintf(out, "WRONG %s: %s\n", tag, line);
        fprintf(out, "  %s is wrong, not slow: fix the numerics before any timing\n", r->name);
    } else {
        fprintf(out, "ERROR %s: %s\n", tag, line); /* an error (out of memory, ...) is not a numerics failure */
    }
    return rep->status;
}

/* The timing found what the gate did not (perf/harness.h): a timed
 * iteration's results differ from the reference. Said as gate_said says a
 * failure; the runner's times are discarded. */
static lc_status timed_results_wrong(const runner_ops *r, const char *tag, const char *line, FILE *out)
{
    fprintf(out, "WRONG %s: %s\n", tag, line);
    fprintf(out, "  %s passed the gate, but results of its timed calls differ: its times are discarded\n", r->name);
    return LC_FAILED;
}

/* Gate the runner on the shape (a GPU runner's fault stays in its child),
 * and say how it went (gate_said). */
static lc_status gate_first(const runner_ops *r, numerics_context *ctx, const char *tag, FILE *out, char *skip,
                            size_t nskip)
{
    gate_report rep;
    isolate_gate_run(r, ctx, NULL, &rep);
    return gate_said(r, &rep, tag, out, skip, nskip);
}

static void warn_stale(const char *path, const baseline_file *b)
{
    for (int i = 0; i < b->nentries; i++)
        if (!registry_find(b->entries[i].runner))
            fprintf(stderr, "lstmcheck: warning: %s: entries[%d] is for runner '%s', which no longer exists "
                            "(stale: remove it from the file)\n", path, i, b->entries[i].runner);
}

/* Load this machine's file from dir. LC_MISSING gives an empty file with the key. */
static int load_for(const char *dir, const machine_key *key, char *path, size_t n, baseline_file *b,
                    lc_error *err)
{
    if (baseline_path(dir, key, path, n, err)) {
        memset(b, 0, sizeof *b);
        return LC_BAD_INPUT;
    }
    return baseline_load_for(path, key, b, err);
}

static void median_text(const baseline_series *s, char *buf, size_t n)
{
    sample_summary sum;
    stats_summarize(s->samples, s->n, &sum);
    snprintf(buf, n, "%.4g ms +-%.1f%%", sum.median, 100 * stats_robust_rel_spread(&sum));
}

/* A finished document on stdout; out of host memory says so instead. */
static void print_json(json_writer *w)
{
    const char *text = json_text(w, NULL);
    if (text)
        printf("%s\n", text);
    else
        fprintf(stderr, "lstmcheck: out of host memory for the JSON output\n");
    json_free(w);
}

/* The commit an update records. A baseline is only worth committing if
 * anyone can rebuild what it measured: a tree with uncommitted changes to
 * what is built is refused (LC_BAD_INPUT) unless --allow-dirty, which records
 * "<commit>-dirty", marked not reproducible. */
static lc_status recorded_commit(const cli_options *o, char commit[48], int *reproducible)
{
    char sha[GIT_SHA_LEN + 1], what[512];
    int dirty = 0;
    *reproducible = 0;
    if (git_head(LSTMCHECK_SOURCE_DIR, sha) != LC_OK) {
        if (!o->allow_dirty) {
            fprintf(stderr, "lstmcheck: %s is not a git checkout, so a baseline could not name the commit it "
                            "measured; pass --allow-dirty to record it as not reproducible\n",
                    LSTMCHECK_SOURCE_DIR);
            return LC_BAD_INPUT;
        }
        snprintf(commit, 48, "unknown");
        return LC_OK;
    }
    if (git_built_tree_dirty(LSTMCHECK_SOURCE_DIR, &dirty, what, sizeof what) == LC_OK && dirty) {
        if (!o->allow_dirty) {
            fprintf(stderr, "lstmcheck: uncommitted changes in %s (%s): a baseline must name a commit anyone "
                            "can rebuild; commit them first, or pass --allow-dirty to record them marked not "
                            "reproducible\n", LSTMCHECK_SOURCE_DIR, what);
            return LC_BAD_INPUT;
        }
        snprintf(commit, 48, "%s-dirty", sha);
        return LC_OK;
    }
    snprintf(commit, 48, "%s", sha);
    *reproducible = 1;
    return LC_OK;
}

/* Old against new, for one entry just measured (the header before the first). */
static void print_update_row(const baseline_entry *e, baseline_file *b, int first)
{
    if (first)
        printf("%-16s %-22s %-6s %-22s %-22s %8s %7s\n", "runner", "shape", "phase", "old median", "new median",
               "change", "noise");
    const baseline_entry *old = baseline_find(b, e->runner, &e->shape);
    char tag[64];
    lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag);
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
    if (e->unchecked[0])
        printf("%-16s %-22s note: %s\n", e->runner, tag, e->unchecked);
}

/* Merge n measured entries into the file as it is when they are stored
 * (re-read under a lock: a concurrent update's entries stay). */
static lc_status store_entries(baseline_entry *entries, int n, const baseline_file *b, const char *path)
{
    lc_error err = {{0}};
    lc_status rc = baseline_store(path, &b->machine, entries, n, &err);
    if (rc != LC_OK) {
        fprintf(stderr, "lstmcheck: %s%s\n", err.msg, rc == LC_BAD_INPUT ? " (not overwritten)" : "");
        return rc;
    }
    printf("wrote %d %s to %s\n", n, n == 1 ? "entry" : "entries", path);
    return LC_OK;
}

/* The state of one update: what it records and what it measured. */
typedef struct update_run {
    const cli_options *o;
    lc_device device;
    char commit[48];
    int reproducible;
    perf_settings settings;
    numerics_cache contexts; /* one reference per shape, for all runners */
    baseline_file *file;     /* as loaded before the update: the old medians */
    const char *path;
    baseline_entry *fresh;   /* measured entries, owned here until stored */
    int measured, stored, failed;
} update_run;

/* One (runner, shape) of an update: gated, then measured. */
typedef struct update_job {
    const update_run *ur;
    const work_item *it;
    numerics_context *ctx;
    char tag[64];
    lc_status rc;         /* the gate's; LC_ERROR also when the measurement failed */
    int measure_failed;   /* err says why */
    char skip[512];       /* why, when rc is LC_UNSUPPORTED */
    lc_error err;
    baseline_entry entry; /* when rc is LC_OK */
} update_job;

static void gate_and_measure(update_job *j)
{
    const runner_ops *r = j->it->runner;
    gate_report rep;
    gate_run(r, j->ctx, NULL, &rep);
    j->rc = gate_said(r, &rep, j->tag, stdout, j->skip, sizeof j->skip);
    if (j->rc)
        return;
    const lstm_problem *p;
    const gate_expected *expected;
    if (numerics_context_timed(j->ctx, r, &p, &expected, &j->err)) { /* made by now, unless out of memory */
        j->rc = LC_ERROR;
        j->measure_failed = 1;
        return;
    }
    fprintf(stderr, "measuring %s %s (%d rounds)...\n", r->name, j->tag, j->ur->settings.baseline_rounds);
    const lc_status st = perf_measure_entry(r, p, expected, j->ur->o->seed, &j->ur->settings, &j->entry, &j->err);
    if (st == LC_FAILED) {
        j->rc = timed_results_wrong(r, j->tag, j->err.msg, stdout);
    } else if (st != LC_OK) {
        j->rc = LC_ERROR;
        j->measure_failed = 1;
    }
}

/* gate_and_measure in a child (isolate.h): the outcome, then the entry. */
static int update_child(void *arg, int fd)
{
    update_job *j = arg;
    gate_and_measure(j);
    return fd_write_all(fd, &j->rc, sizeof j->rc) || fd_write_all(fd, &j->measure_failed, sizeof j->measure_failed) ||
           fd_write_all(fd, j->skip, sizeof j->skip) || fd_write_all(fd, &j->err, sizeof j->err) ||
           (j->rc == LC_OK && baseline_entry_send(fd, &j->entry));
}

static int update_parent(void *arg, int fd, lc_error *err)
{
    update_job *j = arg;
    if (fd_read_all(fd, &j->rc, sizeof j->rc) || fd_read_all(fd, &j->measure_failed, sizeof j->measure_failed) ||
        fd_read_all(fd, j->skip, sizeof j->skip) || fd_read_all(fd, &j->err, sizeof j->err)) {
        lc_error_set(err, "its process sent no result");
        return 1;
    }
    return j->rc == LC_OK && baseline_entry_receive(fd, &j->entry, err);
}

/* The job here, or in a process of its own where a GPU runner's fault
 * must stay its own (isolate.h): the reference made here is shared. */
static void update_job_run(update_job *j)
{
    const runner_ops *r = j->it->runner;
    gate_report rep;
    if (isolate_precheck(r, j->ctx, &rep)) {
        j->rc = gate_said(r, &rep, j->tag, stdout, j->skip, sizeof j->skip);
        return;
    }
    if (!isolate_runner(r)) {
        gate_and_measure(j);
        return;
    }
    /* the reference, made here before the fork, is the child's too */
    const lstm_problem *p;
    const gate_expected *expected;
    if (numerics_context_get(j->ctx, r, &p, &expected, &j->err) ||
        numerics_context_timed(j->ctx, r, &p, &expected, &j->err)) {
        j->rc = LC_ERROR;
        j->measure_failed = 1;
        return;
    }
    lc_error why = {{0}};
    if (isolate_run(update_child, update_parent, j, &why)) {
        baseline_entry_free(&j->entry);
        j->rc = LC_ERROR;
        j->measure_failed = 1;
        lc_error_set(&j->err, "%s", why.msg);
    }
}

/* 1 when the noise alone, beyond what a file holds, kept e out of it (why
 * says so): the machine's state while it measured (a busy host whose load
 * varies spreads the rounds), not the runner's failure. */
static int refused_for_noise(const baseline_entry *e, lc_error *why)
{
    const double hi = baseline_limits[BL_NOISE].hi;
    baseline_entry within = *e; /* its arrays shared, only read */
    lc_error ignored;
    within.noise_fwd = e->noise_fwd > hi ? hi : e->noise_fwd;
    within.noise_bwd = e->noise_bwd > hi ? hi : e->noise_bwd;
    if ((within.noise_fwd == e->noise_fwd && within.noise_bwd == e->noise_bwd) ||
        baseline_check_entry(&within, &ignored))
        return 0;
    lc_error_set(why, "cannot measure here now: the run-to-run noise of its %d rounds is fwd %.1f%% bwd %.1f%%, "
                 "beyond the %.0f%% a baseline file holds (this machine's load varies)", e->rounds,
                 100 * e->noise_fwd, 100 * e->noise_bwd, 100 * hi);
    return 1;
}

/* Gate and measure one (runner, shape) into ur->fresh: LC_OK (measured or
 * skipped), or what went wrong after saying it (nothing of it recorded). */
static lc_status update_item(update_run *ur, const work_item *it)
{
    update_job j = {.ur = ur, .it = it};
    lstm_shape_format(&it->shape, LSTM_SHAPE_TAG, j.tag, sizeof j.tag);
    if (!(j.ctx = numerics_cache_get(&ur->contexts, &it->shape, ur->o->seed, &j.err))) {
        fprintf(stderr, "lstmcheck: %s\n", j.err.msg);
        return LC_BAD_INPUT;
    }
    update_job_run(&j);
    if (j.rc == LC_UNSUPPORTED) {
        printf("SKIP %s %s: %s\n", it->runner->name, j.tag, j.skip);
        return LC_OK; /* cannot run here: nothing to record */
    }
    if (j.measure_failed) {
        fprintf(stderr, "lstmcheck: %s %s: %s; not recorded\n", it->runner->name, j.tag, j.err.msg);
        return LC_ERROR;
    }
    if (j.rc) {
        printf("refusing to record a baseline for %s: it %s the numerics gate\n", it->runner->name,
               j.rc == LC_FAILED ? "fails" : "errors in");
        return j.rc;
    }
    snprintf(j.entry.git_commit, sizeof j.entry.git_commit, "%s", ur->commit);
    j.entry.reproducible = ur->reproducible;
    /* what the file could not hold is this runner's failure, said now, not
     * the whole update's later; a noise beyond its limit is the machine's
     * state: not measurable here now (exit 3) */
    if (baseline_check_entry(&j.entry, &j.err)) {
        const lc_status st = refused_for_noise(&j.entry, &j.err) ? LC_UNSUPPORTED : LC_ERROR;
        fprintf(stderr, "lstmcheck: %s %s: %s; not recorded\n", it->runner->name, j.tag, j.err.msg);
        baseline_entry_free(&j.entry);
        return st;
    }
    print_update_row(&j.entry, ur->file, !ur->measured);
    ur->fresh[ur->measured++] = j.entry;
    /* --keep-going stores each entry at once: what was measured survives a
     * later runner's failure, or the update being stopped */
    if (ur->o->keep_going) {
        const lc_status st = store_entries(&ur->fresh[ur->measured - 1], 1, ur->file, ur->path);
        ur->stored += st == LC_OK;
        return st;
    }
    return LC_OK;
}

/* This machine's file, loaded to be updated: LC_OK (possibly empty) or
 * LC_BAD_INPUT after saying why. */
static lc_status open_for_update(lc_device device, const char *dir, char *path, size_t n, baseline_file *b)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        return LC_UNSUPPORTED;
    }
    if (load_for(dir, &key, path, n, b, &err) == LC_BAD_INPUT) {
        fprintf(stderr, "lstmcheck: %s (not overwritten: fix or remove the file first)\n", err.msg);
        return LC_BAD_INPUT;
    }
    warn_stale(path, b);
    if (path_mkdir_p(dir, &err)) { /* it can be made: session_check_outputs said so */
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        baseline_free(b);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

static lc_status cmd_update(const cli_options *o, lc_device device, const char *dir, work_item *items, int n)
{
    char path[4096];
    baseline_file b;
    update_run ur = {.o = o, .device = device, .file = &b, .path = path};
    lc_status rc = recorded_commit(o, ur.commit, &ur.reproducible);
    if (rc || (rc = open_for_update(device, dir, path, sizeof path, &b)))
        return rc;
    settings_from(o, device, &ur.settings);
    ur.fresh = calloc((size_t)n, sizeof *ur.fresh);
    if (!ur.fresh) {
        fprintf(stderr, "lstmcheck: out of host memory\n");
        rc = LC_ERROR;
        goto out;
    }
    /* without --keep-going the first runner that fails stops the update with nothing written */
    int tried = 0;
    for (; tried < n && rc != LC_BAD_INPUT && (!rc || o->keep_going); tried++) {
        const lc_status item = update_item(&ur, &items[tried]);
        ur.failed += item != LC_OK;
        /* the worst so far: bad input, then an error, then "not here now" */
        rc = item == LC_BAD_INPUT || !rc || (rc == LC_UNSUPPORTED && item) ? item : rc;
    }
    if (o->keep_going) {
        if (ur.failed)
            printf("--keep-going: %d of %d (runner, shape) pairs not recorded (above), %d not tried; %d recorded\n",
                   ur.failed, n, n - tried, ur.stored);
    } else if (rc) {
        printf("nothing written (%d of %d (runner, shape) pairs not tried)\n", n - tried, n);
    } else if (ur.measured) {
        rc = store_entries(ur.fresh, ur.measured, &b, path);
    }
    if (!rc && !ur.measured) {
        printf("nothing measured: no runner of %s can run here\n", lc_device_name(device));
        rc = LC_UNSUPPORTED;
    }
out:
    for (int i = 0; ur.fresh && i < n; i++)
        baseline_entry_free(&ur.fresh[i]);
    free(ur.fresh);
    numerics_cache_free(&ur.contexts);
    baseline_free(&b);
    return rc;
}

static void show_json(const char *path, const baseline_file *b)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE | JSON_NONFINITE_AS_NULL);
    json_object_begin(&w);
    json_member_string(&w, "file", path);
    json_key(&w, "entries");
    json_array_begin(&w);
    for (int i = 0; i < b->nentries; i++) {
        const baseline_entry *e = &b->entries[i];
        char tag[64];
        sample_summary sf, sb;
        stats_summarize(e->fwd.samples, e->fwd.n, &sf);
        stats_summarize(e->bwd.samples, e->bwd.n, &sb);
        json_object_begin(&w);
        json_member_string(&w, "runner", e->runner);
        json_member_string(&w, "shape", lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag));
        json_member_double(&w, "forward_median_ms", sf.median);
        json_member_double(&w, "backward_median_ms", sb.median);
        json_member_double(&w, "noise_forward", e->noise_fwd);
        json_member_double(&w, "noise_backward", e->noise_bwd);
        json_member_int(&w, "samples", e->fwd.n);
        json_member_string(&w, "date", e->date);
        json_member_string(&w, "git_commit", e->git_commit);
        if (e->unchecked[0])
            json_member_string(&w, "unchecked", e->unchecked);
        json_object_end(&w);
    }
    json_array_end(&w);
    json_object_end(&w);
    print_json(&w);
}

static void show_table(const char *path, const char *desc, const baseline_file *b)
{
    printf("%s\nmachine: %s\n", path, desc);
    printf("%-16s %-22s %-22s %-22s %7s %7s %-20s %s\n", "runner", "shape", "forward", "backward", "noise_f",
           "noise_b", "date", "commit");
    for (int i = 0; i < b->nentries; i++) {
        const baseline_entry *e = &b->entries[i];
        char tag[64], f[48], bw[48];
        median_text(&e->fwd, f, sizeof f);
        median_text(&e->bwd, bw, sizeof bw);
        printf("%-16s %-22s %-22s %-22s %6.2f%% %6.2f%% %-20s %s\n", e->runner,
               lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag), f, bw, 100 * e->noise_fwd,
               100 * e->noise_bwd, e->date, e->git_commit);
        if (e->unchecked[0])
            printf("%-16s %-22s note: %s\n", e->runner, "", e->unchecked);
    }
}

/* show --rnns / shape flags / --shape-set: 1 when entry e is among the
 * (runner, shape) pairs asked for (each filter only where it was given). */
static int shown_entry(const cli_options *o, const baseline_entry *e, const work_item *items, int n)
{
    int runner = !o->nrnns, shape = !o->shape_given && !o->shape_set;
    for (int i = 0; i < n; i++) {
        runner |= !strcmp(items[i].runner->name, e->runner);
        shape |= lstm_shape_equal(&items[i].shape, &e->shape);
    }
    return runner && shape;
}

/* The entries of b that show prints, as a view (its entries array is the
 * caller's to free; the entries stay b's). */
static lc_status shown_entries(const cli_options *o, const baseline_file *b, const work_item *items, int n,
                               baseline_file *view)
{
    *view = *b;
    view->nentries = 0;
    view->entries = malloc((size_t)(b->nentries ? b->nentries : 1) * sizeof *view->entries);
    if (!view->entries)
        return cmd_fail(o, LC_ERROR, "out of host memory");
    for (int i = 0; i < b->nentries; i++)
        if (shown_entry(o, &b->entries[i], items, n))
            view->entries[view->nentries++] = b->entries[i];
    return LC_OK;
}

static lc_status cmd_show(const cli_options *o, lc_device device, const char *dir, const work_item *items, int n)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err))
        return cmd_fail(o, LC_UNSUPPORTED, "%s", err.msg);
    char path[4096], desc[1024];
    baseline_file b;
    int rc = load_for(dir, &key, path, sizeof path, &b, &err);
    machine_key_describe(&key, desc, sizeof desc);
    if (rc == LC_BAD_INPUT)
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    if (rc == LC_MISSING) {
        baseline_free(&b);
        if (o->json)
            return cmd_fail(o, LC_UNSUPPORTED, "no baseline for this machine (%s) at %s; make one with: lstmcheck "
                            "baseline update --device %s", desc, path, lc_device_name(device));
        printf("no baseline for this machine (%s) at %s; make one with: lstmcheck baseline update --device %s\n",
               desc, path, lc_device_name(device));
        return LC_UNSUPPORTED;
    }
    warn_stale(path, &b);
    baseline_file view;
    lc_status src = shown_entries(o, &b, items, n, &view);
    if (!src && o->json)
        show_json(path, &view);
    else if (!src)
        show_table(path, desc, &view);
    free(view.entries);
    baseline_free(&b);
    return src;
}

/* ---- compare: against this machine's baseline entry, or A/B ---- */

/* The state of one compare run: what it was asked, what it counted, and
 * the JSON document it builds (--json). */
typedef struct compare_run {
    const cli_options *o;
    lc_device device;
    const char *dir;
    baseline_file *file;   /* this machine's (empty when it has none) */
    const char *file_path;
    const char *machine;   /* this machine's key, described */
    perf_settings settings;
    int comparisons;       /* the family size m */
    char against[GIT_SHA_LEN + 1]; /* --against, resolved */
    char self_exe[4096];
    char self_desc[256];   /* this build, for A/B reports */
    int slower, unclear, faster, failed;
    json_writer results, skipped; /* --json: the two lists, filled as the items are decided */
    compare_report report;        /* for --markdown and --plot */
    numerics_cache contexts;      /* one reference per (shape, seed), for all runners */
} compare_run;

static void note_skip(compare_run *cr, const char *runner, const char *tag, const char *why)
{
    char reason[2048]; /* it may name files of the baseline folder: shown escaped, on one line */
    text_printable(why, reason, sizeof reason);
    compare_report_skip(&cr->report, runner, tag, reason);
    if (cr->o->json) {
        json_object_begin(&cr->skipped);
        json_member_string(&cr->skipped, "runner", runner);
        json_member_string(&cr->skipped, "shape", tag);
        json_member_string(&cr->skipped, "reason", reason);
        json_object_end(&cr->skipped);
    } else {
        printf("SKIP %s %s: %s\n", runner, tag, reason);
    }
    cr->unclear++;
}

static void print_row(const char *runner, const char *tag, const char *phase, const sample_summary *b,
                      const sample_summary *c, double raw, const verdict_result *v)
{
    printf("%-16s %-22s %-4s %9.4g %9.4g %+7.1f%% %+7.1f%% [%+6.1f, %+6.1f] %5.1f%% %-12s %s\n", runner, tag,
           phase, b->median, c->median, 100 * raw, 100 * v->change, 100 * v->ci_low, 100 * v->ci_high,
           100 * v->delta, verdict_name(v->kind), v->reason);
}

static void json_verdict(json_writer *w, const char *key, const verdict_result *v, const sample_summary *b,
                         const sample_summary *c, double raw)
{
    json_key(w, key);
    json_object_begin(w);
    json_member_string(w, "verdict", verdict_name(v->kind));
    json_member_double(w, "baseline_median_ms", b->median);
    json_member_double(w, "current_median_ms", c->median);
    json_member_double(w, "raw_change", raw);
    json_member_double(w, "change", v->change);
    json_member_double(w, "ci_low", v->ci_low);
    json_member_double(w, "ci_high", v->ci_high);
    json_member_double(w, "p", v->p);
    json_member_double(w, "min_effect", v->delta);
    json_member_string(w, "reason", v->reason);
    json_object_end(w);
}

/* One comparison as an element of the results list; ab: as report_comparison. */
static void json_comparison(compare_run *cr, const char *runner, const char *tag, const perf_comparison *c,
                            const ab_outcome *ab, const char *commit, const char *why)
{
    json_writer *w = &cr->results;
    json_object_begin(w);
    json_member_string(w, "runner", runner);
    json_member_string(w, "shape", tag);
    json_member_string(w, "mode", ab ? "ab" : "baseline");
    if (ab) {
        json_key(w, "against");
        json_object_begin(w);
        json_member_string(w, "commit", commit);
        json_member_string(w, "why", why);
        json_member_string(w, "current", cr->self_desc);
        json_member_int(w, "processes_a", ab->processes[0]);
        json_member_int(w, "processes_b", ab->processes[1]);
        json_object_end(w);
    }
    json_member_int(w, "samples", c->samples);
    json_member_int(w, "rounds", c->rounds);
    if (c->unchecked[0])
        json_member_string(w, "unchecked", c->unchecked);
    json_verdict(w, "forward", &c->fwd, &c->base_fwd, &c->cur_fwd, c->raw_change_fwd);
    json_verdict(w, "backward", &c->bwd, &c->base_bwd, &c->cur_bwd, c->raw_change_bwd);
    json_object_end(w);
}

/* One decided comparison: rows (or a JSON result) and the counts. ab: the
 * A/B details, NULL against a baseline entry. */
static void report_comparison(compare_run *cr, const char *runner, const char *tag, const perf_comparison *c,
                              const ab_outcome *ab, const char *commit, const char *why)
{
    if (cr->o->json) {
        json_comparison(cr, runner, tag, c, ab, commit, why);
    } else {
        if (ab)
            printf("A/B %s %s: %s (B) against %.12s (A), %s; %d + %d processes interleaved A B B A, B A A B, ...\n",
                   runner, tag, cr->self_desc, commit, why, ab->processes[0], ab->processes[1]);
        print_row(runner, tag, "fwd", &c->base_fwd, &c->cur_fwd, c->raw_change_fwd, &c->fwd);
        print_row(runner, tag, "bwd", &c->base_bwd, &c->cur_bwd, c->raw_change_bwd, &c->bwd);
        if (c->unchecked[0])
            printf("%-16s %-22s note: %s\n", runner, tag, c->unchecked);
    }
    fflush(stdout);
    compare_report_add(&cr->report, runner, tag, c, ab, commit);
    verdict_kind k = perf_overall(c);
    cr->slower += k == VERDICT_SLOWER;
    cr->unclear += k == VERDICT_INCONCLUSIVE;
    cr->faster += c->fwd.kind == VERDICT_FASTER || c->bwd.kind == VERDICT_FASTER;
}

/* This build, as A/B reports name it: its commit and whether the tree
 * it was built from has changes since. */
static void describe_self(compare_run *cr)
{
    char sha[GIT_SHA_LEN + 1], what[256];
    if (git_head(LSTMCHECK_SOURCE_DIR, sha) != LC_OK) {
        snprintf(cr->self_desc, sizeof cr->self_desc, "this build (not a git checkout)");
        return;
    }
    int dirty = 0;
    git_built_tree_dirty(LSTMCHECK_SOURCE_DIR, &dirty, what, sizeof what);
    snprintf(cr->self_desc, sizeof cr->self_desc, "this build (%.12s%s%s)", sha,
             dirty ? " + uncommitted changes: " : "", dirty ? what : "");
}

/* A plugin's runner with no baseline entry here is not compared A/B: that
 * rebuilds an older lstmcheck, not the plugin. 1 after noting the skip. */
static int skip_plugin_ab(compare_run *cr, const work_item *it, const char *tag)
{
    const char *plugin = registry_origin(it->runner);
    char why[800];
    if (!plugin)
        return 0;
    snprintf(why, sizeof why, "no baseline entry for this plugin runner here (an A/B comparison rebuilds lstmcheck, "
                              "not plugins): record one with 'lstmcheck baseline update --plugin %s --rnns %s'",
             plugin, it->runner->name);
    note_skip(cr, it->runner->name, tag, why);
    return 1;
}

/* Which commit an A/B compares against, and why: --against, else the
 * commit of this machine's entry when it drifted (drifted != NULL), else
 * that of the device's newest committed baseline. 1 after noting a skip. */
static int choose_commit(compare_run *cr, const work_item *it, const char *tag, const baseline_entry *drifted,
                         char sha[GIT_SHA_LEN + 1], char *why, size_t nwhy)
{
    const char *name = it->runner->name;
    char commit[48];
    lc_error err = {{0}};
    if (cr->against[0]) {
        snprintf(sha, GIT_SHA_LEN + 1, "%s", cr->against);
        snprintf(why, nwhy, "as asked (--against %s)", cr->o->against);
        return 0;
    }
    if (drifted) {
        snprintf(commit, sizeof commit, "%s", drifted->git_commit);
        snprintf(why, nwhy, "the commit of this machine's entry, which the machine's present state cannot be "
                            "compared with (control drift)");
    } else if (baseline_reference_commit(cr->dir, cr->device, name, &it->shape, commit, why, nwhy)) {
        char reason[800];
        snprintf(reason, sizeof reason, "no baseline here and no A/B possible: %s", why);
        note_skip(cr, name, tag, reason);
        return 1;
    }
    if (git_resolve_buildable(LSTMCHECK_SOURCE_DIR, commit, sha, &err)) {
        note_skip(cr, name, tag, err.msg);
        return 1;
    }
    return 0;
}

/* What each A/B process measures: this command's options as a `baseline
 * update` of one runner at one shape, written through the flag table
 * (cli_format), so every measurement flag given reaches both sides. Left
 * out: what only compare takes (the table says which), and what A/B adds
 * to each process (its scratch folder, --no-progress, a side's
 * --allow-dirty). */
static lc_status ab_measure_line(const compare_run *cr, const work_item *it, cli_line *line, lc_error *err)
{
    cli_options o = *cr->o;
    o.subcommand = "update";
    cli_drop_not_taken(&o);
    o.device = (int)cr->device;
    o.rnns[0] = it->runner->name;
    o.nrnns = 1;
    o.shape = it->shape;
    o.shape_given = o.batch_given = 1;
    o.shape_set = NULL;
    if (!o.nloops)
        o.nloops = AB_SAMPLES_PER_ROUND;
    o.baseline_dir = NULL;
    o.progress = -1;
    o.nplugins = 0; /* a plugin's runner is never A/B'd (skip_plugin_ab): the sides measure built-in ones */
    return cli_format(&o, line, err);
}

/* A/B of one gated (runner, shape) against the commit choose_commit names. */
static void compare_ab(compare_run *cr, const work_item *it, const char *tag, const baseline_entry *drifted)
{
    const char *name = it->runner->name;
    char sha[GIT_SHA_LEN + 1], why[600], exe[4096];
    lc_error err = {{0}};
    if (skip_plugin_ab(cr, it, tag) || choose_commit(cr, it, tag, drifted, sha, why, sizeof why))
        return;
    if (revbuild_lstmcheck(LSTMCHECK_SOURCE_DIR, sha, cr->device, exe, sizeof exe, &err)) {
        char reason[700];
        snprintf(reason, sizeof reason, "cannot compare here: %s", err.msg);
        note_skip(cr, name, tag, reason);
        return;
    }
    const ab_side sides[2] = {{.exe = exe}, {.exe = cr->self_exe, .allow_dirty = 1}};
    cli_line measure = {0};
    if (ab_measure_line(cr, it, &measure, &err)) {
        fprintf(stderr, "lstmcheck: %s %s: %s\n", name, tag, err.msg);
        cr->failed++;
        cli_line_free(&measure);
        return;
    }
    ab_outcome ab;
    fprintf(stderr, "A/B %s %s against %.12s ...\n", name, tag, sha);
    lc_status st = ab_compare(sides, (const char *const *)measure.words, &cr->settings, cr->comparisons, &ab, &err);
    cli_line_free(&measure);
    if (st == LC_UNSUPPORTED) {
        char reason[700];
        snprintf(reason, sizeof reason, "cannot compare here: %s", err.msg);
        note_skip(cr, name, tag, reason);
    } else if (st != LC_OK) {
        fprintf(stderr, "lstmcheck: %s %s: %s\n", name, tag, err.msg);
        cr->failed++;
    } else {
        runner_timing_unchecked(it->runner, &it->shape, ab.cmp.unchecked, sizeof ab.cmp.unchecked);
        report_comparison(cr, name, tag, &ab.cmp, &ab, sha, why);
    }
}

/* 1 when the comparison with the entry could not decide because this
 * machine is in another state than when the entry was recorded (control
 * drift) and the entry's commit can be rebuilt: then an A/B against that
 * commit, measured now on both sides, answers the same question. Says so. */
static int drifted_off_baseline(compare_run *cr, const work_item *it, const baseline_entry *e,
                                const perf_comparison *c)
{
    const double drift = c->fwd.control_drift;
    if (perf_overall(c) != VERDICT_INCONCLUSIVE || fabs(drift) <= VERDICT_MAX_CONTROL_DRIFT ||
        !e->reproducible || registry_origin(it->runner))
        return 0;
    if (!cr->o->json)
        printf("note: %s: the control workload runs %+.0f%% against the baseline's (the machine is in another "
               "state): comparing A/B against the baseline's commit %.12s instead\n",
               it->runner->name, 100 * drift, e->git_commit);
    return 1;
}

/* Gate first, on every machine; then the baseline entry or an A/B. */
static void compare_item(compare_run *cr, const work_item *it)
{
    char tag[64];
    lstm_shape_format(&it->shape, LSTM_SHAPE_TAG, tag, sizeof tag);
    const baseline_entry *e =
        cr->against[0] || cr->o->ab ? NULL : baseline_find(cr->file, it->runner->name, &it->shape);
    lc_error err = {{0}};
    numerics_context *ctx = numerics_cache_get(&cr->contexts, &it->shape, e ? e->seed : cr->o->seed, &err);
    if (!ctx) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        cr->failed++;
        return;
    }
    char skip[512];
    int g = gate_first(it->runner, ctx, tag, cr->o->json ? stderr : stdout, skip, sizeof skip);
    if (g) {
        if (g == LC_UNSUPPORTED) note_skip(cr, it->runner->name, tag, skip); /* counted there */
        else cr->failed++;
        return;
    }
    if (!e) {
        compare_ab(cr, it, tag, NULL);
        return;
    }
    char unchecked[160], why[512];
    runner_timing_unchecked(it->runner, &it->shape, unchecked, sizeof unchecked);
    if (strcmp(unchecked, e->unchecked)) { /* the entry timed another configuration, or says so */
        snprintf(why, sizeof why, "the baseline entry says its timing was '%s', this runner's is '%s': record it "
                 "again (baseline update)", e->unchecked[0] ? e->unchecked : "checked",
                 unchecked[0] ? unchecked : "checked");
        note_skip(cr, it->runner->name, tag, why);
        return;
    }
    const lstm_problem *p;
    const gate_expected *expected;
    perf_comparison c;
    if (numerics_context_timed(ctx, it->runner, &p, &expected, &err)) {
        fprintf(stderr, "lstmcheck: %s %s: %s\n", it->runner->name, tag, err.msg);
        cr->failed++;
        return;
    }
    const lc_status rc = perf_compare(it->runner, p, expected, e, &cr->settings, cr->comparisons, &c, &err);
    if (rc == LC_FAILED)
        timed_results_wrong(it->runner, tag, err.msg, cr->o->json ? stderr : stdout);
    else if (rc)
        fprintf(stderr, "lstmcheck: %s %s: %s\n", it->runner->name, tag, err.msg);
    if (rc) {
        cr->failed++;
        return;
    }
    if (drifted_off_baseline(cr, it, e, &c)) {
        compare_ab(cr, it, tag, e);
        return;
    }
    report_comparison(cr, it->runner->name, tag, &c, NULL, NULL, NULL);
}

static void compare_header(compare_run *cr)
{
    if (cr->o->json) {
        json_init(&cr->results, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
        json_init(&cr->skipped, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
        json_array_begin(&cr->results);
        json_array_begin(&cr->skipped);
        return;
    }
    if (!cr->against[0] && !cr->o->ab && !cr->file->nentries)
        printf("no baseline for this machine (%s) at %s: comparing A/B against the commit of the newest "
               "committed %s baseline\n", cr->machine, cr->file_path, lc_device_name(cr->device));
    printf("%-16s %-22s %-4s %9s %9s %8s %8s %16s %6s %-12s %s\n", "runner", "shape", "", "base_ms", "now_ms",
           "raw", "change", "interval", "min", "verdict", "why");
}

/* --json: the whole document, the two lists in it. */
static void compare_json(compare_run *cr)
{
    json_array_end(&cr->results);
    json_array_end(&cr->skipped);
    json_writer w;
    json_init(&w, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
    json_object_begin(&w);
    json_key(&w, "baseline");
    json_string(&w, cr->file->nentries ? cr->file_path : NULL);
    json_member_string(&w, "machine", cr->machine);
    json_member_int(&w, "comparisons", cr->comparisons);
    const char *results = json_text(&cr->results, NULL), *skipped = json_text(&cr->skipped, NULL);
    if (results && skipped) {
        json_key(&w, "results");
        json_raw(&w, results);
        json_key(&w, "skipped");
        json_raw(&w, skipped);
        json_object_end(&w);
    }
    print_json(&w);
    json_free(&cr->results);
    json_free(&cr->skipped);
}

static void compare_footer(compare_run *cr)
{
    if (cr->o->json) {
        compare_json(cr);
        return;
    }
    if (cr->faster)
        printf("note: %d faster: record it with 'lstmcheck baseline update' (or the update-baselines target)\n",
               cr->faster);
    if (cr->unclear)
        printf("note: %d not decided here (cannot run or compare here, or INCONCLUSIVE within %.0f s)\n",
               cr->unclear, cr->settings.compare_budget_s);
}

static lc_status cmd_compare(const cli_options *o, lc_device device, const char *dir, work_item *items, int n)
{
    lc_error err = {{0}};
    machine_key key;
    if (machine_key_current(device, &key, &err)) {
        if (o->json)
            return cmd_fail(o, LC_UNSUPPORTED, "%s", err.msg);
        printf("SKIP: %s\n", err.msg);
        return LC_UNSUPPORTED;
    }
    char path[4096], desc[1024];
    baseline_file b;
    int rc = load_for(dir, &key, path, sizeof path, &b, &err);
    machine_key_describe(&key, desc, sizeof desc);
    if (rc == LC_BAD_INPUT)
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    const char *report = o->markdown_path && path_same_file(o->markdown_path, path) ? o->markdown_path
                         : o->plot_path && path_same_file(o->plot_path, path)       ? o->plot_path
                                                                                    : NULL;
    if (report) {
        baseline_free(&b);
        return cmd_fail(o, LC_BAD_INPUT, "'%s' is the baseline file compared against: a report there would "
                        "overwrite it", report);
    }
    compare_run cr = {.o = o, .device = device, .dir = dir, .file = &b, .file_path = path, .machine = desc};
    if (o->against && (rc = git_resolve_buildable(LSTMCHECK_SOURCE_DIR, o->against, cr.against, &err))) {
        baseline_free(&b);
        return cmd_fail(o, rc, "%s", err.msg);
    }
    ssize_t len = readlink("/proc/self/exe", cr.self_exe, sizeof cr.self_exe - 1);
    cr.self_exe[len > 0 ? len : 0] = '\0';
    describe_self(&cr);
    settings_from(o, device, &cr.settings);
    /* one family: every forward and backward entry of the perf run */
    int family = perf_matrix_size(device);
    family = b.nentries > family ? b.nentries : family;
    cr.comparisons = 2 * (n > family ? n : family);
    warn_stale(path, &b);
    compare_header(&cr);
    compare_report_init(&cr.report, desc, b.nentries ? path : NULL, cr.comparisons);
    for (int i = 0; i < n; i++)
        compare_item(&cr, &items[i]);
    compare_footer(&cr);
    if (compare_report_write(&cr.report, o->markdown_path, o->plot_path, &err)) {
        fprintf(stderr, "lstmcheck: %s\n", err.msg);
        cr.failed++;
    }
    compare_report_free(&cr.report);
    numerics_cache_free(&cr.contexts);
    baseline_free(&b);
    if (cr.failed || cr.slower)
        return LC_FAILED;
    return cr.unclear ? LC_UNSUPPORTED : LC_OK;
}

lc_status cmd_baseline(const cli_options *o)
{
    if (!o->subcommand)
        return cmd_fail(o, LC_BAD_INPUT, "baseline needs a subcommand: update, show or compare");
    lc_error err = {{0}};
    if (session_check_device(o->device, &err))
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    lc_status rc; /* a flag of another subcommand was refused as it was parsed (the flag table) */
    const lc_device device = session_resolve_device(o->device);
    perf_prepare_device(device);
    const char *dir = o->baseline_dir ? o->baseline_dir : baseline_default_dir();
    if (text_find_unprintable(dir)) /* --baseline-dir is checked as it is parsed; the environment here */
        return cmd_fail(o, LC_BAD_INPUT, "LSTMCHECK_BASELINE_DIR '%s' holds a control character or invalid UTF-8",
                        dir);
    work_item *items = NULL;
    int n = 0;
    /* show too: what it is asked to show must name runners and shapes */
    if ((rc = plan(o, device, &items, &n, &err))) {
        free(items);
        return cmd_fail(o, rc, "%s", err.msg);
    }
    rc = !strcmp(o->subcommand, "show")     ? cmd_show(o, device, dir, items, n)
         : !strcmp(o->subcommand, "update") ? cmd_update(o, device, dir, items, n)
                                            : cmd_compare(o, device, dir, items, n);
    free(items);
    return rc;
}
