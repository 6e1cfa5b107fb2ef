/* The printers of `baseline history` (perf/history.h): the table on
 * stdout, the --json document, the --markdown table and the --plot SVG
 * (history_svg.c: one panel per runner, a line per shape and phase over the
 * commits). Each reads the one history_result and nothing else. */
#ifndef LSTMCHECK_HISTORY_REPORT_H
#define LSTMCHECK_HISTORY_REPORT_H

#include <stdio.h>

#include "perf/history.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A version as every printer names it: the commit's first 12 characters,
 * or "uncommitted" for the working tree. Returns buf. */
const char *history_version_name(const history_version *v, char *buf, size_t n);

/* The table, to f. */
void history_report_table(FILE *f, const history_result *h);
/* The document (HISTORY_FORMAT), one line, to f. 0, or -1 when out of
 * host memory (said on stderr). */
int history_report_json(FILE *f, const history_result *h);
/* The files: to path, atomically, or to stdout for "-" (markdown only).
 * LC_OK, or LC_ERROR with err. */
lc_status history_report_markdown(const history_result *h, const char *path, lc_error *err);
lc_status history_report_svg(const history_result *h, const char *path, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
