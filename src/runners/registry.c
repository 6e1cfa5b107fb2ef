/* The runner table, made from the roster (runners/runners.def), the
 * runners loaded from plugins (runners/plugin.h), and their checks. */
#include "runners/runner.h"

#include <stdio.h>
#include <string.h>

/* the runner ABI's device values are lc_device's */
_Static_assert(LSTMCHECK_CPU == (int)LC_DEVICE_CPU && LSTMCHECK_CUDA == (int)LC_DEVICE_CUDA && LC_DEVICE_COUNT == 2,
               "include/lstmcheck/runner.h's devices must be src/device/device.h's");

/* every ops table of the roster, cuda ones included (declared, used only
 * where CUDA is built) */
#define LSTM_RUNNER(name, device, model, roles) extern const runner_ops runner_##name##_ops;
#include "runners/runners.def"
#undef LSTM_RUNNER

/* the runners of this build: cpu always, cuda with CUDA */
#define IN_BUILD_cpu(...) __VA_ARGS__
#ifdef LSTMCHECK_WITH_CUDA
#define IN_BUILD_cuda(...) __VA_ARGS__
#else
#define IN_BUILD_cuda(...)
#endif

const runner_ops *const lstm_runners[] = {
#define LSTM_RUNNER(name, device, model, roles) IN_BUILD_##device(&runner_##name##_ops, )
#include "runners/runners.def"
#undef LSTM_RUNNER
    NULL,
};

/* the model of each, as the roster says (their tables must say the same) */
static const int runner_model_table[] = {
#define LSTM_RUNNER(name, device, model, roles) IN_BUILD_##device(RUNNER_MODEL_OF(name), )
#include "runners/runners.def"
#undef LSTM_RUNNER
    0,
};

static const unsigned runner_role_table[] = {
#define LSTM_RUNNER(name, device, model, roles) IN_BUILD_##device(roles, )
#include "runners/runners.def"
#undef LSTM_RUNNER
    0,
};

/* Runners loaded from plugins, in load order: tables that live as long as
 * the process (a plugin is never unloaded). */
static struct {
    const runner_ops *runner;
    const char *origin;
} added[REGISTRY_MAX_LOADED];
static int nadded;

lc_status registry_add(const runner_ops *r, const char *origin, lc_error *err)
{
    if (registry_find(r->name)) {
        lc_error_set(err, "a runner named '%s' is already loaded", r->name);
        return LC_BAD_INPUT;
    }
    if (nadded == REGISTRY_MAX_LOADED) {
        lc_error_set(err, "more than %d runners from plugins", REGISTRY_MAX_LOADED);
        return LC_BAD_INPUT;
    }
    added[nadded].runner = r;
    added[nadded].origin = origin;
    nadded++;
    return LC_OK;
}

const char *registry_origin(const runner_ops *r)
{
    for (int i = 0; i < nadded; i++)
        if (added[i].runner == r)
            return added[i].origin;
    return NULL;
}

const runner_ops *registry_runner(int i)
{
    int nbuilt = 0;
    while (lstm_runners[nbuilt])
        nbuilt++;
    return i < nbuilt ? lstm_runners[i] : i - nbuilt < nadded ? added[i - nbuilt].runner : NULL;
}

const runner_ops *registry_default_runner(int i)
{
    if (nadded)
        return i < nadded ? added[i].runner : NULL;
    return lstm_runners[i];
}

unsigned runner_roles(const runner_ops *r)
{
    for (int i = 0; lstm_runners[i]; i++)
        if (lstm_runners[i] == r)
            return runner_role_table[i];
    /* a plugin's runners are what its user came to check and time: in
     * every group they can take, and in the perf matrix */
    if (registry_origin(r))
        return ROLE_LSTM_GROUP | ROLE_PERF | ((r->caps & RUNNER_VARLEN) ? ROLE_VL_GROUP : 0);
    return 0;
}

const runner_ops *registry_find(const char *name)
{
    for (int i = 0; lstm_runners[i]; i++)
        if (strcmp(lstm_runners[i]->name, name) == 0)
            return lstm_runners[i];
    for (int i = 0; i < nadded; i++)
        if (strcmp(added[i].runner->name, name) == 0)
            return added[i].runner;
    return NULL;
}

/* The length of the [a-z0-9_] run that s starts with (0: none). */
static size_t name_part(const char *s)
{
    size_t n = 0;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
        n++;
    return n;
}

int runner_name_valid(const char *name)
{
    if (strnlen(name, LSTMCHECK_QUALIFIED_NAME_MAX + 1) > LSTMCHECK_QUALIFIED_NAME_MAX)
        return 0;
    const size_t plugin = name_part(name);
    if (plugin == 0)
        return 0;
    if (name[plugin] == '\0')
        return 1;
    const size_t runner = name[plugin] == ':' ? name_part(name + plugin + 1) : 0;
    return runner > 0 && name[plugin + 1 + runner] == '\0';
}

