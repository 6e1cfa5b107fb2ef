/* Calls into a plugin's code (see plugin_call.h). */
#include "runners/plugin_call.h"

#include "base/proc.h"

#include <dlfcn.h>
#include <stdlib.h>

/* The runners wrapped so far: inner[i] is called through outer[i]. */
static const runner_ops *inner_of[PLUGIN_CALL_MAX_RUNNERS];
static const runner_ops *outer_of[PLUGIN_CALL_MAX_RUNNERS];
static int nwrapped;

/* An instance of a plugin's runner: the plugin's state, and whose it is. */
typedef struct plugin_instance {
    const runner_ops *inner;
    void *state;
} plugin_instance;

/* available() has no argument that says which runner is asked: one
 * trampoline per runner, made by the preprocessor (8 x 8). */
static int call_available(int i, lc_error *why)
{
    proc_foreign_begin("available()");
    const int rc = inner_of[i]->available(why);
    proc_foreign_end();
    return rc;
}

#define EIGHT(M, hi) M(hi, 0) M(hi, 1) M(hi, 2) M(hi, 3) M(hi, 4) M(hi, 5) M(hi, 6) M(hi, 7)
#define SIXTY_FOUR(M) EIGHT(M, 0) EIGHT(M, 1) EIGHT(M, 2) EIGHT(M, 3) EIGHT(M, 4) EIGHT(M, 5) EIGHT(M, 6) EIGHT(M, 7)
#define AVAILABLE_TRAMPOLINE(hi, lo) \
    static int available_##hi##lo(lc_error *why) { return call_available(8 * hi + lo, why); }
#define AVAILABLE_ENTRY(hi, lo) available_##hi##lo,
SIXTY_FOUR(AVAILABLE_TRAMPOLINE)
static int (*const available_trampolines[])(lc_error *) = {SIXTY_FOUR(AVAILABLE_ENTRY)};
_Static_assert(sizeof available_trampolines / sizeof available_trampolines[0] == PLUGIN_CALL_MAX_RUNNERS,
               "one available() trampoline per runner a plugin may bring");

static int call_create(const runner_ops *self, const lstm_problem *p, void **state, lc_error *err)
{
    *state = NULL;
    const runner_ops *inner = NULL;
    for (int i = 0; i < nwrapped && !inner; i++)
        inner = outer_of[i] == self ? inner_of[i] : NULL;
    if (!inner) {
        lc_error_set(err, "%s: not the table lstmcheck registered for this plugin runner", self->name);
        return LC_ERROR;
    }
    plugin_instance *in = calloc(1, sizeof *in);
    if (!in) {
        lc_error_set(err, "out of host memory");
        return LC_ERROR;
    }
    in->inner = inner;
    proc_foreign_begin("create()");
    const int rc = inner->create(inner, p, &in->state, err);
    proc_foreign_end();
    if (in->state)
        *state = in; /* destroyed even after a failed create, as any runner's state */
    else
        free(in);
    return rc;
}

/* The calls on an instance: the same trampoline for each. */
#define STATE_CALL(fn)                                          \
    static int call_##fn(void *state, lc_error *err)            \
    {                                                           \
        plugin_instance *in = state;                            \
        proc_foreign_begin(#fn "()");                           \
        const int rc = in->inner->fn(in->state, err);           \
        proc_foreign_end();                                     \
        return rc;                                              \
    }
STATE_CALL(forward)
STATE_CALL(backward)
STATE_CALL(zero_grads)

static int call_read_results(void *state, lstm_results *r, lc_error *err)
{
    plugin_instance *in = state;
    proc_foreign_begin("read_results()");
    const int rc = in->inner->read_results(in->state, r, err);
    proc_foreign_end();
    return rc;
}

static size_t call_peak_device_bytes(void *state)
{
    plugin_instance *in = state;
    proc_foreign_begin("peak_device_bytes()");
    const size_t bytes = in->inner->peak_device_bytes(in->state);
    proc_foreign_end();
    return bytes;
}

static void call_destroy(void *state)
{
    plugin_instance *in = state;
    proc_foreign_begin("destroy()");
    in->inner->destroy(in->state);
    proc_foreign_end();
    free(in);
}

lc_status plugin_call_wrap(const runner_ops *inner, runner_ops *outer, lc_error *err)
{
    if (nwrapped == PLUGIN_CALL_MAX_RUNNERS) {
        lc_error_set(err, "more than %d runners from plugins", PLUGIN_CALL_MAX_RUNNERS);
        return LC_BAD_INPUT;
    }
    *outer = *inner;
    outer->available = available_trampolines[nwrapped];
    outer->create = call_create;
    outer->forward = call_forward;
    outer->backward = inner->backward ? call_backward : NULL; /* optional without LSTMCHECK_BACKWARD */
    outer->zero_grads = inner->zero_grads ? call_zero_grads : NULL;
    outer->read_results = call_read_results;
    outer->peak_device_bytes = call_peak_device_bytes;
    outer->destroy = call_destroy;
    inner_of[nwrapped] = inner;
    outer_of[nwrapped] = outer;
    nwrapped++;
    return LC_OK;
}

void *plugin_call_dlopen(const char *path, int flags)
{
    proc_foreign_begin("dlopen (the plugin's initialization code)");
    void *handle = dlopen(path, flags);
    proc_foreign_end();
    return handle;
}
