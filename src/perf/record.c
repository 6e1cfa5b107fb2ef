/* What `baseline update` records (see record.h). */
#include "perf/record.h"

#include "base/gitrev.h"

#include <stdio.h>

lc_status record_commit(const char *source_dir, int allow_dirty, char commit[48], int *reproducible,
                        lc_error *err)
{
    char sha[GIT_SHA_LEN + 1], what[512];
    int dirty = 0;
    *reproducible = 0;
    if (git_head(source_dir, sha) != LC_OK) {
        if (!allow_dirty) {
            lc_error_set(err, "%s is not a git checkout, so a baseline could not name the commit it measured; "
                         "pass --allow-dirty to record it as not reproducible", source_dir);
            return LC_BAD_INPUT;
        }
        snprintf(commit, 48, "unknown");
        return LC_OK;
    }
    if (git_built_tree_dirty(source_dir, &dirty, what, sizeof what) == LC_OK && dirty) {
        if (!allow_dirty) {
            lc_error_set(err, "uncommitted changes in %s (%s): a baseline must name a commit anyone can rebuild; "
                         "commit them first, or pass --allow-dirty to record them marked not reproducible",
                         source_dir, what);
            return LC_BAD_INPUT;
        }
        snprintf(commit, 48, "%s-dirty", sha);
        return LC_OK;
    }
    snprintf(commit, 48, "%s", sha);
    *reproducible = 1;
    return LC_OK;
}

int record_refused_for_noise(const baseline_entry *e, lc_error *why)
{
    const double hi = baseline_limits[BL_NOISE].hi;
    baseline_entry within = *e; /* its arrays shared, only read */
    lc_error ignored;
    within.noise_fwd = e->noise_fwd > hi ? hi : e->noise_fwd;
    within.noise_bwd = e->noise_bwd > hi ? hi : e->noise_bwd;
    if ((within.noise_fwd == e->noise_fwd && within.noise_bwd == e->noise_bwd) ||
        baseline_check_entry(&within, &ignored))
        return 0;
    lc_error_set(why, "cannot measure here now: the run-to-run noise of its %d rounds is fwd %.1f%% bwd %.1f%%, "
                 "beyond the %.0f%% a baseline file holds (this machine's load varies)", e->rounds,
                 100 * e->noise_fwd, 100 * e->noise_bwd, 100 * hi);
    return 1;
}