int registry_validate(const runner_ops *const *table, lc_error *err)
{
    int n = 0;
    for (; table[n]; n++) {
        const runner_ops *r = table[n];
        const char *missing = NULL;
        if (!r->name || !r->name[0]) missing = "name";
        else if ((unsigned)r->device >= LC_DEVICE_COUNT) missing = "device (cpu or cuda)";
        else if (!r->description || !r->description[0]) missing = "description";
        else if (!r->available) missing = "available()";
        else if (!r->create) missing = "create()";
        else if (!r->forward) missing = "forward()";
        else if ((r->caps & RUNNER_BACKWARD) && !r->backward) missing = "backward() (it claims backward)";
        else if ((r->caps & RUNNER_BACKWARD) && !r->zero_grads) missing = "zero_grads() (it claims backward)";
        else if (!r->read_results) missing = "read_results()";
        else if (!r->peak_device_bytes) missing = "peak_device_bytes()";
        else if (!r->destroy) missing = "destroy()";
        else if (r->max_layers < 0) missing = "max_layers >= 0";
        else if (!(r->caps & RUNNER_MULTILAYER) && r->max_layers != 1 && r->max_layers != 0) missing = "consistent max_layers";
        if (missing) {
            lc_error_set(err, "runner #%d (%s) lacks %s", n, r->name ? r->name : "unnamed", missing);
            return 1;
        }
        if (r->caps & ~(unsigned)RUNNER_KNOWN_CAPS) {
            lc_error_set(err, "runner #%d (%s) has caps 0x%x, which this lstmcheck does not know (a newer header's?)",
                         n, r->name, r->caps & ~(unsigned)RUNNER_KNOWN_CAPS);
            return 1;
        }
        if (!lstm_model_get(r->model)) {
            char models[256];
            lc_error_set(err, "runner #%d (%s) names model %d, which this lstmcheck does not have (its models: %s)", n,
                         r->name, r->model, lstm_model_list(models, sizeof models));
            return 1;
        }
        if ((r->caps & RUNNER_OWN_MASK) && !(lstm_model_get(r->model)->dropout > 0)) {
            lc_error_set(err, "runner #%d (%s) says LSTMCHECK_OWN_MASK, which only a dropout model's runner can: "
                         "its model %s has no mask", n, r->name, lstm_model_name(r->model));
            return 1;
        }
        if ((r->caps & RUNNER_OWN_MASK) && (r->caps & RUNNER_STATE_ONLY)) {
            lc_error_set(err, "runner #%d (%s) says LSTMCHECK_OWN_MASK and LSTMCHECK_STATE_ONLY: a runner with its "
                         "own mask returns y, where its mask shows (docs/plugins.md)", n, r->name);
            return 1;
        }
        /* a table's names are unqualified: a plugin's get their prefix later */
        if (strchr(r->name, ':') || !runner_name_valid(r->name)) {
            if (strlen(r->name) > LSTMCHECK_QUALIFIED_NAME_MAX)
                lc_error_set(err, "runner name '%s' is longer than %d characters", r->name,
                             LSTMCHECK_QUALIFIED_NAME_MAX);
            else
                lc_error_set(err, "runner name '%s' has a character outside [a-z0-9_]", r->name);
            return 1;
        }
        for (int j = 0; j < n; j++) {
            if (strcmp(table[j]->name, r->name) == 0) {
                lc_error_set(err, "runner name '%s' appears twice", r->name);
                return 1;
            }
        }
    }
    /* the built-in tables set .model = RUNNER_MODEL_OF(name): one that
     * forgot is taken for the plain LSTM (0) */
    for (int i = 0; table == lstm_runners && i < n; i++) {
        if (table[i]->model != runner_model_table[i]) {
            lc_error_set(err, "runner '%s' computes model %s by its table, %s by the roster (runners.def): "
                              "its table should say .model = RUNNER_MODEL_OF(%s)", table[i]->name,
                         lstm_model_name(table[i]->model), lstm_model_name(runner_model_table[i]), table[i]->name);
            return 1;
        }
    }
    if (n == 0) {
        lc_error_set(err, "the runner table is empty");
        return 1;
    }
    return 0;
}

int runner_checked_model(const runner_ops *r)
{
    return (r->caps & RUNNER_OWN_MASK) ? MODEL_LSTM : r->model;
}

int runner_timing_unchecked(const runner_ops *r, const lstm_shape *s, char *buf, size_t n)
{
    const lstm_model *m = lstm_model_get(r->model);
    if (n)
        buf[0] = '\0';
    if (!(r->caps & RUNNER_OWN_MASK) || !m || s->num_layers < 2)
        return 0;
    snprintf(buf, n, "dropout p=%g with its own mask: unchecked at p > 0 (checked at p = 0)", m->dropout);
    return 1;
}

int runner_supports_shape(const runner_ops *r, const lstm_shape *s, const int *lengths, lc_error *why)
{
    if (s->num_layers > 1 && !(r->caps & RUNNER_MULTILAYER)) {
        lc_error_set(why, "%s runs one layer only (numLayers=%d)", r->name, s->num_layers);
        return LC_UNSUPPORTED;
    }
    if (r->max_layers > 0 && s->num_layers > r->max_layers) {
        lc_error_set(why, "%s runs at most %d layers (numLayers=%d)", r->name, r->max_layers,
                     s->num_layers);
        return LC_UNSUPPORTED;
    }
    if (lengths && !(r->caps & RUNNER_VARLEN)) {
        lc_error_set(why, "%s takes no variable-length batches", r->name);
        return LC_UNSUPPORTED;
    }
    const lstm_model *m = lstm_model_get(r->model);
    if (m && (s->input_size < m->min_input_size || s->hidden_size < m->min_hidden_size)) {
        lc_error_set(why, "the %s model is checked at inputSize >= %d and hiddenSize >= %d (here %d and %d): %s",
                     m->name, m->min_input_size, m->min_hidden_size, s->input_size, s->hidden_size,
                     m->outside_domain_why);
        return LC_UNSUPPORTED;
    }
    return LC_OK;
}
