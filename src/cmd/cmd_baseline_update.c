/* lstmcheck baseline update: each (runner, shape) gated, then measured in
 * rounds and stored in this machine's file (docs/baselines.md). This file
 * orchestrates: what is recorded is perf/record.h's rule, the file is
 * perf/baseline.h's, and what is said is report/baseline_report.h's. */
#include "cmd/baseline_cmd.h"
#include "cmd/commands.h"

#include "base/files.h"
#include "base/paths.h"
#include "check/isolate.h"
#include "perf/comparison.h"
#include "perf/record.h"
#include "report/baseline_report.h"

#include <stdlib.h>

/* Merge n measured entries into the file as it is when they are stored
 * (re-read under a lock: a concurrent update's entries stay). */
static lc_status store_entries(baseline_entry *entries, int n, const baseline_file *b, const char *path)
{
    lc_error err = {{0}};
    lc_status rc = baseline_store(path, &b->machine, entries, n, &err);
    if (rc != LC_OK)
        baseline_report_store_failed(err.msg, rc == LC_BAD_INPUT);
    else
        baseline_report_stored(n, path);
    return rc;
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
    int measured, stored, failed, skipped; /* skipped: cannot run here (no failure) */
} update_run;

/* Where a job that did not measure ended. */
typedef enum job_end { JOB_GATE, JOB_TIMED, JOB_MEASURE } job_end;

/* One (runner, shape) of an update: gated, then measured. Plain data: a
 * job run in a child of its own comes back through a pipe. */
typedef struct update_job {
    const update_run *ur;
    const work_item *it;
    numerics_context *ctx;
    char tag[64];
    lc_status rc;         /* LC_OK measured; LC_UNSUPPORTED (cannot run here), LC_FAILED, LC_ERROR: why */
    job_end end;          /* where it ended, when not LC_OK */
    char why[COMPARISON_REASON_MAX];
    baseline_entry entry; /* when rc is LC_OK */
} update_job;

static void job_ended(update_job *j, lc_status rc, job_end end, const char *why)
{
    j->rc = rc;
    j->end = end;
    snprintf(j->why, sizeof j->why, "%s", why);
}

static void gate_and_measure(update_job *j)
{
    const runner_ops *r = j->it->runner;
    gate_report rep;
    gate_run(r, j->ctx, NULL, &rep);
    if ((j->rc = baseline_gate_outcome(r, &rep, j->why, sizeof j->why))) {
        j->end = JOB_GATE;
        return;
    }
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    if (numerics_context_timed(j->ctx, r, &p, &expected, &err)) { /* made by now, unless out of memory */
        job_ended(j, LC_ERROR, JOB_MEASURE, err.msg);
        return;
    }
    baseline_report_measuring(r->name, j->tag, j->ur->settings.baseline_rounds);
    const lc_status st = perf_measure_entry(r, p, expected, j->ur->o->seed, &j->ur->settings, &j->entry, &err);
    if (st != LC_OK)
        job_ended(j, st == LC_FAILED ? LC_FAILED : LC_ERROR, st == LC_FAILED ? JOB_TIMED : JOB_MEASURE, err.msg);
}

/* gate_and_measure in a child (isolate.h): the outcome, then the entry. */
static int update_child(void *arg, int fd)
{
    update_job *j = arg;
    gate_and_measure(j);
    return fd_write_all(fd, &j->rc, sizeof j->rc) || fd_write_all(fd, &j->end, sizeof j->end) ||
           fd_write_all(fd, j->why, sizeof j->why) || (j->rc == LC_OK && baseline_entry_send(fd, &j->entry));
}

static int update_parent(void *arg, int fd, lc_error *err)
{
    update_job *j = arg;
    if (fd_read_all(fd, &j->rc, sizeof j->rc) || fd_read_all(fd, &j->end, sizeof j->end) ||
        fd_read_all(fd, j->why, sizeof j->why)) {
        lc_error_set(err, "its process sent no result");
        return 1;
    }
    j->why[sizeof j->why - 1] = '\0';
    return j->rc == LC_OK && baseline_entry_receive(fd, &j->entry, err);
}

/* The job here, or in a process of its own where a GPU runner's fault
 * must stay its own (isolate.h): the reference made here is shared. */
static void update_job_run(update_job *j)
{
    const runner_ops *r = j->it->runner;
    gate_report rep;
    if (isolate_precheck(r, j->ctx, &rep)) {
        j->rc = baseline_gate_outcome(r, &rep, j->why, sizeof j->why);
        j->end = JOB_GATE;
        return;
    }
    if (!isolate_runner(r)) {
        gate_and_measure(j);
        return;
    }
    /* the reference, made here before the fork, is the child's too */
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    if (numerics_context_get(j->ctx, r, &p, &expected, &err) ||
        numerics_context_timed(j->ctx, r, &p, &expected, &err)) {
        job_ended(j, LC_ERROR, JOB_MEASURE, err.msg);
        return;
    }
    if (isolate_run(update_child, update_parent, j, &err)) {
        baseline_entry_free(&j->entry);
        job_ended(j, LC_ERROR, JOB_MEASURE, err.msg);
    }
}

