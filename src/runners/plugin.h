/* Runners from outside: a shared library built against the runner ABI
 * (include/lstmcheck/runner.h) is opened with dlopen, its ABI version and
 * description are checked, and its runners join the registry under the
 * names <plugin>:<runner>. From then on they are runners like the built-in
 * ones: gated first, then timed, their baselines keyed by that name.
 * What is registered is lstmcheck's table around the plugin's: its
 * functions call the plugin's and end whatever error message it wrote
 * within the buffer, on one line, before anyone reads it; its name and
 * description are bounded copies. Plugins are never unloaded: their tables
 * and code stay for the process. */
#ifndef LSTMCHECK_PLUGIN_H
#define LSTMCHECK_PLUGIN_H

#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Load the plugin at path (a path without '/' is taken in the current
 * folder) and register its runners. LC_OK; else LC_BAD_INPUT with a
 * one-line err that names the file: it cannot be opened, lacks a symbol,
 * was built for another ABI version or another copy of the header, or
 * describes a runner that is incomplete (a NULL function, no name, ...).
 * This runs the plugin's own initialization code in this process:
 * check/isolate.h loads it in a child first, so that a crash or a hang
 * there is an error, not the end of lstmcheck. The registered runners call
 * the plugin through wrappers (plugin.c) that mark each call for the
 * child timeout and stdout (base/proc.h) and terminate what it wrote. */
lc_status plugin_load(const char *path, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
