/* lstmcheck baseline compare: each (runner, shape) gated, then compared
 * with this machine's baseline entry or A/B against a commit. This file
 * only orchestrates: what is compared with what is perf/comparison.h's
 * policy, each outcome goes into the one comparison_result, and the
 * printers of report/compare_report.h read it (the table as rows come). */
#include "cmd/baseline_cmd.h"
#include "cmd/commands.h"
#include "cmd/session.h"

#include "base/gitrev.h"
#include "base/paths.h"
#include "check/isolate.h"
#include "perf/ab.h"
#include "perf/comparison.h"
#include "perf/revbuild.h"
#include "report/compare_report.h"

#include <string.h>
#include <unistd.h>

/* The state of one compare run: what it was asked, and the result it builds. */
typedef struct compare_run {
    const cli_options *o;
    lc_device device;
    const char *dir;
    baseline_file *file;          /* this machine's (empty when it has none) */
    perf_settings settings;
    char against[GIT_SHA_LEN + 1]; /* --against, resolved */
    char self_exe[4096];
    comparison_result result;
    numerics_cache contexts;      /* one reference per (shape, seed), for all runners */
} compare_run;

/* A row just added (index i, or -1 when out of memory) goes to the table. */
static void shown(compare_run *cr, int i)
{
    if (i >= 0)
        compare_report_row(cr->o->json ? stderr : stdout, &cr->result, i, cr->o->json);
}

static void skipped(compare_run *cr, const work_item *it, const char *tag, const char *why)
{
    shown(cr, comparison_add_skipped(&cr->result, it->runner->name, tag, why));
}

/* What an A/B stands in for: the comparison with this machine's entry e
 * (first), made again as comparison_recheck_entry said (note: why). NULL
 * where there is no entry here, or an A/B was asked. */
typedef struct entry_recheck {
    const baseline_entry *e;
    const perf_comparison *first;
    comparison_recheck kind;
    char note[COMPARISON_NOTE_MAX];
} entry_recheck;

/* The row of the comparison with the entry, with its note (or none). */
static void entry_row(compare_run *cr, const work_item *it, const char *tag, const baseline_entry *e,
                      const perf_comparison *c, const char *note)
{
    const int i = comparison_add_decided(&cr->result, it->runner->name, tag, c, NULL, NULL, note[0] ? note : NULL);
    comparison_set_entry(&cr->result, i, e->git_commit, e->date);
    shown(cr, i);
}

/* An A/B not made (why). Standing in for a SLOWER against the entry, the
 * entry's comparison stands, saying so; else the row is not compared here,
 * after what turned the comparison into an A/B (control drift), if any. */
static void ab_skipped(compare_run *cr, const work_item *it, const char *tag, const entry_recheck *rc,
                       const char *why)
{
    char text[COMPARISON_REASON_MAX];
    if (rc && rc->kind == COMPARISON_AB_FOR_SLOWER) {
        comparison_recheck_unmade(rc->e, rc->first, why, text, COMPARISON_NOTE_MAX);
        entry_row(cr, it, tag, rc->e, rc->first, text);
        return;
    }
    snprintf(text, sizeof text, "%s%s%s", rc ? rc->note : "", rc ? "; but " : "", why);
    skipped(cr, it, tag, text);
}

/* A row that ended in st: LC_FAILED is WRONG (with what to fix; timed:
 * its timed calls differed, not the gate), anything else an ERROR. */
static void failed(compare_run *cr, const work_item *it, const char *tag, lc_status st, int timed, const char *why)
{
    char detail[256];
    comparison_wrong_detail(it->runner->name, timed, detail, sizeof detail);
    const int wrong = st == LC_FAILED;
    shown(cr, comparison_add_failed(&cr->result, it->runner->name, tag, wrong ? COMPARISON_WRONG : COMPARISON_ERROR,
                                    why, wrong ? detail : NULL));
}

/* What each A/B process measures: this command's options as a `baseline
 * update` of one runner at one shape, written through the flag table
 * (cli_format), so every measurement flag given reaches both sides. Left
 * out: what only compare takes (the table says which), and what A/B adds
 * to each process (its scratch folder, --no-progress, a side's
 * --allow-dirty). */
static lc_status ab_measure_line(const compare_run *cr, const work_item *it, cli_line *line, lc_error *err)
{
    cli_options o = *cr->o;
    o.subcommand = "update";
    cli_drop_not_taken(&o);
    o.device = (int)cr->device;
    o.rnns[0] = it->runner->name;
    o.nrnns = 1;
    o.shape = it->shape;
    o.shape_given = o.batch_given = 1;
    o.shape_set = NULL;
    if (!o.nloops)
        o.nloops = AB_SAMPLES_PER_ROUND;
    o.baseline_dir = NULL;
    o.progress = -1;
    o.nplugins = 0; /* a plugin's runner is never A/B'd (comparison_choose_commit): the sides are built-in */
    return cli_format(&o, line, err);
}

