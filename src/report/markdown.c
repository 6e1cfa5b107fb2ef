/* `baseline compare --markdown`: the comparison as a table for a pull
 * request comment (see compare_report.h), read from the one value. Numbers are those of --json:
 * medians in ms, the change of the runner/control ratio with its interval,
 * the minimum effect; rounded for reading, never recomputed. */
#include "report/compare_report.h"

#include "report/context_report.h"
#include "report/markup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict_cell(verdict_kind k)
{
    switch (k) {
    case VERDICT_SLOWER: return "**SLOWER**";
    case VERDICT_FASTER: return "FASTER";
    case VERDICT_SAME: return "SAME";
    default: return "INCONCLUSIVE";
    }
}

/* The commits and dates the baseline entries compared against were
 * measured at, each once, into buf ("" when no row was against an entry). */
static void entries_measured_at(const comparison_result *r, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->nrows && at < n; i++) {
        const comparison_row *row = &r->rows[i];
        int seen = !row->entry_commit[0];
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(r->rows[j].entry_commit, row->entry_commit) &&
                   !strcmp(r->rows[j].entry_date, row->entry_date);
        if (!seen)
            at += (size_t)snprintf(buf + at, n - at, "%s%s at %s", at ? ", " : "", row->entry_commit,
                                   row->entry_date);
    }
}

static void put_header(FILE *f, const comparison_result *r)
{
    fprintf(f, "### lstmcheck baseline compare\n\n");
    /* a machine's description and a folder's name are text too (a backtick
     * in either would end a code span): escaped, not quoted */
    fputs("Machine: ", f);
    markup_md_text(f, r->machine);
    fputs("  \n", f);
    int ab = 0;
    for (int i = 0; i < r->nrows; i++)
        ab += r->rows[i].against.commit[0] != '\0';
    if (r->baseline_entries && !r->ab_asked) {
        fputs("Against: ", f);
        markup_md_text(f, r->baseline);
        fprintf(f, "%s  \n", ab ? " (rows marked A/B: the commit named, built and measured beside this build)" : "");
        char at[1024];
        entries_measured_at(r, at, sizeof at);
        if (at[0]) {
            fputs("Its entries measured at: ", f);
            markup_md_text(f, at);
            fputs("  \n", f);
        }
    } else {
        fprintf(f, "Against: A/B, the commit named in the table built and measured beside this build  \n");
    }
    if (ab) {
        fputs("This build: ", f);
        markup_md_text(f, r->current);
        fputs("  \n", f);
    }
    fprintf(f, "Every runner was checked against the reference before it was timed; only those that passed "
               "are in the table. *change* is the change of the "
               "median runner/control time ratio (the control workload cancels the machine's drift), "
               "with its interval at the family-wise level (m = %d comparisons); a verdict needs the "
               "whole interval beyond the minimum effect.\n\n",
            r->comparisons);
    fprintf(f, "| runner | shape | phase | old ms | new ms | change [interval] | verdict | noise | min effect |\n");
    fprintf(f, "| --- | --- | --- | ---: | ---: | --- | --- | ---: | ---: |\n");
}

static void put_row(FILE *f, const comparison_row *row, const comparison_phase *ph)
{
    const verdict_result *v = ph->v;
    const int ab = row->against.commit[0] != '\0';
    fprintf(f, "| `%s` | %s%s%.12s%s | %s | %.4g | %.4g | %+.1f%% [%+.1f%%, %+.1f%%] | %s | %.2f%% | %.1f%% |\n",
            row->runner, row->shape, ab ? " (A/B vs " : "", row->against.commit, ab ? ")" : "", ph->name,
            ph->base_ms->median, ph->cur_ms->median, 100 * v->change, 100 * v->ci_low, 100 * v->ci_high,
            verdict_cell(v->kind), 100 * ph->noise, 100 * v->delta);
}

/* A list of the rows of one outcome, each with its reason. */
static void put_list(FILE *f, const comparison_result *r, const char *title, comparison_outcome outcome)
{
    int first = 1;
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        if (row->outcome != outcome)
            continue;
        fprintf(f, "%s- `%s` %s: ", first ? title : "", row->runner, row->shape);
        markup_md_text(f, row->reason);
        if (row->detail[0]) {
            fputs(" (", f);
            markup_md_text(f, row->detail);
            fputc(')', f);
        }
        fputc('\n', f);
        first = 0;
    }
}

/* The reason of every verdict that is not SAME. */
static void put_reasons(FILE *f, const comparison_result *r)
{
    int first = 1;
    for (int i = 0; i < r->nrows; i++) {
        if (r->rows[i].outcome != COMPARISON_DECIDED)
            continue;
        for (int b = 0; b < 2; b++) {
            const comparison_phase ph = comparison_row_phase(&r->rows[i], b);
            if (ph.v->kind == VERDICT_SAME)
                continue;
            fprintf(f, "%s- `%s` %s %s, %s: ", first ? "\nWhy:\n\n" : "", r->rows[i].runner, r->rows[i].shape,
                    ph.name, verdict_name(ph.v->kind));
            markup_md_text(f, ph.v->reason);
            fputc('\n', f);
            first = 0;
        }
    }
}

