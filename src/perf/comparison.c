/* One `baseline compare` as one value, and the policy that plans it (see
 * comparison.h). */
#include "perf/comparison.h"

#include "base/gitrev.h"
#include "base/text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void comparison_init(comparison_result *r, const char *machine, const char *baseline, int entries, int comparisons)
{
    memset(r, 0, sizeof *r);
    snprintf(r->machine, sizeof r->machine, "%s", machine ? machine : "");
    snprintf(r->baseline, sizeof r->baseline, "%s", baseline ? baseline : "");
    r->baseline_entries = entries;
    r->comparisons = comparisons;
}

void comparison_free(comparison_result *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* A new zeroed row named (runner, shape); NULL when out of memory, which
 * marks the result incomplete. */
static comparison_row *new_row(comparison_result *r, const char *runner, const char *shape,
                               comparison_outcome outcome)
{
    comparison_row *rows = realloc(r->rows, (size_t)(r->nrows + 1) * sizeof *rows);
    if (!rows) {
        r->incomplete = 1;
        return NULL;
    }
    r->rows = rows;
    comparison_row *row = &rows[r->nrows++];
    memset(row, 0, sizeof *row);
    snprintf(row->runner, sizeof row->runner, "%s", runner);
    snprintf(row->shape, sizeof row->shape, "%s", shape);
    row->outcome = outcome;
    return row;
}

int comparison_add_decided(comparison_result *r, const char *runner, const char *shape, const perf_comparison *c,
                           const ab_outcome *ab, const comparison_against *against, const char *note)
{
    comparison_row *row = new_row(r, runner, shape, COMPARISON_DECIDED);
    if (!row)
        return -1;
    row->cmp = *c;
    if (ab && against) {
        row->against = *against;
        row->against.processes[0] = ab->processes[0];
        row->against.processes[1] = ab->processes[1];
    }
    if (note)
        snprintf(row->note, sizeof row->note, "%s", note);
    row->noise_fwd = ab ? ab->process_noise_fwd : c->on_fwd.noise;
    row->noise_bwd = ab ? ab->process_noise_bwd : c->on_bwd.noise;
    return r->nrows - 1;
}

void comparison_set_entry(comparison_result *r, int i, const char *commit, const char *date)
{
    if (i < 0 || i >= r->nrows)
        return;
    snprintf(r->rows[i].entry_commit, sizeof r->rows[i].entry_commit, "%s", commit);
    snprintf(r->rows[i].entry_date, sizeof r->rows[i].entry_date, "%s", date);
}

int comparison_add_skipped(comparison_result *r, const char *runner, const char *shape, const char *reason)
{
    return comparison_add_failed(r, runner, shape, COMPARISON_SKIPPED, reason, NULL);
}

int comparison_add_failed(comparison_result *r, const char *runner, const char *shape, comparison_outcome outcome,
                          const char *reason, const char *detail)
{
    comparison_row *row = new_row(r, runner, shape, outcome);
    if (!row)
        return -1;
    /* a reason may quote files of the baseline folder or a plugin's words:
     * kept printable, on one line, for every printer alike */
    text_printable(reason ? reason : "", row->reason, sizeof row->reason);
    /* what to fix is a wrong runner's alone: an error is no verdict on it */
    text_printable(detail && outcome == COMPARISON_WRONG ? detail : "", row->detail, sizeof row->detail);
    return r->nrows - 1;
}

void comparison_count(const comparison_result *r, comparison_counts *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < r->nrows; i++) {
        const comparison_row *row = &r->rows[i];
        switch (row->outcome) {
        case COMPARISON_SKIPPED: c->skipped++, c->undecided++; break;
        case COMPARISON_WRONG: c->wrong++; break;
        case COMPARISON_ERROR: c->errors++; break;
        case COMPARISON_DECIDED:
            c->phases[row->cmp.fwd.kind]++;
            c->phases[row->cmp.bwd.kind]++;
            c->undecided += perf_overall(&row->cmp) == VERDICT_INCONCLUSIVE;
            c->faster_rows += row->cmp.fwd.kind == VERDICT_FASTER || row->cmp.bwd.kind == VERDICT_FASTER;
            break;
        }
    }
}

