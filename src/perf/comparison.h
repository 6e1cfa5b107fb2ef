/* One `baseline compare` as one value: the plan (what this build is
 * compared with on this machine, and the family size of the verdict) and,
 * per (runner, shape) in the order they were taken, how it ended: decided
 * (both phases' verdicts and what they were decided on, against the
 * machine's baseline entry or A/B against a commit, and why that commit),
 * not compared here (why), or failed (wrong results, or an error).
 * The policy that picks what a (runner, shape) is compared with lives here
 * too, so the command layer only orchestrates and every printer
 * (report/compare_report.h: table, JSON, markdown, SVG) reads this value
 * alone: they cannot disagree. */
#ifndef LSTMCHECK_COMPARISON_H
#define LSTMCHECK_COMPARISON_H

#include "perf/ab.h"
#include "perf/context.h"
#include "perf/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum comparison_outcome {
    COMPARISON_DECIDED = 0, /* both phases have a verdict (INCONCLUSIVE included) */
    COMPARISON_SKIPPED,     /* not compared here: reason says why */
    COMPARISON_WRONG,       /* the runner's results were wrong (gate, or its timed calls) */
    COMPARISON_ERROR,       /* the tool or the machine failed: reason says how */
} comparison_outcome;

#define COMPARISON_REASON_MAX 1024
#define COMPARISON_NOTE_MAX 512

/* A/B: side A, and why that commit (the decided row's against). */
typedef struct comparison_against {
    char commit[48];   /* "" against this machine's baseline entry */
    char why[600];
    int processes[2];  /* measuring processes per side, confirmation included */
} comparison_against;

typedef struct comparison_row {
    char runner[LSTMCHECK_QUALIFIED_NAME_MAX + 1];
    char shape[64];
    comparison_outcome outcome;
    char reason[COMPARISON_REASON_MAX]; /* skipped, wrong or error: one printable line */
    char detail[COMPARISON_REASON_MAX]; /* wrong only: what the runner is told (comparison_wrong_detail) */
    /* decided: */
    comparison_against against;
    /* why an entry's comparison became an A/B, or why its SLOWER (or its
     * drift) stands without one; or "" */
    char note[COMPARISON_NOTE_MAX];
    /* against this machine's baseline entry: the commit and date it was
     * measured at, as the file records them ("" in an A/B comparison) */
    char entry_commit[48], entry_date[32];
    perf_comparison cmp;
    /* run-to-run noise beside each verdict: the baseline entry's, or in an
     * A/B comparison the spread of the process medians */
    double noise_fwd, noise_bwd;
} comparison_row;

typedef struct comparison_result {
    /* the plan */
    char machine[1024];  /* this machine's key, described */
    char baseline[4096]; /* this machine's baseline file */
    int baseline_entries; /* its entries: 0 when it has none (or none was read) */
    char device[16];     /* whose committed baselines name an A/B's commit */
    char current[256];   /* this build, as A/B rows name side B */
    int comparisons;     /* the family size m of the verdict */
    int ab_asked;        /* every row is A/B, as asked (--ab, --against) */
    double budget_s;     /* the time a comparison may take while inconclusive */
    run_context context; /* where, when and with what this build measured */
    int context_known;   /* context was collected (0: the printers say nothing of it) */
    /* the rows, in the order taken */
    comparison_row *rows;
    int nrows;
    int incomplete;      /* a row was lost (out of memory): no report is written */
} comparison_result;

/* The counts every printer shows: phases by verdict over decided rows;
 * rows not decided here (skipped, or a phase INCONCLUSIVE); rows failed. */
typedef struct comparison_counts {
    int phases[4];      /* indexed by verdict_kind */
    int skipped, wrong, errors;
    int undecided;      /* skipped rows + decided rows with an INCONCLUSIVE phase */
    int faster_rows;    /* decided rows with a FASTER phase: an update is due */
} comparison_counts;

/* baseline: this machine's file, holding entries entries. */
void comparison_init(comparison_result *r, const char *machine, const char *baseline, int entries, int comparisons);
void comparison_free(comparison_result *r);

/* Add a row; each returns its index, or -1 when out of memory (the result
 * is then marked incomplete). ab: the A/B details (against its side A and
 * why), NULL against this machine's baseline entry. */
int comparison_add_decided(comparison_result *r, const char *runner, const char *shape, const perf_comparison *c,
                           const ab_outcome *ab, const comparison_against *against, const char *note);
