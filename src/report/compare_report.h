/* The results of one `baseline compare`, kept for reports a reviewer reads:
 * a markdown table a CI job can post on a pull request (markdown.c) and an
 * SVG that draws, per entry and phase, the baseline and current
 * distributions of the runner/control ratio beside the minimum-effect band
 * (svg.c), so that the reason for a verdict can be seen. Both show the
 * numbers the verdict used (perf/perf.h, perf_comparison), as --json does. */
#ifndef LSTMCHECK_COMPARE_REPORT_H
#define LSTMCHECK_COMPARE_REPORT_H

#include <stdio.h>

#include "perf/ab.h"
#include "perf/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One decided (runner, shape): both phases. */
typedef struct compare_row {
    char runner[LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    char shape[64];
    char against[48];  /* A/B: the commit side A was built from; "" against a baseline entry */
    perf_comparison cmp;
    /* run-to-run noise beside each verdict: the baseline entry's, or in an
     * A/B comparison the spread of the process medians */
    double noise_fwd, noise_bwd;
} compare_row;

/* One (runner, shape) not decided here, and why. */
typedef struct compare_skip {
    char runner[LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    char shape[64];
    char reason[800];
} compare_skip;

typedef struct compare_report {
    char machine[1024];  /* the machine key, described */
    char baseline[4096]; /* the baseline file compared against; "" when none */
    int comparisons;     /* the family size m of the verdict */
    compare_row *rows;
    int nrows;
    compare_skip *skips;
    int nskips;
    int incomplete;      /* a row or skip was lost (out of memory): no report is written */
} compare_report;

void compare_report_init(compare_report *r, const char *machine, const char *baseline, int comparisons);
void compare_report_free(compare_report *r);
/* Keep one decided comparison; ab: its A/B details and against the commit
 * of side A, or NULL against a baseline entry. */
void compare_report_add(compare_report *r, const char *runner, const char *shape, const perf_comparison *c,
                        const ab_outcome *ab, const char *against);
void compare_report_skip(compare_report *r, const char *runner, const char *shape, const char *reason);

/* The writers: LC_OK, or LC_ERROR with err (the file could not be
 * written, or the report is incomplete). */
/* The markdown table (runner, shape, phase, old and new medians, change
 * with its interval, verdict, noise, minimum effect), the reasons of the
 * verdicts that are not SAME, and the skips. To path, written atomically,
 * or to stdout for "-". */
lc_status compare_report_markdown(const compare_report *r, const char *path, lc_error *err);
/* The plot: one panel per entry and phase, written atomically to path. */
lc_status compare_report_svg(const compare_report *r, const char *path, lc_error *err);

/* Both writers where a path is given. LC_OK, or LC_ERROR with err. */
lc_status compare_report_write(const compare_report *r, const char *markdown, const char *plot, lc_error *err);

/* For the writers: write() puts the text into a memory stream, which is
 * then written to path atomically (or to stdout for "-"). */
typedef void (*compare_report_writer)(FILE *f, const compare_report *r);
lc_status compare_report_emit(const compare_report *r, const char *path, compare_report_writer write,
                              lc_error *err);
/* "forward" / "backward" of a row: its verdict, its ms medians, what it
 * was decided on and its noise. */
typedef struct compare_phase {
    const char *name;
    const verdict_result *v;
    const sample_summary *base_ms, *cur_ms;
    const perf_decided_on *on;
    double noise;
} compare_phase;
compare_phase compare_row_phase(const compare_row *row, int backward);

#ifdef __cplusplus
}
#endif
#endif
