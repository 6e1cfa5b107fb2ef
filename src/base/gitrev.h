/* What git knows about a source tree: which commit it is, whether it has
 * uncommitted changes to what is built, and which commit a name means. A
 * baseline records the commit it measured so that anyone can rebuild it;
 * an A/B comparison builds such a commit. Every query runs git itself. */
#ifndef LSTMCHECK_GITREV_H
#define LSTMCHECK_GITREV_H

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GIT_SHA_LEN 40
/* The longest revision name git_resolve_buildable takes (a longer one is
 * refused, never cut into another name). */
#define GIT_REV_MAX 200

/* The paths whose changes change the built program (what `baseline update`
 * refuses to record when modified), NULL-terminated. */
extern const char *const git_built_paths[];

/* LC_OK with the full commit of HEAD; LC_UNSUPPORTED when dir is not a git
 * checkout (or git is missing). */
lc_status git_head(const char *dir, char sha[GIT_SHA_LEN + 1]);

/* LC_OK with *dirty set when git_built_paths have uncommitted changes
 * (untracked files there included: CMake globs them); what is changed goes
 * to what (a short list). LC_UNSUPPORTED when dir is not a checkout. */
lc_status git_built_tree_dirty(const char *dir, int *dirty, char *what, size_t n);

/* A revision to build (an A/B comparison), as a full commit. LC_BAD_INPUT
 * when the name means nothing here, is longer than GIT_REV_MAX or names a
 * tree with uncommitted changes ("...-dirty", which nobody can rebuild); LC_UNSUPPORTED when this checkout
 * cannot have it (not a checkout, or a shallow clone without it). err says
 * which, in one line. */
lc_status git_resolve_buildable(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1], lc_error *err);

/* 1 when dir is a shallow clone (old commits may be missing). */
int git_is_shallow(const char *dir);

/* Whether a recorded commit names something that can be rebuilt: a hash
 * without "-dirty" (git describe's mark of uncommitted changes) or "unknown". */
int git_commit_is_reproducible(const char *commit);

/* ---- a file's history (baseline history) ---- */

/* The most commits git_file_log returns: the newest ones. */
#define GIT_LOG_MAX 1000
#define GIT_SUBJECT_MAX 96

/* A commit that changed a file: its hash, its committer date (ISO 8601)
 * and its subject (cut to about 72 columns). */
typedef struct git_file_commit {
    char sha[GIT_SHA_LEN + 1];
    char date[40];
    char subject[GIT_SUBJECT_MAX];
} git_file_commit;

/* The commits of HEAD's history that changed file (a path in a checkout:
 * its folder is asked, or the nearest above it where that is gone), oldest
 * first; the newest GIT_LOG_MAX of them, *cut set when there were more,
 * *shallow when the checkout is a shallow clone (older ones may be
 * missing). LC_OK (*n may be 0: never committed, or no commit yet);
 * LC_UNSUPPORTED when that folder is not in a checkout (or git is
 * missing); LC_ERROR. *commits is malloc'ed. */
lc_status git_file_log(const char *file, git_file_commit **commits, int *n, int *cut, int *shallow, lc_error *err);

/* The file's bytes at commit sha (malloc'ed, NUL-terminated, *len bytes).
 * LC_MISSING when that commit has no such file (it deleted it);
 * LC_BAD_INPUT when it holds more than max bytes or a NUL byte, or is no
 * file there (a folder); LC_ERROR. */
lc_status git_file_at(const char *file, const char *sha, size_t max, char **text, size_t *len, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
