/* `baseline compare --json`: the one comparison_result as a document (see
 * compare_report.h). Keys: baseline (this machine's file compared against,
 * null when none was: it has no entries, or A/B was asked), machine,
 * current, comparisons, context (perf/context.h), counts, results (decided
 * rows), skipped, failed. */
#include "report/compare_report.h"

#include "base/json.h"
#include "report/context_report.h"

#include <stdio.h>

static void put_verdict(json_writer *w, const comparison_row *row, int backward)
{
    const comparison_phase ph = comparison_row_phase(row, backward);
    const verdict_result *v = ph.v;
    json_key(w, ph.name);
    json_object_begin(w);
    json_member_string(w, "verdict", verdict_name(v->kind));
    json_member_double(w, "baseline_median_ms", ph.base_ms->median);
    json_member_double(w, "current_median_ms", ph.cur_ms->median);
    json_member_double(w, "raw_change", ph.raw_change);
    json_member_double(w, "change", v->change);
    json_member_double(w, "ci_low", v->ci_low);
    json_member_double(w, "ci_high", v->ci_high);
    json_member_double(w, "p", v->p);
    json_member_double(w, "min_effect", v->delta);
    json_member_double(w, "noise", ph.noise);
    json_member_string(w, "reason", v->reason);
    json_object_end(w);
}

static void put_decided(json_writer *w, const comparison_result *r, const comparison_row *row)
{
    const comparison_against *a = &row->against;
    json_object_begin(w);
    json_member_string(w, "runner", row->runner);
    json_member_string(w, "shape", row->shape);
    json_member_string(w, "mode", a->commit[0] ? "ab" : "baseline");
    if (a->commit[0]) {
        json_key(w, "against");
        json_object_begin(w);
        json_member_string(w, "commit", a->commit);
        json_member_string(w, "why", a->why);
        json_member_string(w, "current", r->current);
        json_member_int(w, "processes_a", a->processes[0]);
        json_member_int(w, "processes_b", a->processes[1]);
        json_object_end(w);
    }
    if (row->entry_commit[0]) { /* where the baseline side came from */
        json_key(w, "entry");
        json_object_begin(w);
        json_member_string(w, "commit", row->entry_commit);
        json_member_string(w, "date", row->entry_date);
        json_object_end(w);
    }
    if (row->note[0])
        json_member_string(w, "note", row->note);
    json_member_int(w, "samples", row->cmp.samples);
    json_member_int(w, "rounds", row->cmp.rounds);
    if (row->cmp.unchecked[0])
        json_member_string(w, "unchecked", row->cmp.unchecked);
    put_verdict(w, row, 0);
    put_verdict(w, row, 1);
    json_object_end(w);
}

static const char *outcome_name(comparison_outcome k)
{
    return k == COMPARISON_WRONG ? "wrong" : k == COMPARISON_ERROR ? "error" : "skipped";
}

/* Which list of the document a row is in: results, skipped, or failed
 * (WRONG and ERROR rows, each with its outcome). */
static int listed_in(const comparison_row *row, comparison_outcome list)
{
    if (list == COMPARISON_WRONG)
        return row->outcome == COMPARISON_WRONG || row->outcome == COMPARISON_ERROR;
    return row->outcome == list;
}

static void put_rows(json_writer *w, const comparison_result *r, const char *key, comparison_outcome list)
{
    json_key(w, key);
    json_array_begin(w);
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        if (!listed_in(row, list))
            continue;
        if (list == COMPARISON_DECIDED) {
            put_decided(w, r, row);
            continue;
        }
        json_object_begin(w);
        json_member_string(w, "runner", row->runner);
        json_member_string(w, "shape", row->shape);
        if (list == COMPARISON_WRONG)
            json_member_string(w, "outcome", outcome_name(row->outcome));
        json_member_string(w, "reason", row->reason);
        if (row->detail[0])
            json_member_string(w, "detail", row->detail);
        json_object_end(w);
    }
    json_array_end(w);
}

static void put_counts(json_writer *w, const comparison_result *r)
{
    comparison_counts c;
    comparison_count(r, &c);
    json_key(w, "counts");
    json_object_begin(w);
    json_member_int(w, "slower", c.phases[VERDICT_SLOWER]);
    json_member_int(w, "faster", c.phases[VERDICT_FASTER]);
    json_member_int(w, "same", c.phases[VERDICT_SAME]);
    json_member_int(w, "inconclusive", c.phases[VERDICT_INCONCLUSIVE]);
    json_member_int(w, "skipped", c.skipped);
    json_member_int(w, "wrong", c.wrong);
    json_member_int(w, "errors", c.errors);
    json_object_end(w);
}

int compare_report_json(FILE *f, const comparison_result *r)
{
    json_writer w;
    json_init(&w, JSON_INDENTED | JSON_NONFINITE_AS_NULL);
    json_object_begin(&w);
    json_key(&w, "baseline");
    json_string(&w, r->baseline_entries && !r->ab_asked ? r->baseline : NULL);
    json_member_string(&w, "machine", r->machine);
    json_member_string(&w, "current", r->current);
    json_member_int(&w, "comparisons", r->comparisons);
    json_key(&w, "context");
    if (r->context_known)
        report_context_json(&w, &r->context);
    else
        json_null(&w);
    put_counts(&w, r);
    put_rows(&w, r, "results", COMPARISON_DECIDED);
    put_rows(&w, r, "skipped", COMPARISON_SKIPPED);
    put_rows(&w, r, "failed", COMPARISON_WRONG);
    json_object_end(&w);
    const char *text = json_text(&w, NULL);
    int rc = 0;
    if (text && !r->incomplete) {
        fprintf(f, "%s\n", text);
    } else {
        fprintf(stderr, "lstmcheck: out of host memory for the JSON output\n");
        rc = -1;
    }
    fflush(f);
    json_free(&w);
    return rc;
}