/* A job that did not measure, said: LC_OK for a skip (nothing to record),
 * else its status. */
static lc_status job_not_measured(const update_job *j)
{
    const char *name = j->it->runner->name;
    if (j->rc == LC_UNSUPPORTED) {
        baseline_report_skip(stdout, name, j->tag, j->why);
        return LC_OK;
    }
    if (j->end == JOB_MEASURE) {
        baseline_report_not_recorded(name, j->tag, j->why);
        return LC_ERROR;
    }
    char detail[256];
    comparison_wrong_detail(name, j->end == JOB_TIMED, detail, sizeof detail);
    baseline_report_failed(stdout, name, j->tag, j->rc == LC_FAILED, j->why, detail);
    baseline_report_refused(name, j->rc == LC_FAILED);
    return j->rc;
}

/* Gate and measure one (runner, shape) into ur->fresh: LC_OK (measured or
 * skipped), or what went wrong after saying it (nothing of it recorded). */
static lc_status update_item(update_run *ur, const work_item *it)
{
    update_job j = {.ur = ur, .it = it};
    lc_error err = {{0}};
    lstm_shape_format(&it->shape, LSTM_SHAPE_TAG, j.tag, sizeof j.tag);
    if (!(j.ctx = numerics_cache_get(&ur->contexts, &it->shape, ur->o->seed, &err)))
        return cmd_fail(ur->o, LC_BAD_INPUT, "%s", err.msg);
    update_job_run(&j);
    ur->skipped += j.rc == LC_UNSUPPORTED;
    if (j.rc)
        return job_not_measured(&j);
    snprintf(j.entry.git_commit, sizeof j.entry.git_commit, "%s", ur->commit);
    j.entry.reproducible = ur->reproducible;
    /* what the file could not hold is this runner's failure, said now, not
     * the whole update's later; a noise beyond its limit is the machine's
     * state: not measurable here now (exit 3) */
    if (baseline_check_entry(&j.entry, &err)) {
        const lc_status st = record_refused_for_noise(&j.entry, &err) ? LC_UNSUPPORTED : LC_ERROR;
        baseline_report_not_recorded(it->runner->name, j.tag, err.msg);
        baseline_entry_free(&j.entry);
        return st;
    }
    baseline_report_update_row(&j.entry, ur->file, !ur->measured);
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

/* This machine's file, loaded to be updated, and its folder made: LC_OK
 * (the file possibly missing), or what stops the update (said). */
static lc_status open_for_update(const cli_options *o, lc_device device, const char *dir, machine_file *f)
{
    lc_status rc = baseline_open_machine_file(o, device, dir, f, " (not overwritten: fix or remove the file first)");
    lc_error err = {{0}};
    if (!rc && path_mkdir_p(dir, &err)) { /* it can be made: session_check_outputs said so */
        baseline_free(&f->b);
        return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    }
    return rc;
}

/* Every item, in order: without --keep-going the first that fails stops
 * the update with nothing written, and bad input stops it anyway. The
 * worst status so far (lc_status_worse). */
static lc_status update_all(update_run *ur, work_item *items, int n, int *tried)
{
    lc_status rc = LC_OK;
    for (*tried = 0; *tried < n && rc != LC_BAD_INPUT && (!rc || ur->o->keep_going); ++*tried) {
        const lc_status item = update_item(ur, &items[*tried]);
        ur->failed += item != LC_OK;
        rc = lc_status_worse(rc, item);
    }
    return rc;
}

lc_status baseline_update_items(const cli_options *o, lc_device device, const char *dir, work_item *items, int n)
{
    machine_file f;
    update_run ur = {.o = o, .device = device, .file = &f.b, .path = f.path};
    lc_error err = {{0}};
    lc_status rc = record_commit(LSTMCHECK_SOURCE_DIR, o->allow_dirty, ur.commit, &ur.reproducible, &err);
    if (rc)
        return cmd_fail(o, rc, "%s", err.msg);
    if ((rc = open_for_update(o, device, dir, &f)))
        return rc;
    baseline_settings_from(o, device, &ur.settings);
    if (!(ur.fresh = calloc((size_t)n, sizeof *ur.fresh))) {
        baseline_free(&f.b);
        return cmd_fail(o, LC_ERROR, "out of host memory");
    }
    int tried;
    const lc_status measured = update_all(&ur, items, n, &tried);
    rc = measured;
    if (!o->keep_going && !rc && ur.measured)
        rc = store_entries(ur.fresh, ur.measured, &f.b, f.path);
    const baseline_update_summary sum = {
        .items = n, .tried = tried, .failed = ur.failed, .skipped = ur.skipped, .stored = ur.stored,
        .keep_going = o->keep_going,
        .stopped = !o->keep_going && measured, .nothing_measured = !rc && !ur.measured,
        .device = lc_device_name(device)};
    baseline_report_update_end(&sum);
    if (!rc && !ur.measured)
        rc = LC_UNSUPPORTED;
    for (int i = 0; i < n; i++)
        baseline_entry_free(&ur.fresh[i]);
    free(ur.fresh);
    numerics_cache_free(&ur.contexts);
    baseline_free(&f.b);
    return rc;
}