/* Row i (when i >= 0) was decided against the entry measured at commit on
 * date (baseline_entry's git_commit and date). */
void comparison_set_entry(comparison_result *r, int i, const char *commit, const char *date);
int comparison_add_skipped(comparison_result *r, const char *runner, const char *shape, const char *reason);
/* detail: for COMPARISON_WRONG, the line that tells what to fix; may be
 * NULL, and is dropped for any other outcome. */
int comparison_add_failed(comparison_result *r, const char *runner, const char *shape, comparison_outcome outcome,
                          const char *reason, const char *detail);

void comparison_count(const comparison_result *r, comparison_counts *c);
/* How the run ended (base/status.def's ranks): LC_ERROR when a row failed
 * with an error or one was lost; else LC_FAILED when one is wrong or
 * SLOWER; else LC_UNSUPPORTED when one is not decided here; else LC_OK. */
lc_status comparison_status(const comparison_result *r);

/* "forward" / "backward" of a decided row: its verdict, its ms medians,
 * what it was decided on and its noise. */
typedef struct comparison_phase {
    const char *name;
    const verdict_result *v;
    const sample_summary *base_ms, *cur_ms;
    double raw_change;
    const perf_decided_on *on;
    double noise;
} comparison_phase;
comparison_phase comparison_row_phase(const comparison_row *row, int backward);

/* What a runner whose results were wrong is told (a row's detail): wrong
 * at the gate, or (timed) in the timed calls after passing it. */
void comparison_wrong_detail(const char *runner, int timed, char *buf, size_t n);

/* ---- the policy: what a (runner, shape) is compared with ---- */

/* The family size m: every forward and backward entry of one perf run
 * (the device's perf matrix, or more where the file or the request holds
 * more). */
int comparison_family_size(lc_device device, int file_entries, int items);

/* 1 when an entry cannot be compared because the timing it recorded is
 * labelled otherwise than this runner's now (unchecked: runner_timing_unchecked);
 * why says so. */
int comparison_entry_mismatch(const baseline_entry *e, const char *unchecked, char *why, size_t n);

/* Whether the comparison with this machine's entry e stands, or is made
 * again as an A/B against e's commit: both builds measured now, in one state
 * of the machine, which a comparison with an entry measured then cannot
 * promise (docs/perf.md, "The host's state"). */
typedef enum comparison_recheck {
    COMPARISON_ENTRY_STANDS = 0,
    COMPARISON_AB_FOR_DRIFT,  /* control drift kept e from deciding */
    COMPARISON_AB_FOR_SLOWER, /* SLOWER against e: the A/B confirms it or not */
} comparison_recheck;

/* 1 when an A/B against entry e's commit can be made: e reproducible and
 * its runner built in (plugin 0). */
int comparison_entry_rebuildable(const baseline_entry *e, int plugin);
/* What the comparison c with entry e leads to. The A/B needs e's commit
 * rebuilt (e reproducible) and a built-in runner (plugin 0). note: why the
 * A/B, or why a SLOWER or a drift stands without one; "" when there is
 * nothing to say. */
comparison_recheck comparison_recheck_entry(const baseline_entry *e, const perf_comparison *c, int plugin,
                                            char *note, size_t n);
/* The note of a SLOWER against e (c) whose A/B could not be made (why):
 * the comparison with e stands. */
void comparison_recheck_unmade(const baseline_entry *e, const perf_comparison *c, const char *why, char *note,
                               size_t n);

/* The commit an A/B compares against, and why: against (resolved --against,
 * given as asked), else the commit of entry (this machine's entry, whose
 * comparison is made again: recheck says why), else that of the device's newest
 * committed baseline in dir. plugin: the runner's plugin file, or NULL (a
 * plugin's runner is never compared A/B: that rebuilds lstmcheck, not the
 * plugin). LC_OK with out filled, or LC_UNSUPPORTED with why in err (the
 * row is not compared here). */
typedef struct comparison_ab_request {
    const char *source_dir, *baseline_dir;
    lc_device device;
    const char *runner, *plugin;
    const lstm_shape *shape;
    const char *against, *against_asked; /* resolved sha and the words given, or NULL */
    const baseline_entry *entry; /* or NULL */
    comparison_recheck recheck;
} comparison_ab_request;
lc_status comparison_choose_commit(const comparison_ab_request *rq, comparison_against *out, lc_error *err);

/* This build as an A/B row names it: its commit, and whether the tree it
 * was built from has changes since. */
void comparison_describe_build(const char *source_dir, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
