/* `baseline history` without git (src/perf/history.h): versions of a file
 * added in order give one point per version that changed an entry, the
 * verdict against the point before, and none for a version that left the
 * entry as it was; an unreadable or deleted version is kept, without
 * points. Its printers read the same value (history_report.h); the SVG it
 * draws is rendered by tests/report/ (LSTMCHECK_REPORT_OUT=DIR). The
 * git half: tests/unit/baseline_history.py, on a scratch repository. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "perf/history.h"
#include "report/history_report.h"

#include <cjson/cJSON.h>

#define SAMPLES 60

static const lstm_shape small = {.seq_length = 20, .num_layers = 1, .input_size = 128, .hidden_size = 128,
                                 .batch = 16};
static const lstm_shape layers = {.seq_length = 16, .num_layers = 2, .input_size = 128, .hidden_size = 128,
                                  .batch = 16};

/* An entry whose forward ratio sits at level (1% spread), measured on date. */
static int make_entry(baseline_entry *e, const char *runner, const lstm_shape *s, double level, const char *date)
{
    double ratio[SAMPLES], back[SAMPLES], ctl[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
        ctl[i] = 1.0 + 0.01 * sin(0.7 * i);
        ratio[i] = level * (1 + 0.01 * cos(1.3 * i));
        back[i] = 1.5 * (1 + 0.01 * sin(2.1 * i));
    }
    lc_error err;
    memset(e, 0, sizeof *e);
    snprintf(e->runner, sizeof e->runner, "%s", runner);
    e->shape = *s;
    snprintf(e->date, sizeof e->date, "%s", date);
    snprintf(e->git_commit, sizeof e->git_commit, "%s", "0123456789abcdef0123456789abcdef01234567");
    e->noise_fwd = e->noise_bwd = 0.002;
    return baseline_series_append(&e->fwd_ratio, ratio, SAMPLES, &err) ||
           baseline_series_append(&e->bwd_ratio, back, SAMPLES, &err) ||
           baseline_series_append(&e->ctl, ctl, SAMPLES, &err);
}

static git_file_commit commit(char digit, const char *subject)
{
    git_file_commit c = {.date = "2026-11-2"};
    memset(c.sha, digit, GIT_SHA_LEN);
    c.date[9] = digit;
    snprintf(c.subject, sizeof c.subject, "%s", subject);
    return c;
}

static int only_cpu(const baseline_entry *e, const void *arg)
{
    (void)arg;
    return !strcmp(e->runner, "cpu");
}

/* Five versions: cpu small recorded (1), re-measured level (2), 20% slower
 * (3), the file unreadable (4), then deleted (5); cpu layers recorded at
 * 1 and never changed; cpu_dropout (filtered out) at every version. */
static int build(history_result *h, history_filter keep)
{
    static const double level[3] = {1.0, 1.004, 1.2};
    history_init(h, "baselines/test.json");
    for (int v = 0; v < 3; v++) {
        baseline_file b = {.machine = {.device = LC_DEVICE_CPU}, .nentries = 3};
        baseline_entry e[3];
        char date[32];
        snprintf(date, sizeof date, "2026-11-2%dT10:00:00Z", v + 1);
        if (make_entry(&e[0], "cpu", &small, level[v], date) ||
            make_entry(&e[1], "cpu", &layers, 2.0, "2026-11-20T09:00:00Z") ||
            make_entry(&e[2], "cpu_dropout", &small, 1.0 + v, date))
            return 1;
        b.entries = e;
        const git_file_commit c = commit((char)('1' + v), "a | subject");
        const lc_status rc = history_add_version(h, &c, &b, NULL, keep, NULL);
        for (int i = 0; i < 3; i++)
            baseline_entry_free(&e[i]);
        if (rc)
            return 1;
    }
    const git_file_commit bad = commit('4', "broken"), gone = commit('5', "deleted");
    const baseline_file none = {0};
    return history_add_version(h, &bad, NULL, "4444: not JSON", keep, NULL) ||
           history_add_version(h, &gone, &none, NULL, keep, NULL);
}

static int check_points(const history_result *h)
{
    CHECK(h->nversions == 5 && h->nseries == 2, "%d versions, %d series", h->nversions, h->nseries);
    const history_series *s = &h->series[0];
    CHECK(!strcmp(s->runner, "cpu") && lstm_shape_equal(&s->shape, &small) && s->npoints == 3,
          "cpu small: %d points", s->npoints);
    CHECK(history_point_verdict(&s->points[0]) == -1 && !s->points[0].phase[0].decided, "a first point");
    CHECK(s->points[1].phase[0].v.kind == VERDICT_SAME, "+0.4%%: %s", s->points[1].phase[0].v.reason);
    CHECK(s->points[2].phase[0].v.kind == VERDICT_SLOWER && s->points[2].version == 2,
          "+20%% at the third version: %s", s->points[2].phase[0].v.reason);
    CHECK_NEAR(s->points[2].phase[0].v.change, 1.2 / 1.004 - 1, 1e-3);
    CHECK(s->points[2].phase[1].v.kind == VERDICT_SAME, "the backward did not move");
    CHECK(history_point_verdict(&s->points[2]) == VERDICT_SLOWER, "the step");
    CHECK(h->series[1].npoints == 1 && h->series[1].points[0].version == 0, "cpu layers: one point, never changed");
    CHECK(h->versions[3].unreadable[0] && h->versions[4].entries == 0 && !h->versions[4].unreadable[0],
          "the unreadable and the deleted versions are kept");
    int c[4];
    history_count(h, c);
    CHECK(c[VERDICT_SLOWER] == 1 && c[VERDICT_SAME] == 3 && c[VERDICT_FASTER] == 0 && c[VERDICT_INCONCLUSIVE] == 0,
          "counts %d %d %d %d", c[0], c[1], c[2], c[3]);
    return 0;
}

/* The document says what the value holds. */
static int check_json(const history_result *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f && history_report_json(f, h) == 0, "the document");
    fclose(f);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    CHECK(doc, "it parses");
    const cJSON *series = cJSON_GetObjectItem(doc, "series"), *versions = cJSON_GetObjectItem(doc, "versions");
    const cJSON *p2 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(series, 0), "points"), 2);
    const cJSON *against = cJSON_GetObjectItem(cJSON_GetObjectItem(p2, "forward"), "against_previous");
    const int ok = cJSON_GetArraySize(series) == 2 && cJSON_GetArraySize(versions) == 5 &&
                   !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(against, "verdict")), "SLOWER") &&
                   cJSON_GetObjectItem(p2, "version")->valueint == 2 &&
                   cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "counts"), "SLOWER")->valueint == 1;
    cJSON_Delete(doc);
    CHECK(ok, "series, versions, the step and the counts");
    return 0;
}

int test_history_steps(void)
{
    history_result h;
    int rc = build(&h, only_cpu) || check_points(&h) || check_json(&h);
    unit_out_file out;
    lc_error err = {{0}};
    if (!rc && !unit_open_out(&out, "history_steps.svg")) {
        rc = history_report_svg(&h, out.path, &err) != LC_OK;
        unit_remove_out(&out);
    }
    if (!rc && !unit_open_out(&out, "history_steps.md")) {
        rc = history_report_markdown(&h, out.path, &err) != LC_OK;
        unit_remove_out(&out);
    }
    history_free(&h);
    CHECK(!rc, "%s", err.msg[0] ? err.msg : "see above");
    /* every entry followed without a filter */
    rc = build(&h, NULL) || h.nseries != 3 || h.series[2].npoints != 3;
    history_free(&h);
    CHECK(!rc, "cpu_dropout is followed without a filter");
    return 0;
}
