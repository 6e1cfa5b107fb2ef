/* Every call lstmcheck makes into a plugin's code goes through here. The
 * table registered for a plugin's runner holds trampolines: each marks the
 * call (proc_foreign_begin, base/proc.h: in a child, its parent names the
 * call that outlasted the child timeout, "forward()"; in lstmcheck's own
 * process, what the call prints goes to stderr, not into a document on
 * stdout) and calls the plugin's own function. */
#ifndef LSTMCHECK_PLUGIN_CALL_H
#define LSTMCHECK_PLUGIN_CALL_H

#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As many runners as the registry takes from plugins (registry.c). */
#define PLUGIN_CALL_MAX_RUNNERS 64

/* outer becomes inner (the plugin's table as lstmcheck completed and named
 * it) with trampolines to inner's functions; create() gets inner as self.
 * inner and outer must live as long as the process. LC_OK, or LC_BAD_INPUT
 * past PLUGIN_CALL_MAX_RUNNERS. */
lc_status plugin_call_wrap(const runner_ops *inner, runner_ops *outer, lc_error *err);

/* dlopen(path, flags), marked as a call into the plugin: its
 * initialization code runs. */
void *plugin_call_dlopen(const char *path, int flags);

#ifdef __cplusplus
}
#endif
#endif
