/* Git queries (see gitrev.h). */
#include "base/gitrev.h"

#include "base/proc.h"

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

static int is_checkout(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-inside-work-tree", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    return !strcmp(out, "true");
}

lc_status git_head(const char *dir, char sha[GIT_SHA_LEN + 1])
{
    char out[128];
    const char *args[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL};
    if (!is_checkout(dir) || git(dir, args, out, sizeof out) != 0)
        return LC_UNSUPPORTED;
    chomp(out);
    if (!is_full_sha(out))
        return LC_UNSUPPORTED;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return LC_OK;
}

/* "XY path" lines of git status into "path, path, ..." (four at most). */
static void list_paths(char *porcelain, char *what, size_t n)
{
    size_t used = 0;
    int listed = 0;
    for (char *line = strtok(porcelain, "\n"); line && used < n; line = strtok(NULL, "\n")) {
        if (listed == 4) {
            snprintf(what + used, n - used, ", ...");
            break;
        }
        used += (size_t)snprintf(what + used, n - used, "%s%s", listed++ ? ", " : "",
                                 strlen(line) > 3 ? line + 3 : line);
    }
}

lc_status git_built_tree_dirty(const char *dir, int *dirty, char *what, size_t n)
{
    char out[4096];
    const char *args[] = {"status", "--porcelain", "--untracked-files=all", "--",
                          git_built_paths[0], git_built_paths[1], git_built_paths[2], NULL};
    what[0] = '\0';
    *dirty = 0;
    if (!is_checkout(dir) || git(dir, args, out, sizeof out) != 0)
        return LC_UNSUPPORTED;
    *dirty = out[0] != '\0';
    list_paths(out, what, n);
    return LC_OK;
}

/* 1 with the full commit when rev names one in dir. */
static int resolve(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1])
{
    if (!rev[0] || rev[0] == '-')
        return 0; /* never let a name pass as an option */
    char spec[GIT_REV_MAX + sizeof "^{commit}"], out[128];
    if (strlen(rev) > GIT_REV_MAX)
        return 0; /* refused by the caller: cut, it could name another commit */
    snprintf(spec, sizeof spec, "%s^{commit}", rev);
    const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    if (!is_full_sha(out))
        return 0;
    snprintf(sha, GIT_SHA_LEN + 1, "%s", out);
    return 1;
}

int git_is_shallow(const char *dir)
{
    char out[64];
    const char *args[] = {"rev-parse", "--is-shallow-repository", NULL};
    if (git(dir, args, out, sizeof out) != 0)
        return 0;
    chomp(out);
    return !strcmp(out, "true");
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

lc_status git_resolve_buildable(const char *dir, const char *rev, char sha[GIT_SHA_LEN + 1], lc_error *err)
{
    size_t len = strlen(rev);
    if (len > GIT_REV_MAX) {
        lc_error_set(err, "revision '%.40s...' is %zu characters long; at most %d", rev, len, GIT_REV_MAX);
        return LC_BAD_INPUT;
    }
    if (len >= 6 && !strcmp(rev + len - 6, "-dirty")) {
        lc_error_set(err, "'%s' names a tree with uncommitted changes (git describe's -dirty): nobody can "
                     "rebuild it", rev);
        return LC_BAD_INPUT;
    }
    if (!is_checkout(dir)) {
        lc_error_set(err, "cannot compare here: %s is not a git checkout", dir);
        return LC_UNSUPPORTED;
    }
    if (resolve(dir, rev, sha))
        return LC_OK;
    if (git_is_shallow(dir)) {
        lc_error_set(err, "cannot compare here: '%s' is not in the history of this shallow clone "
                     "(git fetch --unshallow)", rev);
        return LC_UNSUPPORTED;
    }
    lc_error_set(err, "unknown revision '%s' in %s", rev, dir);
    return LC_BAD_INPUT;
}
