/* What git knows about a source tree: which commit it is, whether it has
 * uncommitted changes to what is built, and which commit a name means. A
 * baseline records the commit it measured so that anyone can rebuild it;
 * an A/B comparison builds such a commit. Every query runs git itself. */
#ifndef LSTMCHECK_GITREV_H
#define LSTMCHECK_GITREV_H

#include "lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GIT_SHA_LEN 40

/* The paths whose changes change the built program (what `baseline update`
 * refuses to record when modified), NULL-terminated. */
extern const char *const git_built_paths[];

typedef enum git_answer {
    GIT_YES = 0,
    GIT_NO = 1,
    GIT_UNKNOWN_REV = 2, /* the name resolves to no commit */
    GIT_NO_CHECKOUT = 3, /* dir is not a git checkout, or git is missing */
} git_answer;

/* GIT_YES with the full commit of HEAD, or GIT_NO_CHECKOUT. */
git_answer git_head(const char *dir, char sha[GIT_SHA_LEN + 1]);

/* GIT_YES when git_built_paths have uncommitted changes (untracked files
 * there included: CMake globs them); what is changed goes to what (a short
 * list). GIT_NO when clean, GIT_NO_CHECKOUT when dir is not a checkout. */
git_answer git_built_tree_dirty(const char *dir, char *what, size_t n);

/* Resolve rev (a name, short or full hash) to a full commit. GIT_UNKNOWN_REV
 * when nothing matches; GIT_NO_CHECKOUT when dir is not a checkout. */
git_answer git_resolve(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1]);

/* A revision to build (an A/B comparison), as a full commit. GIT_UNKNOWN_REV
 * when the name means nothing here or names a tree with uncommitted changes
 * ("...-dirty", which nobody can rebuild); GIT_NO_CHECKOUT when this
 * checkout cannot have it (not a checkout, or a shallow clone without it).
 * err says which, in one line. */
git_answer git_resolve_buildable(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1], lc_error *err);

/* GIT_YES when the checkout is shallow (old commits may be missing). */
git_answer git_is_shallow(const char *dir);

/* Whether a recorded commit names something that can be rebuilt: a hash
 * without "-dirty" (git describe's mark of uncommitted changes) or "unknown". */
int git_commit_is_reproducible(const char *commit);

#ifdef __cplusplus
}
#endif
#endif