/* The commit to compare against, built: LC_OK with exe, or a skip noted. */
static lc_status build_side_a(compare_run *cr, const work_item *it, const char *tag, const entry_recheck *rc,
                              comparison_against *against, char *exe, size_t nexe)
{
    const comparison_ab_request rq = {
        .source_dir = LSTMCHECK_SOURCE_DIR, .baseline_dir = cr->dir, .device = cr->device,
        .runner = it->runner->name, .plugin = registry_origin(it->runner), .shape = &it->shape,
        .against = cr->against[0] ? cr->against : NULL, .against_asked = cr->o->against,
        .entry = rc ? rc->e : NULL, .recheck = rc ? rc->kind : COMPARISON_ENTRY_STANDS};
    lc_error err = {{0}};
    if (comparison_choose_commit(&rq, against, &err)) {
        ab_skipped(cr, it, tag, rc, err.msg);
        return LC_UNSUPPORTED;
    }
    if (revbuild_lstmcheck(LSTMCHECK_SOURCE_DIR, against->commit, cr->device, exe, nexe, &err)) {
        char reason[COMPARISON_REASON_MAX];
        snprintf(reason, sizeof reason, "cannot compare here: %s", err.msg);
        ab_skipped(cr, it, tag, rc, reason);
        return LC_UNSUPPORTED;
    }
    return LC_OK;
}

/* A/B of one gated (runner, shape); rc: the comparison with this
 * machine's entry it stands in for, or NULL. */
static void compare_ab(compare_run *cr, const work_item *it, const char *tag, const entry_recheck *rc)
{
    comparison_against against;
    char exe[4096];
    if (build_side_a(cr, it, tag, rc, &against, exe, sizeof exe))
        return;
    const ab_side sides[2] = {{.exe = exe}, {.exe = cr->self_exe, .allow_dirty = 1}};
    cli_line measure = {0};
    lc_error err = {{0}};
    if (ab_measure_line(cr, it, &measure, &err)) {
        failed(cr, it, tag, LC_ERROR, 0, err.msg);
        cli_line_free(&measure);
        return;
    }
    ab_outcome ab;
    compare_report_ab_started(it->runner->name, tag, against.commit);
    const lc_status st =
        ab_compare(sides, (const char *const *)measure.words, &cr->settings, cr->result.comparisons, &ab, &err);
    cli_line_free(&measure);
    if (st == LC_UNSUPPORTED) {
        char reason[COMPARISON_REASON_MAX];
        snprintf(reason, sizeof reason, "cannot compare here: %s", err.msg);
        ab_skipped(cr, it, tag, rc, reason);
    } else if (st != LC_OK) {
        failed(cr, it, tag, st, 1, err.msg);
    } else {
        runner_timing_unchecked(it->runner, &it->shape, ab.cmp.unchecked, sizeof ab.cmp.unchecked);
        shown(cr, comparison_add_decided(&cr->result, it->runner->name, tag, &ab.cmp, &ab, &against,
                                         rc ? rc->note : NULL));
    }
}

/* The gate first, on every machine: LC_OK, or the row it ended with. */
static lc_status gated(compare_run *cr, const work_item *it, numerics_context *ctx, const char *tag)
{
    gate_report rep;
    char why[COMPARISON_REASON_MAX];
    isolate_gate_run(it->runner, ctx, NULL, &rep);
    const lc_status st = baseline_gate_outcome(it->runner, &rep, why, sizeof why);
    if (st == LC_UNSUPPORTED)
        skipped(cr, it, tag, why);
    else if (st)
        failed(cr, it, tag, st, 0, why);
    return st;
}

/* Measured here against entry e; made again as an A/B against e's commit
 * where control drift kept e from deciding, or where this build measured
 * slower (comparison_recheck_entry). */
