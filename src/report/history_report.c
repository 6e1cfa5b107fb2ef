/* `baseline history`'s table, JSON and markdown (see history_report.h).
 * Numbers are those of the one value, rounded for reading, never
 * recomputed: the median ratio, the change of the median against the point
 * before, the verdict. */
#include "report/history_report.h"

#include "base/json.h"
#include "base/text.h"
#include "report/markup.h"

#include <stdio.h>
#include <string.h>

static const char *const phase_name[2] = {"forward", "backward"};

const char *history_version_name(const history_version *v, char *buf, size_t n)
{
    snprintf(buf, n, "%.12s", v->commit[0] ? v->commit : "uncommitted");
    return buf;
}

/* A recorded commit, cut to 12 characters, keeping git describe's -dirty. */
static const char *short_commit(const char *commit, char *buf, size_t n)
{
    const size_t len = strlen(commit);
    const int dirty = len > 6 && !strcmp(commit + len - 6, "-dirty");
    snprintf(buf, n, "%.12s%s", commit, dirty ? "-dirty" : "");
    return buf;
}

/* "2026-11-25T06:55:16Z" as "2026-11-25 06:55". */
static const char *short_date(const char *date, char *buf, size_t n)
{
    snprintf(buf, n, "%.10s%s%.5s", date, strlen(date) > 11 ? " " : "", strlen(date) > 11 ? date + 11 : "");
    return buf;
}

static void counts_line(const history_result *h, char *buf, size_t n)
{
    int c[4], decided = 0;
    history_count(h, c);
    for (int k = 0; k < 4; k++)
        decided += c[k];
    snprintf(buf, n, "%d phases decided against the point before: %d SLOWER, %d FASTER, %d SAME, %d INCONCLUSIVE",
             decided, c[VERDICT_SLOWER], c[VERDICT_FASTER], c[VERDICT_SAME], c[VERDICT_INCONCLUSIVE]);
}

/* ---- the table ---- */

static void table_versions(FILE *f, const history_result *h)
{
    fprintf(f, "%d version%s, oldest first:\n", h->nversions, h->nversions == 1 ? "" : "s");
    for (int i = 0; i < h->nversions; i++) {
        const history_version *v = &h->versions[i];
        char name[16], date[24], subject[4 * GIT_SUBJECT_MAX];
        fprintf(f, "  %-12s  %-16s  %s", history_version_name(v, name, sizeof name),
                short_date(v->date, date, sizeof date), text_printable(v->subject, subject, sizeof subject));
        if (v->unreadable[0])
            fprintf(f, "  (unreadable: %s)", text_printable(v->unreadable, subject, sizeof subject));
        fputc('\n', f);
    }
    if (h->shallow)
        fprintf(f, "note: a shallow clone: older commits may be missing (git fetch --unshallow)\n");
    if (h->cut)
        fprintf(f, "note: more than %d commits changed it: the newest %d are here\n", GIT_LOG_MAX, GIT_LOG_MAX);
}

static void table_phase(FILE *f, const history_phase *ph, int last)
{
    char cell[48];
    if (ph->decided)
        snprintf(cell, sizeof cell, "%.4f %+6.1f%% %s", ph->median, 100 * ph->v.change, verdict_name(ph->v.kind));
    else
        snprintf(cell, sizeof cell, "%.4f", ph->median);
    fprintf(f, "  %-*s", last ? 0 : 30, cell);
}

static void table_series(FILE *f, const history_result *h, const history_series *s)
{
    char shape[64], name[16], commit[32], date[24];
    fprintf(f, "\n%s  %s\n", s->runner, lstm_shape_format(&s->shape, LSTM_SHAPE_TAG, shape, sizeof shape));
    fprintf(f, "  %-12s  %-18s  %-16s  %-30s  %s\n", "version", "measured at", "measured on", "forward",
            "backward");
    for (int k = 0; k < s->npoints; k++) {
        const history_point *p = &s->points[k];
        fprintf(f, "  %-12s  %-18s  %-16s", history_version_name(&h->versions[p->version], name, sizeof name),
                short_commit(p->measured_commit, commit, sizeof commit),
                short_date(p->measured_date, date, sizeof date));
        table_phase(f, &p->phase[0], 0);
        table_phase(f, &p->phase[1], 1);
        fputc('\n', f);
    }
}

