/* Git queries (see gitrev.h). */
#include "gitrev.h"

#include "proc.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *const git_built_paths[] = {"src", "kernels", "CMakeLists.txt", NULL};

/* git -C dir ARGS...; stdout into out. Returns git's exit status, -1 when
 * git could not run. */
static int git(const char *dir, const char *const *args, char *out, size_t n)
{
    char *argv[16];
    int k = 0;
    argv[k++] = "git";
    argv[k++] = "-C";
    argv[k++] = (char *)dir;
    for (int i = 0; args[i] && k < 15; i++)
        argv[k++] = (char *)args[i];
    argv[k] = NULL;
    proc_io io = {.out = out, .out_size = n};
    lc_error ignored;
    return proc_run(argv, &io, &ignored);
}

static void chomp(char *s)
{
    s[strcspn(s, "\r\n")] = '\0';
}

static int is_full_sha(const char *s)
{
    if (strlen(s) != GIT_SHA_LEN)
        return 0;
    for (int i = 0; i < GIT_SHA_LEN; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static git_answer checkout_state(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-inside-work-tree", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return GIT_NO_CHECKOUT;
    chomp(out);
    return strcmp(out, "true") ? GIT_NO_CHECKOUT : GIT_YES;
}

git_answer git_head(const char *dir, char sha[GIT_SHA_LEN + 1])
{
    char out[128];
    const char *args[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL};
    if (checkout_state(dir) != GIT_YES || git(dir, args, out, sizeof out) != 0)
        return GIT_NO_CHECKOUT;
    chomp(out);
    if (!is_full_sha(out))
        return GIT_NO_CHECKOUT;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return GIT_YES;
}

git_answer git_built_tree_dirty(const char *dir, char *what, size_t n)
{
    char out[4096];
    const char *args[] = {"status", "--porcelain", "--untracked-files=all", "--",
                          git_built_paths[0], git_built_paths[1], git_built_paths[2], NULL};
    what[0] = '\0';
    if (checkout_state(dir) != GIT_YES || git(dir, args, out, sizeof out) != 0)
        return GIT_NO_CHECKOUT;
    if (!out[0])
        return GIT_NO;
    /* "XY path" lines -> "path, path, ..." */
    size_t used = 0;
    int listed = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        const char *path = strlen(line) > 3 ? line + 3 : line;
        if (listed == 4) {
            snprintf(what + used, n - used, ", ...");
            break;
        }
        used += (size_t)snprintf(what + used, n - used, "%s%s", listed ? ", " : "", path);
        if (used >= n)
            break;
        listed++;
    }
    return GIT_YES;
}

git_answer git_resolve(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1])
{
    if (checkout_state(dir) != GIT_YES)
        return GIT_NO_CHECKOUT;
    if (!rev[0] || rev[0] == '-')
        return GIT_UNKNOWN_REV; /* never let a name pass as an option */
    char spec[256], out[128];
    snprintf(spec, sizeof spec, "%s^{commit}", rev);
    const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return GIT_UNKNOWN_REV;
    chomp(out);
    if (!is_full_sha(out))
        return GIT_UNKNOWN_REV;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return GIT_YES;
}

git_answer git_is_shallow(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-shallow-repository", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return GIT_NO_CHECKOUT;
    chomp(out);
    return strcmp(out, "true") ? GIT_NO : GIT_YES;
}

int git_commit_is_reproducible(const char *commit)
{
    size_t n = strlen(commit);
    if (n < 7 || n > GIT_SHA_LEN)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)commit[i]))
            return 0;
    return 1;
}

git_answer git_resolve_buildable(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1], lc_error *err)
{
    size_t len = strlen(rev);
    if (len >= 6 && !strcmp(rev + len - 6, "-dirty")) {
        lc_error_set(err, "'%s' names a tree with uncommitted changes (git describe's -dirty): nobody can "
                     "rebuild it", rev);
        return GIT_UNKNOWN_REV;
    }
    switch (git_resolve(dir, rev, sha)) {
    case GIT_YES:
        return GIT_YES;
    case GIT_NO_CHECKOUT:
        lc_error_set(err, "cannot compare here: %s is not a git checkout", dir);
        return GIT_NO_CHECKOUT;
    default:
        if (git_is_shallow(dir) == GIT_YES) {
            lc_error_set(err, "cannot compare here: '%s' is not in the history of this shallow clone "
                         "(git fetch --unshallow)", rev);
            return GIT_NO_CHECKOUT;
        }
        lc_error_set(err, "unknown revision '%s' in %s", rev, dir);
        return GIT_UNKNOWN_REV;
    }
}