static void compare_with_entry(compare_run *cr, const work_item *it, numerics_context *ctx, const char *tag,
                               const baseline_entry *e)
{
    char unchecked[160], why[COMPARISON_REASON_MAX];
    runner_timing_unchecked(it->runner, &it->shape, unchecked, sizeof unchecked);
    if (comparison_entry_mismatch(e, unchecked, why, sizeof why)) {
        skipped(cr, it, tag, why);
        return;
    }
    const lstm_problem *p;
    const gate_expected *expected;
    perf_comparison c;
    lc_error err = {{0}};
    const int plugin = registry_origin(it->runner) != NULL;
    perf_settings s = cr->settings;
    if (!comparison_entry_rebuildable(e, plugin))
        s.drift_rounds = 0; /* no A/B can stand in: the whole budget, in case the host's state passes */
    lc_status rc = numerics_context_timed(ctx, it->runner, &p, &expected, &err);
    if (!rc)
        rc = perf_compare(it->runner, p, expected, e, &s, cr->result.comparisons, &c, &err);
    if (rc) {
        failed(cr, it, tag, rc, 1, err.msg);
        return;
    }
    entry_recheck recheck = {.e = e, .first = &c};
    recheck.kind = comparison_recheck_entry(e, &c, plugin, recheck.note, sizeof recheck.note);
    if (recheck.kind != COMPARISON_ENTRY_STANDS)
        compare_ab(cr, it, tag, &recheck);
    else
        entry_row(cr, it, tag, e, &c, recheck.note);
}

static void compare_item(compare_run *cr, const work_item *it)
{
    char tag[64];
    lstm_shape_format(&it->shape, LSTM_SHAPE_TAG, tag, sizeof tag);
    const baseline_entry *e =
        cr->result.ab_asked ? NULL : baseline_find(cr->file, it->runner->name, &it->shape);
    lc_error err = {{0}};
    numerics_context *ctx = numerics_cache_get(&cr->contexts, &it->shape, e ? e->seed : cr->o->seed, &err);
    if (!ctx) {
        failed(cr, it, tag, LC_ERROR, 0, err.msg);
        return;
    }
    if (gated(cr, it, ctx, tag))
        return;
    if (e)
        compare_with_entry(cr, it, ctx, tag, e);
    else
        compare_ab(cr, it, tag, NULL);
}

/* The plan's side of the result: this machine, its file, this build, the
 * family size. LC_OK, or what stops the run before any row (said). */
static lc_status compare_begin(compare_run *cr, const char *path, const char *desc, int items)
{
    const cli_options *o = cr->o;
    lc_status rc = baseline_reports_spare(o, path, "compared against");
    if (rc)
        return rc;
    lc_error err = {{0}};
    if (o->against && (rc = git_resolve_buildable(LSTMCHECK_SOURCE_DIR, o->against, cr->against, &err)))
        return cmd_fail(o, rc, "%s", err.msg);
    ssize_t len = readlink("/proc/self/exe", cr->self_exe, sizeof cr->self_exe - 1);
    cr->self_exe[len > 0 ? len : 0] = '\0';
    baseline_settings_from(o, cr->device, &cr->settings);
    comparison_result *r = &cr->result;
    comparison_init(r, desc, path, cr->file->nentries,
                    comparison_family_size(cr->device, cr->file->nentries, items));
    comparison_describe_build(LSTMCHECK_SOURCE_DIR, r->current, sizeof r->current);
    snprintf(r->device, sizeof r->device, "%s", lc_device_name(cr->device));
    r->ab_asked = o->ab || o->against;
    r->budget_s = cr->settings.compare_budget_s;
    int asked[LC_DEVICE_COUNT] = {0};
    asked[cr->device] = 1;
    run_context_collect(&r->context, session_built_from(), asked);
    r->context_known = 1;
    return LC_OK;
}

lc_status baseline_compare_items(const cli_options *o, lc_device device, const char *dir, work_item *items, int n)
{
    machine_file f;
    lc_status rc = baseline_open_machine_file(o, device, dir, &f, NULL);
    if (rc)
        return rc;
    compare_run cr = {.o = o, .device = device, .dir = dir, .file = &f.b};
    if ((rc = compare_begin(&cr, f.path, f.machine, n))) {
        baseline_free(&f.b);
        return rc;
    }
    if (!o->json)
        compare_report_begin(stdout, &cr.result);
    for (int i = 0; i < n; i++)
        compare_item(&cr, &items[i]);
    if (o->json)
        compare_report_json(stdout, &cr.result);
    else
        compare_report_end(stdout, &cr.result);
    rc = comparison_status(&cr.result);
    lc_error err = {{0}};
    if (compare_report_write(&cr.result, o->markdown_path, o->plot_path, &err))
        rc = cmd_fail(NULL, LC_ERROR, "%s", err.msg); /* stdout may hold the JSON already: said on stderr alone */
    comparison_free(&cr.result);
    numerics_cache_free(&cr.contexts);
    baseline_free(&f.b);
    return rc;
}
