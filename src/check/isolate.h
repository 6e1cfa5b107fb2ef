/* One GPU runner per process. A kernel fault leaves a sticky CUDA error
 * that no call can clear: every later CUDA call of that process fails. So
 * `check` and `bench` run each GPU runner in a forked child of a process
 * that has made no CUDA call itself (the probe runs in a child too, see
 * device.h); a fault fails only the runner that caused it. The child gets
 * the parent's memory (inputs, reference) for free and sends its result
 * back through a pipe. Runners from plugins (runners/plugin.h) run in
 * children too, on every device: their code is not ours, and a crash of
 * it must be that runner's error, not the end of lstmcheck. */
#ifndef LSTMCHECK_ISOLATE_H
#define LSTMCHECK_ISOLATE_H

#include <stddef.h>

#include "base/proc.h"
#include "check/gate.h"
#include "runners/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In the child: do the work and write the result to fd (0 on success). */
typedef proc_child_fn isolate_child_fn;
/* In the parent: read the child's result from fd (0 on success). */
typedef proc_parent_fn isolate_parent_fn;

/* Fork (proc_fork's PROC_CHILD_WORK: the child dies with this process, its
 * stdout goes to stderr, and a call into a plugin that outlasts the child
 * timeout kills it), run child() there and parent() here. 0 when both
 * succeeded; else err says what went wrong, including how the child ended
 * (its exit status, the signal that killed it, or the call it timed out
 * in: "its process timed out after 2 s in forward() and was killed"). */
int isolate_run(isolate_child_fn child, isolate_parent_fn parent, void *arg, lc_error *err);

/* 1 when r should run in a child of this process: a GPU runner while CUDA
 * is not yet used by this process itself, a plugin's CPU runner, or one the
 * roster gives a process of its own (ROLE_OWN_PROCESS: onednn, whose OpenMP
 * threads would hang a child forked after it); and LSTMCHECK_ISOLATE is not 0.
 * LSTMCHECK_ISOLATE=0 keeps everything CUDA in this process, the device
 * probe too: for tools that do not follow a fork without exec (nsys
 * without --trace-fork-before-exec=true, a debugger). */
int isolate_runner(const runner_ops *r);
/* 1 when CUDA work of this process's own (a measurement before the
 * runners) belongs in a child, by the same rule as a GPU runner. */
int isolate_gpu_work(void);

/* 1 when r cannot run on c's shape here, without making inputs: rep says
 * SKIP (no device, or outside its caps) or ERROR (a broken CUDA setup:
 * available() returned LC_ERROR). 0: go ahead. */
int isolate_precheck(const runner_ops *r, const numerics_context *c, gate_report *rep);

/* gate_run in a child when isolate_runner(r), else here. The inputs and
 * the reference are made here first, so that every child shares them. A
 * runner that is not available is reported here without a child: SKIP,
 * or ERROR for a broken CUDA setup (available() == LC_ERROR). */
lc_status isolate_gate_run(const runner_ops *r, numerics_context *c, const char *dump_dir,
                             gate_report *rep);

/* plugin_load (runners/plugin.h) in a child first, with one call of each
 * of its runners' available(), then here: a plugin whose loading crashes
 * or hangs past the child timeout (its initialization code, or an
 * available()) is refused with LC_BAD_INPUT and err naming it ("crashed
 * while loading", "did not finish loading"), and this process never runs
 * it. Any other refusal comes back as plugin_load says it. */
lc_status isolate_plugin_load(const char *path, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
