/* Baseline files: committed JSON, one file per machine key, holding for
 * each (runner, shape) the forward, backward and control samples of a
 * measurement of known-good code. Schema: docs/baselines.md. */
#ifndef LSTMCHECK_BASELINE_H
#define LSTMCHECK_BASELINE_H

#include "perf/harness.h"
#include "model/lstm.h"
#include "device/machine.h"

#include <float.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BASELINE_FORMAT "lstmcheck-baseline"
#define BASELINE_VERSION 1

/* The range of every bounded number of a baseline file, in one place: the
 * writer refuses to write (baseline_check_entry) and the reader to read what
 * lies outside it, so anything written can be read back. Strings are bounded
 * by their fields' sizes below (a longer one is refused, never cut).
 *   X(id, what the messages call it, lowest, highest) */
#define BASELINE_LIMITS(X)                                                                                  \
    X(BL_SEED, "seed", 0, LSTM_MAX_SEED)                                                                    \
    X(BL_DIM, "shape size", 1, LSTM_MAX_DIM)                                                                \
    X(BL_ROUNDS, "rounds", 1, 1000)                                                                         \
    /* a noise of 1 (100%) already makes the minimum effect 500%: beyond it a                               \
     * file could switch the regression check off unnoticed */                                             \
    X(BL_NOISE, "noise", 0, 1)                                                                              \
    X(BL_SAMPLES, "samples of a series", 1, 10000000)                                                       \
    X(BL_ENTRIES, "entries", 0, 4096)
typedef enum {
#define BL_ENUM(id, what, lo, hi) id,
    BASELINE_LIMITS(BL_ENUM)
#undef BL_ENUM
    BL_COUNT
} baseline_limit_id;
typedef struct baseline_limit {
    const char *what;
    double lo, hi;
} baseline_limit;
extern const baseline_limit baseline_limits[BL_COUNT];
/* A stored ratio (forward_ratio[i], backward_ratio[i]) must be its stored
 * time over its stored control time (forward[i] / control[i]) within this
 * relative difference, or the file is refused: the verdict decides on the
 * ratios, so a ratio that is not its times' quotient would decide unseen.
 * This writer prints every number as the shortest text that reads back to
 * the same double, so its files give the very same quotient (0 would do).
 * Files written before by cJSON 1.7 (the committed baselines among them)
 * printed 15 digits whenever they read back within DBL_EPSILON relative
 * (cJSON's compare_double), so each of time, control and ratio may be off
 * by up to DBL_EPSILON, and the division made at measurement and the one
 * made on reading by half of it each: at most about 4 DBL_EPSILON (the
 * committed files: 1.8 at most). Twice that bound, about 1.8e-15: some
 * thirteen orders of magnitude under the verdict's 3% floor, so no edit
 * that could move a verdict passes. */
#define BASELINE_RATIO_TOLERANCE (8 * DBL_EPSILON)
/* Files larger than this are refused before they are read. */
#define BASELINE_MAX_FILE_BYTES (256L << 20)

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
    /* "" when the timed results were compared with the reference; else why
     * not, the label of that timing (runner_timing_unchecked) */
    char unchecked[160];
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

/* The path of machine k's file in dir, into path (n bytes); LC_BAD_INPUT
 * when it does not fit (never cut: a cut path names another file). */
lc_status baseline_path(const char *dir, const machine_key *k, char *path, size_t n, lc_error *err);
/* LC_OK; LC_MISSING when there is no file (b empty); LC_BAD_INPUT when it is
 * unusable (err names the file and the field). */
lc_status baseline_load(const char *path, baseline_file *b, lc_error *err);
/* The file at path for machine key: as baseline_load, but LC_MISSING gives
 * an empty file with the key, and a file of another machine is LC_BAD_INPUT. */
lc_status baseline_load_for(const char *path, const machine_key *key, baseline_file *b, lc_error *err);
/* The same from len bytes in memory (name: what messages call them). A
 * strict reader: one JSON document and nothing after it, no NUL byte (raw
 * or \u0000), no key twice in one object, no member the format lacks, every
 * number within BASELINE_LIMITS, every string within its field and free of
 * control characters, every runner a runner name, series lengths
 * consistent, every stored ratio the quotient of its stored times
 * (BASELINE_RATIO_TOLERANCE). */
lc_status baseline_parse(const char *buf, size_t len, const char *name, baseline_file *b, lc_error *err);
/* 0 when e is within every limit (what the reader accepts): strings, sizes,
 * noise, every series as long as the others, every sample positive and
 * finite, every ratio its times' quotient (BASELINE_RATIO_TOLERANCE); else
 * err names the field. The reader applies the same rules to every entry. */
int baseline_check_entry(const baseline_entry *e, lc_error *err);
/* Writes atomically (temporary file + rename); refuses an entry outside the
 * limits (nothing written). */
int baseline_save(const char *path, const baseline_file *b, lc_error *err);
/* Store n entries into the file at path for machine key: under an exclusive
 * lock on the file's directory the file is read again (another writer may
 * have stored since), the entries put in (taking their arrays), and it is
 * written atomically; stale temporary files of killed writers are removed
 * (said on stderr). LC_OK; LC_BAD_INPUT when the file is unusable or belongs
 * to another machine (not overwritten); LC_ERROR. */
lc_status baseline_store(const char *path, const machine_key *key, baseline_entry *entries, int n, lc_error *err);
void baseline_free(baseline_file *b);

const baseline_entry *baseline_find(const baseline_file *b, const char *runner, const lstm_shape *s);
/* The same entry's index in b->entries, or -1. */
int baseline_index(const baseline_file *b, const char *runner, const lstm_shape *s);
/* Append n values to a series (grows it). */
int baseline_series_append(baseline_series *s, const double *v, int n, lc_error *err);
/* Append every series of src to dst's (pooling two measurements). */
int baseline_entry_append(baseline_entry *dst, const baseline_entry *src, lc_error *err);

/* Insert or replace the entry for (runner, shape); takes ownership of e's arrays. */
int baseline_put(baseline_file *b, baseline_entry *e, lc_error *err);
void baseline_entry_free(baseline_entry *e);
/* An entry through a pipe (from a measuring child): 0 on success. The
 * receiver owns the arrays it made; on failure e is empty. */
int baseline_entry_send(int fd, const baseline_entry *e);
int baseline_entry_receive(int fd, baseline_entry *e, lc_error *err);

/* The commit an A/B comparison measures against where this machine has no
 * baseline: over every file of the device in dir, the newest reproducible
 * entry of (runner, shape), else the device's newest reproducible entry.
 * 0 with the commit and why (which file, which date); 1 when there is none,
 * why says what was seen. Unreadable files are warned about and passed over. */
int baseline_reference_commit(const char *dir, lc_device device, const char *runner, const lstm_shape *shape,
                              char commit[48], char *why, size_t n);

/* The directory used when --baseline-dir is not given: $LSTMCHECK_BASELINE_DIR,
 * else the source tree's baselines/, and for an installed lstmcheck (cmake
 * --install) the current directory's baselines/. */
const char *baseline_default_dir(void);

#ifdef __cplusplus
}
#endif
#endif
