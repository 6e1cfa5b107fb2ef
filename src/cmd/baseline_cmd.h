/* What the `baseline` subcommands share (cmd_baseline.c: the plan and
 * show; cmd_baseline_update.c; cmd_baseline_compare.c;
 * cmd_baseline_history.c). Internal to the command layer. */
#ifndef LSTMCHECK_BASELINE_CMD_H
#define LSTMCHECK_BASELINE_CMD_H

#include "check/gate.h"
#include "cmd/cli.h"
#include "device/machine.h"
#include "perf/perf.h"

#ifndef LSTMCHECK_SOURCE_DIR
#define LSTMCHECK_SOURCE_DIR "."
#endif

/* One (runner, shape) of the plan. */
typedef struct work_item {
    const runner_ops *runner;
    lstm_shape shape;
    const char *set; /* shape set name, or NULL for an explicit shape */
} work_item;

/* The measuring settings: the device's, with --warmup, --nloops,
 * --max-seconds and --time-budget (a round's) applied. */
void baseline_settings_from(const cli_options *o, lc_device device, perf_settings *s);

/* The gate's word on r: LC_OK; LC_UNSUPPORTED with the skip's reason in
 * why; LC_FAILED with the failure's summary line; LC_ERROR with what broke. */
lc_status baseline_gate_outcome(const runner_ops *r, const gate_report *rep, char *why, size_t n);

/* This machine's baseline file, loaded. */
typedef struct machine_file {
    char path[4096];
    char machine[1024];  /* the machine key, described */
    baseline_file b;     /* empty, with the key, when missing */
    int missing;
} machine_file;

/* Load this machine's file in dir into f: LC_OK (f->missing when there is
 * none), or what stops the command, said (cmd_fail), with f->b freed.
 * bad_file_note: words added where the file is unusable, or NULL. */
lc_status baseline_open_machine_file(const cli_options *o, lc_device device, const char *dir, machine_file *f,
                                     const char *bad_file_note);

/* The shape flags and --shape-set as every subcommand checks them: not
 * both, and a shape valid and within this machine's memory. LC_OK, or
 * LC_BAD_INPUT with err. */
lc_status baseline_check_shape_flags(const cli_options *o, lc_error *err);

/* LC_OK, or LC_BAD_INPUT (said) when --markdown or --plot names the
 * baseline file at path (the one role says: "compared against"). */
lc_status baseline_reports_spare(const cli_options *o, const char *path, const char *role);

lc_status baseline_update_items(const cli_options *o, lc_device device, const char *dir, work_item *items, int n);
lc_status baseline_compare_items(const cli_options *o, lc_device device, const char *dir, work_item *items, int n);
/* history (cmd_baseline_history.c): this machine's file in dir, or --baseline-file. */
lc_status baseline_history(const cli_options *o, lc_device device, const char *dir);

#endif