lc_status comparison_status(const comparison_result *r)
{
    comparison_counts c;
    comparison_count(r, &c);
    if (c.errors || r->incomplete)
        return LC_ERROR;
    if (c.wrong || c.phases[VERDICT_SLOWER])
        return LC_FAILED;
    return c.undecided ? LC_UNSUPPORTED : LC_OK;
}

comparison_phase comparison_row_phase(const comparison_row *row, int backward)
{
    const perf_comparison *c = &row->cmp;
    if (backward)
        return (comparison_phase){"backward", &c->bwd,   &c->base_bwd,    &c->cur_bwd,
                                  c->raw_change_bwd, &c->on_bwd, row->noise_bwd};
    return (comparison_phase){"forward", &c->fwd, &c->base_fwd, &c->cur_fwd, c->raw_change_fwd, &c->on_fwd,
                              row->noise_fwd};
}

void comparison_wrong_detail(const char *runner, int timed, char *buf, size_t n)
{
    if (timed)
        snprintf(buf, n, "%s passed the gate, but results of its timed calls differ: its times are discarded", runner);
    else
        snprintf(buf, n, "%s is wrong, not slow: fix the numerics before any timing", runner);
}

/* ---- the policy ---- */

int comparison_family_size(lc_device device, int file_entries, int items)
{
    int family = perf_matrix_size(device);
    family = file_entries > family ? file_entries : family;
    return 2 * (items > family ? items : family);
}

int comparison_entry_mismatch(const baseline_entry *e, const char *unchecked, char *why, size_t n)
{
    if (!strcmp(unchecked, e->unchecked))
        return 0;
    snprintf(why, n, "the baseline entry says its timing was '%s', this runner's is '%s': record it again "
             "(baseline update)", e->unchecked[0] ? e->unchecked : "checked", unchecked[0] ? unchecked : "checked");
    return 1;
}

/* "fwd +3.8% [+3.3, +4.3] beyond 3.3%" for each SLOWER phase of c. */
static void slower_phases(const perf_comparison *c, char *out, size_t n)
{
    const verdict_result *v[2] = {&c->fwd, &c->bwd};
    static const char *const name[2] = {"fwd", "bwd"};
    size_t len = 0;
    out[0] = '\0';
    for (int b = 0; b < 2 && len < n; b++)
        if (v[b]->kind == VERDICT_SLOWER)
            len += (size_t)snprintf(out + len, n - len, "%s%s %+.1f%% [%+.1f, %+.1f] beyond %.1f%%", len ? ", " : "",
                                    name[b], 100 * v[b]->change, 100 * v[b]->ci_low, 100 * v[b]->ci_high,
                                    100 * v[b]->delta);
}

/* Why entry e's commit cannot be rebuilt for an A/B (plugin: a plugin's runner). */
static const char *not_rebuildable(const baseline_entry *e, int plugin, char *buf, size_t n)
{
    if (plugin)
        return "a plugin's runner (an A/B rebuilds lstmcheck, not the plugin)";
    if (strstr(e->git_commit, "-dirty"))
        return "the entry was recorded from uncommitted changes, so its commit cannot be rebuilt";
    if (git_commit_is_reproducible(e->git_commit))
        return "the entry says it is not reproducible (\"reproducible\": false)";
    snprintf(buf, n, "the entry's git_commit '%s' is no commit id to rebuild", e->git_commit);
    return buf;
}

int comparison_entry_rebuildable(const baseline_entry *e, int plugin)
{
    return e->reproducible && !plugin;
}

