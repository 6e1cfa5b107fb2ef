/* lstmcheck baseline update | show | compare | history: per-machine
 * baselines and the perf verdict. `ctest -L perf` runs `baseline compare`.
 * Here: the plan (which runners at which shapes), what the subcommands
 * share, and show; update, compare and history have a file each
 * (baseline_cmd.h). */
#include "cmd/baseline_cmd.h"
#include "cmd/commands.h"

#include "base/paths.h"
#include "base/text.h"
#include "cmd/session.h"
#include "device/device.h"
#include "report/baseline_report.h"

#include <stdlib.h>
#include <string.h>

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

lc_status baseline_check_shape_flags(const cli_options *o, lc_error *err)
{
    if (o->shape_given && o->shape_set) {
        lc_error_set(err, "give shape flags or --shape-set, not both");
        return LC_BAD_INPUT;
    }
    /* as every command: a shape too large for this machine is refused before allocating */
    if (o->shape_given && (lstm_shape_validate(&o->shape, err) || session_check_memory(&o->shape, -1, err)))
        return LC_BAD_INPUT;
    return LC_OK;
}

/* The shape given, the shape set named, or every set of the device. */
static lc_status plan_shapes(const cli_options *o, lc_device device, lstm_shape *shapes, const char **sets,
                             int *ns, lc_error *err)
{
    *ns = 0;
    lc_status rc = baseline_check_shape_flags(o, err);
    if (rc)
        return rc;
    if (o->shape_given) {
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

/* The (runner, shape) pairs a subcommand works on. */
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

void baseline_settings_from(const cli_options *o, lc_device device, perf_settings *s)
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
    if (o->time_budget_s >= 0) /* 0: no budget, as bench's */
        s->round_budget_s = o->time_budget_s;
}

lc_status baseline_gate_outcome(const runner_ops *r, const gate_report *rep, char *why, size_t n)
{
    if (rep->status == LC_FAILED)
        gate_format_summary(r, rep, why, n);
    else
        snprintf(why, n, "%s", rep->reason);
    return rep->status;
}

lc_status baseline_open_machine_file(const cli_options *o, lc_device device, const char *dir, machine_file *f,
                                     const char *bad_file_note)
{
    lc_error err = {{0}};
    machine_key key;
    memset(f, 0, sizeof *f);
    if (machine_key_current(device, &key, &err))
        return cmd_fail(o, LC_UNSUPPORTED, "%s", err.msg);
    machine_key_describe(&key, f->machine, sizeof f->machine);
    int rc = baseline_path(dir, &key, f->path, sizeof f->path, &err) ? LC_BAD_INPUT
             : baseline_load_for(f->path, &key, &f->b, &err);
    if (rc == LC_BAD_INPUT) {
        baseline_free(&f->b);
        return cmd_fail(o, LC_BAD_INPUT, "%s%s", err.msg, bad_file_note ? bad_file_note : "");
    }
    f->missing = rc == LC_MISSING;
    baseline_report_stale(f->path, &f->b);
    return LC_OK;
}

lc_status baseline_reports_spare(const cli_options *o, const char *path, const char *role)
{
    const char *report = o->markdown_path && path_same_file(o->markdown_path, path) ? o->markdown_path
                         : o->plot_path && path_same_file(o->plot_path, path)       ? o->plot_path
                                                                                    : NULL;
    if (report)
        return cmd_fail(o, LC_BAD_INPUT, "'%s' is the baseline file %s: a report there would overwrite it",
                        report, role);
    return LC_OK;
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
    machine_file f;
    lc_status rc = baseline_open_machine_file(o, device, dir, &f, NULL);
    if (rc)
        return rc;
    if (f.missing) {
        baseline_free(&f.b);
        if (o->json)
            return cmd_fail(o, LC_UNSUPPORTED, "no baseline for this machine (%s) at %s; make one with: lstmcheck "
                            "baseline update --device %s", f.machine, f.path, lc_device_name(device));
        baseline_report_missing(f.machine, f.path, lc_device_name(device)); /* show's answer, on stdout */
        return LC_UNSUPPORTED;
    }
    baseline_file view;
    rc = shown_entries(o, &f.b, items, n, &view);
    if (!rc && o->json)
        baseline_report_show_json(f.path, &view);
    else if (!rc)
        baseline_report_show_table(f.path, f.machine, &view);
    free(view.entries);
    baseline_free(&f.b);
    return rc;
}

lc_status cmd_baseline(const cli_options *o)
{
    if (!o->subcommand)
        return cmd_fail(o, LC_BAD_INPUT, "baseline needs a subcommand: one of %s", cli_baseline_subcommands());
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
    if (!strcmp(o->subcommand, "history")) /* its filters may name runners of any device */
        return baseline_history(o, device, dir);
    work_item *items = NULL;
    int n = 0;
    /* show too: what it is asked to show must name runners and shapes */
    if ((rc = plan(o, device, &items, &n, &err))) {
        free(items);
        return cmd_fail(o, rc, "%s", err.msg);
    }
    rc = !strcmp(o->subcommand, "show")     ? cmd_show(o, device, dir, items, n)
         : !strcmp(o->subcommand, "update") ? baseline_update_items(o, device, dir, items, n)
                                            : baseline_compare_items(o, device, dir, items, n);
    free(items);
    return rc;
}
