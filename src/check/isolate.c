/* One GPU runner, or plugin runner, per process (see isolate.h). */
#include "check/isolate.h"

#include "base/files.h"
#include "base/proc.h"

#include "device/device.h"
#include "runners/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How the child ended, when that is not a clean exit 0 with a result. */
static void child_failed(const proc_outcome *out, const lc_error *read_err, lc_error *err)
{
    char how[256];
    if (!out->started) {
        *err = *read_err;
    } else if (out->timed_out || out->signal) {
        lc_error_set(err, "its process %s", proc_outcome_text(out, how, sizeof how));
    } else if (out->exit_status != 0) {
        lc_error_set(err, "its process %s%s%s", proc_outcome_text(out, how, sizeof how),
                     read_err->msg[0] ? ": " : "", read_err->msg);
    } else {
        *err = *read_err;
        if (!err->msg[0])
            lc_error_set(err, "its process sent no result");
    }
}

/* isolate_run, with how the child ended in out. */
static int run_child(isolate_child_fn child, isolate_parent_fn parent, void *arg, proc_outcome *out,
                     lc_error *err)
{
    lc_error read_err = {{0}};
    if (!proc_fork(PROC_CHILD_WORK, child, parent, arg, out, &read_err))
        return 0;
    child_failed(out, &read_err, err);
    return 1;
}

int isolate_run(isolate_child_fn child, isolate_parent_fn parent, void *arg, lc_error *err)
{
    proc_outcome out;
    return run_child(child, parent, arg, &out, err);
}

static int isolation_off(void)
{
    const char *v = getenv("LSTMCHECK_ISOLATE");
    return v && !strcmp(v, "0");
}

int isolate_gpu_work(void)
{
    /* a process that has used CUDA cannot give the GPU to its children */
    return !isolation_off() && !device_cuda_used_here();
}

int isolate_runner(const runner_ops *r)
{
    if (r->device == LC_DEVICE_CUDA)
        return isolate_gpu_work();
    return (registry_origin(r) || (runner_roles(r) & ROLE_OWN_PROCESS)) && !isolation_off();
}

typedef struct gate_job {
    const runner_ops *r;
    numerics_context *c;
    const char *dump_dir;
    gate_report *rep;
} gate_job;

static int gate_child(void *arg, int fd)
{
    gate_job *j = arg;
    gate_run(j->r, j->c, j->dump_dir, j->rep);
    return fd_write_all(fd, j->rep, sizeof *j->rep);
}

static int gate_parent(void *arg, int fd, lc_error *err)
{
    gate_job *j = arg;
    if (fd_read_all(fd, j->rep, sizeof *j->rep)) {
        lc_error_set(err, "its process sent no gate report");
        return 1;
    }
    gate_report_received(j->rep);
    return 0;
}

int isolate_precheck(const runner_ops *r, const numerics_context *c, gate_report *rep)
{
    lc_error why = {{0}};
    const int avail = r->available(&why);
    if (avail == LC_OK && runner_supports_shape(r, &c->shape, c->lengths, &why) == LC_OK) {
        gate_report_start(rep, LC_OK);
        return 0;
    }
    gate_report_startf(rep, avail == LC_ERROR ? LC_ERROR : LC_UNSUPPORTED, "%s", why.msg);
    return 1;
}

lc_status isolate_gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                             gate_report *rep)
{
    if (isolate_precheck(r, c, rep))
        return rep->status;
    if (!isolate_runner(r))
        return gate_run(r, c, dump_dir, rep);
    const lstm_problem *p;
    const gate_expected *expected;
    lc_error err = {{0}};
    if (numerics_context_get(c, r, &p, &expected, &err)) {
        gate_report_startf(rep, LC_ERROR, "reference: %s", err.msg);
        return rep->status;
    }
    gate_job job = {r, c, dump_dir, rep};
    if (isolate_run(gate_child, gate_parent, &job, &err)) {
        const char *plugin = registry_origin(r);
        gate_report_startf(rep, LC_ERROR, "%s%s: %s", plugin ? "plugin " : "", plugin ? plugin : r->name, err.msg);
    }
    return rep->status;
}

/* What the loading child sends back: how plugin_load ended there. */
typedef struct plugin_probe {
    const char *path;
    lc_status status;
    lc_error err;
} plugin_probe;

static int plugin_child(void *arg, int fd)
{
    plugin_probe *pp = arg;
    pp->status = plugin_load(pp->path, &pp->err);
    /* available() is the one function of a runner that later runs in the
     * parent itself (list, the checks before a child is forked): once here
     * first, so that a crash in it refuses the plugin instead */
    const runner_ops *r;
    for (int i = 0; pp->status == LC_OK && (r = registry_runner(i)); i++) {
        lc_error why = {{0}};
        if (registry_origin(r) && !strcmp(registry_origin(r), pp->path))
            r->available(&why);
    }
    return fd_write_all(fd, &pp->status, sizeof pp->status) || fd_write_all(fd, &pp->err, sizeof pp->err);
}

static int plugin_parent(void *arg, int fd, lc_error *err)
{
    plugin_probe *pp = arg;
    if (fd_read_all(fd, &pp->status, sizeof pp->status) || fd_read_all(fd, &pp->err, sizeof pp->err)) {
        lc_error_set(err, "its process sent no result");
        return 1;
    }
    return 0;
}

lc_status isolate_plugin_load(const char *path, lc_error *err)
{
    const char *v = getenv("LSTMCHECK_ISOLATE");
    if (v && !strcmp(v, "0"))
        return plugin_load(path, err);
    plugin_probe pp = {.path = path};
    proc_outcome out;
    lc_error why = {{0}};
    if (run_child(plugin_child, plugin_parent, &pp, &out, &why)) {
        if (out.timed_out) /* a hang is refused as a crash is */
            lc_error_set(err, "plugin %s: did not finish loading: %s", path, why.msg);
        else
            lc_error_set(err, "plugin %s: crashed while loading (its initialization, or a runner's available()): %s",
                         path, why.msg);
        return LC_BAD_INPUT;
    }
    if (pp.status != LC_OK) {
        *err = pp.err;
        return pp.status;
    }
    return plugin_load(path, err);
}