/* The points where a phase is SLOWER or FASTER: where a change landed. */
static void table_steps(FILE *f, const history_result *h)
{
    char shape[64], name[16], commit[32];
    for (int i = 0; i < h->nseries; i++)
        for (int k = 0; k < h->series[i].npoints; k++)
            for (int b = 0; b < 2; b++) {
                const history_point *p = &h->series[i].points[k];
                const history_phase *ph = &p->phase[b];
                if (!ph->decided || (ph->v.kind != VERDICT_SLOWER && ph->v.kind != VERDICT_FASTER))
                    continue;
                fprintf(f, "  %s %s %s %s %+.1f%% [%+.1f%%, %+.1f%%] at %s (measured at %s)\n",
                        verdict_name(ph->v.kind), h->series[i].runner,
                        lstm_shape_format(&h->series[i].shape, LSTM_SHAPE_TAG, shape, sizeof shape), phase_name[b],
                        100 * ph->v.change, 100 * ph->v.ci_low, 100 * ph->v.ci_high,
                        history_version_name(&h->versions[p->version], name, sizeof name),
                        short_commit(p->measured_commit, commit, sizeof commit));
            }
}

void history_report_table(FILE *f, const history_result *h)
{
    char line[512];
    fprintf(f, "History of %s\n", h->file);
    if (h->machine[0])
        fprintf(f, "machine: %s\n", h->machine);
    table_versions(f, h);
    fprintf(f, "\nPer runner and shape, each version that changed its entry: the median runner/control time "
               "ratio,\nand its change against the point before with the verdict baseline compare gives (no "
               "confirmation round).\n");
    for (int i = 0; i < h->nseries; i++)
        table_series(f, h, &h->series[i]);
    if (!h->nseries)
        fprintf(f, "\nno entries to follow\n");
    counts_line(h, line, sizeof line);
    fprintf(f, "\n%s\n", line);
    table_steps(f, h);
}

/* ---- JSON ---- */

static void json_version(json_writer *w, const history_version *v)
{
    json_object_begin(w);
    if (v->commit[0])
        json_member_string(w, "commit", v->commit);
    else
        json_member_null(w, "commit"); /* the working tree */
    json_member_string(w, "date", v->date);
    json_member_string(w, "subject", v->subject);
    json_member_int(w, "entries", v->entries);
    if (v->unreadable[0])
        json_member_string(w, "unreadable", v->unreadable);
    else
        json_member_null(w, "unreadable");
    json_object_end(w);
}

static void json_phase(json_writer *w, const history_phase *ph)
{
    json_object_begin(w);
    json_member_double(w, "median_ratio", ph->median);
    json_key(w, "against_previous");
    if (!ph->decided) {
        json_null(w);
    } else {
        json_object_begin(w);
        json_member_string(w, "verdict", verdict_name(ph->v.kind));
        json_member_double(w, "change", ph->v.change);
        json_member_double(w, "ci_low", ph->v.ci_low);
        json_member_double(w, "ci_high", ph->v.ci_high);
        json_member_double(w, "p", ph->v.p);
        json_member_double(w, "min_effect", ph->v.delta);
        json_member_double(w, "control_drift", ph->v.control_drift);
        json_member_string(w, "reason", ph->v.reason);
        json_object_end(w);
    }
    json_object_end(w);
}

static void json_series(json_writer *w, const history_series *s)
{
    json_object_begin(w);
    json_member_string(w, "runner", s->runner);
    json_key(w, "shape");
    lstm_shape_json(w, &s->shape);
    json_key(w, "points");
    json_array_begin(w);
    for (int k = 0; k < s->npoints; k++) {
        const history_point *p = &s->points[k];
        json_object_begin(w);
        json_member_int(w, "version", p->version);
        json_member_string(w, "measured_commit", p->measured_commit);
        json_member_string(w, "measured_date", p->measured_date);
        for (int b = 0; b < 2; b++) {
            json_key(w, phase_name[b]);
            json_phase(w, &p->phase[b]);
        }
        json_object_end(w);
    }
    json_array_end(w);
    json_object_end(w);
}