comparison_recheck comparison_recheck_entry(const baseline_entry *e, const perf_comparison *c, int plugin,
                                            char *note, size_t n)
{
    note[0] = '\0';
    const verdict_kind overall = perf_overall(c);
    const double drift = perf_undecided_drift(c);
    const int rebuildable = comparison_entry_rebuildable(e, plugin);
    char why[128], phases[200];
    if (overall == VERDICT_INCONCLUSIVE && fabs(drift) > VERDICT_MAX_CONTROL_DRIFT) {
        char lead[128];
        snprintf(lead, sizeof lead, "the control workload runs %+.0f%% against the baseline's (the machine is in "
                 "another state)", 100 * drift);
        if (!rebuildable) {
            snprintf(note, n, "%s, not compared A/B instead: %s", lead, not_rebuildable(e, plugin, why, sizeof why));
            return COMPARISON_ENTRY_STANDS;
        }
        snprintf(note, n, "%s: comparing A/B against the baseline's commit %.12s instead", lead, e->git_commit);
        return COMPARISON_AB_FOR_DRIFT;
    }
    if (overall != VERDICT_SLOWER)
        return COMPARISON_ENTRY_STANDS;
    slower_phases(c, phases, sizeof phases);
    if (!rebuildable) {
        snprintf(note, n, "slower than the baseline entry (%s), not rechecked A/B: %s", phases,
                 not_rebuildable(e, plugin, why, sizeof why));
        return COMPARISON_ENTRY_STANDS;
    }
    snprintf(note, n, "slower than the baseline entry of %.12s (%s), which was measured at another time, in "
             "another state of the host: rechecked A/B against that commit, both measured now; the A/B decides",
             e->git_commit, phases);
    return COMPARISON_AB_FOR_SLOWER;
}

void comparison_recheck_unmade(const baseline_entry *e, const perf_comparison *c, const char *why, char *note,
                               size_t n)
{
    char phases[200];
    slower_phases(c, phases, sizeof phases);
    snprintf(note, n, "slower than the baseline entry of %.12s (%s), which stands: the A/B against that commit "
             "that would recheck it could not be made (%s)", e->git_commit, phases, why);
}

lc_status comparison_choose_commit(const comparison_ab_request *rq, comparison_against *out, lc_error *err)
{
    memset(out, 0, sizeof *out);
    if (rq->plugin) {
        lc_error_set(err, "no baseline entry for this plugin runner here (an A/B comparison rebuilds lstmcheck, "
                     "not plugins): record one with 'lstmcheck baseline update --plugin %s --rnns %s'",
                     rq->plugin, rq->runner);
        return LC_UNSUPPORTED;
    }
    if (rq->against) {
        snprintf(out->commit, sizeof out->commit, "%s", rq->against);
        snprintf(out->why, sizeof out->why, "as asked (--against %s)", rq->against_asked);
        return LC_OK;
    }
    char commit[48];
    if (rq->entry) {
        snprintf(commit, sizeof commit, "%s", rq->entry->git_commit);
        snprintf(out->why, sizeof out->why, "%s", rq->recheck == COMPARISON_AB_FOR_SLOWER
                 ? "the commit of this machine's entry, against which this build measured slower: measured again "
                   "beside it now"
                 : "the commit of this machine's entry, which the machine's present state cannot be compared with "
                   "(control drift)");
    } else if (baseline_reference_commit(rq->baseline_dir, rq->device, rq->runner, rq->shape, commit, out->why,
                                         sizeof out->why)) {
        lc_error_set(err, "no baseline here and no A/B possible: %s", out->why);
        return LC_UNSUPPORTED;
    }
    char sha[GIT_SHA_LEN + 1];
    if (git_resolve_buildable(rq->source_dir, commit, sha, err))
        return LC_UNSUPPORTED;
    snprintf(out->commit, sizeof out->commit, "%s", sha);
    return LC_OK;
}

void comparison_describe_build(const char *source_dir, char *out, size_t n)
{
    char sha[GIT_SHA_LEN + 1], what[256];
    if (git_head(source_dir, sha) != LC_OK) {
        snprintf(out, n, "this build (not a git checkout)");
        return;
    }
    int dirty = 0;
    git_built_tree_dirty(source_dir, &dirty, what, sizeof what);
    snprintf(out, n, "this build (%.12s%s%s)", sha, dirty ? " + uncommitted changes: " : "", dirty ? what : "");
}
