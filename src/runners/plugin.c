/* Runners from plugins (see plugin.h). */
#include "runners/plugin.h"

#include "device/device.h"
#include "base/proc.h"
#include "base/text.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PLUGIN_MAX_RUNNERS 32
/* How much of a runner's description is read: it is one line of `list`. */
#define PLUGIN_DESCRIPTION_MAX 200

/* A runner loaded from a plugin. lstmcheck registers `outer`, whose
 * functions (below) mark the call (proc_foreign_begin, base/proc.h: a
 * child's parent names the call that outlasts the child timeout, and what
 * it prints goes to stderr, not into a document on stdout), call the
 * plugin's and then make what it wrote safe to read: this is the boundary
 * where control enters and leaves a plugin's code,
 * and nothing above it (gate, isolation, harness, list) sees the plugin's
 * text unchecked. The plugin's own functions get `inner`: its table with
 * the name qualified, available() filled in and the strings bounded (the
 * self that create() is documented to get; its impl stays the plugin's). */
typedef struct plugin_runner {
    runner_ops outer; /* its impl is this plugin_runner */
    runner_ops inner;
    char name[LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    char description[PLUGIN_DESCRIPTION_MAX + 1];
} plugin_runner;

/* An instance of a plugin's runner: the functions after create() get only
 * the state, so it carries whose it is. */
typedef struct plugin_instance {
    const plugin_runner *runner;
    void *state;
} plugin_instance;

/* A description's control characters as spaces: its line breaks are
 * layout (list shows it on one line), not content to show escaped. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < ' ' || *s == '\x7f')
            *s = ' ';
}

/* A message or description (NUL-terminated, in size bytes) as one line
 * safe to print: control characters and invalid UTF-8 escaped, the way
 * lc_error_set does for lstmcheck's own messages. */
static void make_printable(char *s, size_t size)
{
    char raw[sizeof((lc_error *)0)->msg];
    _Static_assert(PLUGIN_DESCRIPTION_MAX < sizeof raw, "a description fits the copy");
    snprintf(raw, sizeof raw, "%s", s);
    text_printable(raw, s, size);
}

/* What a plugin's function left in lstmcheck's error: it may have filled
 * the buffer without a NUL (or with newlines, ESC, stray bytes), and every
 * caller prints it with %s. Terminated at the buffer's end and made
 * printable, once, here. */
static void plugin_returned(lc_error *err)
{
    err->msg[sizeof err->msg - 1] = '\0';
    make_printable(err->msg, sizeof err->msg);
}

/* A string a plugin points to, into dst of size bytes, reading at most
 * size characters of it (the plugin's string may have no end). 0 when it
 * fits; else 1, and dst holds its start. */
static int copy_bounded(char *dst, size_t size, const char *src)
{
    const size_t len = strnlen(src, size);
    const size_t kept = len < size ? len : size - 1;
    memcpy(dst, src, kept);
    dst[kept] = '\0';
    return len == size;
}

static int plugin_create(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    const plugin_runner *pr = self->impl;
    plugin_instance *in = calloc(1, sizeof *in);
    *state = NULL;
    if (!in) {
        lc_error_set(err, "%s: out of host memory", self->name);
        return LC_ERROR;
    }
    in->runner = pr;
    proc_foreign_begin("create()");
    const int rc = pr->inner.create(&pr->inner, p, &in->state, err);
    proc_foreign_end();
    plugin_returned(err);
    if (rc != LC_OK) {
        if (in->state) { /* what it made before it failed */
            proc_foreign_begin("destroy()");
            pr->inner.destroy(in->state);
            proc_foreign_end();
        }
        free(in);
        return rc;
    }
    *state = in;
    return rc;
}

/* The calls on an instance that take only its state: one shape for each. */
#define PLUGIN_STATE_CALL(fn)                                      \
    static int plugin_##fn(void *state, lc_error *err)             \
    {                                                              \
        const plugin_instance *in = state;                         \
        proc_foreign_begin(#fn "()");                              \
        const int rc = in->runner->inner.fn(in->state, err);       \
        proc_foreign_end();                                        \
        plugin_returned(err);                                      \
        return rc;                                                 \
    }
PLUGIN_STATE_CALL(forward)
PLUGIN_STATE_CALL(backward)
PLUGIN_STATE_CALL(zero_grads)

/* lstm_results has no text: only the error needs terminating */
static int plugin_read_results(void *state, lstm_results *r, lc_error *err)
{
    const plugin_instance *in = state;
    proc_foreign_begin("read_results()");
    const int rc = in->runner->inner.read_results(in->state, r, err);
    proc_foreign_end();
    plugin_returned(err);
    return rc;
}

static size_t plugin_peak_device_bytes(void *state)
{
    const plugin_instance *in = state;
    proc_foreign_begin("peak_device_bytes()");
    const size_t bytes = in->runner->inner.peak_device_bytes(in->state);
    proc_foreign_end();
    return bytes;
}

static void plugin_destroy(void *state)
{
    plugin_instance *in = state;
    proc_foreign_begin("destroy()");
    in->runner->inner.destroy(in->state);
    proc_foreign_end();
    free(in);
}

/* available() gets neither a table nor a state: each loaded runner has an
 * available() of its own, the one of its slot, which calls that runner's. */
static const plugin_runner *slot_runner[REGISTRY_MAX_LOADED];
static int slots_used;

static int available_in_slot(int slot, lc_error *why)
{
    proc_foreign_begin("available()");
    const int rc = slot_runner[slot]->inner.available(why);
    proc_foreign_end();
    plugin_returned(why);
    return rc;
}

#define SLOT_ROW 8 /* REGISTRY_MAX_LOADED slots, written as rows of this many */
#define SLOTS_OF_ROW(X, row) X(row, 0) X(row, 1) X(row, 2) X(row, 3) X(row, 4) X(row, 5) X(row, 6) X(row, 7)
#define EVERY_SLOT(X)                                                                                        \
    SLOTS_OF_ROW(X, 0) SLOTS_OF_ROW(X, 1) SLOTS_OF_ROW(X, 2) SLOTS_OF_ROW(X, 3) SLOTS_OF_ROW(X, 4)           \
    SLOTS_OF_ROW(X, 5) SLOTS_OF_ROW(X, 6) SLOTS_OF_ROW(X, 7)
#define SLOT_FUNCTION(row, col)                                                                              \
    static int available_slot_##row##_##col(lc_error *why) { return available_in_slot(SLOT_ROW * row + col, why); }
#define SLOT_ENTRY(row, col) available_slot_##row##_##col,
EVERY_SLOT(SLOT_FUNCTION)
static int (*const available_slot[])(lc_error *) = {EVERY_SLOT(SLOT_ENTRY)};
_Static_assert(sizeof available_slot / sizeof available_slot[0] == REGISTRY_MAX_LOADED,
               "one available() per runner that can be loaded");

/* The table lstmcheck registers for pr: the plugin's, its functions ours. */
static void wrap_runner(plugin_runner *pr, int slot)
{
    runner_ops *o = &pr->outer;
    *o = pr->inner;
    o->available = available_slot[slot];
    o->create = plugin_create;
    o->forward = plugin_forward;
    o->backward = pr->inner.backward ? plugin_backward : NULL;
    o->zero_grads = pr->inner.zero_grads ? plugin_zero_grads : NULL;
    o->read_results = plugin_read_results;
    o->peak_device_bytes = plugin_peak_device_bytes;
    o->destroy = plugin_destroy;
    o->impl = pr;
    slot_runner[slot] = pr;
}

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

/* [a-z0-9_]+ (the runner names' rule, without the plugin's prefix; it
 * reads no further than a qualified name can be long) */
static int plugin_name_ok(const char *name)
{
    return name && runner_name_valid(name) && !strchr(name, ':');
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
    proc_foreign_begin("dlopen (the plugin's initialization code)");
    *handle = dlopen(local, RTLD_NOW | RTLD_LOCAL);
    proc_foreign_end();
    if (!*handle) {
        const char *why = dlerror();
        lc_error_set(err, "plugin %s: cannot be loaded: %s", path, why ? why : "unknown reason");
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* The ABI versions this lstmcheck loads, with the sizes of their structs.
 * Each version appended fields to the one before, so a struct of an
 * earlier version is the start of ours: its runner table is copied as far
 * as it goes (the fields after it zero: model 0 is the plain LSTM), and
 * the problems and results we give it begin as it expects. */
typedef struct abi_version {
    uint32_t version;
    size_t runner_size, problem_size, results_size, error_size;
} abi_version;

static const abi_version abi_versions[] = {
    {1, offsetof(lstmcheck_runner, model), offsetof(lstmcheck_problem, model), offsetof(lstmcheck_results, model),
     sizeof(lstmcheck_error)},
    {LSTMCHECK_RUNNER_ABI_VERSION, sizeof(lstmcheck_runner), sizeof(lstmcheck_problem), sizeof(lstmcheck_results),
     sizeof(lstmcheck_error)},
};
_Static_assert(LSTMCHECK_RUNNER_ABI_VERSION == 2, "a new version adds its row to abi_versions");

static const abi_version *abi_version_of(uint32_t version)
{
    for (size_t i = 0; i < sizeof abi_versions / sizeof abi_versions[0]; i++)
        if (abi_versions[i].version == version)
            return &abi_versions[i];
    return NULL;
}

/* The sizes the plugin was built with against those of its version: equal,
 * or its copy of the header is not lstmcheck's of that version. */
static lc_status check_sizes(const lstmcheck_plugin *info, const abi_version *v, const char *path, lc_error *err)
{
    const struct {
        const char *type;
        uint32_t theirs;
        size_t ours;
    } sizes[] = {
        {"lstmcheck_runner", info->runner_size, v->runner_size},
        {"lstmcheck_problem", info->problem_size, v->problem_size},
        {"lstmcheck_results", info->results_size, v->results_size},
        {"lstmcheck_error", info->error_size, v->error_size},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].theirs != sizes[i].ours) {
            lc_error_set(err,
                         "plugin %s: its %s is %u bytes, ABI version %u's %zu: it was built against another "
                         "lstmcheck/runner.h of that version",
                         path, sizes[i].type, (unsigned)sizes[i].theirs, (unsigned)v->version, sizes[i].ours);
            return LC_BAD_INPUT;
        }
    }
    return LC_OK;
}

/* The version first: nothing else of a plugin of another version is read,
 * since its layout may differ. */
static lc_status check_abi(void *handle, const char *path, const lstmcheck_plugin **info, const abi_version **v,
                           lc_error *err)
{
    const uint32_t *version = dlsym(handle, LSTMCHECK_PLUGIN_ABI_SYMBOL);
    if (!version) {
        lc_error_set(err, "plugin %s: no symbol %s: not an lstmcheck plugin (end it with LSTMCHECK_PLUGIN(...) "
                          "from lstmcheck/runner.h)", path, LSTMCHECK_PLUGIN_ABI_SYMBOL);
        return LC_BAD_INPUT;
    }
    if (!(*v = abi_version_of(*version))) {
        lc_error_set(err, "plugin %s: built against runner ABI version %u, this lstmcheck loads versions %u to %d: "
                          "rebuild it against this lstmcheck's lstmcheck/runner.h",
                     path, (unsigned)*version, (unsigned)abi_versions[0].version, LSTMCHECK_RUNNER_ABI_VERSION);
        return LC_BAD_INPUT;
    }
    *info = dlsym(handle, LSTMCHECK_PLUGIN_INFO_SYMBOL);
    if (!*info) {
        lc_error_set(err, "plugin %s: no symbol %s (LSTMCHECK_PLUGIN(...) from lstmcheck/runner.h defines it)",
                     path, LSTMCHECK_PLUGIN_INFO_SYMBOL);
        return LC_BAD_INPUT;
    }
    if (check_sizes(*info, *v, path, err))
        return LC_BAD_INPUT;
    if (!plugin_name_ok((*info)->name)) {
        lc_error_set(err, "plugin %s: its name '%.*s' is not made of [a-z0-9_] or longer than %d characters", path,
                     LSTMCHECK_QUALIFIED_NAME_MAX, (*info)->name ? (*info)->name : "(NULL)",
                     LSTMCHECK_QUALIFIED_NAME_MAX);
        return LC_BAD_INPUT;
    }
    if (!(*info)->runners) {
        lc_error_set(err, "plugin %s: its runner table is NULL", path);
        return LC_BAD_INPUT;
    }
    return LC_OK;
}

/* Runner #index of the plugin (theirs) into pr->inner: its strings copied
 * into pr, bounded, and available() filled in where the ABI lets a plugin
 * leave it out. */
static lc_status take_runner(plugin_runner *pr, const runner_ops *theirs, const abi_version *v, int index,
                             const char *path, lc_error *err)
{
    memset(&pr->inner, 0, sizeof pr->inner);
    memcpy(&pr->inner, theirs, v->runner_size); /* as far as its version's table goes */
    if (theirs->name) {
        if (copy_bounded(pr->name, sizeof pr->name, theirs->name)) {
            lc_error_set(err, "plugin %s: runner #%d's name is longer than %d characters", path, index,
                         LSTMCHECK_QUALIFIED_NAME_MAX);
            return LC_BAD_INPUT;
        }
        pr->inner.name = pr->name;
    }
    if (theirs->description) {
        copy_bounded(pr->description, sizeof pr->description, theirs->description); /* a longer one is cut */
        one_line(pr->description);
        make_printable(pr->description, sizeof pr->description); /* C1, stray bytes */
        pr->inner.description = pr->description;
    }
    if (!pr->inner.available)
        pr->inner.available = pr->inner.device == LSTMCHECK_CUDA ? plugin_cuda_available : plugin_cpu_available;
    return LC_OK;
}

/* Copies of the plugin's runner tables, completed and checked as the
 * built-in table is: every required function there, a valid name and
 * device. */
static lc_status copy_runners(const lstmcheck_plugin *info, const abi_version *v, const char *path,
                              plugin_runner **copies, int *n, lc_error *err)
{
    int count = 0;
    while (count <= PLUGIN_MAX_RUNNERS && info->runners[count])
        count++;
    if (count > PLUGIN_MAX_RUNNERS) {
        lc_error_set(err, "plugin %s: more than %d runners (or a runner table without its NULL end)", path,
                     PLUGIN_MAX_RUNNERS);
        return LC_BAD_INPUT;
    }
    *copies = calloc(count ? (size_t)count : 1, sizeof **copies);
    if (!*copies) {
        lc_error_set(err, "plugin %s: out of host memory", path);
        return LC_ERROR;
    }
    const runner_ops *table[PLUGIN_MAX_RUNNERS + 1] = {NULL};
    lc_status rc = LC_OK;
    for (int i = 0; i < count && !rc; i++) {
        rc = take_runner(&(*copies)[i], info->runners[i], v, i, path, err);
        table[i] = &(*copies)[i].inner;
    }
    lc_error why = {{0}};
    if (!rc && registry_validate(table, &why)) {
        lc_error_set(err, "plugin %s: %s", path, why.msg);
        rc = LC_BAD_INPUT;
    }
    if (rc) {
        free(*copies);
        return rc;
    }
    *n = count;
    return LC_OK;
}

/* Name every copy <plugin>:<runner> and register its wrapped table, after
 * checking that every name fits and is free and that there are slots for
 * them all (so that a refusal registers nothing). */
static lc_status register_runners(plugin_runner *copies, int n, const char *plugin, const char *path,
                                  lc_error *err)
{
    char names[PLUGIN_MAX_RUNNERS][LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    if (slots_used + n > REGISTRY_MAX_LOADED) {
        lc_error_set(err, "plugin %s: more than %d runners from plugins", path, REGISTRY_MAX_LOADED);
        return LC_BAD_INPUT;
    }
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
    if (!origin) {
        lc_error_set(err, "plugin %s: out of host memory", path);
        return LC_ERROR;
    }
    for (int i = 0; i < n; i++) {
        lc_error why = {{0}};
        memcpy(copies[i].name, names[i], sizeof copies[i].name);
        wrap_runner(&copies[i], slots_used++);
        if (registry_add(&copies[i].outer, origin, &why)) {
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
    const abi_version *version = NULL;
    plugin_runner *copies = NULL;
    int n = 0;
    lc_status rc = open_library(path, &handle, err);
    if (!rc)
        rc = check_abi(handle, path, &info, &version, err);
    if (!rc)
        rc = copy_runners(info, version, path, &copies, &n, err);
    if (!rc && (rc = register_runners(copies, n, info->name, path, err)) == LC_BAD_INPUT)
        free(copies); /* refused before anything was registered */
    if (rc == LC_BAD_INPUT && handle)
        dlclose(handle);
    return rc;
}
