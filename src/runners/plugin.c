/* Runners from plugins (see plugin.h). */
#include "runners/plugin.h"

#include "device/device.h"
#include "runners/plugin_call.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PLUGIN_MAX_RUNNERS 32

/* available() for a plugin runner that brings none: a CPU runner runs
 * anywhere; a CUDA runner where lstmcheck's own probe (run in a child, so
 * that this process stays free of CUDA) found a usable device. */
static int plugin_cpu_available(lc_error *why)
{
    (void)why;
    return LC_OK;
}

static int plugin_cuda_available(lc_error *why)
{
    switch (device_cuda_probe(why)) {
    case DEVICE_CUDA_READY: return LC_OK;
    case DEVICE_CUDA_BROKEN: return LC_ERROR; /* a broken GPU fails, it does not skip */
    default: return LC_UNSUPPORTED;
    }
}

static int plugin_name_ok(const char *name)
{
    if (!name || !*name)
        return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    return 1;
}

static lc_status open_library(const char *path, void **handle, lc_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        lc_error_set(err, "plugin %s: %s", path, strerror(errno));
        return LC_BAD_INPUT;
    }
    if (!S_ISREG(st.st_mode)) {
        lc_error_set(err, "plugin %s: not a file", path);
        return LC_BAD_INPUT;
    }
    /* dlopen searches the library path for a bare name; the user meant
     * the file they named */
    char local[4096];
    snprintf(local, sizeof local, "%s%s", strchr(path, '/') ? "" : "./", path);
    *handle = plugin_call_dlopen(local, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        const char *why = dlerror();
        lc_error_set(err, "plugin %s: cannot be loaded: %s", path, why ? why : "unknown reason");
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* The sizes the plugin was built with against ours: equal, or its copy of
 * the header is not ours although the version numbers agree. */
static lc_status check_sizes(const lstmcheck_plugin *info, const char *path, lc_error *err)
{
    const struct {
        const char *type;
        uint32_t theirs;
        size_t ours;
    } sizes[] = {
        {"lstmcheck_runner", info->runner_size, sizeof(lstmcheck_runner)},
        {"lstmcheck_problem", info->problem_size, sizeof(lstmcheck_problem)},
        {"lstmcheck_results", info->results_size, sizeof(lstmcheck_results)},
        {"lstmcheck_error", info->error_size, sizeof(lstmcheck_error)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].theirs != sizes[i].ours) {
            lc_error_set(err,
                         "plugin %s: its %s is %u bytes, this lstmcheck's %zu: it was built against another "
                         "lstmcheck/runner.h of the same ABI version %d",
                         path, sizes[i].type, (unsigned)sizes[i].theirs, sizes[i].ours,
                         LSTMCHECK_RUNNER_ABI_VERSION);
            return LC_BAD_INPUT;
        }
    }
    return LC_OK;
}

/* The version first: nothing else of a plugin of another version is read,
 * since its layout may differ. */
