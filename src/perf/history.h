/* `baseline history` as one value: a baseline file's committed versions
 * (git log of the file, oldest first, and its uncommitted version where the
 * working tree differs) and, per (runner, shape), one point at each version
 * that changed its entry: the median forward and backward runner/control
 * ratios, and the verdict against the point before. That verdict is the one
 * `baseline compare` would have given the newer measurement against the
 * older as its baseline (perf_decide_recorded, the same family size), less
 * the confirmation round: nothing can be measured again. A regression that
 * landed is a step: a point with a SLOWER phase (an improvement: FASTER),
 * at the commit that recorded it. Every printer
 * (report/history_report.h) reads this value alone. */
#ifndef LSTMCHECK_HISTORY_H
#define LSTMCHECK_HISTORY_H

#include "base/gitrev.h"
#include "perf/baseline.h"
#include "perf/verdict.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HISTORY_FORMAT "lstmcheck-history"
#define HISTORY_VERSION 1

/* One version of the file: the commit that wrote it ("" for the working
 * tree's uncommitted changes). */
typedef struct history_version {
    char commit[GIT_SHA_LEN + 1];
    char date[40];
    char subject[GIT_SUBJECT_MAX];
    int entries;          /* entries it holds: 0 where the commit deleted the file */
    char unreadable[256]; /* why it could not be read (its points are missing), or "" */
} history_version;

typedef struct history_phase {
    double median;  /* of the runner/control ratios */
    int decided;    /* 1: v is the verdict against the point before */
    verdict_result v;
} history_phase;

typedef struct history_point {
    int version; /* the version that wrote this entry (index into versions) */
    /* what the entry records of itself: the commit and date it measured */
    char measured_commit[48], measured_date[32];
    history_phase phase[2]; /* forward, backward */
} history_point;

typedef struct history_series {
    char runner[32];
    lstm_shape shape;
    history_point *points;
    int npoints;
    baseline_entry last; /* the last point's measurement, while versions are added */
} history_series;

typedef struct history_result {
    char file[4096];
    char machine[1024]; /* the key of the newest readable version, described */
    int shallow;        /* a shallow clone: older commits may be missing */
    int cut;            /* more commits than GIT_LOG_MAX changed it: the newest are here */
    history_version *versions;
    int nversions;
    history_series *series; /* in the order their entries first appear */
    int nseries;
    int incomplete; /* out of host memory on the way: no report is written */
} history_result;

/* Which entries the history follows (the command's runner and shape
 * filters); NULL follows every entry. */
typedef int (*history_filter)(const baseline_entry *e, const void *arg);

/* The history of the baseline file at path: its commits (git), each
 * version read with baseline_parse, and the working tree's version where
 * it differs from the newest commit's. LC_OK; LC_MISSING when there is no
 * such file, committed or not; LC_UNSUPPORTED when it lies outside a git
 * checkout; LC_ERROR. err says which, in one line. A version that cannot
 * be read is kept with why (history_version.unreadable), not fatal. */
lc_status history_read(const char *path, history_filter keep, const void *arg, history_result *h, lc_error *err);

/* The parts of history_read, for tests without git. */
void history_init(history_result *h, const char *path);
/* Add the next version, holding b (NULL: unreadable, why says why; an
 * empty file: deleted). LC_OK, or LC_ERROR when out of host memory. */
lc_status history_add_version(history_result *h, const git_file_commit *c, const baseline_file *b, const char *why,
                              history_filter keep, const void *arg);
void history_free(history_result *h);

/* The phases by verdict over every decided point (indexed by verdict_kind). */
void history_count(const history_result *h, int counts[4]);
/* A point's step: the worse of its phases' verdicts (verdict_worse), or -1
 * for a first point (nothing before it). */
int history_point_verdict(const history_point *p);

#ifdef __cplusplus
}
#endif
#endif
