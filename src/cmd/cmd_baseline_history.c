/* lstmcheck baseline history: a baseline file over its commits (this
 * machine's, or --baseline-file), per runner and shape, with the verdict
 * between consecutive entries. Here: which file, which entries (--rnns,
 * shape flags, --shape-set, checked before anything is read) and which
 * printers; perf/history.h reads and decides, report/history_report.h
 * prints. The verdicts are of the past: the exit code is 0 whatever they
 * say. */
#include "cmd/baseline_cmd.h"
#include "cmd/commands.h"

#include "base/paths.h"
#include "perf/history.h"
#include "report/history_report.h"

#include <stdio.h>
#include <string.h>

/* The runner and shape filters, checked as every command checks them. */
static lc_status check_filters(const cli_options *o, lc_error *err)
{
    for (int i = 0; i < o->nrnns; i++)
        if (!registry_find(o->rnns[i])) {
            lc_error_set(err, "unknown runner '%s' (see lstmcheck list)", o->rnns[i]);
            return LC_BAD_INPUT;
        }
    lc_status rc = baseline_check_shape_flags(o, err);
    if (rc)
        return rc;
    int set_known = !o->shape_set;
    for (int i = 0; !set_known && perf_shape_sets[i].name; i++)
        set_known = !strcmp(perf_shape_sets[i].name, o->shape_set);
    if (!set_known) {
        lc_error_set(err, "no shape set '%s' in the perf matrix", o->shape_set);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* history_filter: e is among the runners and the shape asked for; a shape
 * set is the one of that name on the device of e's runner. */
static int asked(const baseline_entry *e, const void *arg)
{
    const cli_options *o = arg;
    int runner = !o->nrnns;
    for (int i = 0; i < o->nrnns; i++)
        runner |= !strcmp(o->rnns[i], e->runner);
    if (!runner)
        return 0;
    if (o->shape_given)
        return lstm_shape_equal(&o->shape, &e->shape);
    if (!o->shape_set)
        return 1;
    const runner_ops *r = registry_find(e->runner);
    const perf_shape_set *set = r ? perf_find_shape_set((lc_device)r->device, o->shape_set) : NULL;
    return set && lstm_shape_equal(&set->shape, &e->shape);
}

/* The file whose history is asked: --baseline-file, or this machine's in dir. */
static lc_status history_file(const cli_options *o, lc_device device, const char *dir, char *path, size_t n)
{
    lc_error err = {{0}};
    if (o->baseline_file) {
        if (o->baseline_dir)
            return cmd_fail(o, LC_BAD_INPUT, "give --baseline-file or --baseline-dir, not both");
        snprintf(path, n, "%s", o->baseline_file);
    } else {
        machine_key key;
        if (machine_key_current(device, &key, &err))
            return cmd_fail(o, LC_UNSUPPORTED, "%s", err.msg);
        if (baseline_path(dir, &key, path, n, &err))
            return cmd_fail(o, LC_BAD_INPUT, "%s", err.msg);
    }
    /* a link: its target's history (git knows the link itself), and no report over the target */
    char target[4096];
    if (path_link_target(path, target, sizeof target))
        snprintf(path, n, "%s", target);
    return LC_OK;
}

/* The table or the document on stdout, then the files. A file that cannot
 * be written is said on stderr alone: stdout holds one document already. */
static lc_status print_history(const cli_options *o, const history_result *h)
{
    lc_error err = {{0}};
    if (o->json && history_report_json(stdout, h) != 0)
        return LC_ERROR; /* said */
    if (!o->json)
        history_report_table(stdout, h);
    if (o->markdown_path && history_report_markdown(h, o->markdown_path, &err))
        return cmd_fail(NULL, LC_ERROR, "--markdown: %s", err.msg);
    if (o->plot_path && history_report_svg(h, o->plot_path, &err))
        return cmd_fail(NULL, LC_ERROR, "--plot: %s", err.msg);
    return LC_OK;
}

lc_status baseline_history(const cli_options *o, lc_device device, const char *dir)
{
    lc_error err = {{0}};
    char path[4096];
    lc_status rc = check_filters(o, &err);
    if (rc)
        return cmd_fail(o, rc, "%s", err.msg);
    if ((rc = history_file(o, device, dir, path, sizeof path)) ||
        (rc = baseline_reports_spare(o, path, "whose history is read")))
        return rc;
    history_result h;
    rc = history_read(path, asked, o, &h, &err);
    if (rc == LC_MISSING && !o->baseline_file)
        rc = cmd_fail(o, LC_UNSUPPORTED, "%s (this machine's file for %s), so no history; make one with: "
                      "lstmcheck baseline update --device %s", err.msg, lc_device_name(device),
                      lc_device_name(device));
    else if (rc)
        rc = cmd_fail(o, rc == LC_MISSING ? LC_BAD_INPUT : rc, "%s", err.msg);
    else
        rc = print_history(o, &h);
    history_free(&h);
    return rc;
}
