/* Baseline files: committed JSON, one file per machine key, holding for
 * each (runner, shape) the forward, backward and control samples of a
 * measurement of known-good code. Schema: docs/baselines.md. */
#ifndef LSTMCHECK_BASELINE_H
#define LSTMCHECK_BASELINE_H

#include "perf/harness.h"
#include "model/lstm.h"
#include "device/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BASELINE_FORMAT "lstmcheck-baseline"
#define BASELINE_VERSION 1

typedef struct baseline_series {
    int n;
    double *samples; /* n values (ms, or runner/control ratios) */
} baseline_series;

typedef struct baseline_entry {
    char runner[32];
    lstm_shape shape;
    unsigned long long seed;
    char lstmcheck_version[32], git_commit[48], date[32], control[96];
    /* git_commit names a commit anyone can rebuild (a clean tree); a
     * measurement of uncommitted changes records "<commit>-dirty" and 0 */
    int reproducible;
    int rounds;
    baseline_series fwd, bwd, ctl;         /* milliseconds */
    baseline_series fwd_ratio, bwd_ratio;  /* runner / control */
    double noise_fwd, noise_bwd;           /* run-to-run noise of the ratio medians (relative sd) */
} baseline_entry;

typedef struct baseline_file {
    machine_key machine;
    int nentries;
    baseline_entry *entries;
} baseline_file;

void baseline_path(const char *dir, const machine_key *k, char *path, size_t n);
/* LC_OK; LC_MISSING when there is no file (b empty); LC_BAD_INPUT when it is
 * unusable (err names the file and the field). */
lc_status baseline_load(const char *path, baseline_file *b, lc_error *err);
/* Writes atomically (temporary file + rename). */
int baseline_save(const char *path, const baseline_file *b, lc_error *err);
void baseline_free(baseline_file *b);

baseline_entry *baseline_find(baseline_file *b, const char *runner, const lstm_shape *s);
/* Append n values to a series (grows it). */
int baseline_series_append(baseline_series *s, const double *v, int n, lc_error *err);
/* Append every series of src to dst's (pooling two measurements). */
int baseline_entry_append(baseline_entry *dst, const baseline_entry *src, lc_error *err);

/* Insert or replace the entry for (runner, shape); takes ownership of e's arrays. */
int baseline_put(baseline_file *b, baseline_entry *e, lc_error *err);
void baseline_entry_free(baseline_entry *e);

/* The commit an A/B comparison measures against where this machine has no
 * baseline: over every file of the device in dir, the newest reproducible
 * entry of (runner, shape), else the device's newest reproducible entry.
 * 0 with the commit and why (which file, which date); 1 when there is none,
 * why says what was seen. Unreadable files are warned about and passed over. */
int baseline_reference_commit(const char *dir, lc_device device, const char *runner, const lstm_shape *shape,
                              char commit[48], char *why, size_t n);

/* The directory used when --baseline-dir is not given: $LSTMCHECK_BASELINE_DIR,
 * else the source tree's baselines/. */
const char *baseline_default_dir(void);

#ifdef __cplusplus
}
#endif
#endif
