/* `baseline compare`'s table on stdout, printed row by row as the rows are
 * decided (a row can take minutes), read from the one comparison_result
 * (see compare_report.h). */
#include "report/compare_report.h"

#include "report/baseline_report.h"

#include <stdio.h>

void compare_report_counts_line(const comparison_result *r, char *buf, size_t n)
{
    comparison_counts c;
    comparison_count(r, &c);
    snprintf(buf, n, "%d slower, %d faster, %d same, %d inconclusive (forward and backward counted apart); "
             "%d not compared here, %d with wrong results, %d failed with an error", c.phases[VERDICT_SLOWER],
             c.phases[VERDICT_FASTER], c.phases[VERDICT_SAME], c.phases[VERDICT_INCONCLUSIVE], c.skipped, c.wrong,
             c.errors);
}

void compare_report_begin(FILE *f, const comparison_result *r)
{
    if (!r->ab_asked && !r->baseline_entries)
        fprintf(f, "no baseline for this machine (%s) at %s: comparing A/B against the commit of the newest "
                "committed %s baseline\n", r->machine, r->baseline, r->device);
    fprintf(f, "%-16s %-22s %-4s %9s %9s %8s %8s %16s %6s %-12s %s\n", "runner", "shape", "", "base_ms", "now_ms",
            "raw", "change", "interval", "min", "verdict", "why");
    fflush(f);
}

static void print_phase(FILE *f, const comparison_row *row, int backward)
{
    const comparison_phase ph = comparison_row_phase(row, backward);
    const verdict_result *v = ph.v;
    fprintf(f, "%-16s %-22s %-4s %9.4g %9.4g %+7.1f%% %+7.1f%% [%+6.1f, %+6.1f] %5.1f%% %-12s %s\n", row->runner,
            row->shape, backward ? "bwd" : "fwd", ph.base_ms->median, ph.cur_ms->median, 100 * ph.raw_change,
            100 * v->change, 100 * v->ci_low, 100 * v->ci_high, 100 * v->delta, verdict_name(v->kind), v->reason);
}

static void print_decided(FILE *f, const comparison_result *r, const comparison_row *row)
{
    if (row->note[0])
        fprintf(f, "note: %s: %s\n", row->runner, row->note);
    const comparison_against *a = &row->against;
    if (a->commit[0])
        fprintf(f, "A/B %s %s: %s (B) against %.12s (A), %s; %d + %d processes interleaved A B B A, B A A B, ...\n",
                row->runner, row->shape, r->current, a->commit, a->why, a->processes[0], a->processes[1]);
    print_phase(f, row, 0);
    print_phase(f, row, 1);
    if (row->cmp.unchecked[0])
        fprintf(f, "%-16s %-22s note: %s\n", row->runner, row->shape, row->cmp.unchecked);
}

void compare_report_row(FILE *f, const comparison_result *r, int i, int failures_only)
{
    const comparison_row *row = &r->rows[i];
    if (row->outcome == COMPARISON_WRONG || row->outcome == COMPARISON_ERROR)
        baseline_report_failed(f, row->runner, row->shape, row->outcome == COMPARISON_WRONG, row->reason,
                               row->detail);
    else if (failures_only)
        return;
    else if (row->outcome == COMPARISON_SKIPPED)
        baseline_report_skip(f, row->runner, row->shape, row->reason);
    else
        print_decided(f, r, row);
    fflush(f);
}

void compare_report_ab_started(const char *runner, const char *shape, const char *commit)
{
    fprintf(stderr, "A/B %s %s against %.12s ...\n", runner, shape, commit);
}

void compare_report_end(FILE *f, const comparison_result *r)
{
    comparison_counts c;
    comparison_count(r, &c);
    char counts[512];
    compare_report_counts_line(r, counts, sizeof counts);
    fprintf(f, "%s\n", counts);
    if (c.faster_rows)
        fprintf(f, "note: %d faster: record it with 'lstmcheck baseline update' (or the update-baselines target)\n",
                c.faster_rows);
    if (c.phases[VERDICT_INCONCLUSIVE])
        fprintf(f, "note: INCONCLUSIVE: still undecided after %.0f s of measuring (--max-seconds), or the machine "
                "could not be measured now, or not against its entry (the reason says which)\n", r->budget_s);
    if (r->incomplete)
        fprintf(f, "out of host memory: rows of this comparison were lost (failed)\n");
    fflush(f);
}