int history_report_json(FILE *f, const history_result *h)
{
    json_writer w;
    json_init(&w, JSON_ONE_LINE | JSON_NONFINITE_AS_NULL);
    int c[4];
    history_count(h, c);
    json_object_begin(&w);
    json_member_string(&w, "format", HISTORY_FORMAT);
    json_member_int(&w, "version", HISTORY_VERSION);
    json_member_string(&w, "file", h->file);
    json_member_string(&w, "machine", h->machine);
    json_member_bool(&w, "shallow", h->shallow);
    json_member_bool(&w, "cut", h->cut);
    json_key(&w, "versions");
    json_array_begin(&w);
    for (int i = 0; i < h->nversions; i++)
        json_version(&w, &h->versions[i]);
    json_array_end(&w);
    json_key(&w, "counts");
    json_object_begin(&w);
    for (int k = 0; k < 4; k++)
        json_member_int(&w, verdict_name((verdict_kind)k), c[k]);
    json_object_end(&w);
    json_key(&w, "series");
    json_array_begin(&w);
    for (int i = 0; i < h->nseries; i++)
        json_series(&w, &h->series[i]);
    json_array_end(&w);
    json_object_end(&w);
    const char *text = h->incomplete ? NULL : json_text(&w, NULL);
    if (text)
        fprintf(f, "%s\n", text);
    else
        fprintf(stderr, "lstmcheck: out of host memory for the JSON output\n");
    json_free(&w);
    return text ? 0 : -1;
}

/* ---- markdown ---- */

static void md_phase(FILE *f, const history_phase *ph)
{
    fprintf(f, " %.4f |", ph->median);
    if (ph->decided)
        fprintf(f, " %+.1f%% %s |", 100 * ph->v.change,
                ph->v.kind == VERDICT_SLOWER ? "**SLOWER**" : verdict_name(ph->v.kind));
    else
        fputs(" |", f);
}

static void md_series(FILE *f, const history_result *h, const history_series *s)
{
    char shape[64], name[16], commit[32];
    for (int k = 0; k < s->npoints; k++) {
        const history_point *p = &s->points[k];
        fputs("| ", f);
        markup_md_text(f, k ? "" : s->runner);
        fprintf(f, " | %s | `%s` | ", k ? "" : lstm_shape_format(&s->shape, LSTM_SHAPE_TAG, shape, sizeof shape),
                history_version_name(&h->versions[p->version], name, sizeof name));
        markup_md_text(f, short_commit(p->measured_commit, commit, sizeof commit));
        fputs(" |", f);
        md_phase(f, &p->phase[0]);
        md_phase(f, &p->phase[1]);
        fputc('\n', f);
    }
}

static void put_markdown(FILE *f, const void *value)
{
    const history_result *h = value;
    char line[512], name[16], date[24];
    fputs("### Baseline history of ", f);
    markup_md_text(f, h->file); /* escaped text: a code span would show the escapes */
    fputs("\n\nMachine: ", f);
    markup_md_text(f, h->machine[0] ? h->machine : "unknown");
    fputs("\n\n| version | date | subject |\n| --- | --- | --- |\n", f);
    for (int i = 0; i < h->nversions; i++) {
        const history_version *v = &h->versions[i];
        fprintf(f, "| `%s` | ", history_version_name(v, name, sizeof name));
        markup_md_text(f, short_date(v->date, date, sizeof date));
        fputs(" | ", f);
        markup_md_text(f, v->subject);
        if (v->unreadable[0]) {
            fputs(" (unreadable: ", f);
            markup_md_text(f, v->unreadable);
            fputc(')', f);
        }
        fputs(" |\n", f);
    }
    fputs("\nMedian runner/control time ratio at each version that changed the entry; change and verdict "
          "against the point before, as `baseline compare` decides.\n\n"
          "| runner | shape | version | measured at | forward | change | backward | change |\n"
          "| --- | --- | --- | --- | ---: | --- | ---: | --- |\n", f);
    for (int i = 0; i < h->nseries; i++)
        md_series(f, h, &h->series[i]);
    counts_line(h, line, sizeof line);
    fprintf(f, "\n%s.\n", line);
}

lc_status history_report_markdown(const history_result *h, const char *path, lc_error *err)
{
    return report_emit(path, put_markdown, h, h->incomplete, err);
}
