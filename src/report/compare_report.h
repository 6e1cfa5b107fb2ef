/* The printers of one `baseline compare` (perf/comparison.h): the table on
 * stdout, the --json document, the --markdown table a CI job can post on a
 * pull request, and the --plot SVG that draws, per entry and phase, the
 * baseline and current distributions of the runner/control ratio beside
 * the minimum-effect band. Each reads the one comparison_result and
 * nothing else, so they show the same rows, verdicts, numbers and counts. */
#ifndef LSTMCHECK_COMPARE_REPORT_H
#define LSTMCHECK_COMPARE_REPORT_H

#include <stdio.h>

#include "perf/comparison.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the table (compare_text.c), printed as the rows come ---- */

/* Before the first row: what is compared with what, and the columns. */
void compare_report_begin(FILE *f, const comparison_result *r);
/* Row i, just added: its lines. failures_only: only a WRONG or ERROR row
 * is said (under --json, on stderr: the rest is in the document). */
void compare_report_row(FILE *f, const comparison_result *r, int i, int failures_only);
/* An A/B comparison starts (minutes): said on stderr, as progress. */
void compare_report_ab_started(const char *runner, const char *shape, const char *commit);
/* After the last row: the counts and what to do next. */
void compare_report_end(FILE *f, const comparison_result *r);

/* The counts, in the words every printer uses (no newline). */
void compare_report_counts_line(const comparison_result *r, char *buf, size_t n);

/* ---- the JSON document (compare_json.c) ---- */

/* The document, to f. 0, or -1 when out of host memory (said on stderr). */
int compare_report_json(FILE *f, const comparison_result *r);

/* ---- the files: markdown (markdown.c) and SVG (svg.c) ---- */

/* The writers: LC_OK, or LC_ERROR with err (the file could not be
 * written, or the result is incomplete). */
/* The markdown table (runner, shape, phase, old and new medians, change
 * with its interval, verdict, noise, minimum effect), the counts, the
 * reasons of the verdicts that are not SAME, what failed and what was not
 * compared. To path, written atomically, or to stdout for "-". */
lc_status compare_report_markdown(const comparison_result *r, const char *path, lc_error *err);
/* The plot: one panel per decided entry and phase, written atomically to path. */
lc_status compare_report_svg(const comparison_result *r, const char *path, lc_error *err);

/* Both writers where a path is given. LC_OK, or LC_ERROR with err. */
lc_status compare_report_write(const comparison_result *r, const char *markdown, const char *plot, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
