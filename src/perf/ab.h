/* A/B comparison: an old and a new lstmcheck binary measured now, on this
 * machine, in alternating fresh processes (A B B A, then B A A B, ...),
 * each process a `baseline update` of one (runner, shape) into a scratch
 * folder: rounds with the control workload, as a committed baseline is
 * measured. Each process contributes its median runner/control ratios,
 * divided by the mean of its block's four (the machine's state during the
 * block cancels); the verdict rule of verdict.h (perf_compare_source)
 * decides over them, A standing for the baseline.
 * Nothing here depends on a baseline of this machine existing: this is
 * how `ctest -L perf` compares on a machine that has none (docs/perf.md). */
#ifndef LSTMCHECK_AB_H
#define LSTMCHECK_AB_H

#include "perf/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ab_side {
    const char *exe;   /* an lstmcheck binary */
    const char *env;   /* "NAME=VALUE" for its processes (tests plant slowdowns), or NULL */
    int allow_dirty;   /* pass --allow-dirty: this build, maybe of a modified tree */
} ab_side;

/* Samples per round of a measuring process where the command line does
 * not say (--nloops): the unit is the process, so many short processes
 * resolve more than a few long ones (a process of the cpu small shape:
 * 1.5 s instead of 5.5 s). */
#define AB_SAMPLES_PER_ROUND 50

typedef struct ab_outcome {
    perf_comparison cmp;  /* base = side A, current = side B */
    int processes[2];     /* measuring processes per side, confirmation included */
    char control[96];
    char commit[2][48];   /* the commit each side recorded */
    double process_noise_fwd, process_noise_bwd; /* relative sd of the block-normalized process medians */
    int blocks_left_out;  /* blocks a side could not measure here (exit 3) */
    char left_out_why[256]; /* the last such side's reason */
} ab_outcome;

/* measure: what every process of both sides runs, the words after the
 * program's name of a `baseline update` of one runner at one shape,
 * NULL-terminated. The command layer writes them from its options through
 * the flag table (cmd/cli.h: cli_format), so no flag is left behind; A/B
 * adds --baseline-dir (a scratch folder per process), --no-progress and a
 * side's --allow-dirty, so the words must not hold them.
 * LC_OK with out filled; LC_ERROR when side B (this build) failed to
 * measure, an error of this build (LC_FAILED when its runner's timed calls
 * gave wrong results); LC_UNSUPPORTED when side A failed or the
 * sides cannot be compared (not decidable here). err says why.
 * A side that could not measure here (exit 3, "cannot run or compare here":
 * the host's state, such as a run-to-run noise beyond what a baseline
 * holds) is no error of either side: its block is left out (both sides'
 * processes of it, so the blocks stay paired) and more are measured; a
 * verdict left INCONCLUSIVE says how many and why, and 3 left out in a row
 * end the comparison INCONCLUSIVE with that reason (still LC_OK). */
lc_status ab_compare(const ab_side sides[2], const char *const *measure, const perf_settings *s, int comparisons,
                     ab_outcome *out, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