static lc_status check_abi(void *handle, const char *path, const lstmcheck_plugin **info, lc_error *err)
{
    const uint32_t *version = dlsym(handle, LSTMCHECK_PLUGIN_ABI_SYMBOL);
    if (!version) {
        lc_error_set(err, "plugin %s: no symbol %s: not an lstmcheck plugin (end it with LSTMCHECK_PLUGIN(...) "
                          "from lstmcheck/runner.h)", path, LSTMCHECK_PLUGIN_ABI_SYMBOL);
        return LC_BAD_INPUT;
    }
    if (*version != LSTMCHECK_RUNNER_ABI_VERSION) {
        lc_error_set(err, "plugin %s: built against runner ABI version %u, this lstmcheck loads version %d: "
                          "rebuild it against this lstmcheck's lstmcheck/runner.h",
                     path, (unsigned)*version, LSTMCHECK_RUNNER_ABI_VERSION);
        return LC_BAD_INPUT;
    }
    *info = dlsym(handle, LSTMCHECK_PLUGIN_INFO_SYMBOL);
    if (!*info) {
        lc_error_set(err, "plugin %s: no symbol %s (LSTMCHECK_PLUGIN(...) from lstmcheck/runner.h defines it)",
                     path, LSTMCHECK_PLUGIN_INFO_SYMBOL);
        return LC_BAD_INPUT;
    }
    if (check_sizes(*info, path, err))
        return LC_BAD_INPUT;
    if (!plugin_name_ok((*info)->name)) {
        lc_error_set(err, "plugin %s: its name '%s' is not made of [a-z0-9_]", path,
                     (*info)->name ? (*info)->name : "(NULL)");
        return LC_BAD_INPUT;
    }
    if (!(*info)->runners) {
        lc_error_set(err, "plugin %s: its runner table is NULL", path);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* Copies of the plugin's runner tables, completed where the ABI lets a
 * plugin leave something out (available) and checked as the built-in
 * table is: every required function there, a valid name and device. */
static lc_status copy_runners(const lstmcheck_plugin *info, const char *path, runner_ops **copies, int *n,
                              lc_error *err)
{
    int count = 0;
    while (count <= PLUGIN_MAX_RUNNERS && info->runners[count])
        count++;
    if (count > PLUGIN_MAX_RUNNERS) {
        lc_error_set(err, "plugin %s: more than %d runners (or a runner table without its NULL end)", path,
                     PLUGIN_MAX_RUNNERS);
        return LC_BAD_INPUT;
    }
    *copies = calloc((size_t)count + 1, sizeof **copies);
    if (!*copies) {
        lc_error_set(err, "plugin %s: out of host memory", path);
        return LC_ERROR;
    }
    const runner_ops *table[PLUGIN_MAX_RUNNERS + 1] = {NULL};
    for (int i = 0; i < count; i++) {
        runner_ops *c = &(*copies)[i];
        *c = *info->runners[i];
        if (!c->available)
            c->available = c->device == LSTMCHECK_CUDA ? plugin_cuda_available : plugin_cpu_available;
        table[i] = c;
    }
    lc_error why = {{0}};
    if (registry_validate(table, &why)) {
        lc_error_set(err, "plugin %s: %s", path, why.msg);
        free(*copies);
        return LC_BAD_INPUT;
    }
    *n = count;
    return LC_OK;
}

/* Name every copy <plugin>:<runner> and register it behind trampolines
 * (plugin_call.h), after checking that every name fits and is free (so
 * that a refusal registers nothing). */
static lc_status register_runners(runner_ops *copies, int n, const char *plugin, const char *path,
                                  lc_error *err)
{
    char names[PLUGIN_MAX_RUNNERS][LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(plugin) + 1 + strlen(copies[i].name);
        if (len > LSTMCHECK_QUALIFIED_NAME_MAX) {
            lc_error_set(err, "plugin %s: '%s:%s' is longer than %d characters", path, plugin, copies[i].name,
                         LSTMCHECK_QUALIFIED_NAME_MAX);
            return LC_BAD_INPUT;
        }
        snprintf(names[i], sizeof names[i], "%s:%s", plugin, copies[i].name);
        if (registry_find(names[i])) {
            lc_error_set(err, "plugin %s: a runner named '%s' is already loaded (another plugin named '%s')",
                         path, names[i], plugin);
            return LC_BAD_INPUT;
        }
    }
    char *origin = strdup(path);
    runner_ops *wrapped = calloc((size_t)n, sizeof *wrapped);
    for (int i = 0; i < n; i++) {
        lc_error why = {{0}};
        if (!origin || !wrapped || !(copies[i].name = strdup(names[i]))) {
            lc_error_set(err, "plugin %s: out of host memory", path);
            return LC_ERROR;
        }
        if (plugin_call_wrap(&copies[i], &wrapped[i], &why) || registry_add(&wrapped[i], origin, &why)) {
            lc_error_set(err, "plugin %s: %s", path, why.msg);
            return LC_ERROR; /* some of its runners are registered: the command must stop */
        }
    }
    return LC_OK;
}

lc_status plugin_load(const char *path, lc_error *err)
{
    void *handle = NULL;
    const lstmcheck_plugin *info = NULL;
    runner_ops *copies = NULL;
    int n = 0;
    lc_status rc = open_library(path, &handle, err);
    if (!rc)
        rc = check_abi(handle, path, &info, err);
    if (!rc)
        rc = copy_runners(info, path, &copies, &n, err);
    if (!rc && (rc = register_runners(copies, n, info->name, path, err)) == LC_BAD_INPUT)
        free(copies); /* refused before anything was registered */
    if (rc == LC_BAD_INPUT && handle)
        dlclose(handle);
    return rc;
}
