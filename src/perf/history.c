/* A baseline file's history (see history.h). */
#include "perf/history.h"

#include "base/files.h"
#include "perf/comparison.h"
#include "perf/perf.h"
#include "perf/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void history_init(history_result *h, const char *path)
{
    memset(h, 0, sizeof *h);
    snprintf(h->file, sizeof h->file, "%s", path);
}

void history_free(history_result *h)
{
    for (int i = 0; i < h->nseries; i++) {
        free(h->series[i].points);
        baseline_entry_free(&h->series[i].last);
    }
    free(h->series);
    free(h->versions);
    h->series = NULL;
    h->versions = NULL;
    h->nseries = h->nversions = 0;
}

static int same_series(const baseline_series *a, const baseline_series *b)
{
    return a->n == b->n && (!a->n || !memcmp(a->samples, b->samples, (size_t)a->n * sizeof *a->samples));
}

/* 1 when e is the measurement last was taken from (a version that left the
 * entry as it was). */
static int same_measurement(const baseline_entry *last, const baseline_entry *e)
{
    return !strcmp(last->date, e->date) && !strcmp(last->git_commit, e->git_commit) &&
           last->noise_fwd == e->noise_fwd && last->noise_bwd == e->noise_bwd &&
           same_series(&last->fwd_ratio, &e->fwd_ratio) && same_series(&last->bwd_ratio, &e->bwd_ratio) &&
           same_series(&last->ctl, &e->ctl);
}

/* What the next point is decided against: e's ratios, controls and noise. */
static int keep_measurement(baseline_entry *last, const baseline_entry *e)
{
    lc_error ignored;
    baseline_entry_free(last);
    memset(last, 0, sizeof *last);
    snprintf(last->date, sizeof last->date, "%s", e->date);
    snprintf(last->git_commit, sizeof last->git_commit, "%s", e->git_commit);
    last->noise_fwd = e->noise_fwd;
    last->noise_bwd = e->noise_bwd;
    return baseline_series_append(&last->fwd_ratio, e->fwd_ratio.samples, e->fwd_ratio.n, &ignored) ||
           baseline_series_append(&last->bwd_ratio, e->bwd_ratio.samples, e->bwd_ratio.n, &ignored) ||
           baseline_series_append(&last->ctl, e->ctl.samples, e->ctl.n, &ignored);
}