/* Each A/B row: the commit of side A and why, the processes, and what
 * turned a comparison with the entry into an A/B (control drift, or a
 * SLOWER rechecked). */
static void put_ab(FILE *f, const comparison_result *r)
{
    int first = 1;
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        if (row->outcome != COMPARISON_DECIDED || !row->against.commit[0])
            continue;
        fprintf(f, "%s- `%s` %s: against %.12s, ", first ? "\nA/B (side A the commit, side B this build):\n\n" : "",
                row->runner, row->shape, row->against.commit);
        markup_md_text(f, row->against.why);
        fprintf(f, "; %d + %d processes", row->against.processes[0], row->against.processes[1]);
        if (row->note[0]) {
            fputs("; ", f);
            markup_md_text(f, row->note);
        }
        fputc('\n', f);
        first = 0;
    }
}

/* The notes of rows decided against the entry (a SLOWER that stands
 * without an A/B, and why). */
static void put_entry_notes(FILE *f, const comparison_result *r)
{
    int first = 1;
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        if (row->outcome != COMPARISON_DECIDED || row->against.commit[0] || !row->note[0])
            continue;
        fprintf(f, "%s- `%s` %s: ", first ? "\nNotes:\n\n" : "", row->runner, row->shape);
        markup_md_text(f, row->note);
        fputc('\n', f);
        first = 0;
    }
}

/* The counts, the reasons, the A/B rows, the notes, what failed, the skips,
 * the unchecked timings. */
static void put_footer(FILE *f, const comparison_result *r)
{
    char counts[512];
    compare_report_counts_line(r, counts, sizeof counts);
    fprintf(f, "\n%s.\n", counts);
    put_reasons(f, r);
    put_ab(f, r);
    put_entry_notes(f, r);
    put_list(f, r, "\nWrong (results differ from the reference: fix the numerics first):\n\n", COMPARISON_WRONG);
    put_list(f, r, "\nFailed (an error of the tool or the machine):\n\n", COMPARISON_ERROR);
    put_list(f, r, "\nNot compared here:\n\n", COMPARISON_SKIPPED);
    int first = 1;
    for (int i = 0; i < r->nrows; i++) {
        if (r->rows[i].outcome != COMPARISON_DECIDED || !r->rows[i].cmp.unchecked[0])
            continue;
        fprintf(f, "%s- `%s` %s: ", first ? "\nTimed, not checked against the reference:\n\n" : "",
                r->rows[i].runner, r->rows[i].shape);
        markup_md_text(f, r->rows[i].cmp.unchecked);
        fputc('\n', f);
        first = 0;
    }
}

static void put_context_row(FILE *f, const char *label, const char *value)
{
    fprintf(f, "| %s | ", label);
    markup_md_text(f, value[0] ? value : "-");
    fputs(" |\n", f);
}

/* Where, when and with what this build measured (perf/context.h), folded
 * away below the verdicts: the rows of --json's context. */
static void put_context(FILE *f, const comparison_result *r)
{
    if (!r->context_known)
        return;
    const run_context *c = &r->context;
    fputs("\n<details><summary>Context of this run</summary>\n\n| | |\n| --- | --- |\n", f);
#define PUT_ROW(member, size, key, label) put_context_row(f, label, c->member);
    RUN_CONTEXT_TEXTS(PUT_ROW)
#undef PUT_ROW
    put_context_row(f, "tree built", run_context_tree_name(c->tree));
    char buf[1024];
    snprintf(buf, sizeof buf, "%d CPUs online, %d allowed to this process; OpenBLAS %d", c->cpus_online,
             c->cpus_allowed, c->openblas_threads);
    put_context_row(f, "threads", buf);
    int set = 0;
    for (int i = 0; i < RUN_CONTEXT_ENVS; i++) /* a row each: no value can read as another's */
        if (c->env_set[i]) {
            put_context_row(f, run_context_env_name(i), c->env[i][0] ? c->env[i] : "(set, empty)");
            set++;
        }
    if (!set)
        put_context_row(f, "environment", "none of the variables recorded is set");
    for (int d = 0; d < LC_DEVICE_COUNT; d++) {
        if (!c->machine[d].asked)
            continue;
        char label[32];
        snprintf(label, sizeof label, "%s machine", lc_device_name((lc_device)d));
        report_context_machine(&c->machine[d], buf, sizeof buf);
        put_context_row(f, label, buf);
    }
    fputs("\n</details>\n", f);
}

static void put_markdown(FILE *f, const void *value)
{
    const comparison_result *r = value;
    put_header(f, r);
    for (int i = 0; i < r->nrows; i++)
        for (int b = 0; b < 2 && r->rows[i].outcome == COMPARISON_DECIDED; b++) {
            const comparison_phase ph = comparison_row_phase(&r->rows[i], b);
            put_row(f, &r->rows[i], &ph);
        }
    put_footer(f, r);
    put_context(f, r);
}

lc_status compare_report_markdown(const comparison_result *r, const char *path, lc_error *err)
{
    return report_emit(path, put_markdown, r, r->incomplete, err);
}
