/* What `baseline show` and `baseline update` print (see baseline_report.h). */
#include "report/baseline_report.h"

#include "base/json.h"
#include "perf/stats.h"
#include "runners/runner.h"

#include <stdio.h>

void baseline_report_stale(const char *path, const baseline_file *b)
{
    for (int i = 0; i < b->nentries; i++)
        if (!registry_find(b->entries[i].runner))
            fprintf(stderr, "lstmcheck: warning: %s: entries[%d] is for runner '%s', which no longer exists "
                            "(stale: remove it from the file)\n", path, i, b->entries[i].runner);
}

static void median_text(const baseline_series *s, char *buf, size_t n)
{
    sample_summary sum;
    stats_summarize(s->samples, s->n, &sum);
    snprintf(buf, n, "%.4g ms +-%.1f%%", sum.median, 100 * stats_robust_rel_spread(&sum));
}

void baseline_report_show_table(const char *path, const char *machine, const baseline_file *b)
{
    printf("%s\nmachine: %s\n", path, machine);
    printf("%-16s %-22s %-22s %-22s %7s %7s %-20s %s\n", "runner", "shape", "forward", "backward", "noise_f",
           "noise_b", "date", "commit");
    for (int i = 0; i < b->nentries; i++) {
        const baseline_entry *e = &b->entries[i];
        char tag[64], f[48], bw[48];
        median_text(&e->fwd, f, sizeof f);
        median_text(&e->bwd, bw, sizeof bw);
        printf("%-16s %-22s %-22s %-22s %6.2f%% %6.2f%% %-20s %s\n", e->runner,
               lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag), f, bw, 100 * e->noise_fwd,
               100 * e->noise_bwd, e->date, e->git_commit);
        if (e->unchecked[0])
            printf("%-16s %-22s note: %s\n", e->runner, "", e->unchecked);
    }
}

static void show_entry_json(json_writer *w, const baseline_entry *e)
{
    char tag[64];
    sample_summary sf, sb;
    stats_summarize(e->fwd.samples, e->fwd.n, &sf);
    stats_summarize(e->bwd.samples, e->bwd.n, &sb);
    json_object_begin(w);
    json_member_string(w, "runner", e->runner);
    json_member_string(w, "shape", lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag));
    json_member_double(w, "forward_median_ms", sf.median);
    json_member_double(w, "backward_median_ms", sb.median);
    json_member_double(w, "noise_forward", e->noise_fwd);
    json_member_double(w, "noise_backward", e->noise_bwd);
    json_member_int(w, "samples", e->fwd.n);
    json_member_string(w, "date", e->date);
    json_member_string(w, "git_commit", e->git_commit);
    if (e->unchecked[0])
        json_member_string(w, "unchecked", e->unchecked);
    json_object_end(w);
}

void baseline_report_show_json(const char *path, const baseline_file *b)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE | JSON_NONFINITE_AS_NULL);
    json_object_begin(&w);
    json_member_string(&w, "file", path);
    json_key(&w, "entries");
    json_array_begin(&w);
    for (int i = 0; i < b->nentries; i++)
        show_entry_json(&w, &b->entries[i]);
    json_array_end(&w);
    json_object_end(&w);
    const char *text = json_text(&w, NULL);
    if (text)
        printf("%s\n", text);
    else
        fprintf(stderr, "lstmcheck: out of host memory for the JSON output\n");
    json_free(&w);
}

void baseline_report_missing(const char *machine, const char *path, const char *device)
{
    printf("no baseline for this machine (%s) at %s; make one with: lstmcheck baseline update --device %s\n",
           machine, path, device);
}

void baseline_report_failed(FILE *f, const char *runner, const char *shape, int wrong, const char *reason,
                            const char *detail)
{
    if (wrong)
        fprintf(f, "WRONG %s: %s\n  %s\n", shape, reason, detail ? detail : "");
    else
        fprintf(f, "ERROR %s %s: %s\n", runner, shape, reason);
    fflush(f);
}

void baseline_report_skip(FILE *f, const char *runner, const char *shape, const char *why)
{
    fprintf(f, "SKIP %s %s: %s\n", runner, shape, why);
    fflush(f);
}

void baseline_report_measuring(const char *runner, const char *shape, int rounds)
{
    fprintf(stderr, "measuring %s %s (%d rounds)...\n", runner, shape, rounds);
}

void baseline_report_update_row(const baseline_entry *e, const baseline_file *old_file, int first)
{
    if (first)
        printf("%-16s %-22s %-6s %-22s %-22s %8s %7s\n", "runner", "shape", "phase", "old median", "new median",
               "change", "noise");
    const baseline_entry *old = baseline_find(old_file, e->runner, &e->shape);
    char tag[64];
    lstm_shape_format(&e->shape, LSTM_SHAPE_TAG, tag, sizeof tag);
    for (int ph = 0; ph < 2; ph++) {
        const baseline_series *nw = ph ? &e->bwd : &e->fwd;
        const baseline_series *ol = old ? (ph ? &old->bwd : &old->fwd) : NULL;
        char a[48] = "(none)", c[48], ch[16] = "";
        if (ol) {
            median_text(ol, a, sizeof a);
            sample_summary so, sn;
            stats_summarize(ol->samples, ol->n, &so);
            stats_summarize(nw->samples, nw->n, &sn);
            snprintf(ch, sizeof ch, "%+.1f%%", 100 * (sn.median / so.median - 1));
        }
        median_text(nw, c, sizeof c);
        printf("%-16s %-22s %-6s %-22s %-22s %8s %6.2f%%\n", e->runner, tag, ph ? "bwd" : "fwd", a, c, ch,
               100 * (ph ? e->noise_bwd : e->noise_fwd));
    }
    if (e->unchecked[0])
        printf("%-16s %-22s note: %s\n", e->runner, tag, e->unchecked);
    fflush(stdout);
}

void baseline_report_not_recorded(const char *runner, const char *shape, const char *why)
{
    fprintf(stderr, "lstmcheck: %s %s: %s; not recorded\n", runner, shape, why);
}

void baseline_report_refused(const char *runner, int wrong)
{
    printf("refusing to record a baseline for %s: %s\n", runner,
           wrong ? "its results differ from the reference" : "it failed with an error");
    fflush(stdout);
}

void baseline_report_stored(int n, const char *path)
{
    printf("wrote %d %s to %s\n", n, n == 1 ? "entry" : "entries", path);
    fflush(stdout);
}

void baseline_report_store_failed(const char *why, int not_overwritten)
{
    fprintf(stderr, "lstmcheck: %s%s\n", why, not_overwritten ? " (not overwritten)" : "");
}

void baseline_report_update_end(const baseline_update_summary *s)
{
    if (s->keep_going && s->failed)
        printf("--keep-going: %d of %d (runner, shape) pairs not recorded (above), %d skipped (cannot run here), "
               "%d not tried; %d recorded\n",
               s->failed, s->items, s->skipped, s->items - s->tried, s->stored);
    else if (s->stopped)
        printf("nothing written (%d of %d (runner, shape) pairs not tried)\n", s->items - s->tried, s->items);
    if (s->nothing_measured)
        printf("nothing measured: no runner of %s can run here\n", s->device);
    fflush(stdout);
}
