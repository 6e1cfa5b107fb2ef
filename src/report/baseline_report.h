/* What `baseline show` and `baseline update` print: the recorded entries
 * (a table, or JSON), old against new as an update measures, and how each
 * (runner, shape) of an update ended. The command layer decides; these
 * only print what they are given. */
#ifndef LSTMCHECK_BASELINE_REPORT_H
#define LSTMCHECK_BASELINE_REPORT_H

#include <stdio.h>

#include "perf/baseline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A warning on stderr for each entry of b whose runner no longer exists. */
void baseline_report_stale(const char *path, const baseline_file *b);

/* show: b's entries on stdout as a table under the file and the machine,
 * or as one line of JSON ({"file", "entries": [...]}). */
void baseline_report_show_table(const char *path, const char *machine, const baseline_file *b);
void baseline_report_show_json(const char *path, const baseline_file *b);
/* show, where this machine has no file: where it would be, and how to make one. */
void baseline_report_missing(const char *machine, const char *path, const char *device);

/* A (runner, shape) that failed, as every command says it: WRONG (its
 * results differ from the reference; detail: what to fix) or ERROR. */
void baseline_report_failed(FILE *f, const char *runner, const char *shape, int wrong, const char *reason,
                            const char *detail);
/* A (runner, shape) that cannot run here, and why. */
void baseline_report_skip(FILE *f, const char *runner, const char *shape, const char *why);

/* update, per (runner, shape): measuring starts (progress, stderr); old
 * against new for an entry just measured (the header before the first);
 * not recorded, and why (stderr); refused for the gate's verdict. */
void baseline_report_measuring(const char *runner, const char *shape, int rounds);
void baseline_report_update_row(const baseline_entry *e, const baseline_file *old, int first);
void baseline_report_not_recorded(const char *runner, const char *shape, const char *why);
void baseline_report_refused(const char *runner, int wrong);

/* update, at the end: how many were tried, recorded and stored. */
typedef struct baseline_update_summary {
    int items, tried, failed, skipped, stored;
    int keep_going;
    int stopped;          /* a failure stopped it with nothing written */
    int nothing_measured; /* no runner could run here */
    const char *device;
} baseline_update_summary;
/* n entries stored to path (or could not be: why, not overwritten when bad). */
void baseline_report_stored(int n, const char *path);
void baseline_report_store_failed(const char *why, int not_overwritten);
void baseline_report_update_end(const baseline_update_summary *s);

#ifdef __cplusplus
}
#endif
#endif