/* The series of e's (runner, shape), added where it is new; NULL when out of memory. */
static history_series *series_of(history_result *h, const baseline_entry *e)
{
    for (int i = 0; i < h->nseries; i++)
        if (!strcmp(h->series[i].runner, e->runner) && lstm_shape_equal(&h->series[i].shape, &e->shape))
            return &h->series[i];
    history_series *grown = realloc(h->series, (size_t)(h->nseries + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    h->series = grown;
    history_series *s = &h->series[h->nseries++];
    memset(s, 0, sizeof *s);
    snprintf(s->runner, sizeof s->runner, "%s", e->runner);
    s->shape = e->shape;
    return s;
}

static double median_of(const baseline_series *v)
{
    sample_summary s;
    stats_summarize(v->samples, v->n, &s);
    return s.median;
}

/* e, as written by version, is s's next point: decided against the one
 * before with the family size m. */
static int add_point(history_series *s, int version, const baseline_entry *e, int m)
{
    history_point *grown = realloc(s->points, (size_t)(s->npoints + 1) * sizeof *grown);
    if (!grown)
        return 1;
    s->points = grown;
    history_point *p = &s->points[s->npoints];
    memset(p, 0, sizeof *p);
    p->version = version;
    snprintf(p->measured_commit, sizeof p->measured_commit, "%s", e->git_commit);
    snprintf(p->measured_date, sizeof p->measured_date, "%s", e->date);
    p->phase[0].median = median_of(&e->fwd_ratio);
    p->phase[1].median = median_of(&e->bwd_ratio);
    if (s->npoints) {
        perf_decide_recorded(&s->last, e, m, &p->phase[0].v, &p->phase[1].v);
        p->phase[0].decided = p->phase[1].decided = 1;
    }
    s->npoints++;
    return keep_measurement(&s->last, e);
}

static lc_status add_entries(history_result *h, const baseline_file *b, history_filter keep, const void *arg)
{
    const int version = h->nversions - 1;
    const int m = comparison_family_size(b->machine.device, b->nentries, 0);
    for (int i = 0; i < b->nentries; i++) {
        const baseline_entry *e = &b->entries[i];
        if (keep && !keep(e, arg))
            continue;
        history_series *s = series_of(h, e);
        if (!s)
            return LC_ERROR;
        if (s->npoints && same_measurement(&s->last, e))
            continue;
        if (add_point(s, version, e, m))
            return LC_ERROR;
    }
    return LC_OK;
}

lc_status history_add_version(history_result *h, const git_file_commit *c, const baseline_file *b, const char *why,
                              history_filter keep, const void *arg)
{
    history_version *grown = realloc(h->versions, (size_t)(h->nversions + 1) * sizeof *grown);
    if (!grown) {
        h->incomplete = 1;
        return LC_ERROR;
    }
    h->versions = grown;
    history_version *v = &h->versions[h->nversions++];
    memset(v, 0, sizeof *v);
    snprintf(v->commit, sizeof v->commit, "%s", c->sha);
    snprintf(v->date, sizeof v->date, "%s", c->date);
    snprintf(v->subject, sizeof v->subject, "%s", c->subject);
    if (!b) {
        snprintf(v->unreadable, sizeof v->unreadable, "%s", why && *why ? why : "cannot be read");
        return LC_OK;
    }
    v->entries = b->nentries;
    if (b->machine.nfields)
        machine_key_describe(&b->machine, h->machine, sizeof h->machine);
    if (add_entries(h, b, keep, arg)) {
        h->incomplete = 1;
        return LC_ERROR;
    }
    return LC_OK;
}

/* One version from its text: parsed, or kept as unreadable with why. */
static lc_status add_text(history_result *h, const git_file_commit *c, const char *text, size_t len,
                          history_filter keep, const void *arg)
{
    baseline_file b;
    lc_error why = {{0}};
    char name[80];
    snprintf(name, sizeof name, "%.12s", c->sha[0] ? c->sha : "the working tree");
    const int unreadable = text && baseline_parse(text, len, name, &b, &why) != LC_OK;
    baseline_file none = {0};
    lc_status rc = history_add_version(h, c, unreadable ? NULL : text ? &b : &none, why.msg, keep, arg);
    if (text && !unreadable)
        baseline_free(&b);
    return rc;
}

/* Every committed version; the newest one's text stays in *newest. */
static lc_status add_commits(history_result *h, const git_file_commit *commits, int n, history_filter keep,
                             const void *arg, char **newest, size_t *newest_len, lc_error *err)
{
    for (int i = 0; i < n; i++) {
        char *text = NULL;
        size_t len = 0;
        lc_error why = {{0}};
        const lc_status got = git_file_at(h->file, commits[i].sha, BASELINE_MAX_FILE_BYTES, &text, &len, &why);
        if (got == LC_ERROR) {
            lc_error_set(err, "%s", why.msg);
            return LC_ERROR;
        }
        lc_status rc = got == LC_BAD_INPUT ? history_add_version(h, &commits[i], NULL, why.msg, keep, arg)
                                           : add_text(h, &commits[i], text, len, keep, arg);
        free(*newest);
        *newest = text;
        *newest_len = len;
        if (rc) {
            lc_error_set(err, "out of host memory");
            return rc;
        }
    }
    return LC_OK;
}

/* The working tree's version, where it is not the newest commit's. */
static lc_status add_worktree(history_result *h, const char *newest, size_t newest_len, history_filter keep,
                              const void *arg, lc_error *err)
{
    char *text = NULL;
    size_t len = 0;
    lc_error why = {{0}};
    const lc_status got = file_read_regular(h->file, BASELINE_MAX_FILE_BYTES, &text, &len, &why);
    if (got == LC_MISSING && !h->nversions) {
        lc_error_set(err, "no baseline at %s, committed or not", h->file);
        return LC_MISSING;
    }
    const int changed = got == LC_OK ? !newest || len != newest_len || memcmp(text, newest, len)
                                     : got == LC_MISSING ? newest != NULL : 1;
    lc_status rc = LC_OK;
    const git_file_commit worktree = {.subject = "uncommitted changes in the working tree"};
    if (changed)
        rc = got == LC_OK || got == LC_MISSING ? add_text(h, &worktree, text, len, keep, arg)
                                               : history_add_version(h, &worktree, NULL, why.msg, keep, arg);
    free(text);
    if (rc)
        lc_error_set(err, "out of host memory");
    return rc;
}

lc_status history_read(const char *path, history_filter keep, const void *arg, history_result *h, lc_error *err)
{
    history_init(h, path);
    struct stat st;
    const int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        lc_error_set(err, "%s is not a regular file", path);
        return LC_BAD_INPUT;
    }
    git_file_commit *commits = NULL;
    int n = 0;
    lc_status rc = git_file_log(path, &commits, &n, &h->cut, &h->shallow, err);
    if (rc == LC_UNSUPPORTED && !exists) {
        lc_error_set(err, "no baseline at %s", path);
        rc = LC_MISSING;
    }
    if (rc)
        return rc;
    char *newest = NULL;
    size_t newest_len = 0;
    rc = add_commits(h, commits, n, keep, arg, &newest, &newest_len, err);
    free(commits);
    if (!rc)
        rc = add_worktree(h, newest, newest_len, keep, arg, err);
    free(newest);
    return rc;
}

int history_point_verdict(const history_point *p)
{
    if (!p->phase[0].decided)
        return -1;
    return verdict_worse(p->phase[0].v.kind, p->phase[1].v.kind);
}

void history_count(const history_result *h, int counts[4])
{
    memset(counts, 0, 4 * sizeof *counts);
    for (int i = 0; i < h->nseries; i++)
        for (int k = 0; k < h->series[i].npoints; k++)
            for (int b = 0; b < 2; b++)
                if (h->series[i].points[k].phase[b].decided)
                    counts[h->series[i].points[k].phase[b].v.kind]++;
}
